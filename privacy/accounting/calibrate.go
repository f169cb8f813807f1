package accounting

import (
	"fmt"
	"math"
)

// LaplaceScale returns the Laplace scale b = Δ1/ε that makes the Laplace mechanism with L1
// sensitivity sens1 ε-DP (Dwork, McSherry, Nissim & Smith 2006; Dwork & Roth 2014 Thm 3.6;
// privacy spec §1.3). sens1 and eps must be finite and > 0. b is rounded up so that
// LaplaceEpsilon(sens1, b) ≤ eps in float64.
func LaplaceScale(sens1, eps float64) (float64, error) {
	if err := checkPositive("sens1", sens1); err != nil {
		return 0, err
	}
	if err := checkPositive("epsilon", eps); err != nil {
		return 0, err
	}
	b, ok := raiseUntil(sens1/eps, func(b float64) bool { return sens1/b <= eps })
	if !ok || math.IsInf(b, 1) {
		return 0, fmt.Errorf("accounting: Laplace scale sens1/epsilon overflows for sens1 = %v, epsilon = %v", sens1, eps)
	}
	return b, nil
}

// GaussSigmaZCDP returns σ = √(Δ2²/(2ρ)), the standard deviation that makes the Gaussian
// mechanism with L2 sensitivity sens2 ρ-zCDP (Bun & Steinke 2016, Prop. 1.6; seed 000 Def. 9,
// Lemma 10; privacy spec §1.3). sens2 and rho must be finite and > 0. σ is rounded up so that
// GaussianRho(sens2, σ) ≤ rho in float64.
func GaussSigmaZCDP(sens2, rho float64) (float64, error) {
	if err := checkPositive("sens2", sens2); err != nil {
		return 0, err
	}
	if err := checkPositive("rho", rho); err != nil {
		return 0, err
	}
	sigma, ok := raiseUntil(sens2/math.Sqrt(2*rho), func(s float64) bool { return gaussRho(sens2, s) <= rho })
	if !ok || math.IsInf(sigma, 1) {
		return 0, fmt.Errorf("accounting: Gaussian sigma overflows for sens2 = %v, rho = %v", sens2, rho)
	}
	return sigma, nil
}

// GaussSigmaClassic returns σ = Δ2·√(2 ln(1.25/δ))/ε, the classic calibration that makes the
// Gaussian mechanism with L2 sensitivity sens2 (ε,δ)-DP for ε ∈ (0, 1) (Dwork & Roth 2014,
// Thm A.1; privacy spec §1.3). sens2 must be finite and > 0, eps in (0, 1), delta in (0, 1).
func GaussSigmaClassic(sens2, eps, delta float64) (float64, error) {
	return gaussSigmaDP(sens2, eps, delta, 1.25, "the classic Gaussian mechanism (Dwork & Roth Thm A.1)")
}

// GaussSigmaSeed001 returns σ = Δ2·√(2 ln(2/δ))/ε, the Gaussian calibration of seed 001
// (Luyo et al. 2021, App. F.3; privacy spec §1.3), slightly more noise than GaussSigmaClassic;
// use it when reproducing seed 001. sens2 must be finite and > 0, eps in (0, 1), delta in
// (0, 1).
func GaussSigmaSeed001(sens2, eps, delta float64) (float64, error) {
	return gaussSigmaDP(sens2, eps, delta, 2, "the seed-001 Gaussian mechanism (App. F.3)")
}

func gaussSigmaDP(sens2, eps, delta, c float64, what string) (float64, error) {
	if err := checkPositive("sens2", sens2); err != nil {
		return 0, err
	}
	if !(eps > 0 && eps < 1) {
		return 0, fmt.Errorf("accounting: epsilon must be in (0, 1) for %s, got %v", what, eps)
	}
	if err := checkOpenUnit("delta", delta); err != nil {
		return 0, err
	}
	sigma := sens2 * math.Sqrt(2*math.Log(c/delta)) / eps
	if math.IsInf(sigma, 1) {
		return 0, fmt.Errorf("accounting: Gaussian sigma overflows for sens2 = %v, epsilon = %v, delta = %v", sens2, eps, delta)
	}
	return sigma, nil
}

// LaplaceEpsilon is the accountant's inverse of LaplaceScale: Laplace noise of scale b on a
// statistic of L1 sensitivity sens1 is (Δ1/b)-DP (Dwork & Roth 2014 Thm 3.6; privacy spec §1.3,
// §3.2 with Δ1 = L·Δ for a tree counter). Both arguments must be finite and > 0; otherwise the
// result is NaN, which every constructor of this package rejects.
func LaplaceEpsilon(sens1, b float64) float64 {
	if checkPositive("sens1", sens1) != nil || checkPositive("b", b) != nil {
		return math.NaN()
	}
	return sens1 / b
}

// GaussianRho is the accountant's inverse of GaussSigmaZCDP: N(0, σ²) noise on a statistic of
// L2 sensitivity sens2 is Δ2²/(2σ²)-zCDP (Bun & Steinke 2016, Prop. 1.6; privacy spec §1.3,
// §3.2 with Δ2² = L·Δ² for a tree counter). Both arguments must be finite and > 0; otherwise
// the result is NaN, which every constructor of this package rejects.
func GaussianRho(sens2, sigma float64) float64 {
	if checkPositive("sens2", sens2) != nil || checkPositive("sigma", sigma) != nil {
		return math.NaN()
	}
	return gaussRho(sens2, sigma)
}

// gaussRho is Δ²/(2σ²) computed as (Δ/σ)²/2 to avoid overflow.
func gaussRho(sens2, sigma float64) float64 {
	r := sens2 / sigma
	return r * r / 2
}

// GaussianExactDelta returns the exact privacy profile of the Gaussian mechanism with
// μ = Δ2/σ (Balle & Wang 2018, Thm 8; privacy spec §1.4):
//
//	δ(ε) = Φ(−ε/μ + μ/2) − e^ε·Φ(−ε/μ − μ/2),
//
// the smallest δ for which the mechanism is (ε,δ)-DP. c non-adaptive releases with the same μ
// compose to one with μ·√c. It is meant for tests and reports (§5.1): it is much tighter than
// the zCDP conversion. mu must be finite and > 0 and eps finite and ≥ 0 (δ(0) is the total
// variation distance); otherwise the result is NaN. The difference is evaluated in log space,
// accurate to many digits wherever the result is a normal float64.
func GaussianExactDelta(mu, eps float64) float64 {
	if checkPositive("mu", mu) != nil || !(eps >= 0) || math.IsInf(eps, 1) {
		return math.NaN()
	}
	la := logPhi(-eps/mu + mu/2)
	if math.IsInf(la, -1) {
		return 0
	}
	lb := logPhi(-eps/mu - mu/2)
	r := eps + lb - la // log of e^ε Φ(b)/Φ(a), ≤ 0 in exact arithmetic
	if r > 0 || math.IsNaN(r) {
		r = 0
	}
	d := math.Exp(la) * -math.Expm1(r)
	return math.Max(d, 0)
}

// logPhi returns ln Φ(x) for the standard normal CDF Φ, using erfc where it is accurate and the
// asymptotic series Φ(x) = φ(x)/|x|·(1 − 1/x² + 3/x⁴ − …) (Abramowitz & Stegun 26.2.12) in the
// far left tail, where erfc underflows.
func logPhi(x float64) float64 {
	switch {
	case math.IsNaN(x):
		return math.NaN()
	case x > 0:
		return math.Log1p(-0.5 * math.Erfc(x/math.Sqrt2))
	case x > -30:
		return math.Log(0.5 * math.Erfc(-x/math.Sqrt2))
	case math.IsInf(x, -1):
		return math.Inf(-1)
	}
	// x ≤ −30: terms (2k−1)!!/x^{2k}; at x = −30 the 8th term is < 1e-18.
	z := 1 / (x * x)
	sum, term := 1.0, 1.0
	for k := 1; k <= 8; k++ {
		term *= -float64(2*k-1) * z
		sum += term
	}
	return -x*x/2 - math.Log(-x) - 0.5*math.Log(2*math.Pi) + math.Log(sum)
}
