package lq

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dprl/dprl/experiment/rundir"
	model "github.com/dprl/dprl/model/lq"
)

func readJSON(t *testing.T, path string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

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
	for _, seeds := range []int{1, 2} {
		r := zeroResult(t, seeds)
		dir := t.TempDir()
		summary, err := r.Write(dir, "test", nil)
		if err != nil {
			t.Fatalf("%d seeds: %v", seeds, err)
		}
		m := readJSON(t, filepath.Join(dir, "manifest.json"))
		run := m["curves"].([]any)[0].(map[string]any)["runs"].([]any)[0].(map[string]any)
		u, _ := run["undefined"].(map[string]any)
		if run["zero_line_max_rel_dev"] != nil || u["zero_line_max_rel_dev"] == nil {
			t.Errorf("%d seeds: deviation %v, undefined %v: want null with a reason", seeds, run["zero_line_max_rel_dev"], u)
		}
		if seeds == 1 && (!strings.Contains(summary, "n=1") || strings.Contains(summary, "± 0.00")) {
			t.Errorf("one-seed summary prints a spread")
		}
	}
}

// TestManifestHonestLQ: provenance, the system file's SHA-256, the settings actually used (the
// extended block only for an extended run), files listed and older than the manifest, and an
// earlier run refused.
func TestManifestHonestLQ(t *testing.T) {
	tmp := t.TempDir()
	data, err := json.Marshal(model.LQE1Config())
	if err != nil {
		t.Fatal(err)
	}
	sysPath := filepath.Join(tmp, "sys.json")
	if err := os.WriteFile(sysPath, data, 0o644); err != nil {
		t.Fatal(err)
	}
	c := smallConfig(t)
	c.Episodes, c.Seeds, c.System = 10, []uint64{1}, sysPath
	c.Search.MaxIter = 5
	res, err := Run(context.Background(), c, Options{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if _, err := res.Write(dir, "ignored", nil); err != nil {
		t.Fatal(err)
	}
	man := readJSON(t, filepath.Join(dir, "manifest.json"))
	if man["git_commit"] != "unknown" || man["dprl_version"] == nil || man["go_version"] == nil {
		t.Errorf("provenance %v %v %v", man["git_commit"], man["dprl_version"], man["go_version"])
	}
	ok := false
	inputs, _ := man["inputs"].([]any)
	for _, x := range inputs {
		e := x.(map[string]any)
		ok = ok || (e["role"] == "system" && len(e["sha256"].(string)) == 64)
	}
	if !ok {
		t.Errorf("inputs %v lack the system file hash", man["inputs"])
	}
	cfg := man["config"].(map[string]any)
	if _, has := cfg["extended"]; has {
		t.Errorf("main run records the unused extended block: %v", cfg["extended"])
	}
	mst, _ := os.Stat(filepath.Join(dir, "manifest.json"))
	files, _ := man["files"].([]any)
	for _, f := range files {
		st, err := os.Stat(filepath.Join(dir, f.(string)))
		if err != nil || st.ModTime().After(mst.ModTime()) {
			t.Errorf("file %v missing or newer than the manifest", f)
		}
	}
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
