package counter

import (
	"math"
	"math/bits"

	"github.com/dprl/dprl/privacy/noise"
)

// GaussianTree is the binary mechanism with Gaussian node noise (Dwork, Naor, Pitassi &
// Rothblum 2010; Chan, Shi & Song 2011, Alg. 2; practical-privacy spec §3): the prefix [1, t]
// is the disjoint union of the dyadic blocks ("nodes") selected by the 1-bits of t, every node
// gets one i.i.d. N(0, σ²) draw per coordinate when it is completed, and that noisy value is
// reused by every prefix containing the node.
//
// As a GaussianCounter its encoder C is the node-membership matrix: every element enters at
// most L = Levels(Capacity) nodes (exactly L for the first element), so SensitivityFactor = √L,
// and the prefix after t insertions carries popcount(t) draws: StdAt(t) = σ·√popcount(t).
// Memory O(L·Dim); each Insert costs amortized O(Dim) plus Dim draws.
//
// With a Secure source, elements are rounded to the grid γ·Z (see SecureSensitivity), node
// sums of rounded elements and the discrete-Gaussian node noise are exact grid values, and
// every prefix is an exact sum of them.
type GaussianTree struct {
	gaussBase
	levels   int
	alpha    [][]float64 // exact node sums α_i of the most recent node at level i
	alphaHat [][]float64 // noisy node values α̂_i
	z        []float64
	created  int
}

// NewGaussianTree returns a Gaussian binary-mechanism counter drawing its node noise from
// src (src may be nil when cfg.Sigma = 0).
func NewGaussianTree(cfg GaussianConfig, src noise.Source) (*GaussianTree, error) {
	c := &GaussianTree{}
	if err := c.init(cfg, src, c); err != nil {
		return nil, err
	}
	c.levels = Levels(cfg.Capacity)
	c.alpha = make([][]float64, c.levels)
	c.alphaHat = make([][]float64, c.levels)
	for i := range c.alpha {
		c.alpha[i] = make([]float64, cfg.Dim)
		c.alphaHat[i] = make([]float64, cfg.Dim)
	}
	c.z = make([]float64, cfg.Dim)
	return c, nil
}

// Levels returns L = Levels(Capacity).
func (c *GaussianTree) Levels() int { return c.levels }

// NodesPerElement implements Counter: L.
func (c *GaussianTree) NodesPerElement() int { return c.levels }

// NodesInPrefix implements Counter: popcount(t).
func (c *GaussianTree) NodesInPrefix() int { return bits.OnesCount(uint(c.t)) }

// NodesCreated returns the number of noisy nodes created so far (one per Insert).
func (c *GaussianTree) NodesCreated() int { return c.created }

// SensitivityFactor implements GaussianCounter: √L.
func (c *GaussianTree) SensitivityFactor() float64 { return math.Sqrt(float64(c.levels)) }

// variance gives StdAt = σ·√popcount(t).
func (c *GaussianTree) variance(t int) float64 { return float64(bits.OnesCount(uint(t))) }

// step inserts element t.
func (c *GaussianTree) step(xr []float64) {
	a, ah := mergeLevels(c.alpha, c.alphaHat, c.prefix, xr, c.t)
	p := c.prefix
	c.draw(c.z)
	for k, v := range a {
		ah[k] = v + c.z[k]
		p[k] += ah[k]
	}
	c.created++
}
