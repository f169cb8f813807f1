package engine

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dprl/dprl/internal/inputerr"
)

// wantBad fails unless err is bad input whose message starts with prefix.
func wantBad(t *testing.T, what string, err error, prefix string) {
	t.Helper()
	if !inputerr.Is(err) || !strings.HasPrefix(err.Error(), prefix) {
		t.Errorf("%s: error %v (%T), want bad input starting with %q", what, err, err, prefix)
	}
}

// TestSeedsFlag: --seeds is parsed by ParseSeeds (TestParseSeeds checks the bounds, ranges
// and duplicates); its errors are bad input naming --seeds.
func TestSeedsFlag(t *testing.T) {
	if got, err := SeedsFlag(" 1 , 7-8 "); err != nil || !slices.Equal(got, []uint64{1, 7, 8}) {
		t.Errorf("SeedsFlag: %v, %v", got, err)
	}
	for _, in := range []string{"", "x", "5-1", "1,2,1", "0-1000", "1-"} {
		_, err := SeedsFlag(in)
		wantBad(t, in, err, "--seeds: ")
	}
}

// TestCommandChecks: --workers, --log-y and --out are checked as bad input naming the flag.
func TestCommandChecks(t *testing.T) {
	if CheckWorkers(0) != nil || CheckLogY("auto") != nil || CheckOutFlag(t.TempDir()) != nil {
		t.Error("valid flags refused")
	}
	wantBad(t, "workers", CheckWorkers(-1), "--workers: must be in [0, 1024]")
	wantBad(t, "log-y", CheckLogY("sideways"), `--log-y: must be auto, log or linear, got "sideways"`)
	wantBad(t, "out", CheckOutFlag(""), "--out: must not be empty")
	file := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	wantBad(t, "out file", CheckOutFlag(file), "--out: "+file+" exists and is not a directory")
}

// TestReadConfigFile: a configuration file is read once checked (a regular file holding one
// YAML document); anything else is bad input naming the flag.
func TestReadConfigFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, doc string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good.yaml", "family: fake\ncells: 1\nseeds: 1\n")
	if data, err := ReadConfigFile("--config", good); err != nil || string(data) != "family: fake\ncells: 1\nseeds: 1\n" {
		t.Errorf("good file: %q, %v", data, err)
	}
	_, err := ReadConfigFile("--config", dir)
	wantBad(t, "directory", err, "--config: "+dir+" is not a regular file")
	_, err = ReadConfigFile("--config", write("two.yaml", "a: 1\n---\nb: 2\n"))
	wantBad(t, "two documents", err, "--config: ")
	_, err = ReadConfigFile("--config", filepath.Join(dir, "missing.yaml"))
	wantBad(t, "missing", err, "--config: stat ")

	fam, block, inputs, err := ReadRunConfig(good, "tabular")
	if err != nil || fam != "fake" || string(block) != "cells: 1\nseeds: 1\n" || len(inputs) != 1 || inputs[0].Role != "config" {
		t.Errorf("ReadRunConfig: %q %q %v %v", fam, block, inputs, err)
	}
}

// TestDefaultRunDir: the default directory of a flag-built run names its family and agent and
// depends on the configuration only.
func TestDefaultRunDir(t *testing.T) {
	a := DefaultRunDir("linmix", "ucrl-vtr+/jdp", map[string]int{"episodes": 10})
	if !strings.HasPrefix(a, "runs/linmix-ucrl-vtr--jdp-") || len(a) != len("runs/linmix-ucrl-vtr--jdp-")+8 {
		t.Errorf("DefaultRunDir %q", a)
	}
	if b := DefaultRunDir("linmix", "ucrl-vtr+/jdp", map[string]int{"episodes": 10}); b != a {
		t.Errorf("same configuration, different directories %q, %q", a, b)
	}
	if b := DefaultRunDir("linmix", "ucrl-vtr+/jdp", map[string]int{"episodes": 11}); b == a {
		t.Errorf("different configurations, same directory %q", a)
	}
	if got := dirName("../.."); got != "run" {
		t.Errorf("dirName(../..) = %q", got)
	}
}

// TestLocalRun: a run into --out writes the run directory; a second run there is bad input
// naming --force, and runs with Force; without --out the run goes to runs/<plan name>, checked
// once planned.
func TestLocalRun(t *testing.T) {
	r := fakeRegistry(nil)
	planned := func() (*Planned, error) { return r.PlanBlock("fake", []byte("cells: 1\nseeds: 2\n"), "test") }
	out := filepath.Join(t.TempDir(), "run")
	l := LocalRun{Workers: 2, Out: out, OutSet: true, LogY: "auto"}
	if text, err := l.Run(planned); err != nil || text != "ok" {
		t.Fatalf("run: %q, %v", text, err)
	}
	if _, err := os.Stat(filepath.Join(out, "out.csv")); err != nil {
		t.Fatal(err)
	}
	_, err := l.Run(planned)
	wantBad(t, "earlier run", err, "--out: ")
	if err == nil || !strings.Contains(err.Error(), "--force") {
		t.Errorf("earlier run: %v does not name --force", err)
	}
	l.Force = true
	if _, err := l.Run(planned); err != nil {
		t.Errorf("--force: %v", err)
	}
	_, err = LocalRun{Workers: -1, Out: out, OutSet: true, LogY: "auto"}.Run(planned)
	wantBad(t, "workers", err, "--workers")
	_, err = LocalRun{Out: "", OutSet: true, LogY: "auto"}.Run(planned)
	wantBad(t, "empty --out", err, "--out: must not be empty")

	t.Chdir(t.TempDir())
	if _, err := (LocalRun{LogY: "auto"}).Run(planned); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join("runs", "fake", "out.csv")); err != nil {
		t.Errorf("default directory: %v", err)
	}
	_, err = LocalRun{LogY: "auto"}.Run(planned)
	wantBad(t, "earlier run in the default directory", err, "--out: ")
}

// TestRunFlagsSpec: the shared flags fill a RunSpec; missing, refused and conflicting flags
// and the RunSpec's own errors are bad input naming the flag.
func TestRunFlagsSpec(t *testing.T) {
	given := func(names ...string) func(string) bool {
		return func(n string) bool { return slices.Contains(names, n) }
	}
	base := RunFlags{Family: "fake", Agent: "a", Seeds: "1-2", Episodes: 10, Delta: 1e-5, Noise: "seeded", Multiplier: 1,
		EnvParams: []string{"horizon=5"}, Epsilon: 2, Env: "chain",
		NamedParams: map[string]string{"states": "states", "horizon": "horizon"}, Value: func(string) string { return "4" }}
	f := base
	f.Changed = given("agent", "epsilon", "env", "states")
	s, err := f.Spec()
	if err != nil {
		t.Fatal(err)
	}
	if s.Env.Name != "chain" || s.Env.Params["horizon"] != 5 || s.Env.Params["states"] != 4 || !slices.Equal(s.Privacy.Epsilons, []float64{2}) ||
		!slices.Equal(s.Seeds, []uint64{1, 2}) || s.Name != "run" {
		t.Errorf("spec %+v", s)
	}
	for _, c := range []struct {
		changed []string
		edit    func(*RunFlags)
		want    string
	}{
		{[]string{"epsilon"}, nil, "--agent: required with --family fake"},
		{[]string{"agent", "beta"}, func(f *RunFlags) { f.Refused, f.RefusedWhy = []string{"beta"}, "here" }, "--beta: has no effect here; remove it"},
		{[]string{"agent", "horizon"}, nil, "--env-param horizon: also given as --horizon"},
		{[]string{"agent"}, func(f *RunFlags) { f.EnvParams = []string{"x"} }, "--env-param: want NAME=NUMBER"},
		{[]string{"agent", "delta"}, func(f *RunFlags) { f.Delta = 2 }, "--delta: must be in (0, 1), got 2"},
		{[]string{"agent", "epsilon"}, func(f *RunFlags) { f.Epsilon = -1 }, "--epsilon"},
		{[]string{"agent", "env", "env-file"}, func(f *RunFlags) { f.EnvFile = "m.yaml" }, "--env-file: only with env.name file"},
	} {
		f := base
		f.Changed = given(c.changed...)
		if c.edit != nil {
			c.edit(&f)
		}
		_, err := f.Spec()
		wantBad(t, strings.Join(c.changed, ","), err, c.want)
	}
	if err := FlagError(os.ErrNotExist); !inputerr.Is(err) || err.Error() != os.ErrNotExist.Error() {
		t.Errorf("FlagError of another error: %v", err)
	}
}

// TestParseEnvParams: NAME=NUMBER, each name once, finite numbers.
func TestParseEnvParams(t *testing.T) {
	if p, err := ParseEnvParams([]string{"m=5", "q=0.25"}); err != nil || p["m"] != 5 || p["q"] != 0.25 {
		t.Errorf("%v, %v", p, err)
	}
	_, err := ParseEnvParams([]string{"m=NaN"})
	wantBad(t, "NaN", err, `--env-param m: want a finite number, got "NaN"`)
	_, err = ParseEnvParams([]string{"m=1", "m=2"})
	wantBad(t, "twice", err, "--env-param: m given twice")
	_, err = ParseEnvParams(make([]string, MaxEnvParams+1))
	wantBad(t, "too many", err, "--env-param: at most")
}

// TestWriteClusterFiles: the Slurm and Kubernetes launchers resolve an embedded reproduction
// or a configuration file and write their files; missing flags are bad input.
func TestWriteClusterFiles(t *testing.T) {
	r := fakeRegistry(nil)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "s.yaml")
	if err := os.WriteFile(cfg, []byte("family: fake\ncells: 1\nseeds: 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := Cluster{Out: filepath.Join(dir, "out"), Shards: 2, Workers: 1, Dprl: "/opt/dprl"}
	paths, submit, err := r.WriteSlurm(&c, cfg, "fake", "")
	if err != nil {
		t.Fatal(err)
	}
	if submit != filepath.Join(dir, "out", "slurm", "submit.sh") || !slices.Contains(paths, submit) || c.Name != "fake" || c.Config != cfg {
		t.Errorf("slurm: %v, %s, %+v", paths, submit, c)
	}
	if st, err := os.Stat(submit); err != nil || st.Mode().Perm()&0o100 == 0 {
		t.Errorf("submit.sh: %v, %v", st, err)
	}
	k := Cluster{Out: "sweeps/s", Shards: 2, Workers: 1, Dprl: "dprl", Mount: "/runs", Claim: "pvc"}
	_, _, _, err = r.WriteK8s(&k, cfg, "fake", filepath.Join(dir, "k8s"))
	wantBad(t, "k8s without image", err, "--image: required")
	k.Image = "dprl:1"
	paths, run, merge, err := r.WriteK8s(&k, cfg, "fake", filepath.Join(dir, "k8s"))
	if err != nil || !slices.Contains(paths, run) || !slices.Contains(paths, merge) {
		t.Errorf("k8s: %v, %s, %s, %v", paths, run, merge, err)
	}
	_, _, err = r.WriteSlurm(&Cluster{Out: c.Out, Shards: 2, Workers: 1}, filepath.Join(dir, "none.yaml"), "fake", "")
	wantBad(t, "missing configuration", err, "config: ")
	if ShellWord("a/b.sh") != "a/b.sh" || ShellWord("it's") != `'it'\''s'` || ShellWord("") != "''" {
		t.Error("ShellWord")
	}
	if _, err := r.Reproduction("nope"); !inputerr.Is(err) {
		t.Errorf("unknown reproduction: %v", err)
	}
}

// TestWriteUnits: `dprl sweep plan` lists every unit with its shard and the total cost.
func TestWriteUnits(t *testing.T) {
	p := plan(t, fakeRegistry(nil), 2, 2)
	var b strings.Builder
	WriteUnits(&b, p, 3)
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 7 || lines[0] != "# fake: family fake, 4 units" || !strings.HasPrefix(lines[5], "3\t0\t"+p.Units()[3].ID()+"\t2\tcell1") ||
		lines[6] != "# total cost 40 episodes" {
		t.Errorf("WriteUnits:\n%s", b.String())
	}
}
