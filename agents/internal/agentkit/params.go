package agentkit

import (
	"fmt"
	"math"
)

// ValidEpsilon reports whether ε is a usable privacy budget: a finite number > 0.
func ValidEpsilon(eps float64) bool { return eps > 0 && !math.IsInf(eps, 0) }

// ValidDelta reports whether δ is in (0, 1).
func ValidDelta(delta float64) bool { return delta > 0 && delta < 1 }

// CheckTrust checks the trust model m of a family whose models are 0 (non-private), 1 (JDP) and
// 2 (LDP) and, for a private model, its (ε, δ) target. The errors are the caller's:
// fmt.Errorf(modelFmt, int(m)) for an unknown model, fmt.Errorf(epsFmt, ε) for an unusable ε
// (ValidEpsilon) and fmt.Errorf(deltaFmt, δ) for δ ∉ (0, 1).
func CheckTrust[T ~int](m T, eps, delta float64, modelFmt, epsFmt, deltaFmt string) error {
	switch {
	case m < 0 || m > 2:
		return fmt.Errorf(modelFmt, int(m))
	case m == 0:
		return nil
	case !ValidEpsilon(eps):
		return fmt.Errorf(epsFmt, eps)
	case !ValidDelta(delta):
		return fmt.Errorf(deltaFmt, delta)
	}
	return nil
}
