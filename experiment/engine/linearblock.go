package engine

import (
	"fmt"

	"github.com/dprl/dprl/experiment/rundir"
)

// CheckLinearBlock checks the keys a configuration block of the linear families (linmdp and
// linmix) begins with: name (rundir.CheckName), the runs (Runs.Check, at least minEpisodes
// episodes), δ and the failure probability p, each in (0, 1). The errors name the key.
func CheckLinearBlock(name string, runs Runs, minEpisodes int, delta, p float64) error {
	if err := rundir.CheckName("name", name); err != nil {
		return err
	}
	if err := runs.Check(minEpisodes); err != nil {
		return err
	}
	for _, f := range []struct {
		key string
		v   float64
	}{{"delta", delta}, {"p", p}} {
		if !(f.v > 0 && f.v < 1) {
			return fmt.Errorf("%s: must be in (0, 1), got %g", f.key, f.v)
		}
	}
	return nil
}
