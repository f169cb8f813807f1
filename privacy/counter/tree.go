package counter

import (
	"fmt"
	"math/bits"

	"github.com/dprl/dprl/privacy/noise"
)

// Levels returns L(tMax) = ⌊log2 tMax⌋ + 1, the number of tree levels that can be released
// when at most tMax elements are inserted; it bounds the number of released nodes containing
// one element (privacy spec §3.1). Levels(0) = 0.
func Levels(tMax int) int {
	if tMax <= 0 {
		return 0
	}
	return bits.Len(uint(tMax))
}

// TreeConfig configures a binary-mechanism counter.
type TreeConfig struct {
	// Dim is the length of every element (≥ 1).
	Dim int
	// Capacity is the maximum number of insertions T_max (≥ 1). The number of levels, and
	// hence NodesPerElement, is Levels(Capacity).
	Capacity int
	// Node is the noise added to every coordinate of every tree node, drawn once when the node
	// is completed and reused by every prefix that contains it.
	Node noise.Calibration
	// CoordScale, if non-nil (length Dim), multiplies Node's scale per coordinate, e.g.
	// noise.SymScales for symmetric-matrix noise of kind SumSqrt2 or Avg.
	CoordScale []float64
}

// Tree is the binary mechanism (Chan, Shi & Song 2011, Algorithm 2): the prefix [1, t] is the
// disjoint union of the dyadic blocks selected by the 1-bits of t, and each block ("node") gets
// its noise once, when it is completed. Memory is O(Dim·L); each Insert costs amortized O(Dim)
// (the noisy prefix is maintained incrementally) plus Dim noise draws.
//
// Floating point (practical-privacy spec §7): every node is released as Source.Add*(exact node
// sum, scale), so with noise.Secure the node's exact sum is rounded to the grid of the node's
// noise and grid noise is added; the prefix is a sum of grid values, hence on the grid, and a
// post-processing of the node releases. The rounding raises a node's sensitivity from Δ to at
// most Δ + n·γ (ℓ1) or Δ + √n·γ (ℓ2), n the number of coordinates one element can change:
// the counter's ε (Laplace) grows by at most L·noise.RoundingSlackL1(b, n) and its μ = √L·Δ₂/σ
// (Gaussian) by at most √L·noise.RoundingSlackL2(σ, n) (multiplier-scaled coordinates have their
// own, proportionally scaled, grid). With noise.Seeded nothing is rounded.
type Tree struct {
	cfg      TreeConfig
	levels   int
	t        int
	alpha    [][]float64 // exact p-sums α_i
	alphaHat [][]float64 // noisy p-sums α̂_i
	prefix   []float64
	src      noise.Source
	created  int
}

// NewTree returns a binary-mechanism counter drawing its node noise from src. Noise levels are
// fixed here, before any data is seen.
func NewTree(cfg TreeConfig, src noise.Source) (*Tree, error) {
	if cfg.Dim < 1 {
		return nil, fmt.Errorf("counter: Dim must be >= 1, got %d", cfg.Dim)
	}
	if cfg.Capacity < 1 {
		return nil, fmt.Errorf("counter: Capacity must be >= 1, got %d", cfg.Capacity)
	}
	if err := cfg.Node.Validate(); err != nil {
		return nil, fmt.Errorf("counter: node noise: %w", err)
	}
	if cfg.CoordScale != nil && len(cfg.CoordScale) != cfg.Dim {
		return nil, fmt.Errorf("counter: CoordScale has length %d, want Dim = %d", len(cfg.CoordScale), cfg.Dim)
	}
	if !cfg.Node.Off() && src == nil {
		return nil, fmt.Errorf("counter: a noise source is required for %s noise", cfg.Node)
	}
	L := Levels(cfg.Capacity)
	c := &Tree{cfg: cfg, levels: L, src: src, prefix: make([]float64, cfg.Dim)}
	c.alpha = make([][]float64, L)
	c.alphaHat = make([][]float64, L)
	for i := range c.alpha {
		c.alpha[i] = make([]float64, cfg.Dim)
		c.alphaHat[i] = make([]float64, cfg.Dim)
	}
	return c, nil
}

// Dim implements Counter.
func (c *Tree) Dim() int { return c.cfg.Dim }

// Capacity implements Counter.
func (c *Tree) Capacity() int { return c.cfg.Capacity }

// Len implements Counter.
func (c *Tree) Len() int { return c.t }

// Levels returns L = Levels(Capacity).
func (c *Tree) Levels() int { return c.levels }

// NodesPerElement implements Counter: every element enters at most one released node per level.
func (c *Tree) NodesPerElement() int { return c.levels }

// NodesInPrefix implements Counter: popcount(t).
func (c *Tree) NodesInPrefix() int { return bits.OnesCount(uint(c.t)) }

// NodesCreated returns the number of noisy nodes created so far (instrumentation for tests).
func (c *Tree) NodesCreated() int { return c.created }

// mergeLevels starts level i = trailing zeros of t of a binary tree at insertion t with the
// element x: the levels j < i, exactly the 1-bits of t−1 below i, merge into α_i and their
// noisy nodes α̂_j leave the prefix p. It returns α_i and α̂_i (the node to noise and add to p).
func mergeLevels(alpha, alphaHat [][]float64, p, x []float64, t int) (a, ah []float64) {
	i := bits.TrailingZeros(uint(t))
	a, ah = alpha[i], alphaHat[i]
	copy(a, x)
	for j := 0; j < i; j++ {
		aj, ahj := alpha[j], alphaHat[j]
		for k := range a {
			a[k] += aj[k]
			p[k] -= ahj[k]
		}
	}
	return a, ah
}

// Prefix implements Counter.
func (c *Tree) Prefix() []float64 { return c.prefix }

// Insert implements Counter.
func (c *Tree) Insert(x []float64) error {
	if len(x) != c.cfg.Dim {
		return fmt.Errorf("counter: element has length %d, want %d", len(x), c.cfg.Dim)
	}
	if c.t >= c.cfg.Capacity {
		return fmt.Errorf("counter: capacity %d exhausted: the calibration does not cover more insertions", c.cfg.Capacity)
	}
	c.t++
	a, ah := mergeLevels(c.alpha, c.alphaHat, c.prefix, x, c.t)
	p := c.prefix
	node, scale := c.cfg.Node, c.cfg.CoordScale
	switch {
	case node.Off():
		copy(ah, a)
	case scale == nil && node.Kind == noise.Laplace:
		b := node.Scale
		if v, ok := c.src.(noise.VecSource); ok {
			copy(ah, a)
			v.AddLaplaceVec(ah, b)
			break
		}
		for k, v := range a {
			ah[k] = c.src.AddLaplace(v, b)
		}
	case scale == nil:
		for k, v := range a {
			ah[k] = node.Add(v, 1, c.src)
		}
	default:
		for k, v := range a {
			ah[k] = node.Add(v, scale[k], c.src)
		}
	}
	for k, v := range ah {
		p[k] += v
	}
	c.created++
	return nil
}

// Touches returns the number of released nodes that contain element s (1-based) of a stream
// of capacity tMax: one per level i with ⌈s/2^i⌉·2^i ≤ tMax.
func Touches(s, tMax int) int {
	n := 0
	for i := 0; i < 63; i++ {
		w := 1 << i
		end := (s + w - 1) / w * w
		if end > tMax {
			break
		}
		n++
	}
	return n
}
