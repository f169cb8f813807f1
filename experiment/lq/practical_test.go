package lq

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dprl/dprl/experiment/internal/cfgfile/cfgfiletest"
	"github.com/dprl/dprl/experiment/rundir"
)

// TestPracticalExpConfig: the embedded configuration parses; bad fields are named.
func TestPracticalExpConfig(t *testing.T) {
	c, err := DefaultPracticalExpConfig()
	if err != nil {
		t.Fatal(err)
	}
	if c.Episodes != 100000 || len(c.Epsilons) != 5 {
		t.Fatalf("embedded config: %+v", c)
	}
	parse := func(b []byte) error { _, err := ParsePracticalExpConfig(b); return err }
	const small = "episodes: 10\nseeds: [1]\nepsilons: [1]\nbudget: 4\nbatch_every: 1\ncounter: blt\nconfidence: 0.05\nreferences: 4\ndelta: 1e-5\n"
	if err := parse([]byte(small)); err != nil {
		t.Fatalf("the cases' configuration is refused: %v", err)
	}
	for _, c := range []struct{ from, to, field string }{
		{"episodes: 10", "episodes: 1", "episodes"},
		{"seeds: [1]", "seeds: [1, 1]", "seeds"},
		{"budget: 4", "budget: -4", "budget"},
		{"counter: blt", "counter: nope", "counter"},
		{"delta: 1e-5", "delta: 1e-5\nbogus: 3", "bogus"},
	} {
		cfgfiletest.Refused(t, parse, small, c.from, c.to, c.field)
	}
}

// TestPracticalExpRun: a short run is identical with 1 and 2 workers, the paper's private
// agent stays on the zero line, and the run directory has its files with the manifest.
func TestPracticalExpRun(t *testing.T) {
	c, _ := DefaultPracticalExpConfig()
	c.Episodes, c.PaperEpisodes, c.OFUEpisodes, c.Seeds = 600, 300, 20, []uint64{1, 2}
	c.Epsilons, c.TheoryEpsilons, c.BatchEvery = []float64{1, 10}, []float64{1}, 50
	a, err := RunPracticalExp(context.Background(), c, false, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := RunPracticalExp(context.Background(), c, false, 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range a.Curves {
		for j := range a.Curves[i].Runs {
			if a.Curves[i].Runs[j].Final != b.Curves[i].Runs[j].Final {
				t.Fatalf("%s: result depends on the number of workers", a.Curves[i].Label)
			}
		}
		if a.Curves[i].Agent == "private-ofu-rl" {
			for _, r := range a.Curves[i].Runs {
				if r.FirstOffZero != 0 {
					t.Errorf("paper's agent left the zero line at %d", r.FirstOffZero)
				}
			}
		}
	}
	dir := filepath.Join(t.TempDir(), "out")
	summary, err := a.Write(dir, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(summary, "NOT MEASURED") || !strings.Contains(summary, "practical (dprl's own, no regret proof)") {
		t.Errorf("summary lacks the goal status or the label:\n%s", summary)
	}
	for _, f := range []string{"manifest.json", "summary.md", "regret-LQ-E1.png", "regret-LQ-E1.svg", "curves/LQ-E1/zero-policy.csv"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
	if _, err := a.Write(dir, false, nil); err == nil {
		t.Error("an earlier run was overwritten without force")
	}
	// The output options reach the manifest: BeforeManifest (the engine's hook for meta.json,
	// config.resolved.yaml and regret_long.csv) runs once, after the curves, before the manifest.
	calls := 0
	out := rundir.Options{Force: true, LogY: "auto", BeforeManifest: func(d string) error {
		calls++
		if _, err := os.Stat(filepath.Join(d, "manifest.json")); !os.IsNotExist(err) {
			t.Errorf("manifest present before BeforeManifest: %v", err)
		}
		if _, err := os.Stat(filepath.Join(d, "curves", "LQ-E1", "zero-policy.csv")); err != nil {
			t.Errorf("curves not written before BeforeManifest: %v", err)
		}
		return nil
	}}
	if _, err := a.WriteWith(dir, out, nil); err != nil {
		t.Fatal(err)
	}
	if calls != 1 {
		t.Errorf("BeforeManifest called %d times", calls)
	}
	if _, err := os.Stat(filepath.Join(dir, "manifest.json")); err != nil {
		t.Error(err)
	}
}
