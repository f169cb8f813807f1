package counter

import (
	"math"

	"github.com/dprl/dprl/privacy/noise"
)

// SqrtCoefficients returns c_0, …, c_{n−1} of the square-root factorisation of the prefix-sum
// matrix, A = C², C lower-triangular Toeplitz with c_k = C(2k, k)/4^k, i.e. the Taylor
// coefficients of (1 − x)^{−1/2}: c_0 = 1, c_k = c_{k−1}·(1 − 1/(2k)) (Fichtenberger, Henzinger
// & Upadhyay, ICML 2023; Henzinger, Upadhyay & Upadhyay, SODA 2023; practical-privacy spec §3).
func SqrtCoefficients(n int) []float64 {
	if n <= 0 {
		return nil
	}
	c := make([]float64, n)
	c[0] = 1
	for k := 1; k < n; k++ {
		c[k] = c[k-1] * (1 - 1/(2*float64(k)))
	}
	return c
}

// SqrtFactorization is the square-root factorisation counter: the release after t insertions
// is S(t) + Σ_{j≤t} c_{t−j}·z_j with z_j ~ N(0, σ²I) i.i.d. and c_k = SqrtCoefficients, i.e.
// y = A x + C z = C (C x + z) with A = C² (Fichtenberger, Henzinger & Upadhyay, ICML 2023).
//
// Encoder C: its first column is the longest, SensitivityFactor = √(Σ_{k<T} c_k²), with
// Σ_{k<T} c_k² ≈ (ln T + γ_Euler + 4 ln 2)/π (Σ_{k<5·10⁴} c_k² = 4.510317). Decoder B = C:
// StdAt(t) = σ·√(Σ_{k<t} c_k²). The product SensitivityFactor²·StdAt(T)²/σ² ≈ (ln T/π)² is
// optimal among factorisations up to lower-order terms (Fichtenberger et al. 2023; Henzinger et
// al. 2023), against L·popcount(t) ≈ log₂²T/2 for the binary tree.
//
// This is the naive implementation, the reference for BLT and the tests: it stores every draw
// (memory O(t·Dim)) and each Insert costs O(t·Dim). Use BLT for long streams.
//
// With a Secure source the elements are rounded to the grid γ·Z and the draws are discrete
// Gaussians on it; release t is the exact grid sum S_t + z_t + round_γ(P_t) of the rounded
// elements' sum, the new draw and the rounded prediction P_t = Σ_{j<t} c_{t−j} z_j of the
// earlier draws (in exact arithmetic round_γ(C(C x̃ + z))_t; no floating-point rounding depends
// on the data). C x̃ is off the grid, so this is not a post-processing of C x̃ + z but a
// step-by-step discrete Gaussian mechanism whose μ grows by at most
// SecureReleaseSlack(RoundingGain(), T, Dim) besides SecureSensitivity's rounding of the
// elements (secure_release.go, docs/privacy.md).
type SqrtFactorization struct {
	gaussBase
	c   []float64 // c_k, k < T
	cum []float64 // cum[t] = Σ_{k<t} c_k², t ≤ T
	zs  []float64 // every draw, t·Dim
	sum []float64 // exact (or grid-rounded) running sum
}

// NewSqrtFactorization returns the naive square-root factorisation counter (src may be nil
// when cfg.Sigma = 0).
func NewSqrtFactorization(cfg GaussianConfig, src noise.Source) (*SqrtFactorization, error) {
	c := &SqrtFactorization{}
	if err := c.init(cfg, src, c); err != nil {
		return nil, err
	}
	c.c = SqrtCoefficients(cfg.Capacity)
	c.cum = cumSquares(c.c)
	c.sum = make([]float64, cfg.Dim)
	return c, nil
}

// cumSquares returns cum[t] = Σ_{k<t} c_k² for t = 0..len(c).
func cumSquares(c []float64) []float64 {
	cum := make([]float64, len(c)+1)
	for k, v := range c {
		cum[k+1] = cum[k] + v*v
	}
	return cum
}

// NodesPerElement implements Counter: T (every later release contains a draw correlated with
// the element; use SensitivityFactor for accounting).
func (c *SqrtFactorization) NodesPerElement() int { return c.cfg.Capacity }

// NodesInPrefix implements Counter: t (every draw so far enters the prefix).
func (c *SqrtFactorization) NodesInPrefix() int { return c.t }

// SensitivityFactor implements GaussianCounter: √(Σ_{k<T} c_k²).
func (c *SqrtFactorization) SensitivityFactor() float64 { return math.Sqrt(c.cum[c.cfg.Capacity]) }

// variance gives StdAt = σ·√(Σ_{k<t} c_k²).
func (c *SqrtFactorization) variance(t int) float64 { return c.cum[t] }

// step inserts element t.
func (c *SqrtFactorization) step(xr []float64) {
	d := c.cfg.Dim
	c.zs = append(c.zs, make([]float64, d)...)
	z := c.zs[(c.t-1)*d:]
	c.draw(z)
	p := c.prefix
	clear(p)
	last := c.t
	if c.gamma > 0 {
		last-- // Secure: P_t = Σ_{j<t} c_{t−j} z_j, the earlier draws alone (see the type's doc)
	}
	for j := 1; j <= last; j++ {
		w := c.c[c.t-j]
		zj := c.zs[(j-1)*d : j*d]
		for k, v := range zj {
			p[k] += w * v
		}
	}
	for k, v := range xr {
		c.sum[k] += v
		if c.gamma > 0 {
			p[k] = c.sum[k] + z[k] + roundGrid(p[k], c.gamma)
		} else {
			p[k] += c.sum[k]
		}
	}
}
