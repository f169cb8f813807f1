package engine

import (
	"fmt"
	"math"

	"github.com/dprl/dprl/experiment/rundir"
)

// Exponent is the regret growth exponent in K a theorem predicts for an agent (the leading
// term at large K), as the families' agent tables state it; Known is false when the agent has
// none, which is written "none" (and null in a manifest), never 0.
type Exponent struct {
	Value float64
	Known bool
}

// Theory is a known exponent.
func Theory(v float64) Exponent { return Exponent{Value: v, Known: true} }

// NoExponent is the reason a manifest gives for a null theory exponent.
const NoExponent = "none: no regret theorem for this agent"

// String is the exponent as listings and summaries print it: "0.50", or "none".
func (e Exponent) String() string {
	if !e.Known {
		return "none"
	}
	return fmt.Sprintf("%.2f", e.Value)
}

// Number is the exponent for a manifest: null without a theorem, the reason recorded in u
// under field.
func (e Exponent) Number(u *rundir.Undefined, field string) rundir.Number {
	if !e.Known {
		return u.Set(field, math.NaN(), NoExponent)
	}
	return rundir.Number(e.Value)
}
