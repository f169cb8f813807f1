package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/dprl/dprl/experiment/rundir"
	"github.com/dprl/dprl/internal/bounds"
	"github.com/dprl/dprl/internal/inputerr"
	"github.com/dprl/dprl/internal/membudget"
	"github.com/dprl/dprl/internal/strictdecode"
)

// This file holds what the command line does around a plan (`dprl run`, `dprl reproduce`,
// `dprl sweep`): the checks of the flags every one of them shares and the run on this machine.
// Errors the user has to fix are inputerr.Error values naming the flag.

// CheckWorkers checks --workers (bounds.Workers).
func CheckWorkers(workers int) error { return inputerr.Wrap(bounds.Workers(workers)) }

// CheckOutFlag checks that the run directory out (--out) can be written
// (rundir.CheckWritable), before any compute and without creating it.
func CheckOutFlag(out string) error {
	if err := rundir.CheckWritable(out); err != nil {
		return inputerr.New("--out: %v", err)
	}
	return nil
}

// CheckLogY checks --log-y, the y axis of the regret figures.
func CheckLogY(logY string) error {
	switch logY {
	case "auto", "log", "linear":
		return nil
	}
	return inputerr.New("--log-y: must be auto, log or linear, got %q", logY)
}

// SeedsFlag parses --seeds (ParseSeeds).
func SeedsFlag(s string) ([]uint64, error) {
	sd, err := ParseSeeds(s)
	if err != nil {
		return nil, inputerr.New("--seeds: %v", err)
	}
	return sd, nil
}

// ReadConfigFile reads the configuration file path given by flag after checking it: a
// regular file of at most strictdecode.MaxFileSize bytes (a device such as /dev/zero or a FIFO
// would be read without end) holding exactly one YAML (or JSON) document without duplicate
// keys, within the memory budget of a YAML document.
func ReadConfigFile(flag, path string) ([]byte, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, inputerr.New("%s: %v", flag, err)
	}
	if !st.Mode().IsRegular() {
		return nil, inputerr.New("%s: %s is not a regular file", flag, path)
	}
	if st.Size() > strictdecode.MaxFileSize {
		return nil, inputerr.New("%s: %s has %d bytes, more than the limit of 64 MiB", flag, path, st.Size())
	}
	// The configuration parsers decode the first YAML document; the strict decoder also
	// rejects a second document and duplicate keys, as for every model file.
	data, err := strictdecode.ReadFile(path)
	if err != nil {
		return nil, inputerr.New("%s: %v", flag, err)
	}
	if err := membudget.CheckConfigYAML(data); err != nil {
		return nil, inputerr.New("%s: %s: %v", flag, path, err) // before a node tree is built
	}
	var doc yaml.Node
	if err := strictdecode.Decode(data, "yaml", &doc); err != nil {
		return nil, inputerr.New("%s: %s: %v", flag, path, err)
	}
	return data, nil
}

// ReadRunConfig reads the configuration file of `dprl run --config`: its family (def when it
// has no `family:`), its block and the file as the run's input.
func ReadRunConfig(path, def string) (family string, block []byte, inputs []rundir.Input, err error) {
	data, err := ReadConfigFile("--config", path)
	if err != nil {
		return "", nil, nil, err
	}
	if family, block, err = SplitFamily(data, def); err != nil {
		return "", nil, nil, inputerr.Wrap(err)
	}
	return family, block, []rundir.Input{rundir.HashBytes("config", path, data)}, nil
}

// LocalRun is a run on this machine as the command line starts it: the flags every run
// shares.
type LocalRun struct {
	// Workers is --workers; Out is --out, given when OutSet (otherwise runs/<the plan's name>,
	// known once planned).
	Workers int
	Out     string
	OutSet  bool
	// Force is --force and LogY is --log-y.
	Force bool
	LogY  string
	// Command and Inputs are recorded in the manifest.
	Command []string
	Inputs  []rundir.Input
	// Progress, when set, reports the progress of the plan called name (nil update: none).
	Progress func(name string) (update func(done, total int64), finish func())
}

// Check runs the cheap checks before a plan is made (planning may build every agent once,
// which takes seconds for some families): --workers, --log-y and, when it is known, the output
// directory (writable, and no completed earlier run there without --force).
func (l LocalRun) Check() error {
	if err := CheckWorkers(l.Workers); err != nil {
		return err
	}
	if err := CheckLogY(l.LogY); err != nil {
		return err
	}
	if !l.OutSet {
		return nil
	}
	if err := CheckOutFlag(l.Out); err != nil {
		return err
	}
	if err := CheckOut(l.Out, l.Force); err != nil {
		return inputerr.New("--out: %w", err)
	}
	return nil
}

// Run checks the flags (Check), plans with plan (its errors are bad input), and runs the plan
// on this machine into Out (runs/<the plan's name> unless OutSet, then checked) with a progress
// report, resuming an interrupted run there; it returns the text to print. engine.Execute
// prepares the directory before launching a unit: a completed earlier run there is bad input
// naming --force.
func (l LocalRun) Run(plan func() (*Planned, error)) (string, error) {
	if err := l.Check(); err != nil {
		return "", err
	}
	p, err := plan()
	if err != nil {
		return "", inputerr.Wrap(err)
	}
	if !l.OutSet {
		l.Out, l.OutSet = "runs/"+p.Name(), true
		if err := l.Check(); err != nil {
			return "", err
		}
	}
	return l.Execute(p)
}

// Execute runs a plan on this machine into Out (Execute) after checking --workers, --log-y and
// Out, holding the directory's lock for the whole run.
func (l LocalRun) Execute(p *Planned) (string, error) {
	if err := CheckWorkers(l.Workers); err != nil {
		return "", err
	}
	if err := CheckLogY(l.LogY); err != nil {
		return "", err
	}
	if err := CheckOutFlag(l.Out); err != nil {
		return "", err
	}
	release, err := rundir.Lock(l.Out) // one run at a time in out, for the whole run
	if err != nil {
		return "", err
	}
	defer release()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	loc, finish := l.local(p.Name())
	text, err := Execute(ctx, p, loc, RunOptions{Dir: l.Out, Force: l.Force, Command: l.Command, Inputs: l.Inputs,
		Output: rundir.Options{Force: l.Force, LogY: l.LogY}})
	finish()
	if errors.Is(err, rundir.ErrEarlierRun) {
		return "", inputerr.New("--out: %w", err)
	}
	return text, err
}

// local returns the launcher of the run with its progress report.
func (l LocalRun) local(name string) (Local, func()) {
	loc := Local{Workers: l.Workers}
	if l.Progress == nil {
		return loc, func() {}
	}
	var finish func()
	loc.Progress, finish = l.Progress(name)
	return loc, finish
}

// RunShard runs shard s of the sweep p into Out (RunShard), holding the directory's shared
// lock (shards share it; a run or a merge into it is excluded meanwhile).
func (l LocalRun) RunShard(p *Planned, s Shard) (ran, skipped int, err error) {
	release, err := rundir.LockShared(l.Out)
	if err != nil {
		return 0, 0, err
	}
	defer release()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	loc, finish := l.local(fmt.Sprintf("%s shard %d/%d", p.Name(), s.I, s.N))
	defer finish()
	return RunShard(ctx, p, loc, l.Out, s)
}

// Merge merges the sweep p in Out (Merge) under the directory's lock; a missing unit, a
// unit file of another plan or a corrupt one, and an earlier merge without --force are bad
// input.
func (l LocalRun) Merge(p *Planned, allowPartial bool) (string, error) {
	release, err := rundir.Lock(l.Out)
	if err != nil {
		return "", err
	}
	defer release()
	text, err := Merge(p, RunOptions{Dir: l.Out, Force: l.Force, AllowPartial: allowPartial, Command: l.Command, Inputs: l.Inputs})
	var miss *MissingError
	var unit *UnitFileError
	if errors.As(err, &miss) || errors.As(err, &unit) || errors.Is(err, rundir.ErrEarlierRun) {
		return "", inputerr.Wrap(err)
	}
	return text, err
}

// DefaultRunDir is the run directory of a run built from flags without --out:
// runs/<family>-<agent>-<h>, where h is the first 8 hex digits of the SHA-256 of the run's
// configuration cfg marshalled as YAML (the flags after defaults; not the output options, the
// worker count or the time). Different runs get different directories; the same flags name
// the same directory, so an interrupted run resumes there and a completed one is refused
// without --force. Only the directory's name depends on it: the outputs are those of the
// same run with --out.
func DefaultRunDir(family, agent string, cfg any) string {
	name := dirName(family) + "-" + dirName(agent)
	data, err := yaml.Marshal(cfg)
	if err != nil {
		return "runs/" + name
	}
	sum := sha256.Sum256(data)
	return "runs/" + name + "-" + hex.EncodeToString(sum[:4])
}

// dirName keeps the letters, digits, '.', '_' and '-' of s (others become '-'), so that a
// name such as "ucrl-vtr+/jdp" makes one directory name.
func dirName(s string) string {
	s = strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-' {
			return r
		}
		return '-'
	}, s)
	if s = strings.Trim(s, ".-"); s == "" {
		return "run"
	}
	return s
}
