package engine

import (
	"bytes"
	"context"
	"encoding/gob"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dprl/dprl/experiment/rundir"
)

// Local runs units on this machine with a pool of workers (the one worker pool of every
// family). Results do not depend on Workers: each unit writes its own file.
type Local struct {
	// Workers is the number of units run at once (0 = GOMAXPROCS).
	Workers int
	// Progress, if non-nil, is called from time to time with (cost done, cost total) of the
	// units being run.
	Progress func(done, total int64)
	// afterUnit, if set (tests), is called after each unit's file is written.
	afterUnit func(i int)
}

// Launch runs the units of p with the given indices, writing their files into dir/units. It
// stops at the first error (the files of the units already finished are kept).
func (l Local) Launch(ctx context.Context, p *Planned, dir string, idx []int) error {
	if err := checkMemory(p, len(idx), l.Workers, false); err != nil {
		return err
	}
	return l.launch(ctx, p, dir, nil, idx)
}

// launch runs the units idx of p, keeping their files in mem when it is non-nil, in dir/units
// otherwise.
func (l Local) launch(ctx context.Context, p *Planned, dir string, mem *memStore, idx []int) error {
	if mem == nil {
		if err := os.MkdirAll(filepath.Join(dir, UnitsDir), 0o755); err != nil {
			return fmt.Errorf("out: %w", err)
		}
		if err := removeTemps(filepath.Join(dir, UnitsDir)); err != nil {
			return err
		}
	}
	workers := l.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	units := p.Units()
	digest := planDigest(p) // recorded in every unit file (a merge refuses another plan's)
	var total int64
	for _, i := range idx {
		total += units[i].Cost
	}
	var done atomic.Int64
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var stopTicker chan struct{}
	var tickerDone sync.WaitGroup
	if l.Progress != nil {
		stopTicker = make(chan struct{})
		tickerDone.Add(1)
		go func() {
			defer tickerDone.Done()
			t := time.NewTicker(200 * time.Millisecond)
			defer t.Stop()
			for {
				select {
				case <-t.C:
					l.Progress(done.Load(), total)
				case <-stopTicker:
					return
				}
			}
		}()
	}
	ch := make(chan int)
	var mu sync.Mutex
	var firstErr error
	fail := func(err error) {
		mu.Lock()
		if firstErr == nil {
			firstErr = err
		}
		mu.Unlock()
		cancel()
	}
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range ch {
				if ctx.Err() != nil {
					continue // cancelled (Ctrl-C, another unit's error): start no new unit
				}
				u := units[i]
				rec := &Recorder{dir: dir, id: u.ID(), plan: digest, mem: mem, advance: func(n int64) { done.Add(n) }}
				if err := p.Run(ctx, i, Streams{Seed: u.Seed}, rec); err != nil {
					fail(fmt.Errorf("%s seed %d: %w", u.Cell, u.Seed, err))
					continue
				}
				if !rec.recorded {
					fail(fmt.Errorf("%s seed %d: the family recorded no result", u.Cell, u.Seed))
					continue
				}
				if l.afterUnit != nil {
					l.afterUnit(i)
				}
			}
		}()
	}
feed:
	for _, i := range idx {
		select {
		case ch <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(ch)
	wg.Wait()
	if stopTicker != nil {
		close(stopTicker)
		tickerDone.Wait()
		l.Progress(done.Load(), total)
	}
	if firstErr != nil {
		return firstErr
	}
	return ctx.Err()
}

// removeTemps removes leftover temporary files of interrupted atomic writes.
func removeTemps(dir string) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".") && strings.Contains(e.Name(), ".tmp-") {
			if err := os.Remove(filepath.Join(dir, e.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
		}
	}
	return nil
}

// Collection gives a plan's Collect the results of its units and the run's context.
type Collection struct {
	// Dir is the run directory.
	Dir string
	// Command is the command line recorded in the manifest.
	Command []string
	// Inputs are the input files (configuration) recorded in the manifest.
	Inputs []rundir.Input
	// Workers and Seconds are recorded in the manifest (wall time of this invocation).
	Workers int
	Seconds float64
	// Options are the shared output options (Force is handled by the engine).
	Options rundir.Options
	// Partial is set when a merge was asked to collect a sweep with missing units; Has tells
	// which are present.
	Partial bool
	p       *Planned
	mem     *memStore
}

// read returns the verified payload of unit u.
func (c *Collection) read(u Unit) ([]byte, error) {
	if c.mem != nil {
		data, ok := c.mem.get(u.ID())
		if !ok {
			return nil, errIncomplete
		}
		return verifyUnit(u.ID(), data)
	}
	return readUnit(c.Dir, u)
}

// Has reports whether unit i's result is complete.
func (c *Collection) Has(i int) bool {
	_, err := c.read(c.p.Units()[i])
	return err == nil
}

// RunInMemory runs every unit of p on this machine and returns their results without writing
// any file (library use and tests: the family assembles its result from the Collection).
func RunInMemory(ctx context.Context, p *Planned, l Local) (*Collection, error) {
	start := time.Now()
	mem := &memStore{files: map[string][]byte{}}
	idx := make([]int, len(p.Units()))
	for i := range idx {
		idx[i] = i
	}
	if err := checkMemory(p, len(idx), l.Workers, true); err != nil {
		return nil, err
	}
	if err := l.launch(ctx, p, "", mem, idx); err != nil {
		return nil, err
	}
	workers := l.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	return &Collection{Workers: workers, Seconds: time.Since(start).Seconds(), p: p, mem: mem}, nil
}

// RunResult runs every unit of p on this machine without writing any file (RunInMemory) and
// returns what result assembles from the collection and p's plan (a P): a family's Run.
func RunResult[P Plan, R any](ctx context.Context, p *Planned, l Local, result func(P, *Collection) (R, error)) (R, error) {
	c, err := RunInMemory(ctx, p, l)
	if err != nil {
		var zero R
		return zero, err
	}
	return result(p.Plan.(P), c)
}

// Load decodes the result of unit i into v.
func (c *Collection) Load(i int, v any) error {
	u := c.p.Units()[i]
	data, err := c.read(u)
	if err != nil {
		return fmt.Errorf("unit %s (%s seed %d): %w", u.ID(), u.Cell, u.Seed, err)
	}
	if err := gob.NewDecoder(bytes.NewReader(data)).Decode(v); err != nil {
		return fmt.Errorf("unit %s (%s seed %d): decoding: %w", u.ID(), u.Cell, u.Seed, err)
	}
	return nil
}

// LoadRuns decodes the results of the n consecutive units first, …, first+n−1 (the seeds of
// one cell, as CellUnits plans them) into a slice, in unit order.
func LoadRuns[T any](c *Collection, first, n int) ([]T, error) {
	runs := make([]T, n)
	for i := range runs {
		if err := c.Load(first+i, &runs[i]); err != nil {
			return nil, err
		}
	}
	return runs, nil
}

// RunOptions control Execute and Merge.
type RunOptions struct {
	// Dir is the run directory.
	Dir string
	// Force replaces a completed earlier run in Dir (its unit files included).
	Force bool
	// Command and Inputs are recorded in the manifest.
	Command []string
	Inputs  []rundir.Input
	// Output are the shared output options (LogY).
	Output rundir.Options
	// AllowPartial lets Merge collect when units are missing (the family's Collect decides
	// whether it can; most cannot).
	AllowPartial bool
}

// hasManifest reports whether dir holds a completed run.
func hasManifest(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, "manifest.json"))
	return err == nil
}

// CheckOut reports, without changing anything, whether Execute would refuse dir: a
// completed run (or other files of an earlier run) without force. An interrupted run (unit
// files, no manifest) is not refused: Execute resumes it.
func CheckOut(dir string, force bool) error {
	if force {
		return nil
	}
	if _, err := os.Stat(filepath.Join(dir, UnitsDir)); err == nil && !hasManifest(dir) {
		return nil
	}
	return rundir.CheckEarlier(dir)
}

// prepare makes dir ready for running units: a completed run is refused without force
// (with force its files and unit files are removed); an interrupted run (unit files, no
// manifest) is resumed: its unit files are kept and its partial outputs removed.
func prepare(dir string, force bool) error {
	if hasManifest(dir) && force {
		if err := os.RemoveAll(filepath.Join(dir, UnitsDir)); err != nil {
			return fmt.Errorf("out: %w", err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, UnitsDir)); err == nil && !hasManifest(dir) {
		force = true // resuming: remove the partial outputs of an interrupted collect
	}
	return rundir.Prepare(dir, force)
}

// Execute runs a plan on this machine and collects it: the single-machine `dprl run` and
// `dprl reproduce`. Units whose files are already complete in opts.Dir are skipped, so an
// interrupted run resumes where it stopped. Once the manifest is written the unit files are
// removed, so the run directory holds the same files as before the engine.
func Execute(ctx context.Context, p *Planned, l Local, opts RunOptions) (string, error) {
	start := time.Now()
	if err := opts.Output.Validate(); err != nil {
		return "", err
	}
	if err := checkMemory(p, len(p.Units()), l.Workers, true); err != nil {
		return "", err // before the run directory is touched
	}
	if err := prepare(opts.Dir, opts.Force); err != nil {
		return "", err
	}
	if err := l.Launch(ctx, p, opts.Dir, Missing(p, opts.Dir)); err != nil {
		return "", err
	}
	workers := l.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	text, err := collect(p, opts, workers, time.Since(start).Seconds())
	if err != nil {
		return "", err
	}
	// The run is complete (its manifest is written): the unit files have served their purpose
	// (a sweep's merge keeps them: they are the shards' results).
	if err := os.RemoveAll(filepath.Join(opts.Dir, UnitsDir)); err != nil {
		return "", fmt.Errorf("out: removing the unit files: %w", err)
	}
	return text, nil
}

func collect(p *Planned, opts RunOptions, workers int, seconds float64) (string, error) {
	c := &Collection{Dir: opts.Dir, Command: opts.Command, Inputs: opts.Inputs, Workers: workers,
		Seconds: seconds, Options: rundir.Options{LogY: opts.Output.LogY, Force: true}, Partial: opts.AllowPartial, p: p}
	// meta.json, config.resolved.yaml and regret_long.csv go into the run directory just before
	// its manifest (the manifests of a suite's block directories are left alone).
	c.Options.BeforeManifest = func(dir string) error {
		if filepath.Clean(dir) != filepath.Clean(c.Dir) {
			return nil
		}
		return writeMeta(p, c)
	}
	return p.Collect(c)
}

// Merge collects the unit files of a sharded sweep in opts.Dir into its outputs, byte-identical
// to a single-machine run of the same configuration. It refuses a sweep with missing units
// (naming them) unless opts.AllowPartial.
func Merge(p *Planned, opts RunOptions) (string, error) {
	start := time.Now()
	if hasManifest(opts.Dir) && !opts.Force {
		return "", fmt.Errorf("out: %s: %w; pass --force to merge again", opts.Dir, rundir.ErrEarlierRun)
	}
	if err := checkMemory(p, 0, 1, true); err != nil {
		return "", err
	}
	if err := checkUnitFiles(p, opts.Dir); err != nil {
		return "", err
	}
	if miss := Missing(p, opts.Dir); len(miss) > 0 && !opts.AllowPartial {
		return "", &MissingError{Units: p.Units(), Missing: miss}
	}
	if err := rundir.Prepare(opts.Dir, true); err != nil {
		return "", err
	}
	return collect(p, opts, 1, time.Since(start).Seconds())
}

// MissingError names the units a merge lacks.
type MissingError struct {
	Units   []Unit
	Missing []int
}

func (e *MissingError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "sweep incomplete: %d of %d units missing (rerun their shards, or pass --allow-partial):", len(e.Missing), len(e.Units))
	for n, i := range e.Missing {
		if n == 10 {
			fmt.Fprintf(&b, " … and %d more", len(e.Missing)-10)
			break
		}
		u := e.Units[i]
		fmt.Fprintf(&b, "\n  %s  %s seed %d (unit #%d)", u.ID(), u.Cell, u.Seed, i)
	}
	return b.String()
}
