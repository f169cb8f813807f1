package linmix

import (
	"fmt"
	"math"

	"github.com/dprl/dprl/agents/internal/agentkit"
)

// Params are the public inputs from which every noise level, shift and confidence width is
// computed before any data is seen (linear-mixture spec §3–5).
type Params struct {
	// K is the number of episodes (known in advance, spec P20), H the horizon, D the
	// transition-feature dimension (d, or d1 for Zhou) and D2 Zhou's reward-feature dimension.
	K, H, D, D2 int
	// Epsilon, Delta are the privacy parameters; P is the failure probability (p in Luyo, α
	// in Zhou).
	Epsilon, Delta, P float64
	// Cw bounds ‖w_h‖ (Luyo Asm. 2).
	Cw float64
}

func (p Params) validate() error {
	switch {
	case p.K < 1 || p.K > 1<<40:
		return fmt.Errorf("episodes = %d, want 1..%d", p.K, int64(1)<<40)
	case p.H < 1:
		return fmt.Errorf("horizon = %d, want ≥ 1", p.H)
	case p.D < 1:
		return fmt.Errorf("dim = %d, want ≥ 1", p.D)
	case !agentkit.ValidEpsilon(p.Epsilon):
		return fmt.Errorf("epsilon = %v, want a finite number > 0", p.Epsilon)
	case !agentkit.ValidDelta(p.Delta):
		return fmt.Errorf("delta = %v, want (0, 1)", p.Delta)
	case !(p.P > 0 && p.P < 1):
		return fmt.Errorf("p (failure probability) = %v, want (0, 1)", p.P)
	case !(p.Cw >= 0) || math.IsInf(p.Cw, 0):
		return fmt.Errorf("cw = %v, want a finite number ≥ 0", p.Cw)
	}
	return nil
}

// K0 returns ⌈log2 K⌉ + 1, the tree depth of Luyo Cor. 5 (also used for Zhou's m, spec P9).
func K0(K int) int {
	if K <= 1 {
		return 1
	}
	return int(math.Ceil(math.Log2(float64(K)))) + 1
}

// SelfNorm returns H·sqrt(2 log(3H/p) + d·log(1+KH)), the self-normalised term of Luyo's β
// (evaluated in this form because (1+KH)^{d/2} overflows).
func SelfNorm(p Params) float64 {
	H := float64(p.H)
	return H * math.Sqrt(2*math.Log(3*H/p.P)+float64(p.D)*math.Log1p(float64(p.K)*H))
}

// LuyoConstants are the public constants of one mode of Luyo et al. Alg. 1.
type LuyoConstants struct {
	// Lambda is the ridge λ = H².
	Lambda float64
	// SigmaB is the Gaussian σ_B (Cor. 5 / Cor. 6), or 0 in Laplace modes.
	SigmaB float64
	// BB and BG are the Laplace scales of the matrix and vector noise in the pure-DP modes [D].
	BB, BG float64
	// Upsilon is Υ (shift 2Υ·I), C bounds ‖g‖.
	Upsilon, C float64
	// BetaCorollary = 3(C_w+1)·sqrt(λ+Υ) + SelfNorm; BetaTheorem7 = ((λ+3Υ)C_w + C)/sqrt(λ+Υ) + SelfNorm.
	BetaCorollary, BetaTheorem7 float64
	// K0 is the tree depth (JDP).
	K0 int
}

func luyoBetas(p Params, c *LuyoConstants) {
	sn := SelfNorm(p)
	c.BetaCorollary = 3*(p.Cw+1)*math.Sqrt(c.Lambda+c.Upsilon) + sn
	c.BetaTheorem7 = ((c.Lambda+3*c.Upsilon)*p.Cw+c.C)/math.Sqrt(c.Lambda+c.Upsilon) + sn
}

// LuyoNonPrivate returns the constants of non-private UCRL-VTR (spec §2): Υ = C = 0, so
// BetaCorollary = 3(C_w+1)H + SelfNorm and BetaTheorem7 = H·C_w + SelfNorm.
func LuyoNonPrivate(p Params) LuyoConstants {
	H := float64(p.H)
	c := LuyoConstants{Lambda: H * H, K0: K0(p.K)}
	luyoBetas(p, &c)
	return c
}

func upsilonTail(d int, K, H int, p float64) (four, one float64) {
	l := math.Log(6 * float64(K) * float64(H) / p)
	return 4*math.Sqrt(float64(d)) + 2*l, math.Sqrt(float64(d)) + 2*math.Sqrt(l)
}

// LuyoJDP returns Cor. 5's constants (App. C.2): σ_B = (32H²/ε)·sqrt(2H·K0·log(8H/δ)·log(4/δ)·
// log(16H·K0/δ)), Υ^J = σ_B√K0(4√d + 2 log(6KH/p)), C^J = σ_B√K0(√d + 2√log(6KH/p)).
func LuyoJDP(p Params) LuyoConstants {
	H := float64(p.H)
	k0 := K0(p.K)
	c := LuyoConstants{Lambda: H * H, K0: k0}
	c.SigmaB = luyoJDPSigma(p, k0)
	c.Upsilon, c.C = luyoUpsilon(c.SigmaB*math.Sqrt(float64(k0)), p)
	luyoBetas(p, &c)
	return c
}

func luyoJDPSigma(p Params, k0 int) float64 {
	H, dl := float64(p.H), p.Delta
	return 32 * H * H / p.Epsilon * math.Sqrt(2*H*float64(k0)*math.Log(8*H/dl)*math.Log(4/dl)*math.Log(16*H*float64(k0)/dl))
}

func luyoUpsilon(scale float64, p Params) (ups, c float64) {
	a, b := upsilonTail(p.D, p.K, p.H, p.P)
	return scale * a, scale * b
}

// LuyoLDP returns Cor. 6's constants (App. C.3): σ_B = (4H³/ε)·sqrt(2 log(4H/δ)),
// Υ^L = σ_B√K(4√d + 2 log(6KH/p)), C^L = σ_B√K(√d + 2√log(6KH/p)).
func LuyoLDP(p Params) LuyoConstants {
	H := float64(p.H)
	c := LuyoConstants{Lambda: H * H, K0: K0(p.K)}
	c.SigmaB = luyoLDPSigma(p)
	c.Upsilon, c.C = luyoUpsilon(c.SigmaB*math.Sqrt(float64(p.K)), p)
	luyoBetas(p, &c)
	return c
}

func luyoLDPSigma(p Params) float64 {
	H := float64(p.H)
	return 4 * H * H * H / p.Epsilon * math.Sqrt(2*math.Log(4*H/p.Delta))
}

// ZCDPRhoStar returns ρ* = (sqrt(log(1/δ)+ε) − sqrt(log(1/δ)))², the zCDP budget whose
// (ε,δ) conversion is exactly ε (spec P7 [D]).
func ZCDPRhoStar(eps, delta float64) float64 {
	l := math.Log(1 / delta)
	x := math.Sqrt(l+eps) - math.Sqrt(l)
	return x * x
}

// LuyoZCDP returns the zCDP-calibrated Gaussian variant of Cor. 5 (jdp) or Cor. 6 (!jdp)
// (spec P7 [D]): σ = 2H²·sqrt(H·K0/ρ*) (JDP) or 2H²·sqrt(H/ρ*) (LDP), then Υ, C, β from the
// same formulas. It is (ε,δ)-private for every ε > 0.
func LuyoZCDP(p Params, jdp bool) LuyoConstants {
	H := float64(p.H)
	k0 := K0(p.K)
	c := LuyoConstants{Lambda: H * H, K0: k0}
	rho := ZCDPRhoStar(p.Epsilon, p.Delta)
	if jdp {
		c.SigmaB = 2 * H * H * math.Sqrt(H*float64(k0)/rho)
		c.Upsilon, c.C = luyoUpsilon(c.SigmaB*math.Sqrt(float64(k0)), p)
	} else {
		c.SigmaB = 2 * H * H * math.Sqrt(H/rho)
		c.Upsilon, c.C = luyoUpsilon(c.SigmaB*math.Sqrt(float64(p.K)), p)
	}
	luyoBetas(p, &c)
	return c
}

// LaplaceSumTail returns τ(b, n, N, a) = b·max(sqrt(8n·log(2N/a)), 2√2·log(2N/a)): with
// probability ≥ 1−a, N sums of at most n i.i.d. Lap(b) are all bounded by τ in absolute value
// (spec §3.5 [D], sub-exponential Bernstein bound and a union bound).
func LaplaceSumTail(b float64, n, N int, a float64) float64 {
	l := math.Log(2 * float64(N) / a)
	return b * math.Max(math.Sqrt(8*float64(n)*l), 2*math.Sqrt2*l)
}

// LuyoLaplace returns the pure-DP instantiation of Luyo Remark 1 / App. C.4 derived in the
// spec §3.5 [D] (not in the paper): L1 sensitivities (d+1)H² (matrix, upper triangle) and
// 2√d·H² (vector); JDP: b_B = 2H·K0·(d+1)H²/ε, b_g = 2H·K0·2√d·H²/ε, Υ = d·τ(b_B, K0,
// d(d+1)/2, p/(6KH)), C = √d·τ(b_g, K0, d, p/(6KH)); LDP: the same without K0 and with n = K.
// β is Cor. 5/6's formula with these Υ.
func LuyoLaplace(p Params, jdp bool) LuyoConstants {
	H, d := float64(p.H), float64(p.D)
	k0 := K0(p.K)
	c := LuyoConstants{Lambda: H * H, K0: k0}
	mult, n := 1.0, p.K
	if jdp {
		mult, n = float64(k0), k0
	}
	c.BB = 2 * H * mult * (d + 1) * H * H / p.Epsilon
	c.BG = 2 * H * mult * 2 * math.Sqrt(d) * H * H / p.Epsilon
	a := p.P / (6 * float64(p.K) * H)
	c.Upsilon = d * LaplaceSumTail(c.BB, n, p.D*(p.D+1)/2, a)
	c.C = math.Sqrt(d) * LaplaceSumTail(c.BG, n, p.D, a)
	luyoBetas(p, &c)
	return c
}

// PlusConstants are the public constants of Luyo Alg. 3 (UCRL-VTR+) in one mode.
type PlusConstants struct {
	// Lambda = 1 (App. D).
	Lambda float64
	// Sigma1, Sigma2 are the Gaussian scales of the (Λ̂, û) and (Λ̃, ũ) statistics.
	Sigma1, Sigma2 float64
	// Upsilon1, Upsilon2 are the shifts' Υ.
	Upsilon1, Upsilon2 float64
	params             Params
}

// PlusNonPrivate returns UCRL-VTR+'s constants without noise.
func PlusNonPrivate(p Params) PlusConstants { return PlusConstants{Lambda: 1, params: p} }

func plusTail(p Params) float64 {
	return 4*math.Sqrt(float64(p.D)) + 2*math.Log(24*float64(p.K)*float64(p.H)/p.P)
}

// PlusJDP returns Cor. 10's constants: σ_{B,1} = (64d/ε)·sqrt(2H·K0·log(16H/δ)·log(8/δ)·
// log(32H·K0/δ)), σ_{B,2} = (64H⁴/ε)·sqrt(same), Υ^{J,i} = σ_{B,i}√K0(4√d + 2 log(24KH/p)).
func PlusJDP(p Params) PlusConstants {
	H, d, dl := float64(p.H), float64(p.D), p.Delta
	k0 := float64(K0(p.K))
	root := math.Sqrt(2 * H * k0 * math.Log(16*H/dl) * math.Log(8/dl) * math.Log(32*H*k0/dl))
	c := PlusConstants{Lambda: 1, params: p}
	c.Sigma1 = 64 * d / p.Epsilon * root
	c.Sigma2 = 64 * math.Pow(H, 4) / p.Epsilon * root
	c.Upsilon1 = c.Sigma1 * math.Sqrt(k0) * plusTail(p)
	c.Upsilon2 = c.Sigma2 * math.Sqrt(k0) * plusTail(p)
	return c
}

// PlusLDP returns Cor. 11's constants: σ_{B,1} = (8dH/ε)·sqrt(2 log(8H/δ)), σ_{B,2} =
// (8H⁵/ε)·sqrt(2 log(8H/δ)), Υ^{L,i} = σ_{B,i}√K(4√d + 2 log(24KH/p)).
func PlusLDP(p Params) PlusConstants {
	H, d := float64(p.H), float64(p.D)
	root := math.Sqrt(2 * math.Log(8*H/p.Delta))
	c := PlusConstants{Lambda: 1, params: p}
	c.Sigma1 = 8 * d * H / p.Epsilon * root
	c.Sigma2 = 8 * math.Pow(H, 5) / p.Epsilon * root
	c.Upsilon1 = c.Sigma1 * math.Sqrt(float64(p.K)) * plusTail(p)
	c.Upsilon2 = c.Sigma2 * math.Sqrt(float64(p.K)) * plusTail(p)
	return c
}

// Betas returns (β̌_k, β̂_k, β̃_k) of Cor. 10/11 at episode k (k ≥ 1), with
// L_k = log(24k²H/p): β̌ = 3(C_w+1)√(λ+Υ1) + 8d√(log(1+K/λ)L_k) + 4√d·L_k,
// β̂ = 3(C_w+1)√(λ+Υ1) + 8√(d·log(1+K/λ)L_k) + 4√d·L_k,
// β̃ = 3(C_w+1)√(λ+Υ2) + 8√(d·H⁴·log(1+KH⁴/(dλ))·L_k) + 4H²·L_k. Non-decreasing in k (P26).
func (c PlusConstants) Betas(k int) (check, hat, tilde float64) {
	p := c.params
	H, d, K, l := float64(p.H), float64(p.D), float64(p.K), c.Lambda
	Lk := math.Log(24 * float64(k) * float64(k) * H / p.P)
	a1 := 3 * (p.Cw + 1) * math.Sqrt(l+c.Upsilon1)
	a2 := 3 * (p.Cw + 1) * math.Sqrt(l+c.Upsilon2)
	lg := math.Log1p(K / l)
	check = a1 + 8*d*math.Sqrt(lg*Lk) + 4*math.Sqrt(d)*Lk
	hat = a1 + 8*math.Sqrt(d*lg*Lk) + 4*math.Sqrt(d)*Lk
	tilde = a2 + 8*math.Sqrt(d*H*H*H*H*math.Log1p(K*H*H*H*H/(d*l))*Lk) + 4*H*H*Lk
	return
}

// ZhouConstants are the public constants of Zhou's Private-LinOpt-VI/PO (spec §5.5–5.7).
type ZhouConstants struct {
	// M is the number of tree nodes containing one leaf (K0 for JDP, 1 for LDP).
	M int
	// SigmaP1, SigmaP2, SigmaR1, SigmaR2 are the Gaussian scales of the four counters.
	SigmaP1, SigmaP2, SigmaR1, SigmaR2 float64
	// SigmaShiftP, SigmaShiftR are Σ_{p,1} and Σ_r (shift 2Σ·I; λ_min = Σ, λ_max = 3Σ).
	SigmaShiftP, SigmaShiftR float64
	// NuP, NuR are ν_p, ν_r.
	NuP, NuR float64
	// Lambda is the ridge of the non-private instance (1), 0 when private.
	Lambda float64
	// BetaP, BetaR are Lemma 3.1's widths.
	BetaP, BetaR float64
}

// zhouBetas evaluates Lemma 3.1: β_p = (H/2)√(2 log(H/α) + d1 log(1+KH²/λ_min,p)) +
// √(d1 λ_max,p) + ν_p and β_r = (1/2)√(2 log(H/α) + d2 log(1+K/(d2 λ_min,r))) + √(d2 λ_max,r) + ν_r.
func zhouBetas(p Params, lminP, lmaxP, nuP, lminR, lmaxR, nuR float64) (bp, br float64) {
	H, K, d1, d2 := float64(p.H), float64(p.K), float64(p.D), float64(p.D2)
	bp = H/2*math.Sqrt(2*math.Log(H/p.P)+d1*math.Log1p(K*H*H/lminP)) + math.Sqrt(d1*lmaxP) + nuP
	br = 0.5*math.Sqrt(2*math.Log(H/p.P)+d2*math.Log1p(K/(d2*lminR))) + math.Sqrt(d2*lmaxR) + nuR
	return
}

// ZhouNonPrivate returns Z = λI, z = 0 with λ = 1 (spec §5.6).
func ZhouNonPrivate(p Params) ZhouConstants {
	c := ZhouConstants{Lambda: 1, M: K0(p.K)}
	c.BetaP, c.BetaR = zhouBetas(p, 1, 1, 0, 1, 1, 0)
	return c
}

// zhouPrivate computes §5.5 (JDP, m = K0, concentration over m nodes) or §5.7 (LDP [D],
// m = 1 in σ, K in the concentration terms). strict multiplies the sensitivities by
// (√2, 2, √2, 2) (spec P8).
func zhouPrivate(p Params, jdp, strict bool) ZhouConstants {
	H, K, d1, d2 := float64(p.H), float64(p.K), float64(p.D), float64(p.D2)
	m := K0(p.K)
	mSigma, mConc := float64(m), float64(m)
	if !jdp {
		mSigma, mConc = 1, K
	}
	dp1, dp2, dr1, dr2 := d1*H*H, math.Sqrt(d1)*H*H, 1.0, 1.0
	if strict {
		dp1, dp2, dr1, dr2 = dp1*math.Sqrt2, dp2*2, dr1*math.Sqrt2, dr2*2
	}
	root := math.Sqrt(32 * mSigma * math.Log(4*H/p.Delta))
	c := ZhouConstants{M: m}
	if !jdp {
		c.M = 1
	}
	c.SigmaP1 = H * dp1 / p.Epsilon * root
	c.SigmaP2 = H * dp2 / p.Epsilon * root
	c.SigmaR1 = H * dr1 / p.Epsilon * root
	c.SigmaR2 = H * dr2 / p.Epsilon * root
	l8 := math.Sqrt(8 * math.Log(8*K*H/p.P))
	l2 := math.Sqrt(2 * math.Log(4*K*H/p.P))
	c.SigmaShiftP = c.SigmaP1 * math.Sqrt(mConc) * (4*math.Sqrt(d1) + l8)
	c.SigmaShiftR = c.SigmaR1 * math.Sqrt(mConc) * (4*math.Sqrt(d2) + l8)
	c.NuP = c.SigmaP2 * math.Sqrt(mConc/c.SigmaShiftP) * (math.Sqrt(d1) + l2)
	c.NuR = c.SigmaR2 * math.Sqrt(mConc/c.SigmaShiftR) * (math.Sqrt(d2) + l2)
	c.BetaP, c.BetaR = zhouBetas(p, c.SigmaShiftP, 3*c.SigmaShiftP, c.NuP, c.SigmaShiftR, 3*c.SigmaShiftR, c.NuR)
	return c
}

// ZhouJDP returns the constants of Private-LinOpt-VI/PO (Thm 6.4/6.5, spec §5.5) with
// m = K0 = ⌈log2 K⌉+1 (spec P9) and Zhou's sensitivities.
func ZhouJDP(p Params) ZhouConstants { return zhouPrivate(p, true, false) }

// ZhouLDP returns the LDP constants derived in the spec §5.7 [D].
func ZhouLDP(p Params) ZhouConstants { return zhouPrivate(p, false, false) }

// ZhouNeighbourEpsilons derives, from the noise levels zc actually uses (whichever sensitivity
// convention they were calibrated for), the (ε, δ) guarantee of the 4H counters under both
// neighbouring relations (privacy spec §1.2, §3.6 row 004): each counter touched m = zc.M times
// (K0 for JDP, 1 for a user's LDP report) is m·Δ²/(2σ²)-zCDP, the 4H counters compose, and
// ρ-zCDP gives ε = ρ + 2√(ρ ln(1/δ)). Zero-out sensitivities are Zhou's (d1H², √d1·H², 1, 1)
// for (Σφφᵀ, ΣφV, Σϕϕᵀ, Σϕr); replace-one multiplies the PSD Gram counters' by √2
// (‖e − e′‖_F² ≤ ‖e‖_F² + ‖e′‖_F²) and the vector counters' by 2 (triangle inequality), so ρ
// triples: under Zhou's own calibration the replace-one ε is well above the nominal one.
func ZhouNeighbourEpsilons(p Params, zc ZhouConstants) (zeroOut, replaceOne float64) {
	H, d1 := float64(p.H), float64(p.D)
	m := float64(zc.M)
	zo := [4]float64{d1 * H * H, math.Sqrt(d1) * H * H, 1, 1}
	mult := [4]float64{math.Sqrt2, 2, math.Sqrt2, 2}
	sig := [4]float64{zc.SigmaP1, zc.SigmaP2, zc.SigmaR1, zc.SigmaR2}
	var rz, rr float64
	for i := range zo {
		rz += H * m * zo[i] * zo[i] / (2 * sig[i] * sig[i])
		ro := zo[i] * mult[i]
		rr += H * m * ro * ro / (2 * sig[i] * sig[i])
	}
	conv := func(rho float64) float64 { return rho + 2*math.Sqrt(rho*math.Log(1/p.Delta)) }
	return conv(rz), conv(rr)
}

// ZhouAccount returns the privacy actually provided by Zhou's calibration over the 4H
// counters (Thm 6.4): the paper-style simple composition ε + ε²/(16H·log(4H/δ)) and the zCDP
// composition ρ = ε²/(16H·log(4H/δ)) converted at δ: ρ + 2√(ρ·log(1/δ)) (spec §5.5 [D]).
func ZhouAccount(eps, delta float64, H int) (simple, zcdp float64) {
	rho := eps * eps / (16 * float64(H) * math.Log(4*float64(H)/delta))
	return eps + rho, rho + 2*math.Sqrt(rho*math.Log(1/delta))
}
