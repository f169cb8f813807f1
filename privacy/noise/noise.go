// Package noise provides the random perturbations of differential privacy: Laplace and
// Gaussian noise for scalars, vectors and symmetric matrices, drawn from an explicit Source.
//
// Two kinds of Source exist:
//
//   - Seeded (NewSeeded): fast floating-point samplers on a seeded math/rand/v2 stream, for
//     reproducible research simulations. It is NOT hardened against the floating-point attack
//     on naive Laplace sampling (Mironov 2012) nor against timing attacks.
//   - Secure (NewSecure): crypto-seeded generator with granular, discrete samplers in the style
//     of the published secure-noise-generation approach; the statistic is rounded to a
//     power-of-two grid derived from the noise scale and integer multiples of that grid are
//     added, so the set of attainable outputs does not depend on the input's floating-point
//     representation. It is the default wherever dprl is not running a seeded experiment.
//
// This package knows nothing of reinforcement learning.
package noise

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// Source perturbs values with calibrated noise. Implementations are not safe for concurrent
// use; give every mechanism its own Source.
type Source interface {
	// AddLaplace returns x + Y with Y ~ Laplace(0, b) (density exp(-|y|/b)/(2b)).
	// b = 0 returns x unchanged.
	AddLaplace(x, b float64) float64
	// AddGaussian returns x + Z with Z ~ N(0, sigma²). sigma = 0 returns x unchanged.
	AddGaussian(x, sigma float64) float64
	// Secure reports whether the source is hardened for deployment.
	Secure() bool
}

// Seeded is a fast, reproducible Source for simulations. It is not hardened against
// floating-point or timing attacks.
type Seeded struct {
	r     *rand.Rand
	signs uint64 // buffered random sign bits
	nbits int
}

// NewSeeded returns a Source drawing from r. The caller must not use r elsewhere.
func NewSeeded(r *rand.Rand) *Seeded { return &Seeded{r: r} }

// AddLaplace returns x + b·ξ·E with E ~ Exp(1) (ziggurat) and ξ a uniform random sign, which
// is Laplace(0, b). Sign bits are drawn 64 at a time.
func (s *Seeded) AddLaplace(x, b float64) float64 {
	if b == 0 {
		return x
	}
	if s.nbits == 0 {
		s.signs, s.nbits = s.r.Uint64(), 64
	}
	// The sign is applied by flipping the sign bit (branch-free: the sign is a fair coin, so
	// a branch would be mispredicted half the time); bit-identical to negating.
	e := math.Float64frombits(math.Float64bits(b*s.r.ExpFloat64()) ^ (s.signs&1)<<63)
	s.signs >>= 1
	s.nbits--
	return x + e
}

// AddLaplaceVec adds i.i.d. Laplace(0, b) noise to every entry of x, with the same
// distribution and stream consumption as calling AddLaplace on each entry in order.
func (s *Seeded) AddLaplaceVec(x []float64, b float64) {
	if b == 0 {
		return
	}
	r := s.r
	for i := range x {
		if s.nbits == 0 {
			s.signs, s.nbits = r.Uint64(), 64
		}
		x[i] += math.Float64frombits(math.Float64bits(b*r.ExpFloat64()) ^ (s.signs&1)<<63) // branch-free sign (AddLaplace)
		s.signs >>= 1
		s.nbits--
	}
}

// VecSource is implemented by sources that perturb a whole vector faster than entry by entry
// (the hot path of the tree counters and of the local randomiser).
type VecSource interface {
	// AddLaplaceVec adds i.i.d. Laplace(0, b) noise to every entry of x.
	AddLaplaceVec(x []float64, b float64)
}

// AddGaussian returns x + sigma·N(0,1) using the ziggurat normal sampler.
func (s *Seeded) AddGaussian(x, sigma float64) float64 {
	if sigma == 0 {
		return x
	}
	return x + sigma*s.r.NormFloat64()
}

// Secure reports false: Seeded is for simulations only.
func (s *Seeded) Secure() bool { return false }

// Kind names a noise distribution.
type Kind int

const (
	// None adds no noise (non-private runs and noise-off twins).
	None Kind = iota
	// Laplace noise, parametrised by its scale b.
	Laplace
	// Gaussian noise, parametrised by its standard deviation σ.
	Gaussian
)

// String returns the lower-case name of k.
func (k Kind) String() string { return enumName(k, "Kind", "none", "laplace", "gaussian") }

// enumName returns names[v] for 0 ≤ v < len(names) and "typ(v)" otherwise: the String method
// of an enumeration whose values are 0, 1, … in the order of names.
func enumName[T ~int](v T, typ string, names ...string) string {
	if v >= 0 && int(v) < len(names) {
		return names[v]
	}
	return fmt.Sprintf("%s(%d)", typ, int(v))
}

// Calibration is a noise distribution with its scale, fixed from public parameters before any
// data is seen: Laplace(b) has Scale b, Gaussian(σ) has Scale σ.
type Calibration struct {
	Kind  Kind    `json:"kind"`
	Scale float64 `json:"scale"`
}

// LaplaceNoise returns the calibration Laplace(b).
func LaplaceNoise(b float64) Calibration { return Calibration{Kind: Laplace, Scale: b} }

// GaussianNoise returns the calibration N(0, σ²).
func GaussianNoise(sigma float64) Calibration { return Calibration{Kind: Gaussian, Scale: sigma} }

// Validate reports an error if the calibration is unusable.
func (c Calibration) Validate() error {
	switch c.Kind {
	case None:
		return nil
	case Laplace, Gaussian:
		if !(c.Scale >= 0) || math.IsInf(c.Scale, 0) {
			return fmt.Errorf("noise: %s scale must be finite and >= 0, got %g", c.Kind, c.Scale)
		}
		return nil
	}
	return fmt.Errorf("noise: unknown kind %d", int(c.Kind))
}

// Variance returns the variance of one draw: 2b² for Laplace, σ² for Gaussian, 0 for None.
func (c Calibration) Variance() float64 {
	switch c.Kind {
	case Laplace:
		return 2 * c.Scale * c.Scale
	case Gaussian:
		return c.Scale * c.Scale
	}
	return 0
}

// Off reports whether the calibration adds no noise.
func (c Calibration) Off() bool { return c.Kind == None || c.Scale == 0 }

// Add returns x perturbed by one draw of c from src, with its scale multiplied by mult.
func (c Calibration) Add(x, mult float64, src Source) float64 {
	switch c.Kind {
	case Laplace:
		return src.AddLaplace(x, c.Scale*mult)
	case Gaussian:
		return src.AddGaussian(x, c.Scale*mult)
	}
	return x
}

// AddVec perturbs every entry of x in place with an independent draw of c.
func (c Calibration) AddVec(x []float64, src Source) {
	if c.Off() {
		return
	}
	switch c.Kind {
	case Laplace:
		if v, ok := src.(VecSource); ok {
			v.AddLaplaceVec(x, c.Scale)
			return
		}
		for i := range x {
			x[i] = src.AddLaplace(x[i], c.Scale)
		}
	case Gaussian:
		for i := range x {
			x[i] = src.AddGaussian(x[i], c.Scale)
		}
	}
}

// String formats the calibration as e.g. "laplace(b=3.2)".
func (c Calibration) String() string {
	switch c.Kind {
	case Laplace:
		return fmt.Sprintf("laplace(b=%g)", c.Scale)
	case Gaussian:
		return fmt.Sprintf("gaussian(sigma=%g)", c.Scale)
	}
	return "none"
}
