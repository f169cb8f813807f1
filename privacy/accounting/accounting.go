// Package accounting is the privacy bookkeeping of dprl: the guarantee types (pure ε-DP,
// approximate (ε,δ)-DP, ρ-zCDP and μ-GDP — the exact accountant for Gaussian releases, see
// GDP), conversions between them, composition theorems, budget
// splitting, noise calibration for the Laplace and Gaussian mechanisms, and high-probability
// bounds on the error of a sum of calibrated noise draws.
//
// Every formula follows the project's privacy spec (docs/spec/privacy.md §1, §3.2, §3.4) and
// each doc comment cites the paper and result it implements.
//
// Conventions:
//
//   - Inputs are validated. Invalid input never panics: it yields an error that names the
//     parameter and its allowed range, e.g. "accounting: epsilon must be finite and > 0, got -1".
//     The three accountant functions that return a bare float64 (LaplaceEpsilon, GaussianRho,
//     GaussianExactDelta) return NaN instead, which every constructor of this package rejects.
//   - Functions that hand out a share of a budget or calibrate noise for a target (Split,
//     AdvancedCompositionSplit*, ZCDPFor, LaplaceScale, GaussSigmaZCDP) round in the safe
//     direction: recomputing the guarantee forward with this package, in float64, never exceeds
//     the target. The correction is at most a few units in the last place.
//   - The package holds no mutable state; all values are plain data.
//
// This package knows nothing of reinforcement learning.
package accounting

import (
	"fmt"
	"math"
	"strings"
)

// Kinds returned by Guarantee.Kind; stable identifiers suitable for manifests.
const (
	// KindPureDP is the Kind of PureDP.
	KindPureDP = "pure-dp"
	// KindApproxDP is the Kind of ApproxDP.
	KindApproxDP = "approx-dp"
	// KindZCDP is the Kind of ZCDP.
	KindZCDP = "zcdp"
)

// Guarantee is a privacy guarantee of one of the notions of privacy spec §1.1. It is
// implemented by PureDP, ApproxDP and ZCDP.
type Guarantee interface {
	// String renders the guarantee for humans, e.g. "(eps=1, delta=1e-05)-DP".
	String() string
	// Kind is a stable identifier of the notion: KindPureDP, KindApproxDP or KindZCDP.
	Kind() string
}

// PureDP is pure ε-differential privacy: P[M(D) ∈ E] ≤ e^ε P[M(D′) ∈ E] for all neighbouring
// D, D′ and events E (Dwork, McSherry, Nissim & Smith 2006; privacy spec §1.1).
type PureDP struct {
	Epsilon float64 `json:"epsilon"`
}

// ApproxDP is approximate (ε,δ)-differential privacy: P[M(D) ∈ E] ≤ e^ε P[M(D′) ∈ E] + δ
// (Dwork, Kenthapadi, McSherry, Mironov & Naor 2006; privacy spec §1.1). Here δ > 0; use
// PureDP for δ = 0.
type ApproxDP struct {
	Epsilon float64 `json:"epsilon"`
	Delta   float64 `json:"delta"`
}

// ZCDP is ρ-zero-concentrated differential privacy: the Rényi divergence of order α between
// the outputs on neighbouring inputs is at most ρα for every α > 1 (Bun & Steinke 2016,
// Def. 1.1; privacy spec §1.1).
type ZCDP struct {
	Rho float64 `json:"rho"`
}

// NewPureDP returns an ε-DP guarantee. epsilon must be finite and > 0.
func NewPureDP(epsilon float64) (PureDP, error) { return valid(PureDP{Epsilon: epsilon}) }

// NewApproxDP returns an (ε,δ)-DP guarantee. epsilon must be finite and > 0, delta in (0, 1).
func NewApproxDP(epsilon, delta float64) (ApproxDP, error) {
	return valid(ApproxDP{Epsilon: epsilon, Delta: delta})
}

// NewZCDP returns a ρ-zCDP guarantee. rho must be finite and > 0.
func NewZCDP(rho float64) (ZCDP, error) { return valid(ZCDP{Rho: rho}) }

// valid returns g if it is a valid guarantee, else the zero guarantee and g.Validate's error.
func valid[G interface{ Validate() error }](g G) (G, error) {
	if err := g.Validate(); err != nil {
		var zero G
		return zero, err
	}
	return g, nil
}

// Validate reports whether p is a valid guarantee (epsilon finite and > 0). Use it on values
// decoded from a manifest or built as struct literals.
func (p PureDP) Validate() error { return p.validate("") }

func (p PureDP) validate(of string) error { return checkPositive("epsilon"+of, p.Epsilon) }

// Validate reports whether a is a valid guarantee (epsilon finite and > 0, delta in (0, 1)).
func (a ApproxDP) Validate() error { return a.validate("") }

func (a ApproxDP) validate(of string) error {
	if err := checkPositive("epsilon"+of, a.Epsilon); err != nil {
		return err
	}
	return checkOpenUnit("delta"+of, a.Delta)
}

// Validate reports whether z is a valid guarantee (rho finite and > 0).
func (z ZCDP) Validate() error { return z.validate("") }

func (z ZCDP) validate(of string) error { return checkPositive("rho"+of, z.Rho) }

// String renders p as "(eps=ε)-DP".
func (p PureDP) String() string { return fmt.Sprintf("(eps=%v)-DP", p.Epsilon) }

// Kind returns KindPureDP.
func (PureDP) Kind() string { return KindPureDP }

// String renders a as "(eps=ε, delta=δ)-DP".
func (a ApproxDP) String() string { return fmt.Sprintf("(eps=%v, delta=%v)-DP", a.Epsilon, a.Delta) }

// Kind returns KindApproxDP.
func (ApproxDP) Kind() string { return KindApproxDP }

// String renders z as "(rho=ρ)-zCDP".
func (z ZCDP) String() string { return fmt.Sprintf("(rho=%v)-zCDP", z.Rho) }

// Kind returns KindZCDP.
func (ZCDP) Kind() string { return KindZCDP }

// Neighbouring is the neighbouring relation under which sensitivities are computed (privacy
// spec §1.2, a [DECISION] of the spec). The accountant's formulas do not depend on it; it is
// recorded next to a guarantee so that a manifest states what the guarantee protects. The zero
// value is ReplaceOne, the spec's default.
type Neighbouring int

const (
	// ReplaceOne: one user's data is replaced by arbitrary other data (the definition in all
	// seeds). For elements with norm ≤ b the sensitivity is ≤ 2b (triangle inequality), or
	// ≤ √2·b in Frobenius norm for PSD elements.
	ReplaceOne Neighbouring = iota
	// ZeroOut: one user's element is replaced by 0 (add/remove-style). Sensitivity = b.
	ZeroOut
)

// String returns "replace-one", "zero-out", or "Neighbouring(n)" for an invalid value.
func (n Neighbouring) String() string {
	switch n {
	case ReplaceOne:
		return "replace-one"
	case ZeroOut:
		return "zero-out"
	}
	return fmt.Sprintf("Neighbouring(%d)", int(n))
}

// ParseNeighbouring parses the name of a neighbouring convention. Matching ignores case and the
// separators '-', '_', ' ' and '/': "replace-one", "ReplaceOne", "replace" give ReplaceOne;
// "zero-out", "ZeroOut", "zero", "add/remove" give ZeroOut (the spec calls ZeroOut
// "add/remove", §1.2). Anything else, including "", is an error.
func ParseNeighbouring(s string) (Neighbouring, error) {
	key := strings.Map(func(r rune) rune {
		switch r {
		case '-', '_', ' ', '/':
			return -1
		}
		return r
	}, strings.ToLower(strings.TrimSpace(s)))
	switch key {
	case "replaceone", "replace":
		return ReplaceOne, nil
	case "zeroout", "zero", "addremove":
		return ZeroOut, nil
	}
	return ReplaceOne, fmt.Errorf("accounting: neighbouring must be one of %q, %q, got %q",
		ReplaceOne.String(), ZeroOut.String(), s)
}

// MarshalText encodes n by its String name so that manifests (JSON, YAML) carry the name. It
// fails for a value other than ReplaceOne and ZeroOut.
func (n Neighbouring) MarshalText() ([]byte, error) {
	if n != ReplaceOne && n != ZeroOut {
		return nil, fmt.Errorf("accounting: neighbouring must be ReplaceOne (0) or ZeroOut (1), got %d", int(n))
	}
	return []byte(n.String()), nil
}

// UnmarshalText decodes a name accepted by ParseNeighbouring.
func (n *Neighbouring) UnmarshalText(text []byte) error {
	v, err := ParseNeighbouring(string(text))
	if err != nil {
		return err
	}
	*n = v
	return nil
}

// ToApproxDP converts ρ-zCDP to (ε,δ)-DP for the given δ ∈ (0, 1) with
//
//	ε = ρ + 2·√(ρ·ln(1/δ))
//
// (Bun & Steinke 2016, Lemma 3.5; seed 000 Lemma 6; privacy spec §1.4).
func (z ZCDP) ToApproxDP(delta float64) (ApproxDP, error) {
	if err := z.Validate(); err != nil {
		return ApproxDP{}, err
	}
	if err := checkOpenUnit("delta", delta); err != nil {
		return ApproxDP{}, err
	}
	eps := zcdpEpsilon(z.Rho, delta)
	if math.IsInf(eps, 0) {
		return ApproxDP{}, fmt.Errorf("accounting: epsilon of rho=%v at delta=%v overflows", z.Rho, delta)
	}
	return ApproxDP{Epsilon: eps, Delta: delta}, nil
}

// zcdpEpsilon is the Bun–Steinke Lemma 3.5 conversion ρ + 2√(ρ ln(1/δ)) without validation.
func zcdpEpsilon(rho, delta float64) float64 {
	return rho + 2*math.Sqrt(rho*-math.Log(delta))
}

// ZCDPFor returns the largest ρ for which ρ-zCDP implies the target (ε,δ)-DP through the
// conversion of ZCDP.ToApproxDP (Bun & Steinke 2016, Lemma 3.5), i.e. the positive root of
// x² + 2x√L − ε = 0 for x = √ρ, L = ln(1/δ):
//
//	ρ = (√(L + ε) − √L)²   (privacy spec §1.4),
//
// evaluated in the cancellation-free form ρ = (ε / (√(L+ε) + √L))². The result is rounded down
// so that ZCDP{ρ}.ToApproxDP(δ).Epsilon ≤ ε exactly in float64; the round trip is exact to a
// few ulps.
func ZCDPFor(target ApproxDP) (ZCDP, error) {
	if err := target.validate(" of target"); err != nil {
		return ZCDP{}, err
	}
	eps, delta := target.Epsilon, target.Delta
	l := -math.Log(delta)
	x := eps / (math.Sqrt(l+eps) + math.Sqrt(l))
	rho := x * x
	rho, ok := lowerUntil(rho, func(r float64) bool { return zcdpEpsilon(r, delta) <= eps })
	if !ok || !(rho > 0) {
		return ZCDP{}, fmt.Errorf("accounting: epsilon of target is too small, rho underflows to 0 for target %v", target)
	}
	return ZCDP{Rho: rho}, nil
}

// ToZCDP converts pure ε-DP to (ε²/2)-zCDP (Bun & Steinke 2016, Prop. 1.4; privacy spec §1.4),
// the conversion to use when mixing Laplace and Gaussian parts. An invalid p (see Validate)
// yields ZCDP{Rho: NaN}, which every function of this package rejects.
func (p PureDP) ToZCDP() ZCDP {
	if p.Validate() != nil {
		return ZCDP{Rho: math.NaN()}
	}
	return ZCDP{Rho: p.Epsilon * p.Epsilon / 2}
}

// ToApproxDP returns (ε, δ)-DP for δ ∈ (0, 1): ε-DP is (ε, δ)-DP for every δ ≥ 0 (by the
// definition, privacy spec §1.1).
func (p PureDP) ToApproxDP(delta float64) (ApproxDP, error) {
	if err := p.Validate(); err != nil {
		return ApproxDP{}, err
	}
	if err := checkOpenUnit("delta", delta); err != nil {
		return ApproxDP{}, err
	}
	return ApproxDP{Epsilon: p.Epsilon, Delta: delta}, nil
}

// checkPositive requires v finite and > 0.
func checkPositive(name string, v float64) error {
	if !(v > 0) || math.IsInf(v, 1) {
		return fmt.Errorf("accounting: %s must be finite and > 0, got %v", name, v)
	}
	return nil
}

// checkOpenUnit requires v ∈ (0, 1).
func checkOpenUnit(name string, v float64) error {
	if !(v > 0 && v < 1) {
		return fmt.Errorf("accounting: %s must be in (0, 1), got %v", name, v)
	}
	return nil
}

// checkCount requires k ≥ 1.
func checkCount(name string, k int) error {
	if k < 1 {
		return fmt.Errorf("accounting: %s must be >= 1, got %d", name, k)
	}
	return nil
}

// maxNudges bounds the ulp steps of lowerUntil and raiseUntil; in practice one or two suffice.
const maxNudges = 1 << 10

// lowerUntil steps x down one ulp at a time (at most maxNudges steps, never below 0) until
// ok(x) holds, and reports whether it does.
func lowerUntil(x float64, ok func(float64) bool) (float64, bool) {
	for range maxNudges {
		if ok(x) {
			return x, true
		}
		if x <= 0 {
			return x, false
		}
		x = math.Nextafter(x, 0)
	}
	return x, ok(x)
}

// raiseUntil steps x up one ulp at a time (at most maxNudges steps) until ok(x) holds, and
// reports whether it does.
func raiseUntil(x float64, ok func(float64) bool) (float64, bool) {
	for range maxNudges {
		if ok(x) {
			return x, true
		}
		if math.IsInf(x, 1) {
			return x, false
		}
		x = math.Nextafter(x, math.Inf(1))
	}
	return x, ok(x)
}
