package accounting

import (
	"fmt"
	"math"
)

// KindGDP is the Kind of GDP.
const KindGDP = "gdp"

// GDP is μ-Gaussian differential privacy (Dong, Roth & Su 2022, Def. 2.6): for all
// neighbouring D, D′ distinguishing M(D) from M(D′) is at least as hard as distinguishing
// N(0, 1) from N(μ, 1), i.e. the trade-off function of the pair is ≥ G_μ. A Gaussian release
// of a statistic with ℓ2 sensitivity Δ and noise N(0, σ²I) is exactly (Δ/σ)-GDP
// (GaussianGDP), and any post-processing of it is too. Compositions of Gaussian releases,
// adaptively chosen or not, are √(Σ μᵢ²)-GDP (ComposeGDP; Dong, Roth & Su 2022, Cor. 3.3).
//
// μ-GDP is equivalent to the whole family of (ε, δ(ε))-DP guarantees with
//
//	δ(ε) = Φ(−ε/μ + μ/2) − e^ε·Φ(−ε/μ − μ/2)   for every ε ≥ 0
//
// (Dong, Roth & Su 2022, Cor. 2.13; Balle & Wang 2018, Thm 8; practical-privacy spec §2), so
// an all-Gaussian release needs no PLD/PRV accountant: GDP.Delta, GDP.ToApproxDP and GDPFor
// are exact up to float64 rounding, which they resolve in the safe direction.
type GDP struct {
	Mu float64 `json:"mu"`
}

// NewGDP returns a μ-GDP guarantee. mu must be finite and > 0.
func NewGDP(mu float64) (GDP, error) { return valid(GDP{Mu: mu}) }

// Validate reports whether g is a valid guarantee (mu finite and > 0).
func (g GDP) Validate() error { return g.validate("") }

func (g GDP) validate(of string) error { return checkPositive("mu"+of, g.Mu) }

// String renders g as "(mu=μ)-GDP".
func (g GDP) String() string { return fmt.Sprintf("(mu=%v)-GDP", g.Mu) }

// Kind returns KindGDP.
func (GDP) Kind() string { return KindGDP }

// Delta returns the exact privacy profile of μ-GDP at ε (Dong, Roth & Su 2022, Cor. 2.13;
// Balle & Wang 2018, Thm 8; practical-privacy spec §2):
//
//	δ(ε) = Φ(−ε/μ + μ/2) − e^ε·Φ(−ε/μ − μ/2),
//
// the smallest δ for which g implies (ε, δ)-DP. It is GaussianExactDelta(μ, ε), evaluated in
// log space. eps must be finite and ≥ 0 and g valid; otherwise the result is NaN.
func (g GDP) Delta(eps float64) float64 { return GaussianExactDelta(g.Mu, eps) }

// ToApproxDP returns the smallest ε for which μ-GDP implies (ε, δ)-DP, found by bisection on
// the decreasing profile GDP.Delta (practical-privacy spec §2). The result is rounded up: the
// returned ε satisfies g.Delta(ε) ≤ δ in float64, and it is within a few ulps of the exact
// root. delta must be in (0, 1).
//
// If already δ(0) ≤ δ (μ tiny: the total-variation distance 2Φ(μ/2) − 1 is at most δ), every
// ε > 0 works and, because ApproxDP needs ε > 0, the result carries ε = 5e-324 (the smallest
// positive float64).
func (g GDP) ToApproxDP(delta float64) (ApproxDP, error) {
	if err := g.Validate(); err != nil {
		return ApproxDP{}, err
	}
	if err := checkOpenUnit("delta", delta); err != nil {
		return ApproxDP{}, err
	}
	mu := g.Mu
	if g.Delta(0) <= delta {
		return ApproxDP{Epsilon: math.SmallestNonzeroFloat64, Delta: delta}, nil
	}
	// μ-GDP ⇒ (μ²/2)-zCDP ⇒ (μ²/2 + μ√(2 ln(1/δ)), δ)-DP (Bun & Steinke 2016, Lemma 3.5):
	// a valid upper bracket; doubling guards against rounding in the profile.
	hi := mu*mu/2 + mu*math.Sqrt(2*-math.Log(delta))
	for !(g.Delta(hi) <= delta) {
		hi *= 2
		if math.IsInf(hi, 1) || math.IsNaN(hi) {
			return ApproxDP{}, fmt.Errorf("accounting: epsilon of %v at delta=%v overflows", g, delta)
		}
	}
	lo := 0.0 // g.Delta(lo) > delta
	for range 4096 {
		mid := lo + (hi-lo)/2
		if mid <= lo || mid >= hi {
			break
		}
		if g.Delta(mid) <= delta {
			hi = mid
		} else {
			lo = mid
		}
	}
	return ApproxDP{Epsilon: hi, Delta: delta}, nil
}

// GDPFor returns the largest μ for which μ-GDP implies the target (ε, δ)-DP, i.e. the largest
// μ with δ_μ(ε) ≤ δ, found by bisection on the profile, which increases with μ
// (practical-privacy spec §2). The result is rounded down: GDP{μ}.Delta(ε) ≤ δ holds in
// float64. Golden values at δ = 10⁻⁵: μ = 0.032521 (ε = 0.1), 0.268051 (ε = 1), 2.000446
// (ε = 10).
func GDPFor(target ApproxDP) (GDP, error) {
	if err := target.validate(" of target"); err != nil {
		return GDP{}, err
	}
	eps, delta := target.Epsilon, target.Delta
	ok := func(mu float64) bool { return GaussianExactDelta(mu, eps) <= delta }
	// Bracket [lo, hi] with ok(lo) and !ok(hi).
	lo, hi := 0.0, 1.0
	for ok(hi) {
		lo, hi = hi, 2*hi
		if math.IsInf(hi, 1) {
			return GDP{}, fmt.Errorf("accounting: no largest mu for target %v (internal error)", target)
		}
	}
	for range 4096 {
		mid := lo + (hi-lo)/2
		if mid <= lo || mid >= hi {
			break
		}
		if ok(mid) {
			lo = mid
		} else {
			hi = mid
		}
	}
	if !(lo > 0) {
		return GDP{}, fmt.Errorf("accounting: target %v is too strict, mu underflows to 0", target)
	}
	return GDP{Mu: lo}, nil
}

// ComposeGDP composes μᵢ-GDP mechanisms, adaptively chosen or not, into √(Σ μᵢ²)-GDP (Dong,
// Roth & Su 2022, Cor. 3.3; practical-privacy spec §2). At least one guarantee is required.
// The root of the sum of squares is accumulated with math.Hypot, so it neither overflows nor
// underflows in intermediate steps.
func ComposeGDP(gs ...GDP) (GDP, error) {
	mu, err := compose("ComposeGDP", "mu", gs, func(mu float64, g GDP) float64 { return math.Hypot(mu, g.Mu) })
	if err != nil {
		return GDP{}, err
	}
	return GDP{Mu: mu}, nil
}

// ToZCDP converts μ-GDP to (μ²/2)-zCDP. The conversion is valid — the Gaussian mechanism with
// μ = Δ/σ has Rényi divergence αμ²/2 at every order α (Bun & Steinke 2016, Prop. 1.6), and by
// Blackwell's theorem (Dong, Roth & Su 2022, §2.3) the output pair of any μ-GDP mechanism on
// neighbours is a randomized post-processing of the pair N(0,1), N(μ,1), so by data processing
// its Rényi divergences are no larger — but it is lossy: converting the result back to (ε, δ) with ZCDP.ToApproxDP costs ≈ 10–30 % in ε or,
// equivalently, σ/Δ = 4.90 instead of 3.73 at (1, 10⁻⁵) (practical-privacy spec §2). Use it
// only to compose with non-Gaussian zCDP parts. An invalid g yields ZCDP{Rho: NaN}, which every
// function of this package rejects.
func (g GDP) ToZCDP() ZCDP {
	if g.Validate() != nil {
		return ZCDP{Rho: math.NaN()}
	}
	return ZCDP{Rho: g.Mu * g.Mu / 2}
}

// GaussianGDP returns the guarantee μ = Δ2/σ of the Gaussian mechanism: adding N(0, σ²I) to a
// statistic of ℓ2 sensitivity sens2 is exactly μ-GDP (Dong, Roth & Su 2022, Thm 2.7;
// practical-privacy spec §2). For a correlated-noise counter pass sens2 = Δ2 times the
// counter's sensitivity factor (max column norm of its encoder). Both arguments must be finite
// and > 0.
func GaussianGDP(sens2, sigma float64) (GDP, error) {
	if err := checkPositive("sens2", sens2); err != nil {
		return GDP{}, err
	}
	if err := checkPositive("sigma", sigma); err != nil {
		return GDP{}, err
	}
	mu := sens2 / sigma
	if !(mu > 0) || math.IsInf(mu, 1) {
		return GDP{}, fmt.Errorf("accounting: mu = sens2/sigma is not finite and > 0 for sens2 = %v, sigma = %v", sens2, sigma)
	}
	return GDP{Mu: mu}, nil
}

// GaussianSigma returns the smallest standard deviation σ that makes the Gaussian mechanism on
// a statistic of ℓ2 sensitivity sens2 g-GDP: σ = Δ2/μ, rounded up so that
// GaussianGDP(sens2, σ).Mu ≤ g.Mu in float64. Combined with GDPFor it calibrates σ for a target
// (ε, δ) exactly (σ/Δ = 3.7306 at (1, 10⁻⁵)).
func (g GDP) GaussianSigma(sens2 float64) (float64, error) {
	if err := g.Validate(); err != nil {
		return 0, err
	}
	if err := checkPositive("sens2", sens2); err != nil {
		return 0, err
	}
	sigma, ok := raiseUntil(sens2/g.Mu, func(s float64) bool { return sens2/s <= g.Mu })
	if !ok || math.IsInf(sigma, 1) || !(sigma > 0) {
		return 0, fmt.Errorf("accounting: sigma = sens2/mu is not finite and > 0 for sens2 = %v, mu = %v", sens2, g.Mu)
	}
	return sigma, nil
}
