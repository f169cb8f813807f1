package tabular

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dprl/dprl/experiment/engine"
	"github.com/dprl/dprl/experiment/engine/enginetest"
)

func smallConfig() *Config {
	c := &Config{Name: "t", Runs: engine.Runs{Episodes: 400, Seeds: []uint64{1, 2, 3}},
		Curves: []CurveSpec{{Agent: "ucbvi"}, {Agent: "dp-ucbvi-jdp", Epsilon: 1, Calibration: "unit"}, {Agent: "dp-ucbvi-ldp", Epsilon: 10, Calibration: "unit"}}}
	c.defaults()
	return c
}

// TestDeterministicAcrossWorkers: bit-identical regret curves for 1 and 2 workers, and
// different seeds give different curves.
func TestDeterministicAcrossWorkers(t *testing.T) {
	c := smallConfig()
	rs := enginetest.RunWorkers(t, func(w int) (*Result, error) { return Run(context.Background(), c, Options{Workers: w}) }, 1, 2)
	a, b := rs[0], rs[1]
	for i := range a.Curves {
		for j := range a.Curves[i].Runs {
			if !slices.Equal(a.Curves[i].Runs[j].Cum, b.Curves[i].Runs[j].Cum) {
				t.Fatalf("curve %d seed %d differs between 1 and 2 workers", i, j)
			}
		}
		if slices.Equal(a.Curves[i].Runs[0].Cum, a.Curves[i].Runs[1].Cum) {
			t.Fatalf("curve %d: seeds 1 and 2 gave identical curves", i)
		}
	}
	// Common random numbers: the cumulative regret is non-decreasing and per-episode regret
	// lies in [0, V*].
	for _, cr := range a.Curves {
		prev := 0.0
		for _, x := range cr.Runs[0].Cum {
			if x < prev-1e-12 || x-prev > a.VStar+1e-12 {
				t.Fatalf("%s: bad regret increment %g", cr.Spec.Label, x-prev)
			}
			prev = x
		}
	}
}

func TestWriteRunDirectory(t *testing.T) {
	c := smallConfig()
	res, err := Run(context.Background(), c, Options{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	man, err := res.Write(dir, []string{"test"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"manifest.json", "summary.md", "regret-" + man.Curves[0].Env + ".png", "regret-" + man.Curves[0].Env + ".svg"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("missing %s", f)
		}
	}
	if len(man.Curves) != 3 {
		t.Fatalf("manifest has %d curves", len(man.Curves))
	}
	data, _ := os.ReadFile(filepath.Join(dir, man.Curves[1].CSV))
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != c.Episodes+1 || !strings.HasPrefix(lines[0], "episode,seed_1,seed_2,seed_3,mean,ci95_lo,ci95_hi") {
		t.Fatalf("CSV has %d lines, header %q", len(lines), lines[0])
	}
	if man.Curves[1].Privacy.PrivateAtNominal || !strings.Contains(man.Curves[1].Privacy.String(), "NOT") {
		t.Errorf("unit calibration not flagged: %s", man.Curves[1].Privacy)
	}
}

func TestConfigErrors(t *testing.T) {
	cases := []struct {
		yaml, want string
	}{
		{"episodes: 0\nseeds: [1]\ncurves: [{agent: ucbvi}]", "episodes"},
		{"episodes: 5\nseeds: []\ncurves: [{agent: ucbvi}]", "seeds"},
		{"episodes: 5\nseeds: [1, 1]\ncurves: [{agent: ucbvi}]", "duplicate seed"},
		{"episodes: 5\nseeds: [1]\ncurves: []", "curves"},
		{"episodes: 5\nseeds: [1]\ncurves: [{agent: x}]", "curves[0].agent"},
		{"episodes: 5\nseeds: [1]\ncurves: [{agent: dp-ucbvi-jdp}]", "curves[0].epsilon"},
		{"episodes: 5\nseeds: [1]\ncurves: [{agent: dp-ucbvi-jdp, epsilon: 1, calibration: x}]", "calibration"},
		{"episodes: 5\nseeds: [1]\nbeta: 2\ncurves: [{agent: ucbvi}]", "beta"},
		{"episodes: 5\nseeds: [1]\nenv: {name: moon}\ncurves: [{agent: ucbvi}]", "env.name"},
		{"episodes: 5\nseeds: [1]\nbonus: {preset: wild}\ncurves: [{agent: ucbvi}]", "bonus.preset"},
		{"episodes: 5\nseeds: [1]\ncurves: [{agent: ucbvi}, {agent: ucbvi}]", "duplicate label"},
		{"episodes: 5\nseeds: [1]\nextra: 3\ncurves: [{agent: ucbvi}]", "extra"},
	}
	for _, c := range cases {
		_, err := ParseConfig([]byte(c.yaml))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want mention of %q", c.yaml, err, c.want)
		}
	}
}

func TestQiaoConfigEmbedded(t *testing.T) {
	c, err := QiaoFig1Config("paper")
	if err != nil {
		t.Fatal(err)
	}
	if c.Episodes != 50000 || len(c.Seeds) != 5 || len(c.Curves) != 17 || c.Env.Horizon != 20 {
		t.Fatalf("embedded config changed: K=%d seeds=%v curves=%d", c.Episodes, c.Seeds, len(c.Curves))
	}
	s, err := QiaoFig1Config("strict")
	if err != nil || s.Curves[1].Calibration != "exact" {
		t.Fatalf("strict variant: %v", err)
	}
}

// TestQiaoClaimsSmall runs a shortened qiao-fig1 (K = 3000, 2 seeds, ε ∈ {1, 10}) and checks
// that the claims machinery produces verdicts and that the summary states effective ε.
func TestQiaoClaimsSmall(t *testing.T) {
	c, err := QiaoFig1Config("paper")
	if err != nil {
		t.Fatal(err)
	}
	c.Episodes, c.Seeds = 1500, []uint64{1, 2}
	var keep []CurveSpec
	for _, cv := range c.Curves {
		if cv.Agent == "ucbvi" || cv.Epsilon == 1 || cv.Epsilon == 10 {
			keep = append(keep, cv)
		}
	}
	c.Curves = keep
	res, err := Run(context.Background(), c, Options{})
	if err != nil {
		t.Fatal(err)
	}
	summary, claims, err := QiaoSummary(res)
	if err != nil {
		t.Fatal(err)
	}
	if len(claims["unit"]) != 6 || len(claims["paper"]) != 6 {
		t.Fatalf("claims: %v", claims)
	}
	for _, want := range []string{"effective ε", "NOT 1-private", "C1", "C6", "no-learning"} {
		if !strings.Contains(summary, want) {
			t.Errorf("summary lacks %q", want)
		}
	}
	// With the paper's own noise at ε ≤ 10 the JDP agent cannot learn: C3 must not hold.
	for _, cl := range claims["paper"] {
		if cl.ID == "C3" && cl.Holds {
			t.Errorf("C3 holds under paper calibration at K=%d: %s", c.Episodes, cl.Detail)
		}
	}
}
