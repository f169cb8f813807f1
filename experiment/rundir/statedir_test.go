package rundir_test

import (
	"testing"

	"github.com/dprl/dprl/experiment/engine"
	"github.com/dprl/dprl/experiment/rundir"
)

// TestStateDirIsUnitsDir: the state directory Prepare keeps is the engine's unit directory.
func TestStateDirIsUnitsDir(t *testing.T) {
	if rundir.StateDir != engine.UnitsDir {
		t.Errorf("rundir.StateDir = %q, engine.UnitsDir = %q", rundir.StateDir, engine.UnitsDir)
	}
}
