package accounting

import (
	"fmt"
	"math"
)

// ComposePure composes ε_i-DP mechanisms, adaptively chosen or not, into (Σ ε_i)-DP (simple
// composition, Dwork & Roth 2014 Thm 3.16 with δ = 0; seed 001 F.5; privacy spec §1.5). At
// least one guarantee is required. The sum is taken left to right.
func ComposePure(gs ...PureDP) (PureDP, error) {
	eps, err := compose("ComposePure", "epsilon", gs, func(eps float64, g PureDP) float64 { return eps + g.Epsilon })
	if err != nil {
		return PureDP{}, err
	}
	return PureDP{Epsilon: eps}, nil
}

// ComposeApprox composes (ε_i, δ_i)-DP mechanisms, adaptively chosen or not, into
// (Σ ε_i, Σ δ_i)-DP (simple composition, Dwork & Roth 2014 Thm 3.16; seed 001 F.5; privacy
// spec §1.5). The composed δ must stay < 1, otherwise the result is vacuous and an error is
// returned. At least one guarantee is required. Sums are taken left to right.
func ComposeApprox(gs ...ApproxDP) (ApproxDP, error) {
	var delta float64
	eps, err := compose("ComposeApprox", "epsilon", gs, func(eps float64, g ApproxDP) float64 {
		delta += g.Delta
		return eps + g.Epsilon
	})
	if err != nil {
		return ApproxDP{}, err
	}
	if delta >= 1 {
		return ApproxDP{}, fmt.Errorf("accounting: composed delta (sum of the deltas) must be < 1, got %v", delta)
	}
	return ApproxDP{Epsilon: eps, Delta: delta}, nil
}

// ComposeZCDP composes ρ_i-zCDP mechanisms, adaptively chosen or not, into (Σ ρ_i)-zCDP
// (composition of zCDP, Bun & Steinke 2016; seed 000 Lemma 7; privacy spec §1.4). At least one
// guarantee is required. The sum is taken left to right.
func ComposeZCDP(gs ...ZCDP) (ZCDP, error) {
	rho, err := compose("ComposeZCDP", "rho", gs, func(rho float64, g ZCDP) float64 { return rho + g.Rho })
	if err != nil {
		return ZCDP{}, err
	}
	return ZCDP{Rho: rho}, nil
}

// compose checks that gs holds at least one guarantee (else an error naming the function fn)
// and that each is valid, and folds them left to right into one parameter, starting from 0
// with add; a composed parameter (named param) that overflows is an error.
func compose[G interface{ validate(of string) error }](fn, param string, gs []G, add func(acc float64, g G) float64) (float64, error) {
	if len(gs) == 0 {
		return 0, fmt.Errorf("accounting: %s needs at least 1 guarantee, got 0", fn)
	}
	var acc float64
	for i, g := range gs {
		if err := g.validate(guaranteeOf(i)); err != nil {
			return 0, err
		}
		acc = add(acc, g)
	}
	if math.IsInf(acc, 0) {
		return 0, fmt.Errorf("accounting: composed %s overflows", param)
	}
	return acc, nil
}

func guaranteeOf(i int) string { return fmt.Sprintf(" of guarantee %d", i) }

// AdvancedComposition is the advanced composition theorem of Dwork, Rothblum & Vadhan (2010;
// Dwork & Roth 2014 Thm 3.20; seed 001 F.6 corrected as in privacy spec §1.5): the
// k-fold adaptive composition of (ε0, δ0)-DP mechanisms is (ε′, kδ0 + δ′)-DP for every δ′ > 0,
//
//	ε′ = √(2k ln(1/δ′))·ε0 + k·ε0·(e^ε0 − 1).
//
// eps0 must be finite and > 0, delta0 in [0, 1) (δ0 = 0 composes pure-DP mechanisms), k ≥ 1,
// deltaPrime in (0, 1), and the total δ = k·δ0 + δ′ must be < 1. The result is not capped at
// the simple-composition value k·ε0, which is smaller for large ε0; compare with ComposePure
// or ComposeApprox when that matters.
func AdvancedComposition(eps0, delta0 float64, k int, deltaPrime float64) (ApproxDP, error) {
	if err := checkAdvanced(eps0, delta0, k, deltaPrime); err != nil {
		return ApproxDP{}, err
	}
	return advancedResult(drvEpsilon(eps0, k, deltaPrime), drvDelta(delta0, k, deltaPrime))
}

// AdvancedCompositionKOV is the Kairouz, Oh & Viswanath (2015, Thm 3.4) bound in the form of
// privacy spec §1.5: the k-fold adaptive composition of (ε0, δ0)-DP mechanisms is
// (ε′, 1 − (1−δ0)^k (1−δ′))-DP for every δ′ > 0 with
//
//	ε′ = k·ε0·(e^ε0 − 1)/(e^ε0 + 1) + ε0·√(2k ln(1/δ′)).
//
// It is never worse than AdvancedComposition ((e^x−1)/(e^x+1) = tanh(x/2) ≤ e^x − 1 and
// 1 − (1−δ0)^k (1−δ′) ≤ kδ0 + δ′) and justifies the variant m·ε0² + ε0√(2m ln(1/δ′)) used in
// seed 001 F.4. Only this branch of the theorem's minimum is evaluated. The argument ranges are
// those of AdvancedComposition.
func AdvancedCompositionKOV(eps0, delta0 float64, k int, deltaPrime float64) (ApproxDP, error) {
	if err := checkAdvanced(eps0, delta0, k, deltaPrime); err != nil {
		return ApproxDP{}, err
	}
	kf := float64(k)
	eps := kf*eps0*math.Tanh(eps0/2) + eps0*math.Sqrt(2*kf*-math.Log(deltaPrime))
	delta := -math.Expm1(kf*math.Log1p(-delta0) + math.Log1p(-deltaPrime))
	return advancedResult(eps, delta)
}

// drvEpsilon is the ε′ of AdvancedComposition without validation. AdvancedCompositionSplitExact
// inverts exactly this expression, so the two agree bit for bit.
func drvEpsilon(eps0 float64, k int, deltaPrime float64) float64 {
	kf := float64(k)
	return math.Sqrt(2*kf*-math.Log(deltaPrime))*eps0 + kf*eps0*math.Expm1(eps0)
}

// drvDelta is the δ of AdvancedComposition, kδ0 + δ′, without validation.
func drvDelta(delta0 float64, k int, deltaPrime float64) float64 {
	return float64(k)*delta0 + deltaPrime
}

func checkAdvanced(eps0, delta0 float64, k int, deltaPrime float64) error {
	if err := checkPositive("eps0", eps0); err != nil {
		return err
	}
	if !(delta0 >= 0 && delta0 < 1) {
		return fmt.Errorf("accounting: delta0 must be in [0, 1), got %v", delta0)
	}
	if err := checkCount("k", k); err != nil {
		return err
	}
	return checkOpenUnit("deltaPrime", deltaPrime)
}

func advancedResult(eps, delta float64) (ApproxDP, error) {
	if math.IsInf(eps, 0) || math.IsNaN(eps) {
		return ApproxDP{}, fmt.Errorf("accounting: composed epsilon overflows, got %v", eps)
	}
	if !(delta < 1) {
		return ApproxDP{}, fmt.Errorf("accounting: composed delta (k*delta0 + deltaPrime) must be < 1, got %v", delta)
	}
	return ApproxDP{Epsilon: eps, Delta: delta}, nil
}

// AdvancedCompositionSplit is the budget-split recipe of seed 001 (App. F.6, privacy spec §1.5
// and §3.2): to make k adaptively composed mechanisms jointly (ε, δ)-DP with ε ∈ (0, 1), give
// each
//
//	ε0 = ε / √(8k ln(2/δ)),   δ0 = δ/(2k),
//
// and apply AdvancedComposition with δ′ = δ/2: √(2k ln(2/δ))·ε0 = ε/2 and
// k·ε0·(e^ε0 − 1) ≤ 2k·ε0² = ε²/(4 ln(2/δ)) ≤ ε/2. The recipe's proof needs ε < 1; a target
// with ε ≥ 1 is an error (use AdvancedCompositionSplitExact). δ0 is rounded down so that
// AdvancedComposition(ε0, δ0, k, δ/2) ≤ target holds in float64.
func AdvancedCompositionSplit(target ApproxDP, k int) (eps0, delta0 float64, err error) {
	if err := target.validate(" of target"); err != nil {
		return 0, 0, err
	}
	if target.Epsilon >= 1 {
		return 0, 0, fmt.Errorf("accounting: epsilon of target must be in (0, 1) for the seed-001 split recipe, got %v (use AdvancedCompositionSplitExact)", target.Epsilon)
	}
	if err := checkCount("k", k); err != nil {
		return 0, 0, err
	}
	eps0 = target.Epsilon / math.Sqrt(8*float64(k)*-math.Log(target.Delta/2))
	if !(eps0 > 0) {
		return 0, 0, fmt.Errorf("accounting: epsilon of target is too small, eps0 underflows to 0 for k = %d", k)
	}
	delta0, err = splitDelta0(target.Delta, k)
	if err != nil {
		return 0, 0, err
	}
	// Defensive forward check; the recipe leaves a margin of ≥ 28% of ε/2 in the second term.
	got, err := AdvancedComposition(eps0, delta0, k, target.Delta/2)
	if err != nil {
		return 0, 0, err
	}
	if got.Epsilon > target.Epsilon || got.Delta > target.Delta {
		return 0, 0, fmt.Errorf("accounting: split recipe for target %v and k = %d composes to %v (internal error)", target, k, got)
	}
	return eps0, delta0, nil
}

// AdvancedCompositionSplitExact returns the largest ε0 for which AdvancedComposition(ε0, δ0, k,
// δ/2) has ε′ ≤ ε, found by bisection on the monotone DRV left-hand side
// √(2k ln(2/δ))·ε0 + k·ε0·(e^ε0 − 1) (privacy spec §1.5, "exact inverse"), with δ0 = δ/(2k) and
// δ′ = δ/2 as in the seed-001 recipe. Any ε > 0 is allowed. The composed ε′ matches the target
// to within a few ulps and never exceeds it; δ0 is rounded down like in AdvancedCompositionSplit.
func AdvancedCompositionSplitExact(target ApproxDP, k int) (eps0, delta0 float64, err error) {
	if err := target.validate(" of target"); err != nil {
		return 0, 0, err
	}
	if err := checkCount("k", k); err != nil {
		return 0, 0, err
	}
	eps, deltaPrime := target.Epsilon, target.Delta/2
	if !(deltaPrime > 0) {
		return 0, 0, fmt.Errorf("accounting: delta of target is too small, delta/2 underflows to 0")
	}
	f := func(e float64) float64 { return drvEpsilon(e, k, deltaPrime) }
	// The first term alone reaches ε at hi, so f(hi) ≥ ε up to rounding.
	lo, hi := 0.0, eps/math.Sqrt(2*float64(k)*-math.Log(deltaPrime))
	for !(f(hi) > eps) {
		lo, hi = hi, 2*hi
		if math.IsInf(hi, 1) {
			return 0, 0, fmt.Errorf("accounting: no eps0 found for target %v and k = %d (internal error)", target, k)
		}
	}
	for range 4096 {
		mid := lo + (hi-lo)/2
		if mid <= lo || mid >= hi {
			break
		}
		if f(mid) <= eps {
			lo = mid
		} else {
			hi = mid
		}
	}
	if !(lo > 0) {
		return 0, 0, fmt.Errorf("accounting: epsilon of target is too small, eps0 underflows to 0 for k = %d", k)
	}
	delta0, err = splitDelta0(target.Delta, k)
	if err != nil {
		return 0, 0, err
	}
	return lo, delta0, nil
}

// splitDelta0 returns δ0 ≈ δ/(2k), rounded down so that k·δ0 + δ/2 ≤ δ in float64.
func splitDelta0(delta float64, k int) (float64, error) {
	d0, ok := lowerUntil(delta/2/float64(k), func(d float64) bool { return drvDelta(d, k, delta/2) <= delta })
	if !ok {
		return 0, fmt.Errorf("accounting: cannot split delta of target %v over k = %d (internal error)", delta, k)
	}
	return d0, nil
}

// Split divides an ε-DP budget evenly among k mechanisms: each gets ε/k, and their simple
// composition (ComposePure, Dwork & Roth 2014 Thm 3.16) is ε-DP. k must be ≥ 1. The share is
// rounded down so that ComposePure of k shares does not exceed ε in float64.
func (p PureDP) Split(k int) (PureDP, error) {
	eps, err := validShare(p, "epsilon", p.Epsilon, k)
	return PureDP{Epsilon: eps}, err
}

// Split divides an (ε,δ)-DP budget evenly among k mechanisms: each gets (ε/k, δ/k), and their
// simple composition (ComposeApprox, Dwork & Roth 2014 Thm 3.16) is (ε,δ)-DP. k must be ≥ 1.
// Shares are rounded down so that ComposeApprox of k shares does not exceed a in float64.
func (a ApproxDP) Split(k int) (ApproxDP, error) {
	eps, err := validShare(a, "epsilon", a.Epsilon, k)
	if err != nil {
		return ApproxDP{}, err
	}
	delta, err := share("delta", a.Delta, k)
	if err != nil {
		return ApproxDP{}, err
	}
	return ApproxDP{Epsilon: eps, Delta: delta}, nil
}

// Split divides a ρ-zCDP budget evenly among k mechanisms: each gets ρ/k, and their
// composition (ComposeZCDP; seed 000 Lemma 7) is ρ-zCDP. k must be ≥ 1. The share
// is rounded down so that ComposeZCDP of k shares does not exceed ρ in float64.
func (z ZCDP) Split(k int) (ZCDP, error) {
	rho, err := validShare(z, "rho", z.Rho, k)
	return ZCDP{Rho: rho}, err
}

// validShare returns share(name, x, k) for the parameter x of the guarantee g if g is valid;
// on an error it returns 0 and the error (so the split guarantee is the zero value).
func validShare(g interface{ Validate() error }, name string, x float64, k int) (float64, error) {
	if err := g.Validate(); err != nil {
		return 0, err
	}
	return share(name, x, k)
}

// share returns x ≈ total/k such that adding x to itself k times left to right (as the
// Compose functions do) gives at most total.
func share(name string, total float64, k int) (float64, error) {
	if err := checkCount("k", k); err != nil {
		return 0, err
	}
	x := total / float64(k)
	for range 64 {
		if !(x > 0) {
			break
		}
		s := repeatedSum(x, k)
		if s <= total {
			return x, nil
		}
		x = math.Nextafter(x*(total/s), 0)
	}
	return 0, fmt.Errorf("accounting: %s/k underflows for %s = %v and k = %d", name, name, total, k)
}

func repeatedSum(x float64, k int) float64 {
	var s float64
	for range k {
		s += x
	}
	return s
}
