package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCompare runs two small reproductions and compares them through the CLI: the table names
// every curve with its IQM and interval, --json agrees with the table's curves, the figure is
// written, and bad input (a missing run, a run with one seed, no matching curve) exits 2.
func TestCompare(t *testing.T) {
	dir := t.TempDir()
	a, b, one := filepath.Join(dir, "a"), filepath.Join(dir, "b"), filepath.Join(dir, "one")
	for _, r := range []struct{ out, seeds string }{{a, "1-4"}, {b, "5-8"}, {one, "1"}} {
		if code, _, stderr := runCLI(t, "reproduce", "qiao-fig1", "--episodes", "200", "--seeds", r.seeds, "--quiet", "--out", r.out); code != 0 {
			t.Fatalf("reproduce into %s: exit %d: %s", r.out, code, stderr)
		}
	}
	fig := filepath.Join(dir, "cmp.png")
	code, stdout, stderr := runCLI(t, "compare", a, b, "--curve", "UCBVI", "--fig", fig)
	if code != 0 {
		t.Fatalf("compare: exit %d: %s", code, stderr)
	}
	for _, want := range []string{"a/UCBVI", "b/UCBVI", "IQM", "P(X < Y)"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("compare output lacks %q:\n%s", want, stdout)
		}
	}
	if fi, err := os.Stat(fig); err != nil || fi.Size() == 0 {
		t.Errorf("figure %s not written: %v", fig, err)
	}
	code, stdout, stderr = runCLI(t, "compare", a, b, "--curve", "UCBVI", "--json")
	if code != 0 {
		t.Fatalf("compare --json: exit %d: %s", code, stderr)
	}
	var js map[string]any
	if err := json.Unmarshal([]byte(stdout), &js); err != nil {
		t.Fatalf("compare --json is not JSON: %v\n%s", err, stdout)
	}
	for _, bad := range [][]string{
		{"compare", a, filepath.Join(dir, "missing")},
		{"compare", a, one, "--curve", "UCBVI"},
		{"compare", a, b, "--curve", "no-such-curve"},
	} {
		if code, _, stderr := runCLI(t, bad...); code != 2 {
			t.Errorf("%v: exit %d, want 2 (stderr %q)", bad, code, stderr)
		}
	}
}
