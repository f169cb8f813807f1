package practical

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dprl/dprl/experiment/internal/cfgfile/cfgfiletest"
	"github.com/dprl/dprl/experiment/rundir"
	"github.com/dprl/dprl/experiment/rundir/rundirtest"
	"github.com/dprl/dprl/report"
)

// TestDefaultConfig: the embedded configuration parses, validates, and states the issue's
// setting (RiverSwim H = 20, K = 5·10⁴, 5 seeds, δ = 1e-5, the ε grid, LDP --long K = 10⁶).
func TestDefaultConfig(t *testing.T) {
	c, err := DefaultConfig()
	if err != nil {
		t.Fatal(err)
	}
	if c.Horizon != 20 || c.Episodes != 50000 || len(c.Seeds) != 5 || c.Delta != 1e-5 || c.LDPLongEpisodes != 1_000_000 {
		t.Errorf("embedded config: %+v", c)
	}
	want := []float64{0.1, 0.5, 1, 2, 5, 10}
	if len(c.Epsilons) != len(want) {
		t.Fatalf("epsilons %v, want %v", c.Epsilons, want)
	}
	for i := range want {
		if c.Epsilons[i] != want[i] {
			t.Fatalf("epsilons %v, want %v", c.Epsilons, want)
		}
	}
	if len(c.Garnet.EnvSeeds) == 0 || c.Long {
		t.Errorf("garnet %+v, long %v", c.Garnet, c.Long)
	}
}

const tinyYAML = `name: tiny
horizon: 4
episodes: 40
ldp_episodes: 30
ldp_long_episodes: 50
seeds: [1]
delta: 1.0e-5
epsilons: [1]
garnet:
  env_seeds: [7]
  states: 3
  actions: 2
  branching: 2
  reward_density: 0.5
  episodes: 20
  seeds: [1]
`

// TestBadConfig: every invalid field is rejected with an error naming it (and unknown fields
// are refused).
func TestBadConfig(t *testing.T) {
	if _, err := ParseConfig([]byte(tinyYAML)); err != nil {
		t.Fatalf("tiny config rejected: %v", err)
	}
	for _, c := range []struct{ old, new, field string }{
		{"episodes: 40", "episodes: 5", "episodes"},
		{"ldp_episodes: 30", "ldp_episodes: 0", "ldp_episodes"},
		{"ldp_long_episodes: 50", "ldp_long_episodes: 1000000000", "ldp_long_episodes"},
		{"horizon: 4", "horizon: 0", "horizon"},
		{"seeds: [1]\ndelta", "seeds: []\ndelta", "seeds"},
		{"seeds: [1]\ndelta", "seeds: [2, 2]\ndelta", "seeds"},
		{"delta: 1.0e-5", "delta: 1.5", "delta"},
		{"epsilons: [1]", "epsilons: [1, -2]", "epsilons[1]"},
		{"epsilons: [1]", "epsilons: [2]", "epsilons"},
		{"env_seeds: [7]", "env_seeds: []", "garnet.env_seeds"},
		{"states: 3", "states: 1", "garnet.states"},
		{"branching: 2", "branching: 4", "garnet.branching"},
		{"reward_density: 0.5", "reward_density: 0", "garnet.reward_density"},
		{"  episodes: 20", "  episodes: 3", "garnet.episodes"},
		{"  seeds: [1]\n", "  seeds: []\n", "garnet.seeds"},
		{"name: tiny", "name: tiny\nbogus: 1", "bogus"},
	} {
		cfgfiletest.Refused(t, func(b []byte) error { _, err := ParseConfig(b); return err }, tinyYAML, c.old, c.new, c.field)
	}
	if _, err := LoadConfig(filepath.Join(t.TempDir(), "missing.yaml")); err == nil {
		t.Error("missing config file accepted")
	}
}

func tinyResult(t *testing.T) *Result {
	t.Helper()
	c, err := ParseConfig([]byte(tinyYAML))
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), c, Options{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestTinyRunWritesEverything: a tiny run writes every CSV, figure and the summary the
// manifest lists, the manifest is valid JSON naming the goals, and it is written last: when
// writing the summary fails, no manifest exists.
func TestTinyRunWritesEverything(t *testing.T) {
	res := tinyResult(t)
	dir := t.TempDir()
	man, sum, err := res.Write(dir, []string{"dprl", "test"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(sum, "## Goals") || !strings.Contains(sum, "Privacy cost") {
		t.Errorf("summary lacks the goals or the privacy-cost table:\n%s", sum)
	}
	// ucbvi, practical-ucbvi, dp-ucbvi-jdp, practical-jdp, jdp-plugin, psrl-jdp, jdp-theory;
	// ucbvi, dp-ucbvi-ldp, practical-ldp, ldp-plugin; 4 Garnet curves.
	var csvs []string
	for _, c := range man.Curves {
		csvs = append(csvs, c.CSV)
	}
	if len(csvs) != 15 || len(res.Curves) != 15 {
		t.Errorf("%d CSV files for %d curves, want 15", len(csvs), len(res.Curves))
	}
	// One regret figure (png + svg) per group (3) and the privacy-cost figure.
	if len(man.Figures) != 8 {
		t.Errorf("figures %v", man.Figures)
	}
	mi, err := os.Stat(filepath.Join(dir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	files := append(append([]string{"summary.md"}, csvs...), man.Figures...)
	for _, f := range files {
		fi, err := os.Stat(filepath.Join(dir, f))
		if err != nil {
			t.Errorf("listed file missing: %v", err)
			continue
		}
		if fi.Size() == 0 || fi.ModTime().After(mi.ModTime()) {
			t.Errorf("%s: size %d, newer than the manifest %v", f, fi.Size(), fi.ModTime().After(mi.ModTime()))
		}
	}
	m := rundirtest.ReadManifest(t, dir)
	ex, _ := m["extras"].(map[string]any)
	pr, _ := ex["practical"].(map[string]any)
	if gs, _ := pr["goals"].([]any); len(gs) != 6 {
		t.Errorf("manifest extras.practical.goals: %v", pr["goals"])
	}
	for _, cv := range res.Curves {
		for _, r := range cv.Runs {
			if len(r.Cum) != len(Checkpoints(cv.Episodes)) || r.Cum[len(r.Cum)-1] != r.Final {
				t.Errorf("%s: %d checkpoints, last %v vs final %v", cv.Label, len(r.Cum), r.Cum[len(r.Cum)-1], r.Final)
			}
		}
		if cv.Epsilon > 0 && !cv.PrivateAtNominal && strings.HasPrefix(cv.Agent, "practical") {
			t.Errorf("%s: practical agent not private at its nominal ε: %s", cv.Label, cv.Privacy)
		}
	}
	// Manifest last: a directory where summary.md should go makes the write fail before the
	// manifest, which must then not exist.
	bad := t.TempDir()
	if err := os.MkdirAll(filepath.Join(bad, "summary.md", "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, _, err := res.Write(bad, nil); err == nil {
		t.Fatal("write over a directory succeeded")
	}
	if _, err := os.Stat(filepath.Join(bad, "manifest.json")); !os.IsNotExist(err) {
		t.Errorf("manifest written although the summary failed: %v", err)
	}
}

// synthetic builds a Result with the curves the goals read and the given per-seed values.
func synthetic(final, tail, speed float64, ldpK int, ldpTail, garnetTail float64) *Result {
	cfg := &Config{Garnet: GarnetConfig{EnvSeeds: []uint64{1, 2}}}
	runs := func(f, tl, sp float64) []SeedRun {
		return []SeedRun{{Seed: 1, Final: f * 0.99, LastDecile: tl, EpisodesPerSecond: sp},
			{Seed: 2, Final: f * 1.01, LastDecile: tl, EpisodesPerSecond: sp}}
	}
	r := &Result{Config: cfg, Uniform: map[string]float64{"garnet-1": 5, "garnet-2": 4}}
	r.Curves = []*Curve{
		{Group: "riverswim-jdp", Agent: "practical-jdp", Epsilon: 1, Episodes: 50000, Runs: runs(final, tail, speed)},
		{Group: "riverswim-jdp", Agent: "practical-jdp", Epsilon: 2, Episodes: 50000, Runs: runs(1, 0, 1e6)},
		{Group: "riverswim-ldp", Agent: "practical-ldp", Epsilon: 1, Episodes: ldpK, Runs: runs(1e5, ldpTail, speed)},
		{Group: "garnet-1", Agent: "practical-jdp", Epsilon: 1, Episodes: 100, Runs: runs(10, garnetTail, speed)},
		{Group: "garnet-2", Agent: "practical-jdp", Epsilon: 1, Episodes: 100, Runs: runs(10, garnetTail*0.8, speed)},
	}
	return r
}

// TestGoalsVerdict: the goal verdicts on synthetic curves, both ways (each goal once holding and
// once not), including the LDP goal that cannot hold below K = 10⁶ nor when one seed fails.
func TestGoalsVerdict(t *testing.T) {
	verdicts := func(r *Result) map[string]bool {
		v := map[string]bool{}
		for _, g := range r.Goals() {
			v[g.ID] = g.Holds
			if g.Measured == "" || g.Statement == "" {
				t.Errorf("%s: empty statement or measurement", g.ID)
			}
		}
		return v
	}
	for _, c := range []struct {
		name string
		r    *Result
		want map[string]bool
	}{
		{"all hold", synthetic(3000, 0.01, 30000, 1_000_000, 0.5, 0.5),
			map[string]bool{"G1": true, "G2": true, "G3": true, "G4": true, "G5": true, "G6": true}},
		{"goal but not stretch", synthetic(16000, 0.05, 20000, 1_000_000, 1.0, 0.8),
			map[string]bool{"G1": true, "G2": true, "G3": false, "G4": true, "G5": true, "G6": true}},
		{"none hold", synthetic(17000, 0.06, 19000, 1_000_000, 1.01, 1.1),
			map[string]bool{"G1": false, "G2": false, "G3": false, "G4": false, "G5": false, "G6": false}},
		{"LDP short run", synthetic(3000, 0.01, 30000, 50000, 0.1, 0.5),
			map[string]bool{"G1": true, "G2": true, "G3": true, "G4": false, "G5": true, "G6": true}},
		{"LDP one seed fails", func() *Result {
			r := synthetic(3000, 0.01, 30000, 1_000_000, 0.5, 0.5)
			r.Curves[2].Runs[1].LastDecile = 1.4 // mean 0.95 ≤ 1, but one seed does not learn
			return r
		}(), map[string]bool{"G1": true, "G4": false}},
	} {
		got := verdicts(c.r)
		for id, w := range c.want {
			if got[id] != w {
				t.Errorf("%s: %s holds = %v, want %v", c.name, id, got[id], w)
			}
		}
	}
}

// TestWriteOutputOptions: Write validates Output.LogY before writing anything, calls
// Output.BeforeManifest (the engine's hook for meta.json, config.resolved.yaml and
// regret_long.csv) once with the run directory after the curve CSVs and before the manifest,
// and each group's regret figure carries the no-learning reference line.
func TestWriteOutputOptions(t *testing.T) {
	res := tinyResult(t)
	bad := filepath.Join(t.TempDir(), "bad")
	if err := os.MkdirAll(bad, 0o755); err != nil {
		t.Fatal(err)
	}
	res.Output = rundir.Options{LogY: "sideways"}
	if _, _, err := res.Write(bad, nil); err == nil || !strings.Contains(err.Error(), "log-y") {
		t.Errorf("LogY sideways: error %v", err)
	}
	if ents, _ := os.ReadDir(bad); len(ents) != 0 {
		t.Errorf("a refused write left %d files", len(ents))
	}
	dir := t.TempDir()
	calls := 0
	res.Output = rundir.Options{LogY: "log", BeforeManifest: func(d string) error {
		calls++
		if d != dir {
			t.Errorf("BeforeManifest(%s), want %s", d, dir)
		}
		if _, err := os.Stat(filepath.Join(d, "manifest.json")); !os.IsNotExist(err) {
			t.Errorf("manifest written before BeforeManifest: %v", err)
		}
		if _, err := os.Stat(filepath.Join(d, "curves", "riverswim-jdp", "ucbvi.csv")); err != nil {
			t.Errorf("curve CSVs not written before BeforeManifest: %v", err)
		}
		return nil
	}}
	if _, _, err := res.Write(dir, nil); err != nil {
		t.Fatal(err)
	}
	if calls != 1 {
		t.Errorf("BeforeManifest called %d times", calls)
	}
	for _, g := range res.groups() {
		svg, err := os.ReadFile(filepath.Join(dir, "regret-"+g+".svg"))
		if err != nil {
			t.Fatal(err)
		}
		if u := res.Uniform[g]; !(u > 0) || !strings.Contains(string(svg), report.NoLearningLabel(u)) {
			t.Errorf("regret-%s.svg: no no-learning line (uniform %v per episode)", g, u)
		}
	}
}
