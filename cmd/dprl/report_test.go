package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dprl/dprl/experiment/engine"
	"github.com/dprl/dprl/internal/runschema"
	"github.com/dprl/dprl/report"
	"sigs.k8s.io/yaml"
)

// TestReportBesideRun: dprl report writes, from curves measured elsewhere (here: a dprl run's
// per-seed columns and privacy object handed over as the Python runner does), a run directory
// of the one schema — valid against docs/run-directory.schema.json, with figures, meta.json,
// summary.md — that dprl compare takes side by side with the dprl run; bad input exits 2
// naming the field and writes nothing.
func TestReportBesideRun(t *testing.T) {
	dir := t.TempDir()
	goRun, pyRun := filepath.Join(dir, "go"), filepath.Join(dir, "py")
	mustRunCLI(t, "run", "--agent", "practical-jdp", "--epsilon", "1", "--episodes", "300", "--seeds", "1-3", "--quiet", "--out", goRun)
	var man engine.RunManifest
	data, err := os.ReadFile(filepath.Join(goRun, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &man); err != nil {
		t.Fatal(err)
	}
	c := man.Curves[0]
	steps, cols, err := report.ReadCurveCSV(filepath.Join(goRun, c.CSV))
	if err != nil {
		t.Fatal(err)
	}
	var runs [][]float64
	for _, s := range []string{"seed_1", "seed_2", "seed_3"} {
		runs = append(runs, cols[s])
	}
	// The cell's specification as the family records it (the Python runner writes the same for
	// its exported model), so that compare sees the same environment.
	var resolved struct {
		Cells []struct {
			Spec json.RawMessage `json:"spec"`
		} `json:"cells"`
	}
	rc, err := os.ReadFile(filepath.Join(goRun, "config.resolved.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(rc, &resolved); err != nil || len(resolved.Cells) == 0 {
		t.Fatalf("config.resolved.yaml: %v", err)
	}
	eps, delta := 1.0, 1e-5
	in := engine.ReportInput{Schema: engine.ReportInputSchema, Family: "tabular", Experiment: "py", Summary: "# a run measured elsewhere\n",
		Curves: []engine.ReportCurve{{Label: "practical-jdp eps=1 (python)", Agent: "practical-jdp", Env: c.Env, Epsilon: &eps, Delta: &delta,
			Steps: steps, Seeds: []uint64{4, 5, 6}, Runs: runs, Reference: c.Reference, Privacy: c.Privacy, Spec: resolved.Cells[0].Spec}}}
	inPath := filepath.Join(dir, "in.json")
	writeJSONFile(t, inPath, in)
	code, stdout, stderr := runCLI(t, "report", "--input", inPath, "--out", pyRun)
	if code != 0 || !strings.Contains(stdout, engine.RunSchema) {
		t.Fatalf("report: exit %d, %s%s", code, stdout, stderr)
	}
	s, err := runschema.Compile()
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{goRun, pyRun} {
		if err := runschema.ValidateDir(s, d); err != nil {
			t.Error(err)
		}
	}
	for _, f := range []string{"regret-riverswim.png", "regret-riverswim.svg", "meta.json", "summary.md"} {
		if _, err := os.Stat(filepath.Join(pyRun, f)); err != nil {
			t.Error(err)
		}
	}
	code, stdout, stderr = runCLI(t, "compare", goRun, pyRun)
	if code != 0 || !strings.Contains(stdout, "go/riverswim/practical-jdp_eps_1") || !strings.Contains(stdout, "py/riverswim/practical-jdp_eps_1__python_") {
		t.Errorf("compare go py: exit %d, stderr %q, output:\n%s", code, stderr, stdout)
	}
	// Bad input: exit 2 naming the field, no manifest.
	for _, c := range []struct {
		edit func(*engine.ReportInput)
		want string
	}{
		{func(in *engine.ReportInput) { in.Schema = "x" }, "schema"},
		{func(in *engine.ReportInput) { in.Curves[0].Seeds = in.Curves[0].Seeds[:2] }, "curves[0].runs"},
		{func(in *engine.ReportInput) { in.Curves[0].Steps = append([]int{5}, in.Curves[0].Steps[1:]...) }, "curves[0].steps"},
		{func(in *engine.ReportInput) { in.Curves[0].Privacy.Model = "maybe" }, "curves[0].privacy.model"},
		{func(in *engine.ReportInput) { in.Files = []string{"../x"} }, "files[0]"},
	} {
		bad := in
		bad.Curves = append([]engine.ReportCurve(nil), in.Curves...)
		c.edit(&bad)
		p := filepath.Join(dir, "bad.json")
		writeJSONFile(t, p, bad)
		out := filepath.Join(dir, "bad-"+c.want)
		if code, _, stderr := runCLI(t, "report", "--input", p, "--out", out); code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("%s: exit %d, stderr %q; want 2 naming it", c.want, code, stderr)
		}
		if _, err := os.Stat(filepath.Join(out, "manifest.json")); err == nil {
			t.Errorf("%s: manifest written", c.want)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "unknown.json"), []byte(`{"schema":"dprl.report-input/v1","bogus":1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runCLI(t, "report", "--input", filepath.Join(dir, "unknown.json"), "--out", filepath.Join(dir, "u")); code != 2 || !strings.Contains(stderr, "bogus") {
		t.Errorf("unknown field: exit %d, stderr %q", code, stderr)
	}
}

func writeJSONFile(t *testing.T, path string, v any) {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}
