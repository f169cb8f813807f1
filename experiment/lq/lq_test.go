package lq

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dprl/dprl/experiment/engine"
	"github.com/dprl/dprl/experiment/engine/enginetest"
	model "github.com/dprl/dprl/model/lq"
)

func smallConfig(t *testing.T) *Config {
	t.Helper()
	c, err := DefaultConfig()
	if err != nil {
		t.Fatal(err)
	}
	c.Episodes = 120
	c.Seeds = []uint64{1, 2}
	c.Epsilons = []float64{math.Inf(1), 1}
	c.Search.RandomStarts = 1
	c.Search.MaxIter = 20
	return c
}

// TestWorkersBitIdentical: the same seeds give bit-identical curves for 1 and 3 workers.
func TestWorkersBitIdentical(t *testing.T) {
	c := smallConfig(t)
	rs := enginetest.RunWorkers(t, func(w int) (*Result, error) {
		return Run(context.Background(), c, Options{LocalOptions: engine.LocalOptions{Workers: w}})
	}, 1, 3)
	a, b := rs[0], rs[1]
	for i := range a.Curves {
		for j := range a.Curves[i].Runs {
			x, y := a.Curves[i].Runs[j].Cum, b.Curves[i].Runs[j].Cum
			for k := range x {
				if x[k] != y[k] {
					t.Fatalf("curve %d seed %d differs at k=%d", i, j, k+1)
				}
			}
		}
	}
	// The private curve is exactly the zero line.
	for _, r := range a.Curves[1].Runs {
		if r.FirstOffZero != 0 || r.ZeroLineMaxRelDev > 1e-9 {
			t.Fatalf("private run left the zero line: %+v", r)
		}
	}
	dir := t.TempDir()
	summary, err := a.Write(dir, "test", []string{"dprl", "reproduce", "lq"})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"manifest.json", "summary.md", "regret-LQ-E1.png", "regret-LQ-E1.svg", "curves/LQ-E1/zero-policy.csv"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Fatalf("missing %s: %v", f, err)
		}
	}
	if !strings.Contains(summary, "R(k) = Z(k)") || !strings.Contains(summary, "(eps=0.497957, delta=1e-05)-DP") {
		t.Fatalf("summary lacks the identity or the guarantee:\n%s", summary)
	}
}

func TestConfigBadInput(t *testing.T) {
	for _, c := range []struct {
		mod  func(*Config)
		want string
	}{
		{func(c *Config) { c.Episodes = 0 }, "episodes"},
		{func(c *Config) { c.Seeds = nil }, "seeds"},
		{func(c *Config) { c.Seeds = []uint64{1, 1} }, "seeds"},
		{func(c *Config) { c.Epsilons = []float64{-1} }, "epsilons"},
		{func(c *Config) { c.Delta = 2 }, "delta"},
		{func(c *Config) { c.Calibration = "x" }, "calibration"},
		{func(c *Config) { c.Neighbouring = "x" }, "neighbouring"},
		{func(c *Config) { c.System = "nope.yaml" }, "system"},
		{func(c *Config) { c.WidthMultiplier = 0 }, "width multiplier"},
	} {
		cfg, _ := DefaultConfig()
		c.mod(cfg)
		err := cfg.Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %v, want one naming %q", err, c.want)
		}
	}
	cfg, _ := DefaultConfig()
	cfg.System = "../../model/lq/testdata/lqe1.yaml"
	if err := cfg.Validate(); err != nil {
		t.Errorf("system file: %v", err)
	}
	if _, err := ParseConfig([]byte("episodes: 10\nbogus: 1\n")); err == nil {
		t.Error("unknown field accepted")
	}
}

// practicalSpecOf returns a validated RunSpec of family practical-lq (defaults applied; K = 50).
func practicalSpecOf(t *testing.T, s engine.RunSpec) *engine.RunSpec {
	t.Helper()
	return enginetest.Spec(t, FamilyName, s, 50)
}

// TestPracticalPlanSpec: valid RunSpecs plan the requested agents × ε × seeds; bad inputs are
// refused with an error naming the RunSpec field.
func TestPracticalPlanSpec(t *testing.T) {
	dir := t.TempDir()
	sysFile := filepath.Join(dir, "sys.json")
	b, err := json.Marshal(model.LQE1Config())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(sysFile, b, 0o644); err != nil {
		t.Fatal(err)
	}
	eps := engine.PrivacySpec{Epsilons: []float64{0.5, 1}}
	all := []string{"practical-ofu-rl", "practical-ofu-rl-theory", "practical-ofu-rl-noise-off", "private-ofu-rl", "ofu-rl"}
	for _, c := range []struct {
		name  string
		spec  engine.RunSpec
		units int    // expected units (0: an error is expected)
		field string // the field the error names
	}{
		{"every agent", engine.RunSpec{Agents: all, Privacy: eps}, (2 + 2 + 1 + 2 + 1) * 2, ""},
		{"practical only", engine.RunSpec{Agents: []string{"practical-ofu-rl"}, Privacy: engine.PrivacySpec{Epsilons: []float64{1}, Calibration: "exact"}}, 2, ""},
		{"non-private only", engine.RunSpec{Agents: []string{"ofu-rl", "practical-ofu-rl-noise-off"}}, 2 * 2, ""},
		{"system file", engine.RunSpec{Env: engine.EnvSpec{Name: "file", File: sysFile}, Agents: []string{"practical-ofu-rl-theory"}, Privacy: eps}, 2 * 2, ""},
		{"unknown agent", engine.RunSpec{Agents: []string{"ofu-rl", "nope"}}, 0, "agents[1]"},
		{"tabular agent", engine.RunSpec{Agents: []string{"practical-jdp"}}, 0, "agents[0]"},
		{"no epsilons", engine.RunSpec{Agents: []string{"private-ofu-rl"}}, 0, "privacy.epsilons"},
		{"no epsilons practical", engine.RunSpec{Agents: []string{"ofu-rl", "practical-ofu-rl"}}, 0, "privacy.epsilons"},
		{"env param", engine.RunSpec{Env: engine.EnvSpec{Params: map[string]float64{"horizon": 5}}, Agents: []string{"ofu-rl"}}, 0, "env.params.horizon"},
		{"unknown env", engine.RunSpec{Env: engine.EnvSpec{Name: "riverswim"}, Agents: []string{"ofu-rl"}}, 0, "env.name"},
		{"missing file", engine.RunSpec{Env: engine.EnvSpec{Name: "file", File: filepath.Join(dir, "none.yaml")}, Agents: []string{"ofu-rl"}}, 0, "env.file"},
		{"paper calibration", engine.RunSpec{Agents: []string{"private-ofu-rl"}, Privacy: engine.PrivacySpec{Epsilons: []float64{1}, Calibration: "paper"}}, 0, "privacy.calibration"},
		{"secure noise", engine.RunSpec{Agents: []string{"practical-ofu-rl"}, Privacy: engine.PrivacySpec{Epsilons: []float64{1}, Noise: "secure"}}, 0, "privacy.noise"},
		{"bonus multiplier", engine.RunSpec{Agents: []string{"ofu-rl"}, Multipliers: engine.MultiplierSpec{Bonus: 2}}, 0, "multipliers.bonus"},
		{"one episode", engine.RunSpec{Agents: []string{"ofu-rl"}, Runs: engine.Runs{Episodes: 1}}, 0, "episodes"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, err := PracticalSuite{}.PlanSpec(practicalSpecOf(t, c.spec), "test")
			enginetest.CheckPlan(t, p, err, c.units, c.field, strings.HasPrefix)
		})
	}
}

// TestPracticalSpecUnits: a RunSpec's curves are the reproduction's curves of the requested
// agents (the same unit specifications as the embedded reproduction's at the same settings);
// a system file's digest enters the units.
func TestPracticalSpecUnits(t *testing.T) {
	full, err := DefaultPracticalExpConfig()
	if err != nil {
		t.Fatal(err)
	}
	full.Episodes, full.PaperEpisodes, full.OFUEpisodes, full.Seeds = 50, 50, 50, []uint64{1}
	fp, err := newPracticalPlan(full)
	if err != nil {
		t.Fatal(err)
	}
	ref := map[string]string{}
	for _, u := range fp.Units() {
		ref[u.Cell] = string(u.Spec)
	}
	s := practicalSpecOf(t, engine.RunSpec{Agents: []string{"ofu-rl", "practical-ofu-rl"}, Privacy: engine.PrivacySpec{Epsilons: []float64{1, 2}}, Runs: engine.Runs{Seeds: []uint64{1}}})
	p, err := PracticalSuite{}.PlanSpec(s, "test")
	if err != nil {
		t.Fatal(err)
	}
	var cells []string
	for _, u := range p.Units() {
		cells = append(cells, u.Cell)
		if ref[u.Cell] != string(u.Spec) {
			t.Errorf("%s: spec %s, reproduction's %s", u.Cell, u.Spec, ref[u.Cell])
		}
	}
	if got := strings.Join(cells, "; "); got != "practical-ofu-rl eps=1 [practical, dprl]; practical-ofu-rl eps=2 [practical, dprl]; OFU-RL eps=inf (paper, non-private)" {
		t.Errorf("cells %s", got)
	}
}

// TestPracticalAgentsConfig: the optional agents selection of a configuration is validated.
func TestPracticalAgentsConfig(t *testing.T) {
	base := "name: t\nsystem: lq-e1\nepisodes: 50\npaper_episodes: 0\nofu_episodes: 50\nseeds: [1]\ndelta: 1.0e-5\nbudget: 4\nbatch_every: 10\ncounter: blt\nconfidence: 0.05\nreferences: 4\nsearch: {random_starts: 1, max_iter: 5}\n"
	if _, err := ParsePracticalExpConfig([]byte(base + "agents: [ofu-rl]\n")); err != nil {
		t.Fatalf("non-private selection without epsilons rejected: %v", err)
	}
	for _, c := range []struct{ extra, field string }{
		{"agents: [nope]\n", "agents[0]"},
		{"agents: [ofu-rl, ofu-rl]\n", "agents[1]"},
		{"agents: [private-ofu-rl]\nepsilons: [1]\n", "agents[0]"}, // paper_episodes 0
		{"agents: [practical-ofu-rl-theory]\nepsilons: [1]\n", "agents[0]"},
		{"agents: [practical-ofu-rl]\n", "epsilons"},
		{"", "epsilons"}, // every agent: epsilons required, as before
	} {
		_, err := ParsePracticalExpConfig([]byte(base + c.extra))
		if err == nil || !strings.HasPrefix(err.Error(), c.field) {
			t.Errorf("%q: error %v, want one naming %s", c.extra, err, c.field)
		}
	}
}
