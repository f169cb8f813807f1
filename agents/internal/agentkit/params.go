package agentkit

import "math"

// ValidEpsilon reports whether ε is a usable privacy budget: a finite number > 0.
func ValidEpsilon(eps float64) bool { return eps > 0 && !math.IsInf(eps, 0) }

// ValidDelta reports whether δ is in (0, 1).
func ValidDelta(delta float64) bool { return delta > 0 && delta < 1 }
