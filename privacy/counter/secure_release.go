package counter

import "math"

// The Secure path of the real-valued factorisations (SqrtFactorization, BLT): what is private,
// exactly, and what the grid rounding costs. docs/privacy.md has the same argument at more
// length.
//
// With a Secure source the elements are rounded to the grid, x̃_t ∈ γZ^Dim, the draws z_t are
// i.i.d. discrete Gaussians on γZ (σ per coordinate), and release t is
//
//	y_t = S_t + z_t + R_t,   S_t = x̃_1 + … + x̃_t,   R_t = round_γ(P_t),
//
// where P_t is computed from z_1, …, z_{t−1} alone and approximates Σ_{j<t} b_{t−j} z_j (b_0 = 1:
// B = A·C⁻¹ with c_0 = 1), so that y_t = round_γ(S_t + (B z)_t) in exact arithmetic. C x̃ is not
// on the grid (C is real), so y is not a post-processing of C x̃ + z with a discrete z — that
// mechanism has disjoint output supports on neighbours. What is exact instead is this: given
// the stream, z ↦ y is a bijection, z_t = y_t − S_t − R_t(z_{<t}); on neighbouring streams
// x̃, x̃′ (one element differs, by D at step τ; later elements may depend on earlier releases) the
// same releases come from the draws z′ = z + ε with
//
//	ε_t = (S_t − S′_t) + R_t(z_{<t}) − R_t(z′_{<t}),
//
// a grid vector that is a function of y_{<t}. So releasing y is, step by step, a discrete
// Gaussian mechanism with a shift ε_t ∈ γZ^Dim chosen from the past releases, and the whole
// release is private like a discrete Gaussian mechanism with ℓ2 sensitivity sup ‖ε‖₂ (adaptive
// composition with a deterministic bound on Σ_t ‖ε_t‖²: Rényi/zCDP filters, Feldman & Zrnic
// 2021; for the Gaussian trade-off, Smith & Thakurta 2022; each step is CKS20's discrete
// Gaussian, ρ = ‖ε_t‖²/(2σ²)-zCDP). The bound: R_t(z′) − R_t(z) = Σ_{j<t} b_{t−j}ε_j + ξ_t with
// |ξ_t,k| < γ + 2η (two roundings to the grid, and η the floating-point error of P_t), ξ_t = 0
// for t ≤ τ; hence B ε = A D e_τ − ξ and
//
//	ε = C D e_τ − B⁻¹ ξ,   ‖ε‖₂ ≤ ‖C e_τ‖·‖D‖₂ + G·(γ + 2η)·√((T − τ)·Dim),
//
// with G = Σ_{k<T} |g_k| ≥ ‖B⁻¹‖₂ the ℓ1 norm of the Toeplitz coefficients g_k = c_k − c_{k−1}
// of B⁻¹ = C·A⁻¹ (RoundingGain; G < 2 for the square root and for BLTs with θ ≥ 0 and c_1 ≤ 1).
// ‖D‖₂ ≤ Δ₂ + √Dim·γ is SecureSensitivity's term. η depends on the draws alone; the slack
// below allows η ≤ γ/2, i.e. |ξ| < 2γ. That is not proved for every sequence of draws: η is
// 2·10⁻⁴·γ for ordinary draws at T = 2·10⁵ and 4·10⁻⁴·γ with 2 % of the draws at 2^10·σ
// (TestSecurePredictionError, TestSecureReleaseCoupling), and reaches γ/2 only for draws that
// stay tens of σ out for 10⁵ steps (every draw at 64σ: about γ at T = 2·10⁵), an event of the
// noise alone whose probability (far below any δ) is the failure probability of the claim.
// In μ (units of σ·CoordScale[k] per coordinate) the rounding term adds
// 2·G·γ·√((T−1)·Dim)/(σ·minScale) ≤ SecureReleaseSlack = G·2^-28·√((T−1)·Dim) to
// μ = Δ·SensitivityFactor/σ: 1.1·10⁻⁶ for practical-jdp (T = 256, Dim = 84) and 2·10⁻⁴ for a
// 4 000-coordinate counter over 2·10⁵ releases.
//
// The tree counters need none of this: their encoder is a 0/1 matrix, C x̃ is on the grid, and
// the node values C x̃ + z are an exact discrete Gaussian mechanism (RoundingGain 0).
//
// The argument needs every coordinate's draws to live on the grid the data are rounded to:
// true without CoordScale; with CoordScale, coordinate k's draws live on
// GaussianGranularity(σ·CoordScale[k]), which can be 2γ (it is γ·2^m), and then a release's
// residue modulo that coarser grid is the data's (the first release's, for every counter) —
// the element rounding should use each coordinate's own grid (not fixed here: gaussBase).

// RoundingGain returns G = Σ_{k<n} |c_k − c_{k−1}| (c_{−1} = 0) for the encoder c_k of p: the ℓ1
// norm of the Toeplitz coefficients of B⁻¹ = C·A⁻¹ over a stream of n, which bounds its
// operator norm (see SecureReleaseSlack). With every θ_i ≥ 0 the c_k (k ≥ 1) do not increase
// and G = 1 + |1 − c_1| + c_1 − c_{n−1} (O(d)); otherwise the sum is taken (O(n·d)).
func (p BLTParams) RoundingGain(n int) float64 {
	if n <= 0 {
		return 0
	}
	if n == 1 {
		return 1
	}
	nonneg := true
	for _, th := range p.Theta {
		nonneg = nonneg && th >= 0
	}
	if nonneg {
		c1, cLast := 0.0, 0.0
		for i, th := range p.Theta {
			c1 += th
			cLast += th * math.Pow(p.Omega[i], float64(n-2))
		}
		return 1 + math.Abs(1-c1) + (c1 - cLast)
	}
	g, prev := 1.0, 1.0
	for s := range p.encoder(n) {
		g += math.Abs(s - prev)
		prev = s
	}
	return g
}

// RoundingGain returns G = Σ_{k<T} |c_k − c_{k−1}| of the counter's encoder over its Capacity
// (see SecureReleaseSlack).
func (c *BLT) RoundingGain() float64 { return c.p.RoundingGain(c.cfg.Capacity) }

// RoundingGain returns G = 2 − c_{T−1} (the c_k decrease from c_0 = 1), the ℓ1 norm of the
// Toeplitz coefficients of B⁻¹ = C·A⁻¹ = C over the Capacity (see SecureReleaseSlack).
func (c *SqrtFactorization) RoundingGain() float64 {
	T := c.cfg.Capacity
	if T == 1 {
		return 1
	}
	return 2 - c.c[T-1]
}

// RoundingGain returns 0: the node-membership encoder is a 0/1 matrix, so C x̃ is on the grid
// and the Secure releases are an exact post-processing of a discrete Gaussian mechanism.
func (c *GaussianTree) RoundingGain() float64 { return 0 }

// RoundingGain returns 0, as for GaussianTree (Honaker's estimates post-process the nodes).
func (c *HonakerTree) RoundingGain() float64 { return 0 }

// SecureReleaseSlack returns gain·2^-28·√((capacity − 1)·dim): a bound, whatever σ, on what
// the grid rounding of the noise prediction adds to μ = Δ·SensitivityFactor/σ for a
// real-valued factorisation counter fed by a Secure source, with gain its RoundingGain (0 for
// the trees, and then the slack is 0). The exact term is 2·gain·γ·√((capacity − 1)·dim)/(σ·m)
// with γ = noise.GaussianGranularity(σ·m) ≤ 2^-29·σ·m, m = min CoordScale. The μ of the
// Secure release is at most factor·SecureSensitivity/σ plus this slack, so a calibration
// covers it by aiming CalibrateSigma at μ minus the slack. Invalid arguments give NaN.
func SecureReleaseSlack(gain float64, capacity, dim int) float64 {
	if !(gain >= 0) || math.IsInf(gain, 0) || capacity < 1 || dim < 1 {
		return math.NaN()
	}
	return gain * math.Ldexp(1, -28) * math.Sqrt(float64(capacity-1)*float64(dim))
}
