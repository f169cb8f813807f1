package lq

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dprl/dprl/experiment/engine"
	"github.com/dprl/dprl/experiment/engine/enginetest"
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
	for _, f := range []string{"manifest.json", "summary.md", "regret.png", "regret.svg", "curves/zero-policy.csv"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Fatalf("missing %s: %v", f, err)
		}
	}
	if !strings.Contains(summary, "R(k) = Z(k)") || !strings.Contains(summary, "(eps=1, delta=1e-05)-DP") {
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
