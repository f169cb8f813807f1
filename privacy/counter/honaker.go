package counter

import (
	"math"
	"math/bits"

	"github.com/dprl/dprl/privacy/noise"
)

// HonakerTree is the Gaussian binary tree (GaussianTree: the same nodes, the same node noise
// drawn once per node) released through Honaker's online bottom-up estimator (Honaker, TPDP
// 2015, §3; practical-privacy spec §3). Every node v gets an estimate ê(v) that is the
// inverse-variance combination of its own noisy value α̂(v) and the sum of its two children's
// estimates:
//
//	ê(leaf) = α̂(leaf),   v_0 = 1,
//	ê(v)    = w_h·α̂(v) + (1 − w_h)·(ê(left) + ê(right)),   w_h = v_h,
//	v_h     = 1 / (1 + 1/(2·v_{h−1}))   (Var ê(v) = σ²·v_h for v at level h),
//
// and the prefix after t insertions is the sum of the estimates of the nodes selected by the
// 1-bits of t. A node's estimate uses only its own subtree, which is complete when the node is,
// so the estimator is online; estimates of disjoint subtrees are independent, so the prefix
// noise has the exact, data-independent variance σ²·Σ_{h ∈ bits(t)} v_h (v_h ↓ 1/2: about
// half the tree's σ²·popcount(t) at high levels).
//
// Privacy: the releases are a post-processing of the noisy node values, i.e. of C x + z with C
// the node-membership matrix, so SensitivityFactor = √L exactly as for GaussianTree (the
// estimator changes the decoder B, never C). Memory O(L·Dim); each Insert costs amortized
// O(Dim) plus Dim draws. With a Secure source the noisy node values are exact grid values (see
// GaussianTree) and the estimates are a floating-point post-processing of them.
type HonakerTree struct {
	gaussBase
	levels int
	v      []float64   // v_h: variance of a level-h estimate in units of σ²
	alpha  [][]float64 // exact node sums of the most recent node at each level
	est    [][]float64 // estimates ê of the most recent node at each level
	na, ne []float64   // scratch: the new node at the current level
	pa, pe []float64   // scratch: the new node at the level below
	z      []float64
}

// NewHonakerTree returns a Gaussian tree counter with Honaker's online estimator, drawing its
// node noise from src (src may be nil when cfg.Sigma = 0).
func NewHonakerTree(cfg GaussianConfig, src noise.Source) (*HonakerTree, error) {
	c := &HonakerTree{}
	if err := c.init(cfg, src, c); err != nil {
		return nil, err
	}
	L := Levels(cfg.Capacity)
	c.levels = L
	c.v = honakerVariances(L)
	c.alpha = make([][]float64, L)
	c.est = make([][]float64, L)
	for i := range c.alpha {
		c.alpha[i] = make([]float64, cfg.Dim)
		c.est[i] = make([]float64, cfg.Dim)
	}
	for _, p := range []*[]float64{&c.na, &c.ne, &c.pa, &c.pe, &c.z} {
		*p = make([]float64, cfg.Dim)
	}
	return c, nil
}

// honakerVariances returns v_h, h < L: v_0 = 1, v_h = 1/(1 + 1/(2 v_{h−1})).
func honakerVariances(L int) []float64 {
	v := make([]float64, L)
	for h := range v {
		if h == 0 {
			v[h] = 1
			continue
		}
		v[h] = 1 / (1 + 1/(2*v[h-1]))
	}
	return v
}

// Levels returns L = Levels(Capacity).
func (c *HonakerTree) Levels() int { return c.levels }

// NodesPerElement implements Counter: L (the estimator is post-processing of the same nodes).
func (c *HonakerTree) NodesPerElement() int { return c.levels }

// NodesInPrefix implements Counter: the number of noisy nodes with a non-zero weight in the
// prefix, Σ_{h ∈ bits(t)} (2^{h+1} − 1) (whole subtrees of the selected nodes).
func (c *HonakerTree) NodesInPrefix() int {
	n := 0
	for t := uint(c.t); t != 0; t &= t - 1 {
		n += 1<<(bits.TrailingZeros(t)+1) - 1
	}
	return n
}

// SensitivityFactor implements GaussianCounter: √L.
func (c *HonakerTree) SensitivityFactor() float64 { return math.Sqrt(float64(c.levels)) }

// variance gives StdAt = σ·√(Σ_{h ∈ bits(t)} v_h).
func (c *HonakerTree) variance(t int) float64 {
	s := 0.0
	for u := uint(t); u != 0; u &= u - 1 {
		s += c.v[bits.TrailingZeros(u)]
	}
	return s
}

// step inserts element t.
func (c *HonakerTree) step(xr []float64) {
	i := bits.TrailingZeros(uint(c.t))
	p := c.prefix
	// The nodes of levels j < i (the low 1-bits of t−1) leave the prefix; they become the
	// left children of the new nodes.
	for j := 0; j < i; j++ {
		for k, e := range c.est[j] {
			p[k] -= e
		}
	}
	// Level 0: the new leaf.
	copy(c.pa, xr)
	c.draw(c.z)
	for k, a := range c.pa {
		c.pe[k] = a + c.z[k]
	}
	// Levels 1..i: the new node ending at t has children (old level h−1 node, new level h−1
	// node).
	for h := 1; h <= i; h++ {
		w := c.v[h]
		wk := 1 - w
		c.draw(c.z)
		la, le := c.alpha[h-1], c.est[h-1]
		for k := range c.na {
			a := la[k] + c.pa[k]
			c.na[k] = a
			c.ne[k] = w*(a+c.z[k]) + wk*(le[k]+c.pe[k])
		}
		// The level h−1 node ending at t is complete: store it.
		copy(la, c.pa)
		copy(le, c.pe)
		c.na, c.pa = c.pa, c.na
		c.ne, c.pe = c.pe, c.ne
	}
	copy(c.alpha[i], c.pa)
	copy(c.est[i], c.pe)
	for k, e := range c.est[i] {
		p[k] += e
	}
}
