package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dprl/dprl/experiment/rundir"
)

// badCase is one invocation that must be refused as bad input.
type badCase struct {
	name string
	args []string
	want string // a substring of the error
}

// checkBad runs each case through the CLI entry point and requires exit status 2, one
// "dprl: error:" line naming want, no output directory and no compute (each case returns
// within a few seconds although several would run for hours).
func checkBad(t *testing.T, cases []badCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			code, _, stderr := runCLI(t, c.args...)
			if code != 2 || !strings.HasPrefix(stderr, "dprl: error:") || !strings.Contains(stderr, c.want) {
				t.Errorf("%q: exit %d, stderr %q; want exit 2 and an error mentioning %q", c.args, code, stderr, c.want)
			}
			if strings.Contains(stderr, "goroutine ") || strings.Contains(stderr, "panic") {
				t.Errorf("stack trace: %s", stderr)
			}
			if el := time.Since(start); el > 30*time.Second {
				t.Errorf("took %v: the input was not refused before computing", el)
			}
		})
	}
}

// TestBadInputExit2: every kind of bad input exits with status 2 before any compute: invalid
// Garnet parameters and sizes, ε too small for a finite noise scale, NaN ε, an unusable
// --out, count flags beyond their bounds, and runs whose stored regret would exceed the
// memory limit.
func TestBadInputExit2(t *testing.T) {
	dir := t.TempDir()
	file := putFile(t, dir, "file", "x")
	badMDP := putFile(t, dir, "mdp.json", `{"states": 2, "states": 2}`)
	lm := putFile(t, dir, "lm.yaml", lmTestConfig)
	lin := putFile(t, dir, "lin.yaml", linSmall)
	tinyEpsLM := filepath.Join(dir, "lm-eps.yaml")
	if err := os.WriteFile(tinyEpsLM, []byte(strings.Replace(lmTestConfig, "mode: jdp, epsilons: [0.5]}\n  - {algorithm: ucrl-vtr, mode: ldp",
		"mode: jdp, epsilons: [1e-320]}\n  - {algorithm: ucrl-vtr, mode: ldp", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	tinyEpsLin := putFile(t, dir, "lin-eps.yaml", strings.Replace(linSmall, "epsilons: [10]", "epsilons: [1e-320]", 1))
	twoDocs := putFile(t, dir, "two.yaml", "name: x\nepisodes: 10\nseeds: [1]\ncurves: [{agent: ucbvi}]\n---\nname: y\n")
	lmTwo := putFile(t, dir, "lm-two.yaml", lmTestConfig+"---\n"+lmTestConfig)
	linTwo := putFile(t, dir, "lin-two.yaml", linSmall+"---\n"+linSmall)
	out := filepath.Join(dir, "out")
	long := []string{"--episodes", "10000000", "--seeds", "1-3", "--quiet"} // hours of compute
	run := func(args ...string) []string { return append(append([]string{"run", "--out", out}, long...), args...) }
	cases := []badCase{
		{"garnet branching", run("--env", "garnet", "--branching", "0"), "garnet.branching"},
		{"garnet density", run("--env", "garnet", "--reward-density", "NaN"), "reward_density"},
		{"garnet size", run("--env", "garnet", "--states", "100", "--actions", "100"), "exceeds the limit 2^24"},
		{"garnet states", run("--env", "garnet", "--states", "0"), "garnet.states"},
		{"tiny epsilon", run("--agent", "dp-ucbvi-jdp", "--epsilon", "1e-320"), "epsilon"},
		{"NaN epsilon", run("--agent", "dp-ucbvi-ldp", "--epsilon", "NaN"), "epsilon"},
		{"negative epsilon", run("--agent", "dp-ucbvi-ldp", "--epsilon", "-1"), "epsilon"},
		{"invalid file", run("--env", "file", "--env-file", badMDP), "duplicate key"},
		{"missing file", run("--env", "file", "--env-file", filepath.Join(dir, "none.json")), "none.json"},
		{"out is a file", append(run(), "--out", file), "--out"},
		{"out below a file", append(run(), "--out", filepath.Join(file, "sub")), "--out"},
		{"workers", run("--workers", "100000"), "--workers"},
		{"regret memory", append(run(), "--episodes", "10000000", "--seeds", "0-999"), "exceeds the limit"},
		{"episodes beyond the limit", append(run(), "--episodes", "10000001"), "episodes"},
		{"seeds beyond the limit", append(run(), "--seeds", "0-1000"), "--seeds"},
		{"reproduce episodes beyond the limit", []string{"reproduce", "qiao-fig1", "--episodes", "10000001", "--out", out}, "--episodes"},
		{"reproduce episodes 0", []string{"reproduce", "qiao-fig1", "--episodes", "0", "--out", out}, "--episodes"},
		{"qiao out", []string{"reproduce", "qiao-fig1", "--out", file, "--quiet"}, "--out"},
		{"lq out", []string{"reproduce", "lq", "--out", filepath.Join(file, "x"), "--quiet"}, "--out"},
		{"lq memory", []string{"reproduce", "lq", "--episodes", "10000000", "--seeds", "0-999", "--out", out, "--quiet"}, "exceeds the limit"},
		{"linear-mixture out", []string{"reproduce", "linear-mixture", "--config", lm, "--out", file, "--quiet"}, "--out"},
		{"linear-mixture tiny epsilon", []string{"reproduce", "linear-mixture", "--config", tinyEpsLM, "--out", out, "--quiet"}, "epsilon"},
		{"linear-mdp out", []string{"reproduce", "linear-mdp", "--config", lin, "--out", file, "--quiet"}, "--out"},
		{"linear-mdp tiny epsilon", []string{"reproduce", "linear-mdp", "--config", tinyEpsLin, "--out", out, "--quiet"}, "epsilon"},
		{"config with two documents", []string{"run", "--config", twoDocs, "--out", out}, "more than one YAML document"},
		{"config device", []string{"run", "--config", "/dev/zero", "--out", out}, "not a regular file"},
		{"env-file device", run("--env", "file", "--env-file", "/dev/zero"), "64 MiB"},
		{"practical-linear-mdp log-y", []string{"reproduce", "practical-linear-mdp", "--log-y", "loglog", "--out", out}, "--log-y"},
		{"practical-linear-mixture tiny epsilon", []string{"reproduce", "practical-linear-mixture", "--config", tinyEpsLM, "--out", out, "--quiet"}, "epsilon"},
		{"practical-lq memory", []string{"reproduce", "practical-lq", "--episodes", "10000000", "--seeds", "0-999", "--out", out, "--quiet"}, "exceeds the limit"},
		{"practical-lq log-y", []string{"reproduce", "practical-lq", "--log-y", "x", "--out", out}, "--log-y"},
		{"audit out", []string{"audit", "mechanism/laplace", "--out", file, "--quiet"}, "--out"},
		{"audit runs", []string{"audit", "mechanism/laplace", "--runs", "1000000000", "--out", out}, "--runs"},
		{"audit workers", []string{"audit", "mechanism/laplace", "--workers", "100000", "--out", out}, "--workers"},
	}
	// Every reproduction read from a configuration file refuses a device and a file of two YAML
	// documents as --config.
	for _, r := range []struct{ name, twoDocs string }{
		{"linear-mixture", lmTwo}, {"linear-mdp", linTwo}, {"practical-tabular", twoDocs}, {"practical-linear-mixture", lmTwo}, {"lq", twoDocs},
	} {
		cases = append(cases,
			badCase{r.name + " config device", []string{"reproduce", r.name, "--config", "/dev/zero", "--out", out}, "not a regular file"},
			badCase{r.name + " config with two documents", []string{"reproduce", r.name, "--config", r.twoDocs, "--out", out}, "more than one YAML document"})
	}
	// The practical reproductions call the same checks of --out and --workers.
	for _, r := range []struct{ name, out string }{
		{"practical-tabular", file}, {"practical-linear-mdp", file}, {"practical-linear-mixture", file}, {"practical-lq", filepath.Join(file, "x")},
	} {
		cases = append(cases,
			badCase{r.name + " out", []string{"reproduce", r.name, "--out", r.out, "--quiet"}, "--out"},
			badCase{r.name + " workers", []string{"reproduce", r.name, "--workers", "100000", "--out", out}, "--workers"})
	}
	checkBad(t, cases)
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("bad input created the output directory %s", out)
	}
}

// TestFlagsNeverIgnored: an explicit value is never replaced by a default (--beta 0,
// --multiplier 0) and a flag that would have no effect is refused with exit status 2 rather
// than silently ignored.
func TestFlagsNeverIgnored(t *testing.T) {
	dir := t.TempDir()
	cfg := putFile(t, dir, "c.yaml", "name: x\nepisodes: 10\nseeds: [1]\ncurves: [{agent: ucbvi}]\n")
	mdp := filepath.Join("..", "..", "model", "tabular", "testdata", "riverswim.yaml")
	out := filepath.Join(dir, "out")
	run := func(args ...string) []string {
		return append([]string{"run", "--out", out, "--episodes", "10000000", "--quiet"}, args...)
	}
	checkBad(t, []badCase{
		{"beta 0", run("--beta", "0"), "--beta"},
		{"beta NaN", run("--beta", "NaN"), "--beta"},
		{"multiplier 0", run("--multiplier", "0"), "--multiplier"},
		{"multiplier Inf", run("--multiplier", "Inf"), "--multiplier"},
		{"epsilon, non-private", run("--agent", "ucbvi", "--epsilon", "1"), "--epsilon"},
		{"calibration, non-private", run("--agent", "ucbvi", "--calibration", "paper"), "--calibration"},
		{"noise, non-private", run("--agent", "ucbvi", "--noise", "secure"), "--noise"},
		{"states with riverswim", run("--states", "12"), "--states"},
		{"env-seed with riverswim", run("--env-seed", "3"), "--env-seed"},
		{"branching with file", run("--env", "file", "--env-file", mdp, "--branching", "2"), "--branching"},
		{"horizon with file", run("--env", "file", "--env-file", mdp, "--horizon", "5"), "--horizon"},
		{"env-file without env file", run("--env-file", mdp), "--env-file"},
		{"episodes beside config", []string{"run", "--config", cfg, "--episodes", "5", "--out", out}, "--episodes"},
		{"agent beside config", []string{"run", "--config", cfg, "--agent", "ucbvi", "--out", out}, "--agent"},
		{"qiao preset empty", []string{"reproduce", "qiao-fig1", "--preset", "", "--out", out}, "--preset"},
		{"qiao seeds empty", []string{"reproduce", "qiao-fig1", "--seeds", "", "--out", out}, "--seeds"},
		{"practical-linear-mixture long beside config", []string{"reproduce", "practical-linear-mixture", "--config", cfg, "--long", "--out", out}, "--long"},
		{"audit list and all", []string{"audit", "--list", "--all"}, "--list"},
		{"audit list and target", []string{"audit", "--list", "mechanism/laplace"}, "--list"},
	})
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("bad input created the output directory %s", out)
	}
	// The flags that do apply beside --config are accepted.
	code, _, stderr := runCLI(t, "run", "--config", cfg, "--out", out, "--workers", "1", "--quiet")
	if code != 0 {
		t.Fatalf("run --config with --out/--workers/--quiet: exit %d, %s", code, stderr)
	}
}

// runCommands returns every command that writes a run directory (run and each reproduction)
// with arguments that would compute for a long time (so a refusal must come before compute).
func runCommands(t *testing.T) map[string][]string {
	t.Helper()
	cmds := map[string][]string{"run": {"run", "--episodes", "10000000", "--seeds", "1-3"}}
	for name := range newRegistry().Reproductions() {
		cmds[name] = []string{"reproduce", name}
	}
	return cmds
}

// TestOutputFlagsEverywhere: every run and reproduce command has --force and --log-y (an
// unknown axis is bad input, exit 2, before any compute).
func TestOutputFlagsEverywhere(t *testing.T) {
	root := newRoot(io.Discard, io.Discard)
	out := filepath.Join(t.TempDir(), "out")
	var cases []badCase
	for name, args := range runCommands(t) {
		c, _, err := root.Find(args)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if c.Flags().Lookup("force") == nil {
			t.Errorf("%s has no --force", name)
		}
		if c.Flags().Lookup("log-y") == nil {
			t.Errorf("%s has no --log-y", name)
			continue
		}
		cases = append(cases, badCase{name + " log-y", append(append([]string(nil), args...), "--log-y", "sideways", "--out", out, "--quiet"), "--log-y"})
	}
	checkBad(t, cases)
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("bad input created the output directory %s", out)
	}
}

// TestEarlierRunNeedsForce: a run into a directory holding an earlier run is refused with
// exit status 2, before any compute, by every run and reproduce command, with a message naming
// --force, and the earlier run is left intact; with --force the earlier run's files are
// removed and the new run completes.
func TestEarlierRunNeedsForce(t *testing.T) {
	dir := t.TempDir()
	earlier := filepath.Join(dir, "earlier")
	stale := filepath.Join(earlier, "curves", "stale.csv")
	if err := os.MkdirAll(filepath.Dir(stale), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{filepath.Join(earlier, "manifest.json"), stale} {
		if err := os.WriteFile(f, []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := rundir.Claim(earlier, "manifest.json", "curves/stale.csv"); err != nil { // dprl wrote them
		t.Fatal(err)
	}
	var cases []badCase
	for name, args := range runCommands(t) {
		cases = append(cases, badCase{name, append(append([]string(nil), args...), "--out", earlier, "--quiet"), "--force"})
	}
	checkBad(t, cases)
	if _, err := os.Stat(stale); err != nil {
		t.Fatalf("a refused run touched the earlier run: %v", err)
	}
	code, _, stderr := runCLI(t, "run", "--episodes", "20", "--seeds", "1", "--out", earlier, "--force", "--quiet", "--log-y", "linear")
	if code != 0 {
		t.Fatalf("run --force: exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("--force left the earlier run's %s", stale)
	}
	if _, err := os.Stat(filepath.Join(earlier, "manifest.json")); err != nil {
		t.Errorf("no manifest after run --force: %v", err)
	}
}
