package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/dprl/dprl/experiment/rundir"
	"github.com/dprl/dprl/internal/atomicfile"
)

// fakeFamily plans `cells: N` × `seeds: [...]` units; each unit's result is a stream of
// numbers drawn from its Streams, and Collect writes them all into out.csv in unit order.
type fakeFamily struct{ runs *atomic.Int64 }

func (fakeFamily) Name() string          { return "fake" }
func (fakeFamily) Catalogue(w io.Writer) { fmt.Fprintln(w, "fake") }
func (f fakeFamily) Plan(block []byte, source string) (Plan, error) {
	var cells, seeds int
	if _, err := fmt.Sscanf(string(block), "cells: %d\nseeds: %d\n", &cells, &seeds); err != nil {
		return nil, fmt.Errorf("fake: %w", err)
	}
	p := &fakePlan{runs: f.runs}
	for c := 0; c < cells; c++ {
		for s := 1; s <= seeds; s++ {
			p.units = append(p.units, Unit{Cell: fmt.Sprintf("cell%d", c), Spec: []byte(fmt.Sprintf(`{"c":%d}`, c)), Seed: uint64(s), Cost: 10})
		}
	}
	return p, nil
}

type fakeResult struct {
	Cell string
	X    []float64
}

type fakePlan struct {
	units []Unit
	runs  *atomic.Int64
}

func (p *fakePlan) Name() string  { return "fake" }
func (p *fakePlan) Units() []Unit { return p.units }
func (p *fakePlan) Run(ctx context.Context, i int, st Streams, rec *Recorder) error {
	if p.runs != nil {
		p.runs.Add(1)
	}
	r := st.Agent().Child(p.units[i].Cell).Rand()
	res := fakeResult{Cell: p.units[i].Cell}
	for k := 0; k < 10; k++ {
		res.X = append(res.X, r.NormFloat64())
		rec.Advance(1)
	}
	return rec.Record(res)
}
func (p *fakePlan) Collect(c *Collection) (string, error) {
	var b bytes.Buffer
	for i := range p.units {
		if c.Partial && !c.Has(i) {
			continue
		}
		var r fakeResult
		if err := c.Load(i, &r); err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "%s,%d,%v\n", r.Cell, p.units[i].Seed, r.X)
	}
	if err := atomicfile.WriteBytes(filepath.Join(c.Dir, "out.csv"), b.Bytes(), 0o644); err != nil {
		return "", err
	}
	return "ok", rundir.WriteJSON(filepath.Join(c.Dir, "manifest.json"), map[string]int{"units": len(p.units)})
}

func fakeRegistry(runs *atomic.Int64) *Registry {
	r := &Registry{}
	r.Register(fakeFamily{runs: runs})
	return r
}

func plan(t *testing.T, r *Registry, cells, seeds int) *Planned {
	t.Helper()
	p, err := r.PlanBlock("fake", []byte(fmt.Sprintf("cells: %d\nseeds: %d\n", cells, seeds)), "test")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// localOutput runs plan(t, r, cells, seeds) with workers local workers into a new directory
// and returns its out.csv.
func localOutput(t *testing.T, r *Registry, cells, seeds, workers int) []byte {
	t.Helper()
	dir := t.TempDir()
	if _, err := Execute(context.Background(), plan(t, r, cells, seeds), Local{Workers: workers}, RunOptions{Dir: dir}); err != nil {
		t.Fatal(err)
	}
	return read(t, filepath.Join(dir, "out.csv"))
}

func read(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestRegistry(t *testing.T) {
	r := fakeRegistry(nil)
	if _, err := r.Lookup("nope"); err == nil || !strings.Contains(err.Error(), "allowed: fake") {
		t.Errorf("unknown family error %v does not name the allowed families", err)
	}
	for name, f := range map[string]Family{"nil": nil, "duplicate": fakeFamily{}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Register(%s) did not panic", name)
				}
			}()
			r.Register(f)
		}()
	}
}

func TestUnitIDStable(t *testing.T) {
	u := Unit{Family: "fake", Spec: []byte(`{"c":1}`), Seed: 3}
	tests := []struct {
		name string
		v    Unit
		same bool
	}{
		{"identical", Unit{Family: "fake", Spec: []byte(`{"c":1}`), Seed: 3, Cell: "other label"}, true},
		{"seed", Unit{Family: "fake", Spec: []byte(`{"c":1}`), Seed: 4}, false},
		{"spec", Unit{Family: "fake", Spec: []byte(`{"c":2}`), Seed: 3}, false},
		{"family", Unit{Family: "fake2", Spec: []byte(`{"c":1}`), Seed: 3}, false},
	}
	for _, tc := range tests {
		if got := u.ID() == tc.v.ID(); got != tc.same {
			t.Errorf("%s: same ID = %v, want %v", tc.name, got, tc.same)
		}
	}
	// The digest is fixed: a change of the ID scheme orphans every unit file of every sweep.
	if got, want := u.ID(), "74c1baff6dff21fa11f5"; got != want {
		t.Errorf("ID() = %s, want %s (the ID scheme changed)", got, want)
	}
}

func TestDuplicateUnitsRejected(t *testing.T) {
	p := &fakePlan{units: []Unit{{Cell: "a", Spec: []byte("x"), Seed: 1}, {Cell: "b", Spec: []byte("x"), Seed: 1}}}
	if _, err := NewPlanned("fake", p); err == nil {
		t.Error("two units with the same resolved configuration and seed were accepted")
	}
}

// TestWorkersDoNotChangeOutput: the output is the same whatever the worker count.
func TestWorkersDoNotChangeOutput(t *testing.T) {
	r := fakeRegistry(nil)
	var outs [][]byte
	for _, w := range []int{1, 3} {
		outs = append(outs, localOutput(t, r, 3, 4, w))
	}
	if !bytes.Equal(outs[0], outs[1]) {
		t.Error("1 and 3 workers give different outputs")
	}
}

// TestResume interrupts a run after some units (a cancelled context, as a kill between units),
// damages unit files the way a crash or a bad copy would, and checks that the rerun runs
// exactly the missing or damaged units and gives the same bytes as an uninterrupted run.
func TestResume(t *testing.T) {
	var runs atomic.Int64
	r := fakeRegistry(&runs)
	want := localOutput(t, r, 3, 4, 2)

	dir := t.TempDir()
	p := plan(t, r, 3, 4)
	ctx, cancel := context.WithCancel(context.Background())
	var done atomic.Int64
	l := Local{Workers: 1, afterUnit: func(int) {
		if done.Add(1) == 7 {
			cancel()
		}
	}}
	if _, err := Execute(ctx, p, l, RunOptions{Dir: dir}); !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted run: err = %v, want context.Canceled", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "manifest.json")); err == nil {
		t.Fatal("an interrupted run wrote its manifest")
	}
	units := p.Units()
	// Damage: a truncated unit file, another unit's file copied over one, a leftover temporary
	// file of an interrupted atomic write.
	trunc := unitPath(dir, units[0].ID())
	data := read(t, trunc)
	if err := os.WriteFile(trunc, data[:len(data)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(unitPath(dir, units[1].ID()), read(t, unitPath(dir, units[2].ID())), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, UnitsDir, "."+units[8].ID()+".unit.tmp-123"), []byte("partial"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := len(Missing(p, dir)); got != 12-7+2 {
		t.Fatalf("Missing = %d units, want %d", got, 12-7+2)
	}
	runs.Store(0)
	if _, err := Execute(context.Background(), plan(t, r, 3, 4), Local{Workers: 2}, RunOptions{Dir: dir}); err != nil {
		t.Fatal(err)
	}
	if got := runs.Load(); got != 7 {
		t.Errorf("the rerun ran %d units, want 7 (5 never run + 2 damaged)", got)
	}
	if got := read(t, filepath.Join(dir, "out.csv")); !bytes.Equal(got, want) {
		t.Errorf("resumed output differs from an uninterrupted run:\n%s\nwant\n%s", got, want)
	}
	// A completed run is refused without force, and is not rerun.
	runs.Store(0)
	if _, err := Execute(context.Background(), plan(t, r, 3, 4), Local{}, RunOptions{Dir: dir}); !errors.Is(err, rundir.ErrEarlierRun) {
		t.Errorf("rerun over a completed run: err = %v, want ErrEarlierRun", err)
	}
	if runs.Load() != 0 {
		t.Error("units ran over a completed run")
	}
}

// TestShardsMerge: every shard count gives the same bytes as a local run; a merge with a
// shard missing is refused and names the missing units.
func TestShardsMerge(t *testing.T) {
	var runs atomic.Int64
	r := fakeRegistry(&runs)
	want := localOutput(t, r, 3, 5, 2)
	for _, n := range []int{1, 2, 4, 20} {
		dir := t.TempDir()
		p := plan(t, r, 3, 5)
		runs.Store(0)
		for i := 0; i < n; i++ {
			if i == n-1 && len(Shard{i, n}.Units(15)) > 0 {
				if _, err := Merge(p, RunOptions{Dir: dir}); err == nil {
					t.Fatalf("n=%d: merge with shard %d missing succeeded", n, i)
				} else if me := (*MissingError)(nil); !errors.As(err, &me) || len(me.Missing) != len(Shard{i, n}.Units(15)) {
					t.Fatalf("n=%d: merge error %v does not name the %d missing units", n, err, len(Shard{i, n}.Units(15)))
				}
			}
			if _, _, err := RunShard(context.Background(), p, Local{Workers: 1}, dir, Shard{i, n}); err != nil {
				t.Fatal(err)
			}
		}
		// Rerunning a finished shard runs nothing.
		if ran, skipped, err := RunShard(context.Background(), p, Local{}, dir, Shard{0, n}); err != nil || ran != 0 || skipped != len(Shard{0, n}.Units(15)) {
			t.Errorf("n=%d: rerun of shard 0: ran %d skipped %d err %v", n, ran, skipped, err)
		}
		if got := runs.Load(); got != 15 {
			t.Errorf("n=%d: %d units ran, want 15 (each exactly once)", n, got)
		}
		if _, err := Merge(p, RunOptions{Dir: dir}); err != nil {
			t.Fatal(err)
		}
		if got := read(t, filepath.Join(dir, "out.csv")); !bytes.Equal(got, want) {
			t.Errorf("n=%d shards: merged output differs from the local run", n)
		}
	}
}

func TestMergePartial(t *testing.T) {
	r := fakeRegistry(nil)
	dir := t.TempDir()
	p := plan(t, r, 2, 2)
	if _, _, err := RunShard(context.Background(), p, Local{}, dir, Shard{0, 2}); err != nil {
		t.Fatal(err)
	}
	if _, err := Merge(p, RunOptions{Dir: dir, AllowPartial: true}); err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(string(read(t, filepath.Join(dir, "out.csv"))), "\n"); got != 2 {
		t.Errorf("partial merge wrote %d rows, want 2", got)
	}
}

func TestParseShard(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	tests := []struct {
		s    string
		env  map[string]string
		want Shard
		err  string
	}{
		{"2/5", nil, Shard{2, 5}, ""},
		{"", map[string]string{"SLURM_ARRAY_TASK_ID": "3", "SLURM_ARRAY_TASK_COUNT": "4"}, Shard{3, 4}, ""},
		{"", map[string]string{"JOB_COMPLETION_INDEX": "0", "DPRL_SHARDS": "2"}, Shard{0, 2}, ""},
		{"1/1", nil, Shard{}, "0 <= i < n"},
		{"a/2", nil, Shard{}, "want i/n"},
		{"", nil, Shard{}, "required"},
		{"", map[string]string{"SLURM_ARRAY_TASK_ID": "3"}, Shard{}, "SLURM_ARRAY_TASK_COUNT"},
	}
	for _, tc := range tests {
		got, err := ParseShard(tc.s, env(tc.env))
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseShard(%q, %v) err = %v, want containing %q", tc.s, tc.env, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ParseShard(%q, %v) = %v, %v; want %v", tc.s, tc.env, got, err, tc.want)
		}
	}
}

func TestSplitFamily(t *testing.T) {
	fam, block, err := SplitFamily([]byte("family: lq\nname: x\nepisodes: 3\n"), "tabular")
	if err != nil || fam != "lq" || strings.Contains(string(block), "family") || !strings.Contains(string(block), "episodes: 3") {
		t.Errorf("SplitFamily = %q, %q, %v", fam, block, err)
	}
	if fam, _, _ := SplitFamily([]byte("name: x\n"), "tabular"); fam != "tabular" {
		t.Errorf("default family = %q", fam)
	}
	if _, _, err := SplitFamily([]byte("name: x\n"), ""); err == nil || !strings.Contains(err.Error(), "family") {
		t.Errorf("missing family: err = %v", err)
	}
}

func TestClusterScripts(t *testing.T) {
	c := Cluster{Name: "qiao-fig1", Dprl: "/opt/dprl", Config: "/cfg/q.yaml", Out: "/shared/q", Shards: 4, Parallel: 2, Workers: 3, Claim: "runs", Mount: "/shared", Image: "dprl:1"}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	s := c.SlurmScripts()
	for _, want := range []string{"#SBATCH --array=0-3%2", "sweep run '/cfg/q.yaml' --out '/shared/q' --workers 3", "#SBATCH --cpus-per-task=3"} {
		if !strings.Contains(s["run.sbatch"], want) {
			t.Errorf("run.sbatch lacks %q:\n%s", want, s["run.sbatch"])
		}
	}
	if !strings.Contains(s["submit.sh"], "--dependency=afterok:") || !strings.Contains(s["merge.sbatch"], "sweep merge '/cfg/q.yaml'") {
		t.Errorf("submit/merge scripts:\n%s\n%s", s["submit.sh"], s["merge.sbatch"])
	}
	k := c.K8sManifests()
	for _, want := range []string{"completionMode: Indexed", "completions: 4", "parallelism: 2", `value: "4"`, `claimName: "runs"`} {
		if !strings.Contains(k["run-job.yaml"], want) {
			t.Errorf("run-job.yaml lacks %q:\n%s", want, k["run-job.yaml"])
		}
	}
	if c.Shards = 0; c.Validate() == nil {
		t.Error("--shards 0 accepted")
	}
}

// BenchmarkUnitFile measures the engine's cost per unit: encoding a result of K = 50000
// float64 (qiao-fig1's per-episode regret), writing it atomically (fsync), reading and
// verifying it back and decoding it. Compare with a unit's compute time (seconds).
func BenchmarkUnitFile(b *testing.B) {
	dir := b.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, UnitsDir), 0o755); err != nil {
		b.Fatal(err)
	}
	res := fakeResult{Cell: "c", X: make([]float64, 50000)}
	for i := range res.X {
		res.X[i] = float64(i) * 1.37
	}
	p, err := NewPlanned("fake", &fakePlan{units: []Unit{{Cell: "c", Spec: []byte("x"), Seed: 1}}})
	if err != nil {
		b.Fatal(err)
	}
	id := p.Units()[0].ID()
	c := &Collection{Dir: dir, p: p}
	for b.Loop() {
		if err := writeUnit(dir, id, res); err != nil {
			b.Fatal(err)
		}
		var got fakeResult
		if err := c.Load(0, &got); err != nil {
			b.Fatal(err)
		}
	}
}

// writeUnit writes the unit file atomically, without a plan record (as older dprl did).
func writeUnit(dir, id string, v any) error { return writePlanUnit(dir, id, "", v) }

// TestCellUnits: a cell's units are its JSON spec at every seed (one unit per seed, the same
// spec, IDs that differ by seed); a spec with no JSON form is an error.
func TestCellUnits(t *testing.T) {
	us, err := CellUnits("a/b", map[string]int{"k": 3}, []uint64{5, 7}, 40)
	if err != nil {
		t.Fatal(err)
	}
	if len(us) != 2 || string(us[0].Spec) != `{"k":3}` || string(us[1].Spec) != `{"k":3}` ||
		us[0].Cell != "a/b" || us[0].Seed != 5 || us[1].Seed != 7 || us[0].Cost != 40 || us[1].Cost != 40 {
		t.Fatalf("units %+v", us)
	}
	if us[0].ID() == us[1].ID() {
		t.Error("the units of two seeds share an ID")
	}
	if _, err := CellUnits("c", math.Inf(1), []uint64{1}, 1); err == nil {
		t.Error("a spec with no JSON form (+Inf) planned")
	}
}
