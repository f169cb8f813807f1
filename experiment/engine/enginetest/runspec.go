package enginetest

import (
	"path/filepath"
	"testing"

	"github.com/dprl/dprl/experiment/engine"
)

// RunSpecYAML plans the RunSpec document doc of family with f (PlanSpecYAML) and runs it as
// RunLocal does: units units, the curves at the path whose elements are csvGlob (relative to the
// run directory). It returns the directory.
func RunSpecYAML(t *testing.T, f engine.SpecPlanner, family, doc string, units int, csvGlob ...string) string {
	t.Helper()
	p, err := PlanSpecYAML(t, f, family, doc)
	if err != nil {
		t.Fatal(err)
	}
	return RunLocal(t, family, p, units, filepath.Join(csvGlob...))
}
