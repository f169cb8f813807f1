package compare

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReport: `dprl compare` writes Markdown or JSON and the figure; a bad figure path is an
// input error found before any run directory is read.
func TestReport(t *testing.T) {
	dir := t.TempDir()
	a := writeRun(t, filepath.Join(dir, "a"), map[string]string{
		"regret_long.csv": longCSV("tabular", []string{"ucbvi", "dp-ucbvi-jdp_eps_1"}, 3, 4),
	})
	var md, js bytes.Buffer
	if err := Report(&md, []string{a}, Options{}, "", false); err != nil || !strings.Contains(md.String(), "ucbvi") {
		t.Fatalf("markdown: %v\n%s", err, md.String())
	}
	fig := filepath.Join(dir, "iqm.svg")
	if err := Report(&js, []string{a}, Options{}, fig, true); err != nil || !json.Valid(js.Bytes()) {
		t.Fatalf("json: %v\n%s", err, js.String())
	}
	if _, err := os.Stat(fig); err != nil {
		t.Error(err)
	}
	err := Report(&md, []string{filepath.Join(dir, "missing")}, Options{}, filepath.Join(dir, "iqm.txt"), false)
	mustInput(t, err, "iqm.txt")
}
