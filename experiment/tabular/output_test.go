package tabular

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	agents "github.com/dprl/dprl/agents/tabular"
	"github.com/dprl/dprl/experiment/engine"
	"github.com/dprl/dprl/experiment/rundir"
	"github.com/dprl/dprl/experiment/rundir/rundirtest"
	model "github.com/dprl/dprl/model/tabular"
	"github.com/dprl/dprl/model/tabular/tabulartest"
)

// qiaoResult runs the qiao-fig1 configuration at a tiny K.
func qiaoResult(t *testing.T, seeds []uint64) *Result {
	t.Helper()
	cfg, err := QiaoFig1Config("paper")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Episodes, cfg.Seeds = 30, seeds
	res, err := Run(context.Background(), cfg, Options{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestManifestHonestTabular: the manifest is written after every other file (the qiao summary
// included), lists them, and records provenance: versions, the git commit ("unknown" under go
// test), and the SHA-256 of every input file.
func TestManifestHonestTabular(t *testing.T) {
	res := qiaoResult(t, []uint64{1, 2})
	dir := t.TempDir()
	if _, err := res.Write(dir, []string{"test"}, nil); err != nil {
		t.Fatal(err)
	}
	if _, _, err := WriteQiaoSummary(res, filepath.Join(dir, "summary.md")); err != nil {
		t.Fatal(err)
	}
	m := rundirtest.ReadManifest(t, dir)
	has := rundirtest.CheckFiles(t, dir, m)
	for _, f := range []string{"summary.md", "summary.claims.json", "regret-faithful.png"} {
		if !has[f] {
			t.Errorf("manifest files %v lack %s", m["files"], f)
		}
	}
	rundirtest.CheckProvenance(t, m)
	if m["git_modified"] != "unknown" || m["dprl_version"] != Version {
		t.Errorf("provenance: modified %v dprl %v", m["git_modified"], m["dprl_version"])
	}
	if in, ok := m["inputs"].([]any); !ok || len(in) != 0 {
		t.Errorf("inputs of an embedded config: %v, want []", m["inputs"])
	}

	// A failing summary write leaves no manifest: the manifest comes last.
	dir2 := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir2, "summary.md"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err1 := res.Write(dir2, nil, nil)
	_, _, err2 := WriteQiaoSummary(res, filepath.Join(dir2, "summary.md"))
	if err1 == nil && err2 == nil {
		t.Fatal("summary.md could not be written, yet no error")
	}
	if _, err := os.Stat(filepath.Join(dir2, "manifest.json")); err == nil {
		t.Error("manifest.json written although summary.md failed")
	}
}

// TestManifestSettingsUsed: a file environment records the file's H (not a flag's), the
// SHA-256 of the model file and the config file; non-private curves carry no ε/calibration
// and RiverSwim carries no Garnet parameters.
func TestManifestSettingsUsed(t *testing.T) {
	tmp := t.TempDir()
	envPath := tabulartest.RiverSwimFile(t, tmp, "rs5.json", 5, "json")
	cfgPath := filepath.Join(tmp, "c.yaml")
	yaml := "name: t\nenv: {name: file, path: " + envPath + ", horizon: 20}\nepisodes: 20\nseeds: [1]\n" +
		"curves:\n  - {agent: ucbvi, epsilon: 3, calibration: unit}\n  - {agent: dp-ucbvi-jdp, epsilon: 1}\n"
	if err := os.WriteFile(cfgPath, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := LoadConfig(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	man := writtenManifest(t, cfg)
	c := man["config"].(map[string]any)
	env := c["env"].(map[string]any)
	if env["horizon"] != 5.0 {
		t.Errorf("env.horizon = %v, want the file's H = 5", env["horizon"])
	}
	curves := c["curves"].([]any)
	if np := curves[0].(map[string]any); np["epsilon"] != nil || np["calibration"] != nil {
		t.Errorf("non-private curve records ε/calibration: %v", np)
	}
	if p := curves[1].(map[string]any); p["epsilon"] != 1.0 || p["calibration"] != "exact" {
		t.Errorf("private curve: %v", p)
	}
	if roles := rundirtest.HashedRoles(man); !roles["config"] || !roles["env"] {
		t.Errorf("inputs %v: want the SHA-256 of the config and env files", man["inputs"])
	}

	// RiverSwim: no Garnet parameters in the manifest.
	rs := &Config{Name: "rs", Runs: engine.Runs{Episodes: 10, Seeds: []uint64{1}}, Env: EnvConfig{Name: "riverswim", States: 10, Actions: 3, Branching: 3, Density: 0.3, EnvSeed: 1},
		Curves: []CurveSpec{{Agent: "ucbvi"}}}
	rs.defaults()
	env2 := writtenManifest(t, rs)["config"].(map[string]any)["env"].(map[string]any)
	for _, k := range []string{"states", "actions", "branching", "reward_density", "env_seed"} {
		if _, ok := env2[k]; ok {
			t.Errorf("riverswim manifest records garnet parameter %s", k)
		}
	}
}

// writtenManifest runs cfg on one worker, writes the run directory into a temporary directory
// and returns the manifest it wrote.
func writtenManifest(t *testing.T, cfg *Config) map[string]any {
	t.Helper()
	res, err := Run(context.Background(), cfg, Options{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if _, err := res.Write(dir, nil, nil); err != nil {
		t.Fatal(err)
	}
	return rundirtest.ReadManifest(t, dir)
}

// TestWriteIntoEarlierRun: a second run into the same directory is refused (no mix of stale
// curves); with Force the earlier run's files, orphan temporary files included, are removed.
func TestWriteIntoEarlierRun(t *testing.T) {
	c := smallConfig()
	c.Episodes = 20
	res, err := Run(context.Background(), c, Options{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	stale := filepath.Join(dir, "curves", "old-agent.csv")
	if err := os.MkdirAll(filepath.Dir(stale), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{stale, filepath.Join(dir, ".regret.png.tmp-123"), filepath.Join(dir, "manifest.json")} {
		if err := os.WriteFile(f, []byte("old"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The earlier run's record lists its files (the temporary file is regret.png's).
	if err := rundir.Claim(dir, "curves/old-agent.csv", "regret.png", "manifest.json"); err != nil {
		t.Fatal(err)
	}
	_, err = res.Write(dir, nil, nil)
	if err == nil || !strings.Contains(err.Error(), "--force") {
		t.Fatalf("write into an earlier run: err = %v, want a refusal naming --force", err)
	}
	res.Output.Force = true
	if _, err := res.Write(dir, nil, nil); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{stale, filepath.Join(dir, ".regret.png.tmp-123")} {
		if _, err := os.Stat(f); err == nil {
			t.Errorf("stale %s left beside the new run", f)
		}
	}
}

// TestOutputNames: labels, group names and the experiment name cannot escape the run
// directory; errors name the field.
func TestOutputNames(t *testing.T) {
	for _, tc := range []struct {
		edit  func(c *Config)
		field string
	}{
		{func(c *Config) { c.Name = "../x" }, "name"},
		{func(c *Config) { c.Name = "/abs" }, "name"},
		{func(c *Config) { c.Name = "" }, "name"},
		{func(c *Config) { c.Curves[0].Label = ".." }, "curves[0].label"},
		{func(c *Config) { c.Curves[0].Label = "a\x00b" }, "curves[0].label"},
		{func(c *Config) { c.Curves[0].Groups = []string{"../../g"} }, "curves[0].groups"},
		{func(c *Config) { c.Curves[0].Groups = []string{""} }, "curves[0].groups"},
		{func(c *Config) { c.Curves[0].Label, c.Curves[1].Label = "a b", "a_b" }, "curves[1].label"},
	} {
		c := smallConfig()
		tc.edit(c)
		err := c.Validate()
		if err == nil || !strings.HasPrefix(err.Error(), tc.field) {
			t.Errorf("%s: err = %v, want an error naming %s", tc.field, err, tc.field)
		}
	}
}

// zeroResult is a result whose curves all have zero regret (an agent that is optimal from the
// first episode), with the given number of seeds.
func zeroResult(seeds int) *Result {
	c := smallConfig()
	c.Episodes = 8
	c.Seeds = c.Seeds[:0]
	for s := range seeds {
		c.Seeds = append(c.Seeds, uint64(s+1))
	}
	res := &Result{Config: c, Env: "RiverSwim", VStar: 1, Horizon: 20, Workers: 1}
	for _, cv := range c.Curves {
		cr := CurveResult{Spec: cv, Privacy: agents.PrivacyReport{Model: "none"}}
		for _, s := range c.Seeds {
			cr.Runs = append(cr.Runs, SeedRun{Seed: s, Cum: make([]float64, c.Episodes)})
		}
		res.Curves = append(res.Curves, cr)
	}
	return res
}

// TestZeroRegretAndOneSeed: a zero-regret curve writes valid JSON (no NaN anywhere) and a
// one-seed run claims no confidence interval.
func TestZeroRegretAndOneSeed(t *testing.T) {
	for _, seeds := range []int{1, 3} {
		res := zeroResult(seeds)
		dir := t.TempDir()
		if _, err := res.Write(dir, nil, nil); err != nil {
			t.Fatalf("%d seeds: %v", seeds, err)
		}
		man, err := res.Write(t.TempDir(), nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if ci := engine.FinalCI(man.Curves[0]); (seeds == 1) != (ci == "n=1, no CI") || strings.Contains(ci, "NaN") {
			t.Errorf("%d seeds: CI text %q", seeds, ci)
		}
		c0 := rundirtest.Entry(t, rundirtest.ReadManifest(t, dir), "curves", 0)
		if seeds == 1 {
			rundirtest.CheckUndefined(t, "one seed", c0, "final_ci95_lo")
			if c0["final_ci95_hi"] != nil {
				t.Errorf("one seed: CI hi %v, want null", c0["final_ci95_hi"])
			}
		} else if c0["final_ci95_lo"] != 0.0 {
			t.Errorf("%d seeds: CI lo %v, want 0", seeds, c0["final_ci95_lo"])
		}
	}
}

// TestQiaoSummaryOneSeed: the summary of a one-seed run prints no 95 % CI.
func TestQiaoSummaryOneSeed(t *testing.T) {
	res := qiaoResult(t, []uint64{7})
	s, _, err := QiaoSummary(res)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(s, "n=1, no CI") {
		t.Errorf("one-seed summary does not say n=1, no CI:\n%s", s)
	}
	for _, line := range strings.Split(s, "\n") {
		if strings.Contains(line, "UCBVI") && strings.Contains(line, "[") {
			t.Errorf("one-seed row prints an interval: %s", line)
		}
	}
}

// TestNoLearningRiverSwim: the no-learning reference (uniform random policy) of RiverSwim
// H=20 is the 3.353475 per episode of tabular spec §7 that the summary used to hard-code.
func TestNoLearningRiverSwim(t *testing.T) {
	m, err := model.RiverSwim(20)
	if err != nil {
		t.Fatal(err)
	}
	got := noLearning(m, model.NewRegret(m).OptimalValue())
	if math.Abs(got-3.353475) > 5e-7 {
		t.Errorf("no-learning regret %.7f, want 3.353475", got)
	}
}
