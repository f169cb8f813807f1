package lq

import (
	"fmt"
	"math"

	"github.com/dprl/dprl/agents/protocol"
)

// scalablePairs refuses a path (already of the header's sizes and finite) with a pair
// (z_h = (x_h, u_h), x_{h+1}) whose Euclidean norm overflows: pair scaling (lq spec §3.6)
// divides by that norm, so such a pair cannot be scaled into the sensitivity's ball
// (Curator.Receive refused it with an error naming no field). The error names the step's
// state or input (issue 25 item 2). Finite norms, however large, are scaled as before.
func scalablePairs(r *protocol.Path) error {
	for h, x := range r.States {
		sq := 0.0
		for _, v := range x {
			sq += v * v
		}
		if h < len(r.Inputs) {
			su := 0.0
			for _, v := range r.Inputs[h] {
				su += v * v
			}
			if math.IsInf(su, 0) {
				return &protocol.FieldError{Field: fmt.Sprintf("inputs[%d]", h), Msg: "its squared norm overflows: the pair cannot be scaled into the sensitivity's ball; refused"}
			}
			if !math.IsInf(sq, 0) && math.IsInf(sq+su, 0) {
				return &protocol.FieldError{Field: fmt.Sprintf("inputs[%d]", h), Msg: "the squared norm of (state, input) overflows: the pair cannot be scaled into the sensitivity's ball; refused"}
			}
		}
		if math.IsInf(sq, 0) {
			return &protocol.FieldError{Field: fmt.Sprintf("states[%d]", h), Msg: "its squared norm overflows: the pair cannot be scaled into the sensitivity's ball; refused"}
		}
	}
	return nil
}

// finiteBillboard is the guard of OFU-RL's publication: a release with a non-finite number is
// not published (Publish returns an error; a service keeps serving the last policy). The
// pair scaling keeps every release finite; this is the second line.
func finiteBillboard(b *Billboard) error {
	for k, v := range [][]float64{b.T1, b.T2} {
		for i, x := range v {
			if x-x != 0 {
				return fmt.Errorf("lq: released T%d[%d] is %g, not a finite number; not published", k+1, i, x)
			}
		}
	}
	return nil
}

// finite is the guard of the practical planner (PracticalPlanner.Prepare): a release with a
// non-finite number is an error, never a plan (the curator's clipping keeps every release
// finite; this is the second line).
func (r *PracticalRelease) finite() error {
	for k, v := range [][]float64{r.V, r.U, {r.Std}} {
		for i, x := range v {
			if x-x != 0 {
				return fmt.Errorf("practical lq: released %s[%d] is %g, not a finite number", []string{"V", "U", "std"}[k], i, x)
			}
		}
	}
	return nil
}
