package noise

import (
	crand "crypto/rand"
	"fmt"
	"math"
	"math/rand/v2"
)

// Granularity exponents: the noise of scale s lives on the grid γ·Z with γ the smallest power of
// two ≥ s/2^grain, so 2^-grain·s < γ ≤ 2^(1−grain)·s = 2^-29·s for both distributions.
//
// Rounding to the grid is not free in privacy. The discrete mechanisms are exactly ε-DP (discrete
// Laplace) or ρ-zCDP (discrete Gaussian) for statistics on the grid, but rounding a float
// statistic moves each coordinate by up to γ/2, so two neighbouring statistics that differ in n
// coordinates differ after rounding by up to Δ₁ + n·γ in ℓ1 and Δ₂ + √n·γ in ℓ2
// (practical-privacy spec §7). A Laplace(b) release with ℓ1 sensitivity Δ₁ is therefore
// (Δ₁ + n·γ)/b-DP, i.e. ε grows by RoundingSlackL1(b, n) = n·γ/b ≤ n·2^-29 per release, and a
// Gaussian(σ) release has μ = Δ₂/σ grown by RoundingSlackL2(σ, n) = √n·γ/σ ≤ √n·2^-29. The grain
// 30 keeps both far below any reported digit for the dimensions dprl uses (n ≤ 10^6 gives
// ε + 2·10^-3 at worst for Laplace, μ + 2·10^-6 for the Gaussian); callers that need the exact
// figure add the slack to their accounting. (Gaussian grain 20 made the μ slack up to √n·2^-19,
// about 1.5 % of μ for Zhou's 10-dimensional Gram counters: raised to 30, which changes nothing
// but the grid: the CKS20 sampler's cost does not depend on σ/γ.)
const (
	laplaceGrain = 30
	gaussGrain   = 30
)

// RoundingSlackL1 returns n·γ/b, the bound on the increase of ε of a Secure Laplace(b) release
// caused by rounding the statistic to the grid γ = LaplaceGranularity(b), when one user can
// change at most n coordinates of the statistic (0 for b = 0: nothing is rounded).
func RoundingSlackL1(b float64, n int) float64 {
	if b == 0 {
		return 0
	}
	return float64(n) * LaplaceGranularity(b) / b
}

// RoundingSlackL2 returns √n·γ/σ, the bound on the increase of μ = Δ₂/σ of a Secure
// Gaussian(σ) release caused by rounding the statistic to the grid γ = GaussianGranularity(σ),
// when one user can change at most n coordinates (0 for σ = 0). The release is then
// (μ + slack)²/2-zCDP instead of μ²/2.
func RoundingSlackL2(sigma float64, n int) float64 {
	if sigma == 0 {
		return 0
	}
	return math.Sqrt(float64(n)) * GaussianGranularity(sigma) / sigma
}

// Secure is a hardened Source for deployment. Randomness comes from a ChaCha8 generator (a
// CSPRNG) keyed from crypto/rand. Sampling follows the secure-noise-generation approach of
// Google's differential-privacy library (granular noise) and Canonne, Kamath & Steinke (2020):
//
//   - the statistic x is rounded to the grid γ·Z, where γ is a power of two derived from the
//     noise scale alone (so the grid never depends on the data);
//   - the noise is γ·Y with Y an integer drawn from a discrete distribution: the two-sided
//     geometric (discrete Laplace) with P(Y=y) ∝ exp(−γ|y|/b), or the discrete Gaussian with
//     P(Y=y) ∝ exp(−y²γ²/(2σ²)) by CKS20's rejection sampler from the discrete Laplace.
//
// Every output is therefore an exact multiple of γ, and the set of attainable outputs is the
// same for all inputs: the floating-point attack on naive Laplace sampling (Mironov 2012), which
// exploits holes in the set of doubles reachable from f(D) + float noise, does not apply. The
// geometric sampler is Google's binary search on the CDF with uniformly random bits; its
// conditional probabilities are evaluated in float64 (as in that library), which perturbs the
// probabilities by ~1e-16 relative but never the support. Rejection loops run in data-
// independent expected time; Secure does not defend against timing side channels beyond that.
type Secure struct {
	c     *rand.ChaCha8 // r's source (its state is the stream position: state.go)
	r     *rand.Rand
	signs uint64
	nbits int
}

// NewSecure returns a Secure source keyed from the operating system's CSPRNG.
func NewSecure() (*Secure, error) {
	var key [32]byte
	if _, err := crand.Read(key[:]); err != nil {
		return nil, fmt.Errorf("noise: reading a key from crypto/rand: %w", err)
	}
	return NewSecureFromKey(key), nil
}

// NewSecureFromKey returns a Secure source with a fixed key (tests only: a known key makes the
// noise predictable).
func NewSecureFromKey(key [32]byte) *Secure {
	c := rand.NewChaCha8(key)
	return &Secure{c: c, r: rand.New(c)}
}

// Secure reports true.
func (s *Secure) Secure() bool { return true }

// Granularity returns the grid step γ used for noise of scale `scale` with grain exponent g.
func granularity(scale float64, g int) float64 {
	_, e := math.Frexp(scale) // scale = f·2^e, f ∈ [0.5, 1)
	gamma := math.Ldexp(1, e-g)
	for gamma < scale/math.Ldexp(1, g) {
		gamma *= 2
	}
	return gamma
}

// LaplaceGranularity returns the grid step of AddLaplace for scale b.
func LaplaceGranularity(b float64) float64 { return granularity(b, laplaceGrain) }

// GaussianGranularity returns the grid step of AddGaussian for standard deviation σ.
func GaussianGranularity(sigma float64) float64 { return granularity(sigma, gaussGrain) }

func roundTo(x, gamma float64) float64 { return math.Round(x/gamma) * gamma }

// AddLaplace returns round(x/γ)·γ + γ·Y with Y discrete Laplace of scale b/γ. Non-finite x or
// b, or b < 0, give NaN.
func (s *Secure) AddLaplace(x, b float64) float64 {
	if b == 0 {
		return x
	}
	if !(b > 0) || math.IsInf(b, 0) || math.IsNaN(x) || math.IsInf(x, 0) {
		return math.NaN()
	}
	g := LaplaceGranularity(b)
	return roundTo(x, g) + g*float64(s.discreteLaplace(g/b))
}

// AddGaussian returns round(x/γ)·γ + γ·Y with Y discrete Gaussian of scale σ/γ. Non-finite x
// or σ, or σ < 0, give NaN.
func (s *Secure) AddGaussian(x, sigma float64) float64 {
	if sigma == 0 {
		return x
	}
	if !(sigma > 0) || math.IsInf(sigma, 0) || math.IsNaN(x) || math.IsInf(x, 0) {
		return math.NaN()
	}
	g := GaussianGranularity(sigma)
	return roundTo(x, g) + g*float64(s.discreteGaussian(sigma/g))
}

// GaussianOnGrid returns γ·Y with Y discrete Gaussian of scale σ/γ: a draw of the given σ on
// the grid γ·Z chosen by the caller (for example the finest grid of several coordinates, so that
// noise of every coordinate lives on the grid the data are rounded to; a coarser grid would
// leave the data's low bits visible in the release). σ and γ must be finite and > 0, else NaN.
func (s *Secure) GaussianOnGrid(sigma, gamma float64) float64 {
	if !(sigma > 0) || math.IsInf(sigma, 0) || !(gamma > 0) || math.IsInf(gamma, 0) {
		return math.NaN()
	}
	return gamma * float64(s.discreteGaussian(sigma/gamma))
}

func (s *Secure) sign() bool {
	if s.nbits == 0 {
		s.signs, s.nbits = s.r.Uint64(), 64
	}
	b := s.signs&1 != 0
	s.signs >>= 1
	s.nbits--
	return b
}

// geometric returns G ≥ 0 with P(G = g) = (1 − e^{−λ}) e^{−λg}, by binary search on the CDF:
// at each step the conditional probability that G lies in the lower half of the current range
// is evaluated exactly up to float64 rounding and compared with a uniform (Google DP library).
func (s *Secure) geometric(lambda float64) int64 {
	lo, hi := int64(0), int64(math.MaxInt64>>1)
	for lo < hi {
		mid := lo + (hi-lo)/2
		// P(G ≤ mid | lo ≤ G ≤ hi) = (1 − e^{−λ(mid−lo+1)}) / (1 − e^{−λ(hi−lo+1)})
		q := math.Expm1(-lambda*float64(mid-lo+1)) / math.Expm1(-lambda*float64(hi-lo+1))
		if s.r.Float64() < q {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
}

// discreteLaplace returns Y with P(Y = y) ∝ e^{−λ|y|}: a sign and a geometric magnitude, with
// "−0" rejected so that 0 is not counted twice.
func (s *Secure) discreteLaplace(lambda float64) int64 {
	for {
		neg := s.sign()
		g := s.geometric(lambda)
		if neg && g == 0 {
			continue
		}
		if neg {
			return -g
		}
		return g
	}
}

// discreteGaussian returns Y with P(Y = y) ∝ exp(−y²/(2σ²)) (CKS20 Algorithm 3): propose
// Y ~ discrete Laplace with scale t = ⌊σ⌋+1, accept with probability
// exp(−(|Y| − σ²/t)²/(2σ²)).
func (s *Secure) discreteGaussian(sigma float64) int64 {
	t := math.Floor(sigma) + 1
	for {
		y := s.discreteLaplace(1 / t)
		d := math.Abs(float64(y)) - sigma*sigma/t
		if s.r.Float64() < math.Exp(-d*d/(2*sigma*sigma)) {
			return y
		}
	}
}
