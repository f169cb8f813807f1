// Package tabulartest writes tabular model files for the tests of the packages that read them.
package tabulartest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/dprl/dprl/model/tabular"
)

// RiverSwimFile writes the RiverSwim of horizon H (tabular.RiverSwim) in format ("json" or
// "yaml") to dir/name, with permission 0o644, and returns its path. An error fails the test.
func RiverSwimFile(t testing.TB, dir, name string, H int, format string) string {
	t.Helper()
	m, err := tabular.RiverSwim(H)
	if err != nil {
		t.Fatal(err)
	}
	data, err := tabular.Marshal(m, format)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
