package curvefiles

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/dprl/dprl/internal/testfiles"
)

// TestList: the CSV files below a curves directory, at any depth, in sorted order; not the
// ones elsewhere, not other files, nothing below a skipped directory, not what keep refuses.
func TestList(t *testing.T) {
	dir := t.TempDir()
	testfiles.Write(t, dir, map[string]string{
		"curves/b.csv":         "",
		"curves/a.csv":         "",
		"curves/G/x.csv":       "",
		"B/curves/y.csv":       "",
		"curves/notes.txt":     "",
		"summary.csv":          "",
		"units/curves/u.csv":   "",
		"curves/user-kept.csv": "",
	}, 0o644)
	keep := func(rel string) bool { return filepath.Base(rel) != "user-kept.csv" }
	got, err := List(dir, "units", keep)
	want := []string{"B/curves/y.csv", "curves/G/x.csv", "curves/a.csv", "curves/b.csv"}
	for i := range want {
		want[i] = filepath.FromSlash(want[i])
	}
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("List = %q, %v; want %q", got, err, want)
	}
	all, err := List(dir, "units", nil)
	if err != nil || len(all) != len(want)+1 {
		t.Errorf("List without keep = %q, %v; want the kept files and user-kept.csv", all, err)
	}
	if _, err := List(filepath.Join(dir, "missing"), "units", nil); err == nil {
		t.Error("List of a missing directory: no error")
	}
}

// TestName: the curve is the path without ".csv" and without the curves component.
func TestName(t *testing.T) {
	for rel, want := range map[string]string{
		"curves/a.csv":   "a",
		"curves/G/x.csv": "G/x",
		"B/curves/y.csv": "B/y",
	} {
		if got := Name(filepath.FromSlash(rel)); got != want {
			t.Errorf("Name(%q) = %q, want %q", rel, got, want)
		}
	}
}
