package lq

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/dprl/dprl/experiment/engine"
	"github.com/dprl/dprl/experiment/rundir"
	"github.com/dprl/dprl/experiment/rundir/rundirtest"
	model "github.com/dprl/dprl/model/lq"
)

// zeroResult is a result where every curve and the zero line have zero regret.
func zeroResult(t *testing.T, seeds int) *Result {
	t.Helper()
	c := smallConfig(t)
	c.Episodes = 12
	c.Seeds = c.Seeds[:seeds]
	r := &Result{Config: c, Episodes: c.Episodes, Seeds: c.Seeds, System: "LQ-E1", Zero: make([]float64, c.Episodes), Workers: 1}
	for _, e := range c.Epsilons {
		cr := CurveResult{Spec: CurveSpec{Label: "eps " + epsLabel(e), Epsilon: e, EpsilonText: epsLabel(e), Neighbouring: c.Neighbouring}}
		for _, s := range c.Seeds {
			// 0/0 relative deviation from a zero line: undefined.
			cr.Runs = append(cr.Runs, SeedRun{Seed: s, Cum: make([]float64, c.Episodes), ZeroLineMaxRelDev: rundir.Number(math.NaN())})
		}
		r.Curves = append(r.Curves, cr)
	}
	return r
}

// TestZeroRegretNoNaN: zero regret everywhere (so the zero-line deviation is 0/0) writes valid
// JSON and a figure; one seed prints no spread and no band.
func TestZeroRegretNoNaN(t *testing.T) {
	rundirtest.WriteEach(t, []int{1, 2}, func(seeds int, dir string) (string, error) {
		return zeroResult(t, seeds).Write(dir, "test", nil)
	}, func(seeds int, m map[string]any, summary string) {
		ex := rundirtest.Entry(t, m, "curves", 0)["extras"].(map[string]any)["lq"].(map[string]any)
		run := rundirtest.Entry(t, ex, "runs", 0)
		rundirtest.CheckUndefined(t, fmt.Sprintf("%d seeds", seeds), run, "zero_line_max_rel_dev")
		if seeds == 1 && (!strings.Contains(summary, "n=1") || strings.Contains(summary, "± 0.00")) {
			t.Errorf("one-seed summary prints a spread")
		}
	})
}

// TestManifestHonestLQ: provenance, the system file's SHA-256, the settings actually used (the
// extended block only for an extended run), files listed and older than the manifest, and an
// earlier run refused.
func TestManifestHonestLQ(t *testing.T) {
	tmp := t.TempDir()
	sysPath := rundirtest.WriteJSON(t, tmp, "sys.json", model.LQE1Config())
	c := smallConfig(t)
	c.Episodes, c.Seeds, c.System = 10, []uint64{1}, sysPath
	c.Search.MaxIter = 5
	res, err := Run(context.Background(), c, Options{LocalOptions: engine.LocalOptions{Workers: 1}})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if _, err := res.Write(dir, "ignored", nil); err != nil {
		t.Fatal(err)
	}
	man := rundirtest.ReadManifest(t, dir)
	rundirtest.CheckProvenance(t, man)
	if !rundirtest.HashedRoles(man)["system"] {
		t.Errorf("inputs %v lack the system file hash", man["inputs"])
	}
	cfg := man["config"].(map[string]any)
	if _, has := cfg["extended"]; has {
		t.Errorf("main run records the unused extended block: %v", cfg["extended"])
	}
	rundirtest.CheckFiles(t, dir, man)
	if _, err := res.Write(dir, "", nil); err == nil || !strings.Contains(err.Error(), "--force") {
		t.Errorf("rewrite into an earlier run: err = %v", err)
	}
}

// TestOutputNamesLQ: the experiment name cannot escape.
func TestOutputNamesLQ(t *testing.T) {
	c := smallConfig(t)
	for _, name := range []string{"../x", "/abs", "a\x00b"} {
		c.Name = name
		if err := c.Validate(); err == nil || !strings.HasPrefix(err.Error(), "name") {
			t.Errorf("name %q: err = %v", name, err)
		}
	}
}
