package counter

import (
	"fmt"
	"iter"
	"math"

	"github.com/dprl/dprl/privacy/noise"
)

// BLTParams are the parameters of a buffered linear Toeplitz (BLT) encoder with d = len(Theta)
// buffers (Dvijotham, McMahan, Pillutla, Steinke & Thakurta 2024, arXiv 2404.16706, §3): the
// lower-triangular Toeplitz matrix C with
//
//	c_0 = 1,   c_k = Σ_i θ_i·ω_i^{k−1}   (k ≥ 1),
//
// i.e. the generating function c(x) = 1 + Σ_i θ_i x/(1 − ω_i x), a rational function of degree
// d. C is the linear system with state s ∈ ℝ^d: v_t = u_t + θᵀs_t, s_{t+1} = Ω s_t + 1·u_t
// (Ω = diag(ω)). Its inverse is the system u_t = v_t − θᵀs_t, s_{t+1} = Ω s_t + 1·u_t, whose
// state matrix is Ω − 1θᵀ (the BLT inversion theorem of McMahan & Pillutla 2025 in state-space
// form), so both C x and C⁻¹ z are computed online with d numbers per coordinate.
type BLTParams struct {
	Theta []float64 `json:"theta"`
	Omega []float64 `json:"omega"`
}

// Validate reports an error unless 1 ≤ d = len(Theta) = len(Omega) ≤ 32, every θ_i is finite
// and every ω_i is in [0, 1).
func (p BLTParams) Validate() error {
	d := len(p.Theta)
	if d < 1 || d > 32 || len(p.Omega) != d {
		return fmt.Errorf("counter: BLT needs 1 to 32 buffers with len(Theta) = len(Omega), got %d and %d", len(p.Theta), len(p.Omega))
	}
	for i := range d {
		if math.IsNaN(p.Theta[i]) || math.IsInf(p.Theta[i], 0) {
			return fmt.Errorf("counter: BLT Theta[%d] must be finite, got %v", i, p.Theta[i])
		}
		if !(p.Omega[i] >= 0 && p.Omega[i] < 1) {
			return fmt.Errorf("counter: BLT Omega[%d] must be in [0, 1), got %v", i, p.Omega[i])
		}
	}
	return nil
}

// Coefficients returns c_0, …, c_{n−1} of the encoder C.
func (p BLTParams) Coefficients(n int) []float64 {
	if n <= 0 {
		return nil
	}
	c := make([]float64, 1, n)
	c[0] = 1
	for ck := range p.encoder(n) {
		c = append(c, ck)
	}
	return c
}

// encoder yields c_1, …, c_{n−1} of the encoder C (c_k = Σ_i θ_i ω_i^{k−1}) without storing
// them, in the one order of summation every use of the coefficients shares.
func (p BLTParams) encoder(n int) iter.Seq[float64] {
	return func(yield func(float64) bool) {
		pow := make([]float64, len(p.Omega)) // ω_i^{k−1}
		for i := range pow {
			pow[i] = 1
		}
		for k := 1; k < n; k++ {
			s := 0.0
			for i, th := range p.Theta {
				s += th * pow[i]
				pow[i] *= p.Omega[i]
			}
			if !yield(s) {
				return
			}
		}
	}
}

// DecoderCoefficients returns b_0, …, b_{n−1} of the decoder B = A·C⁻¹ (lower-triangular
// Toeplitz, generating function 1/((1 − x)·c(x))): the noise of the release after t
// insertions is Σ_{j≤t} b_{t−j} z_j.
func (p BLTParams) DecoderCoefficients(n int) []float64 {
	if n <= 0 {
		return nil
	}
	b := make([]float64, n)
	d := len(p.Theta)
	s := make([]float64, d) // state of C⁻¹ driven by the impulse z = e_0
	acc := 0.0
	for m := 0; m < n; m++ {
		z := 0.0
		if m == 0 {
			z = 1
		}
		u := z
		for i, th := range p.Theta {
			u -= th * s[i]
		}
		for i, w := range p.Omega {
			s[i] = w*s[i] + u
		}
		acc += u
		b[m] = acc
	}
	return b
}

// MaxLoss returns SensitivityFactor²·StdAt(n)²/σ² = (Σ_{k<n} c_k²)·(Σ_{k<n} b_k²) for a stream of
// n, the quantity the BLT fit minimises: the prefix-noise variance at the last (worst) release
// when σ is calibrated to a fixed μ (practical-privacy spec §3, "in units of (σ/Δ)²·Δ²"). It is
// computed in O(d³ log n) with Gramian doubling (state-space sums of squared impulse
// responses), exact up to rounding.
func (p BLTParams) MaxLoss(n int) float64 {
	if n <= 0 {
		return 0
	}
	enc, dec := p.systems()
	return (1 + enc.sumSquares(n-1)) * (1 + dec.sumSquares(n-1))
}

// encoderSumSquares returns Σ_{k<n} c_k², summed in the order of Coefficients without storing
// them (O(n·d) time, O(d) memory).
func (p BLTParams) encoderSumSquares(n int) float64 {
	if n <= 0 {
		return 0
	}
	ss := 1.0 // c_0 = 1
	for s := range p.encoder(n) {
		ss += s * s
	}
	return ss
}

// decoderSumSquares returns Σ_{k<n} b_k², summed in the order of DecoderCoefficients without
// storing them (O(n·d) time, O(d) memory).
func (p BLTParams) decoderSumSquares(n int) float64 {
	r := newBLTImpulse(p)
	ss := 0.0
	for range n {
		b := r.next()
		ss += b * b
	}
	return ss
}

// bltImpulse generates the decoder coefficients b_0, b_1, … one at a time (the impulse
// response of C⁻¹ followed by a running sum), exactly as DecoderCoefficients computes them.
type bltImpulse struct {
	p   BLTParams
	s   []float64
	m   int
	acc float64
}

func newBLTImpulse(p BLTParams) bltImpulse {
	return bltImpulse{p: p, s: make([]float64, len(p.Theta))}
}

// next returns b_m and advances m.
func (r *bltImpulse) next() float64 {
	z := 0.0
	if r.m == 0 {
		z = 1
	}
	u := z
	for i, th := range r.p.Theta {
		u -= th * r.s[i]
	}
	for i, w := range r.p.Omega {
		r.s[i] = w*r.s[i] + u
	}
	r.acc += u
	r.m++
	return r.acc
}

// lti is a single-input single-output linear system x_{m+1} = M x_m, output hᵀx_m, x_0 = g:
// its impulse response (without the direct term) is f_m = hᵀ M^m g.
type lti struct {
	M    [][]float64
	g, h []float64
}

// systems returns the encoder (c_k = θᵀ Ω^{k−1} 1, k ≥ 1) and decoder (b_k, k ≥ 1) systems.
// Decoder state (s, N): s_{t+1} = (Ω − 1θᵀ) s_t + z_t, N_t = N_{t−1} − θᵀ s_t + z_t, release
// N_t; for the impulse, x_1 = (1, …, 1, 1) and b_m = (−θ, 1)ᵀ x_m.
func (p BLTParams) systems() (enc, dec lti) {
	d := len(p.Theta)
	enc = lti{M: make([][]float64, d), g: make([]float64, d), h: append([]float64(nil), p.Theta...)}
	for i := range d {
		enc.M[i] = make([]float64, d)
		enc.M[i][i] = p.Omega[i]
		enc.g[i] = 1
	}
	n := d + 1
	dec = lti{M: make([][]float64, n), g: make([]float64, n), h: make([]float64, n)}
	for i := range n {
		dec.M[i] = make([]float64, n)
		dec.g[i] = 1
	}
	for i := range d {
		for j := range d {
			dec.M[i][j] = -p.Theta[j]
		}
		dec.M[i][i] += p.Omega[i]
		dec.M[d][i] = -p.Theta[i]
		dec.h[i] = -p.Theta[i]
	}
	dec.M[d][d] = 1
	dec.h[d] = 1
	return enc, dec
}

// sumSquares returns Σ_{m<n} (hᵀ M^m g)² by doubling on W_n = Σ_{m<n} M^m g gᵀ (M^m)ᵀ:
// W_{2k} = W_k + M^k W_k (M^k)ᵀ and W_{k+1} = W_k + M^k g gᵀ (M^k)ᵀ. Matrices are flat
// row-major d×d slices; the work is O(d³ log n) with five allocations.
func (s lti) sumSquares(n int) float64 {
	d := len(s.g)
	dd := d * d
	buf := make([]float64, 5*dd)
	W, P, M, t1, t2 := buf[:dd], buf[dd:2*dd], buf[2*dd:3*dd], buf[3*dd:4*dd], buf[4*dd:]
	for i := range d {
		copy(M[i*d:(i+1)*d], s.M[i])
		P[i*d+i] = 1
	}
	pg := make([]float64, d)
	for bit := 62; bit >= 0; bit-- {
		if n>>bit == 0 {
			continue
		}
		// Double: W ← W + P W Pᵀ, P ← P².
		matMul(t1, P, W, d)
		matMulT(t2, t1, P, d)
		for i := range W {
			W[i] += t2[i]
		}
		matMul(t1, P, P, d)
		copy(P, t1)
		if n>>bit&1 == 1 {
			// Add one term: W ← W + (P g)(P g)ᵀ, P ← P M.
			for i := range d {
				v := 0.0
				for j := range d {
					v += P[i*d+j] * s.g[j]
				}
				pg[i] = v
			}
			for i := range d {
				for j := range d {
					W[i*d+j] += pg[i] * pg[j]
				}
			}
			matMul(t1, P, M, d)
			copy(P, t1)
		}
	}
	v := 0.0
	for i := range d {
		for j := range d {
			v += s.h[i] * W[i*d+j] * s.h[j]
		}
	}
	return v
}

// matMul sets c = a·b for flat d×d matrices (c must not alias a or b).
func matMul(c, a, b []float64, d int) {
	clear(c)
	for i := range d {
		ci := c[i*d : (i+1)*d]
		for k := range d {
			aik := a[i*d+k]
			if aik == 0 {
				continue
			}
			bk := b[k*d : (k+1)*d]
			for j, v := range bk {
				ci[j] += aik * v
			}
		}
	}
}

// matMulT sets c = a·bᵀ for flat d×d matrices (c must not alias a or b).
func matMulT(c, a, b []float64, d int) {
	for i := range d {
		ai := a[i*d : (i+1)*d]
		for j := range d {
			bj := b[j*d : (j+1)*d]
			v := 0.0
			for k, x := range ai {
				v += x * bj[k]
			}
			c[i*d+j] = v
		}
	}
}

// DefaultBLTBuffers is the number of buffers NewSqrtBLT uses when given 0: five buffers are
// within 0.2 % of the square-root factorisation's MaxLoss at T = 5·10⁴ and within 1 % at
// T = 10⁶ (see the tests).
const DefaultBLTBuffers = 5

// FitSqrtBLT returns BLT parameters with the given number of buffers (1 to 12) for a stream
// of capacity T, chosen by minimising MaxLoss(T) — the "Opt-BLT" approach of Dvijotham et al.
// (2024, §5) with the max-loss objective — starting from a quadrature of the integral
// representation of the square-root coefficients,
//
//	c_k = C(2k,k)/4^k = (1/π)∫_0^1 ω^{k−1/2} (1 − ω)^{−1/2} dω,
//
// whose discretisation in v = −ln(1 − ω) on d nodes is already a BLT (θ_i = w_i ω_i). The
// minimisation is a deterministic Nelder–Mead search (with restarts) over (logit ω, ln θ); it
// costs O(d³ log T) per evaluation, 0.07–0.6 s in all with 5 buffers (BenchmarkFitSqrtBLT).
// Privacy never depends on the fit: any parameters give an exact factorisation A = B·C, whose
// sensitivity and variances the counter computes exactly.
//
// The fit depends on (capacity, buffers) alone, so FitSqrtBLT reads it from the committed table
// of blt_table.go when it can (the capacities of the agents' release schedules in the
// reproductions and benchmarks, generated by the fit itself as exact float64 bit patterns and
// checked against it bit for bit by TestSqrtBLTTable), else from an in-process memo of earlier
// fits, else fits afresh (blt_cache.go). Every path returns the same bits.
func FitSqrtBLT(capacity, buffers int) (BLTParams, error) {
	return cachedSqrtBLT(capacity, buffers)
}

// fitSqrtBLT is the fit of FitSqrtBLT itself, without the table or the memo.
func fitSqrtBLT(capacity, buffers int) (BLTParams, error) {
	if capacity < 1 {
		return BLTParams{}, fmt.Errorf("counter: Capacity must be >= 1, got %d", capacity)
	}
	if buffers < 1 || buffers > 12 {
		return BLTParams{}, fmt.Errorf("counter: BLT buffers must be in [1, 12], got %d", buffers)
	}
	d := buffers
	T := float64(max(capacity, 2))
	vlo, vhi := 0.5, math.Log(T)+1
	h := vhi - vlo
	if d > 1 {
		h /= float64(d - 1)
	}
	x0 := make([]float64, 2*d)
	for i := range d {
		v := vlo + float64(i)*h
		if d == 1 {
			v = (vlo + vhi) / 2
		}
		om := -math.Expm1(-v)
		w := h / math.Pi * math.Exp(-v/2) / math.Sqrt(om)
		x0[i] = -v - math.Log1p(-math.Exp(-v)) // ln((1−ω)/ω) with 1 − ω = e^{−v}
		x0[d+i] = math.Log(w * om)
	}
	decode := func(x []float64) BLTParams {
		p := BLTParams{Theta: make([]float64, d), Omega: make([]float64, d)}
		for i := range d {
			p.Omega[i] = 1 / (1 + math.Exp(x[i])) // 1 − ω = e^a/(1 + e^a)
			p.Theta[i] = math.Exp(x[d+i])
		}
		return p
	}
	loss := func(x []float64) float64 {
		p := decode(x)
		if p.Validate() != nil {
			return math.Inf(1)
		}
		l := p.MaxLoss(capacity)
		if math.IsNaN(l) || math.IsInf(l, 0) {
			return math.Inf(1)
		}
		return math.Log(l)
	}
	// A coarse quadrature can overshoot (c(x) with a root inside the unit disk makes the
	// decoder unstable); shrink θ until the start is finite.
	for range 60 {
		if !math.IsInf(loss(x0), 1) {
			break
		}
		for i := d; i < 2*d; i++ {
			x0[i] -= math.Ln2
		}
	}
	if math.IsInf(loss(x0), 1) {
		return BLTParams{}, fmt.Errorf("counter: BLT fit found no stable starting point for capacity %d and %d buffers (internal error)", capacity, buffers)
	}
	best, fbest := x0, loss(x0)
	for range 3 { // restarts from the best point refresh the simplex
		x := nelderMead(loss, best, 0.5, 400*d)
		if fx := loss(x); fx < fbest {
			best, fbest = x, fx
		}
	}
	p := decode(best)
	if err := p.Validate(); err != nil {
		return BLTParams{}, fmt.Errorf("counter: BLT fit produced invalid parameters: %w", err)
	}
	return p, nil
}

// BLT is the buffered-linear-Toeplitz counter of Dvijotham, McMahan, Pillutla, Steinke &
// Thakurta (2024): y = A x + B z with encoder C = BLTParams (Toeplitz, c(x) = 1 + Σ θ_i x/(1 −
// ω_i x)) and decoder B = A·C⁻¹, i.e. y = B (C x + z). The noise of release t is N_t =
// Σ_{s≤t} u_s with u = C⁻¹ z computed online from d buffers per coordinate (BLTParams), so the
// cost per Insert is O(d·Dim) and the state O(d·Dim), independent of t.
//
// Why BLT rather than the square root on a block schedule: it releases after every insertion
// (the agents' policy can change every episode; a block schedule delays the data by up to a
// block) and its noise is within ≈ 1 % of the square-root factorisation's (MaxLoss at T =
// 5·10⁴ with 4 buffers; the square root itself is near-optimal), with flat cost in t.
//
// SensitivityFactor is the exact max column norm of C over the Capacity, √(Σ_{k<T} c_k²) (the
// first column; computed once in O(T·d) time and O(d) memory), and StdAt(t) = σ·√(Σ_{k<t} b_k²),
// the exact row norm of B: for the current t it is kept up to date in O(d) per insertion by
// running the decoder's impulse response alongside the stream, and for any other t it is
// recomputed in O(t·d). The counter's memory is O(d·Dim), independent of T.
//
// With a Secure source the elements are rounded to the grid γ·Z, the draws z_t are discrete
// Gaussians on it, and release t is the exact grid sum S_t + z_t + round_γ(P_t) of the rounded
// elements' sum, the new draw and the rounded prediction P_t = N_{t−1} − θᵀs_t, computed from
// the earlier draws alone (in exact arithmetic round_γ(S_t + N_t) = round_γ(B(C x̃ + z))_t; no
// floating-point rounding depends on the data). That is not a post-processing of C x̃ + z (C x̃
// is off the grid, and a discrete z shifted off the grid has disjoint support); it is exactly a
// step-by-step discrete Gaussian mechanism whose shifts on neighbouring streams are grid vectors
// ε = C D e_τ − B⁻¹ξ with |ξ| < 2γ per entry, so μ grows by at most
// SecureReleaseSlack(RoundingGain(), T, Dim) = G·2^-28·√((T−1)·Dim) besides SecureSensitivity's
// rounding of the elements (secure_release.go, docs/privacy.md; TestSecureReleaseCoupling).
type BLT struct {
	gaussBase
	p      BLTParams
	sf     float64
	dec    bltImpulse  // decoder impulse response, advanced once per insertion
	cumNow float64     // Σ_{k<t} b_k² for the current t
	query  bltImpulse  // decoder impulse response for StdAt at other t (monotone queries: O(d) amortised)
	qCum   float64     // Σ_{k<query.m} b_k²
	s      [][]float64 // buffers of C⁻¹, d × Dim
	u      []float64   // scratch: Dim long on the Secure path, one block of fused otherwise
	noise  []float64   // N_t
	sum    []float64
	zt     []float64 // Secure path: the draws z_t of the current insertion
	pred   []float64 // Secure path: P_t = N_{t−1} − θᵀs_t, a function of z_1, …, z_{t−1}
}

// NewBLT returns a BLT counter with the given encoder parameters (src may be nil when
// cfg.Sigma = 0).
func NewBLT(cfg GaussianConfig, p BLTParams, src noise.Source) (*BLT, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	c := &BLT{p: BLTParams{Theta: append([]float64(nil), p.Theta...), Omega: append([]float64(nil), p.Omega...)}}
	if err := c.init(cfg, src, c); err != nil {
		return nil, err
	}
	T := cfg.Capacity
	c.sf = math.Sqrt(p.encoderSumSquares(T))
	last := p.decoderSumSquares(T)
	if math.IsNaN(c.sf) || math.IsInf(c.sf, 0) || math.IsNaN(last) || math.IsInf(last, 0) {
		return nil, fmt.Errorf("counter: BLT parameters give a non-finite sensitivity (%v) or decoder variance (%v) over capacity %d", c.sf, last, T)
	}
	c.dec = newBLTImpulse(p)
	c.query = newBLTImpulse(p)
	c.s = make([][]float64, len(p.Theta))
	for i := range c.s {
		c.s[i] = make([]float64, cfg.Dim)
	}
	for _, q := range []*[]float64{&c.noise, &c.sum} {
		*q = make([]float64, cfg.Dim)
	}
	if c.gamma > 0 {
		c.u, c.zt, c.pred = make([]float64, cfg.Dim), make([]float64, cfg.Dim), make([]float64, cfg.Dim)
	} else {
		c.u = make([]float64, min(cfg.Dim, fusedBlock)) // fused's block scratch
	}
	return c, nil
}

// NewSqrtBLT fits BLT parameters to the square-root factorisation for cfg.Capacity with the
// given number of buffers (0 = DefaultBLTBuffers; see FitSqrtBLT) and returns the counter.
func NewSqrtBLT(cfg GaussianConfig, buffers int, src noise.Source) (*BLT, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if buffers == 0 {
		buffers = DefaultBLTBuffers
	}
	p, err := FitSqrtBLT(cfg.Capacity, buffers)
	if err != nil {
		return nil, err
	}
	return NewBLT(cfg, p, src)
}

// Params returns a copy of the encoder parameters.
func (c *BLT) Params() BLTParams {
	return BLTParams{Theta: append([]float64(nil), c.p.Theta...), Omega: append([]float64(nil), c.p.Omega...)}
}

// NodesPerElement implements Counter: T (the encoder's columns are dense; use
// SensitivityFactor for accounting).
func (c *BLT) NodesPerElement() int { return c.cfg.Capacity }

// NodesInPrefix implements Counter: t (every draw so far enters the prefix).
func (c *BLT) NodesInPrefix() int { return c.t }

// SensitivityFactor implements GaussianCounter: √(Σ_{k<T} c_k²).
func (c *BLT) SensitivityFactor() float64 { return c.sf }

// variance gives StdAt = σ·√(Σ_{k<t} b_k²). It is O(1) for the current t; other t are served
// by a second impulse generator that only moves forward, so increasing queries cost O(d)
// amortised per step and a query below the previous one restarts it (O(t·d)).
func (c *BLT) variance(t int) float64 {
	if t == c.t {
		return c.cumNow
	}
	if t < c.query.m {
		c.query, c.qCum = newBLTImpulse(c.p), 0
	}
	for c.query.m < t {
		b := c.query.next()
		c.qCum += b * b
	}
	return c.qCum
}

// advance turns the draw z_t in u into u_t = z_t − θᵀ s_t and advances the buffers,
// s ← Ω s + u_t (one loop per buffer: the Secure path, and the reference of the fused pass).
func (c *BLT) advance(u []float64) {
	for i, th := range c.p.Theta {
		for k, v := range c.s[i] {
			u[k] -= th * v
		}
	}
	for i, w := range c.p.Omega {
		si := c.s[i]
		for k, v := range u {
			si[k] = w*si[k] + v
		}
	}
}

// step inserts element t: fused without the grid, else the Secure path below.
func (c *BLT) step(xr []float64) {
	b := c.dec.next()
	c.cumNow += b * b
	if c.gamma == 0 {
		c.fused(xr)
		return
	}
	u := c.u
	c.draw(u)
	// The Secure release is S_t + z_t + round_γ(P_t) with P_t = N_{t−1} − θᵀs_t computed from
	// the earlier draws alone, before z_t enters any arithmetic (see the type's doc).
	copy(c.zt, u)
	copy(c.pred, c.noise)
	for i, th := range c.p.Theta {
		for k, sv := range c.s[i] {
			c.pred[k] -= th * sv
		}
	}
	c.advance(u)
	p := c.prefix
	for k, v := range xr {
		c.noise[k] += u[k]
		c.sum[k] += v
		p[k] = c.sum[k] + c.zt[k] + roundGrid(c.pred[k], c.gamma)
	}
}

// fused is step's arithmetic without the grid (γ = 0), a block of fusedBlock coordinates at a
// time: the block's draws z (drawn block after block, in coordinate order: the same draws as
// one draw of the whole vector), then u = z − Σ_i θ_i·s_i (i in order), s_i ← ω_i·s_i + u,
// N += u, S += x, prefix = S + N on the block — the same operations in the same order per
// coordinate as the whole-vector form (bit for bit; TestBLTFusedStep), with the draws and u
// in cache instead of a Dim-long scratch written and read 2d + 2 times (the buffers are d·Dim
// numbers: 60 MB on Taxi's release). c.u is the block's scratch.
func (c *BLT) fused(xr []float64) {
	n := len(xr)
	for lo := 0; lo < n; lo += fusedBlock {
		hi := min(lo+fusedBlock, n)
		u := c.u[:hi-lo]
		c.drawAt(u, lo)
		for i, th := range c.p.Theta {
			si := c.s[i][lo:hi]
			si = si[:len(u)]
			for k, v := range si {
				u[k] -= th * v
			}
		}
		for i, w := range c.p.Omega {
			si := c.s[i][lo:hi]
			si = si[:len(u)]
			for k, uk := range u {
				si[k] = w*si[k] + uk
			}
		}
		x, noise, sum, p := xr[lo:hi], c.noise[lo:hi], c.sum[lo:hi], c.prefix[lo:hi]
		x, noise, sum, p = x[:len(u)], noise[:len(u)], sum[:len(u)], p[:len(u)]
		for k, v := range u {
			noise[k] += v
			sum[k] += x[k]
			p[k] = sum[k] + noise[k]
		}
	}
}

// fusedBlock is the number of coordinates fused processes at a time (8 KB of draws).
const fusedBlock = 1024

// nelderMead minimises f from x0 with the Nelder–Mead simplex method (standard coefficients:
// reflection 1, expansion 2, contraction 1/2, shrink 1/2; Lagarias et al. 1998), starting from
// the simplex x0 + step·e_i, for at most maxEval evaluations. It is deterministic and returns
// the best vertex.
func nelderMead(f func([]float64) float64, x0 []float64, step float64, maxEval int) []float64 {
	n := len(x0)
	pts := make([][]float64, n+1)
	vals := make([]float64, n+1)
	for i := range pts {
		pts[i] = append([]float64(nil), x0...)
		if i > 0 {
			pts[i][i-1] += step
		}
		vals[i] = f(pts[i])
	}
	evals := n + 1
	centroid := make([]float64, n)
	at := func(a float64, worst []float64) []float64 { // centroid + a·(centroid − worst)
		x := make([]float64, n)
		for j := range x {
			x[j] = centroid[j] + a*(centroid[j]-worst[j])
		}
		return x
	}
	for evals < maxEval {
		// Order: best first (insertion sort, stable).
		for i := 1; i <= n; i++ {
			for j := i; j > 0 && vals[j] < vals[j-1]; j-- {
				vals[j], vals[j-1] = vals[j-1], vals[j]
				pts[j], pts[j-1] = pts[j-1], pts[j]
			}
		}
		if vals[n]-vals[0] <= 1e-13*(1+math.Abs(vals[0])) {
			break
		}
		clear(centroid)
		for i := 0; i < n; i++ {
			for j := range centroid {
				centroid[j] += pts[i][j] / float64(n)
			}
		}
		worst := pts[n]
		xr := at(1, worst)
		fr := f(xr)
		evals++
		switch {
		case fr < vals[0]:
			xe := at(2, worst)
			fe := f(xe)
			evals++
			if fe < fr {
				pts[n], vals[n] = xe, fe
			} else {
				pts[n], vals[n] = xr, fr
			}
		case fr < vals[n-1]:
			pts[n], vals[n] = xr, fr
		default:
			a := 0.5 // outside contraction
			if fr >= vals[n] {
				a = -0.5 // inside contraction
			}
			xc := at(a, worst)
			fc := f(xc)
			evals++
			if fc < math.Min(fr, vals[n]) {
				pts[n], vals[n] = xc, fc
				continue
			}
			for i := 1; i <= n; i++ { // shrink towards the best vertex
				for j := range pts[i] {
					pts[i][j] = pts[0][j] + 0.5*(pts[i][j]-pts[0][j])
				}
				vals[i] = f(pts[i])
				evals++
			}
		}
	}
	bi := 0
	for i := range vals {
		if vals[i] < vals[bi] {
			bi = i
		}
	}
	return pts[bi]
}
