package counter

import (
	"fmt"
	"math"

	"github.com/dprl/dprl/privacy/noise"
)

// GaussianCounter is a Counter whose releases are a post-processing of C·x + z, z ~ N(0, σ²I)
// i.i.d. (per coordinate), for a data-independent encoder C (practical-privacy spec §2, §3).
//
// Privacy (single participation, each element inserted once). Write the stream of T =
// Capacity elements as the T×Dim matrix x and the releases as y = A x + B z with A the
// lower-triangular all-ones (prefix-sum) matrix and A = B C. Then y = B (C x + z) is a
// post-processing of the Gaussian mechanism x ↦ C x + z, whose ℓ2 sensitivity is Δ₂·max_j
// ‖C e_j‖₂ when neighbouring streams differ in one element by at most Δ₂ in ℓ2. Hence the
// whole sequence of releases is μ-GDP with
//
//	μ = Δ₂ · SensitivityFactor() / Sigma()
//
// (Dong, Roth & Su 2022, Thm 2.7; convert with accounting.GDP). This holds also when the stream
// is chosen adaptively from past releases, as in reinforcement learning, because C is lower
// triangular (Denisov, McMahan, Rush, Smith & Thakurta, NeurIPS 2022: the Gaussian matrix
// mechanism with a lower-triangular encoder keeps its guarantee on adaptive streams). The binary tree
// is the case C = node-membership matrix (Dwork et al. 2010; Chan, Shi & Song 2011); the
// factorisation counters follow Fichtenberger, Henzinger & Upadhyay (ICML 2023) and Dvijotham,
// McMahan, Pillutla, Steinke & Thakurta (2024).
//
// With CoordScale, coordinate k's draws have std σ·CoordScale[k]; the guarantee is then μ with
// Δ₂ measured in the norm ‖diag(CoordScale)⁻¹·v‖₂.
type GaussianCounter interface {
	Counter
	// Sigma is the std σ of each i.i.d. draw z (per coordinate, before any CoordScale).
	Sigma() float64
	// SensitivityFactor is max_j ‖C e_j‖₂ over the counter's Capacity: a stream with
	// per-element ℓ2 sensitivity Δ is μ-GDP with μ = Δ·SensitivityFactor()/Sigma().
	SensitivityFactor() float64
	// PrefixStd is the std of the noise in every coordinate of the current Prefix()
	// (coordinate scale 1); 0 before any insertion.
	PrefixStd() float64
	// StdAt is the std of the noise in the prefix released after t insertions
	// (data-independent, usable before any data); StdAt(0) = 0 and StdAt is NaN for t < 0 or
	// t > Capacity.
	StdAt(t int) float64
}

// GaussianConfig configures a Gaussian counter. All noise levels are fixed here, from public
// parameters, before any data is seen.
type GaussianConfig struct {
	// Dim is the length of every element (≥ 1).
	Dim int
	// Capacity is the maximum number of insertions T (≥ 1).
	Capacity int
	// Sigma is the std σ of every i.i.d. draw (finite, ≥ 0; 0 turns the noise off and needs
	// no source).
	Sigma float64
	// CoordScale, if non-nil (length Dim, entries finite and > 0), multiplies σ per
	// coordinate, e.g. noise.SymScales for symmetric-matrix noise.
	CoordScale []float64
}

// Validate reports an error naming the first invalid field.
func (c GaussianConfig) Validate() error {
	if c.Dim < 1 {
		return fmt.Errorf("counter: Dim must be >= 1, got %d", c.Dim)
	}
	if c.Capacity < 1 {
		return fmt.Errorf("counter: Capacity must be >= 1, got %d", c.Capacity)
	}
	if !(c.Sigma >= 0) || math.IsInf(c.Sigma, 0) {
		return fmt.Errorf("counter: Sigma must be finite and >= 0, got %v", c.Sigma)
	}
	if c.CoordScale != nil {
		if len(c.CoordScale) != c.Dim {
			return fmt.Errorf("counter: CoordScale has length %d, want Dim = %d", len(c.CoordScale), c.Dim)
		}
		for k, s := range c.CoordScale {
			if !(s > 0) || math.IsInf(s, 0) {
				return fmt.Errorf("counter: CoordScale[%d] must be finite and > 0, got %v", k, s)
			}
		}
	}
	return nil
}

// SecureSensitivity returns Δ₂ + √dim·γ with γ = noise.GaussianGranularity(sigma): the ℓ2
// sensitivity to use for a Gaussian counter fed by a Secure source (practical-privacy spec §7).
// With a Secure source every element is rounded to the grid γ·Z before it enters the counter
// and all draws are discrete Gaussians on that grid (Canonne, Kamath & Steinke 2020). Rounding
// moves each coordinate by at most γ/2, so two elements at ℓ2 distance ≤ Δ₂ round to grid
// points at distance ≤ Δ₂ + √dim·γ. For the trees (a 0/1 encoder) the releases are then an
// exact post-processing of the discrete Gaussian mechanism C x̃ + z; for the real-valued
// factorisations (SqrtFactorization, BLT) C x̃ is off the grid, and their rounding of the
// noise adds SecureReleaseSlack to μ besides (secure_release.go). sigma is the smallest
// per-coordinate std, σ·min CoordScale (the counters use that grid for every coordinate);
// dim ≥ 1. Invalid arguments give NaN.
func SecureSensitivity(sens2 float64, dim int, sigma float64) float64 {
	if !(sens2 >= 0) || math.IsInf(sens2, 0) || dim < 1 || !(sigma > 0) || math.IsInf(sigma, 0) {
		return math.NaN()
	}
	return sens2 + math.Sqrt(float64(dim))*noise.GaussianGranularity(sigma)
}

// CalibrateSigma returns the smallest σ (up to float64 rounding, rounded up) for which a
// Gaussian counter with the given sensitivity factor is mu-GDP on a stream of per-element ℓ2
// sensitivity sens2: σ = factor·Δ/μ, where, if secure, Δ = SecureSensitivity(sens2, dim, σ)
// includes the rounding to σ's grid (found by a fixed-point iteration, which converges because
// the grid is a step function of σ). minScale is min CoordScale (1 without CoordScale). All
// arguments must be finite and > 0 (dim ≥ 1). The calibration does not include the
// σ-independent SecureReleaseSlack of a SqrtFactorization or BLT fed by a Secure source (it
// depends on the counter's capacity and RoundingGain): aim at μ − SecureReleaseSlack for those.
func CalibrateSigma(mu, sens2, factor float64, dim int, minScale float64, secure bool) (float64, error) {
	for _, a := range []struct {
		name string
		v    float64
	}{{"mu", mu}, {"sens2", sens2}, {"factor", factor}, {"minScale", minScale}} {
		if !(a.v > 0) || math.IsInf(a.v, 0) {
			return 0, fmt.Errorf("counter: %s must be finite and > 0, got %v", a.name, a.v)
		}
	}
	if dim < 1 {
		return 0, fmt.Errorf("counter: dim must be >= 1, got %d", dim)
	}
	sens := func(sigma float64) float64 {
		if !secure {
			return sens2
		}
		// The grid is that of the smallest per-coordinate std σ·minScale; a rounding error of
		// γ/2 in a coordinate with scale s is γ/(2s) ≤ γ/(2·minScale) in the units of σ in
		// which sens2 is measured.
		return sens2 + math.Sqrt(float64(dim))*noise.GaussianGranularity(sigma*minScale)/minScale
	}
	ok := func(sigma float64) bool { return factor*sens(sigma)/sigma <= mu }
	sigma := factor * sens2 / mu
	for range 64 {
		if ok(sigma) {
			break
		}
		next := factor * sens(sigma) / mu
		if next <= sigma {
			next = math.Nextafter(sigma, math.Inf(1))
		}
		sigma = next
	}
	if !ok(sigma) || math.IsInf(sigma, 0) {
		return 0, fmt.Errorf("counter: no sigma found for mu = %v, sens2 = %v, factor = %v", mu, sens2, factor)
	}
	return sigma, nil
}

// gaussBase holds what every Gaussian counter shares: the configuration, the stream length, the
// noise source, the secure grid and the release; it implements Insert, Prefix, StdAt and
// PrefixStd with the counter's own steps.
type gaussBase struct {
	cfg    GaussianConfig
	t      int
	src    noise.Source
	gamma  float64   // grid step of the rounded statistic when the source is Secure, else 0
	scales []float64 // σ·CoordScale[k] (nil when σ = 0)
	xr     []float64 // scratch: the (rounded) element being inserted
	prefix []float64 // the release after t insertions
	steps  gaussSteps
}

// gaussSteps is what sets one Gaussian counter apart from another: its decoder's variance and
// its insertion step.
type gaussSteps interface {
	// variance returns the variance of release t in units of σ² (StdAt(t) = σ·√variance(t)), for
	// 1 ≤ t ≤ Capacity.
	variance(t int) float64
	// step inserts the checked (and, on the secure path, rounded) element xr as element number t
	// (already counted) and updates prefix.
	step(xr []float64)
}

func (b *gaussBase) init(cfg GaussianConfig, src noise.Source, steps gaussSteps) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	if cfg.Sigma > 0 && src == nil {
		return fmt.Errorf("counter: a noise source is required for sigma = %v", cfg.Sigma)
	}
	b.cfg, b.src, b.steps = cfg, src, steps
	if cfg.CoordScale != nil {
		b.cfg.CoordScale = append([]float64(nil), cfg.CoordScale...)
	}
	b.xr = make([]float64, cfg.Dim)
	b.prefix = make([]float64, cfg.Dim)
	if cfg.Sigma > 0 {
		b.scales = make([]float64, cfg.Dim)
		minScale := math.Inf(1)
		for k := range b.scales {
			s := 1.0
			if cfg.CoordScale != nil {
				s = cfg.CoordScale[k]
			}
			b.scales[k] = cfg.Sigma * s
			minScale = math.Min(minScale, s)
		}
		if src.Secure() {
			// Every coordinate's discrete Gaussian lives on GaussianGranularity(σ·s_k), a
			// power-of-two multiple of this grid (granularity is monotone in the scale).
			b.gamma = noise.GaussianGranularity(cfg.Sigma * minScale)
		}
	}
	return nil
}

// Dim implements Counter.
func (b *gaussBase) Dim() int { return b.cfg.Dim }

// Capacity implements Counter.
func (b *gaussBase) Capacity() int { return b.cfg.Capacity }

// Len implements Counter.
func (b *gaussBase) Len() int { return b.t }

// Sigma implements GaussianCounter.
func (b *gaussBase) Sigma() float64 { return b.cfg.Sigma }

// Granularity returns the grid step γ of the secure path (elements are rounded to γ·Z and all
// draws are multiples of γ), or 0 when the source is not Secure or σ = 0.
func (b *gaussBase) Granularity() float64 { return b.gamma }

// StdAt implements GaussianCounter: σ·√variance(t), NaN outside [0, Capacity].
func (b *gaussBase) StdAt(t int) float64 {
	return stdOrNaN(t, b.cfg.Capacity, b.cfg.Sigma, b.steps.variance)
}

// PrefixStd implements GaussianCounter.
func (b *gaussBase) PrefixStd() float64 { return b.StdAt(b.t) }

// Prefix implements Counter.
func (b *gaussBase) Prefix() []float64 { return b.prefix }

// Insert implements Counter.
func (b *gaussBase) Insert(x []float64) error {
	xr, err := b.element(x)
	if err != nil {
		return err
	}
	b.t++
	b.steps.step(xr)
	return nil
}

// element validates x and returns it copied into scratch, rounded to the grid on the secure
// path.
func (b *gaussBase) element(x []float64) ([]float64, error) {
	if len(x) != b.cfg.Dim {
		return nil, fmt.Errorf("counter: element has length %d, want %d", len(x), b.cfg.Dim)
	}
	if b.t >= b.cfg.Capacity {
		return nil, fmt.Errorf("counter: capacity %d exhausted: the calibration does not cover more insertions", b.cfg.Capacity)
	}
	for k, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("counter: element coordinate %d is %v, want a finite value", k, v)
		}
	}
	if b.gamma > 0 {
		for k, v := range x {
			b.xr[k] = roundGrid(v, b.gamma)
		}
	} else {
		copy(b.xr, x)
	}
	return b.xr, nil
}

// draw overwrites out with one i.i.d. draw per coordinate, N(0, (σ·s_k)²), on the grid when the
// source is Secure; zeros when σ = 0.
func (b *gaussBase) draw(out []float64) { b.drawAt(out, 0) }

// drawAt is draw for the coordinates lo, …, lo+len(out)−1: calls for consecutive ranges in
// increasing order draw exactly what one call for their union draws.
func (b *gaussBase) drawAt(out []float64, lo int) {
	if b.scales == nil {
		clear(out)
		return
	}
	if v, ok := b.src.(noise.GaussianVecSource); ok && b.cfg.CoordScale == nil && !b.src.Secure() {
		// Same draws, in the same order, as the loop below.
		clear(out)
		v.AddGaussianVec(out, b.cfg.Sigma)
		return
	}
	if g, ok := b.src.(gridSource); ok && b.gamma > 0 {
		// Every coordinate's draw lives on the one grid γ the elements are rounded to (that of
		// the smallest std). A coordinate with a larger std drawing on its own, coarser grid
		// (γ·2^j) would release the element's residue modulo that grid exactly: with scales 1
		// and √2 the parity of x/γ showed in every release.
		for k, s := range b.scales[lo : lo+len(out)] {
			out[k] = g.GaussianOnGrid(s, b.gamma)
		}
		return
	}
	for k, s := range b.scales[lo : lo+len(out)] {
		out[k] = b.src.AddGaussian(0, s)
	}
}

// gridSource is a Secure source that draws discrete Gaussians on a grid chosen by the caller.
type gridSource interface {
	GaussianOnGrid(sigma, gamma float64) float64
}

// roundGrid rounds v to the nearest multiple of gamma, ties upward. Unlike math.Round it is
// translation-equivariant on the grid: roundGrid(g + v) = g + roundGrid(v) for g ∈ γ·Z (for
// |v/γ| < 2^52), which keeps the rounding a function of the noise alone when data on the grid
// is added.
func roundGrid(v, gamma float64) float64 { return math.Floor(v/gamma+0.5) * gamma }

// stdOrNaN returns σ·√v for 0 ≤ t ≤ capacity, else NaN.
func stdOrNaN(t, capacity int, sigma float64, v func(int) float64) float64 {
	if t < 0 || t > capacity {
		return math.NaN()
	}
	if t == 0 {
		return 0
	}
	return sigma * math.Sqrt(v(t))
}
