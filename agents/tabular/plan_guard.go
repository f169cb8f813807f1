package tabular

import (
	"errors"
	"fmt"
)

// The planners' guard (issue 25 item 2): a planner never panics on a released statistic. A
// release with a non-finite number, or action values that are all NaN at some (h, s), is an
// error: the curator's Publish returns it and a service keeps serving its last policy. The
// report boundary (LocalCurator's bounds, the clipping of every contribution) keeps honest and
// hostile reports alike from producing such a release; the guard is the second line.

// errNoAction is returned by the backward inductions when no action of some (h, s) has a
// comparable value (every Q is NaN).
var errNoAction = errors.New("tabular planner: no action has a finite value (the released statistics are not finite)")

// finiteStat returns an error naming the first non-finite number of the released vector v.
func finiteStat(name string, v []float64) error {
	for i, x := range v {
		if x-x != 0 {
			return fmt.Errorf("tabular planner: released %s[%d] is %g, not a finite number", name, i, x)
		}
	}
	return nil
}

// finiteRelease checks a practical release (NT, R and the noise levels).
func finiteRelease(r *Release) error {
	if err := finiteStat("NT", r.NT); err != nil {
		return err
	}
	if err := finiteStat("R", r.R); err != nil {
		return err
	}
	return finiteStat("std", []float64{r.Std, r.RStd})
}

// finiteBillboard checks a papers' billboard (N, NT, R and the error bound E ≥ 0).
func finiteBillboard(b *Billboard) error {
	if !(b.E >= 0) {
		return fmt.Errorf("tabular planner: released error bound E = %g, want a finite number >= 0", b.E)
	}
	for _, v := range []struct {
		name string
		x    []float64
	}{{"N", b.N}, {"NT", b.NT}, {"R", b.R}, {"E", []float64{b.E}}} {
		if err := finiteStat(v.name, v.x); err != nil {
			return err
		}
	}
	return nil
}
