package lq

import (
	"fmt"
	"math"
	"math/bits"

	"github.com/dprl/dprl/privacy/counter"
	"github.com/dprl/dprl/privacy/noise"
)

// Curator holds the two binary-tree counters of Algorithm 1 (lq spec §3.1) — or, for the
// non-private baseline, the exact sums G_k, Y_k — and is the only holder of users' raw data.
// Its only output is the Billboard.
type Curator struct {
	pub    Public
	consts Constants
	broken broken
	p, n   int

	b1, b2     counter.Counter // private: B_1 over the packed upper triangle, B_2 over p×n
	src1, src2 noise.Source
	g, y       []float64 // exact sums (non-private, or the raw statistics of brokenRawPlanner)
	e1, e2     []float64 // current element (full p×p and p×n)
	packed     []float64
	z, xn      []float64 // per-pair buffers
	inserted   int
	released   int

	// ScaledPairs counts the (z, x') pairs rescaled by the sensitivity enforcement (§3.6).
	ScaledPairs int
}

// NewCurator returns the curator for the given constants. src1 and src2 are the noise
// sources of B_1 and B_2; if nil, a crypto-seeded noise.Secure source is used (ignored for
// the non-private baseline). Noise levels are fixed here, before any data is seen. The
// curator's Constants are consts with the ledger report of its actual sources (a Secure
// source's grid rounding included).
func NewCurator(pub Public, cfg Config, consts Constants, src1, src2 noise.Source) (*Curator, error) {
	p, n := pub.N+pub.D, pub.N
	c := &Curator{pub: pub, consts: consts, broken: cfg.broken, p: p, n: n,
		g: make([]float64, p*p), y: make([]float64, p*n), e1: make([]float64, p*p), e2: make([]float64, p*n),
		packed: make([]float64, noise.PackedLen(p)), z: make([]float64, p), xn: make([]float64, n)}
	if !consts.Private {
		return c, nil
	}
	var err error
	if src1 == nil {
		if src1, err = noise.NewSecure(); err != nil {
			return nil, err
		}
	}
	if src2 == nil {
		if src2, err = noise.NewSecure(); err != nil {
			return nil, err
		}
	}
	c.src1, c.src2 = src1, src2
	if c.consts, err = consts.withSources(pub, cfg, src1, src2); err != nil {
		return nil, err
	}
	if c.broken == brokenDataSigma {
		return c, nil // counters created at the first insertion (the broken part)
	}
	return c, c.makeCounters(1)
}

// Constants returns the curator's constants: those it was given, with the privacy ledger's
// report (Ledger, Epsilon, Guarantee) for its actual noise sources.
func (c *Curator) Constants() Constants { return c.consts }

func (c *Curator) makeCounters(scale float64) error {
	capacity := c.consts.capacity
	s1, s2 := c.consts.Sigma1*scale, c.consts.Sigma2*scale
	if c.broken == brokenNoiseDiv4 {
		s1, s2 = s1/4, s2/4
	}
	if c.broken == brokenRedraw {
		c.b1 = &redrawCounter{dim: noise.PackedLen(c.p), capacity: capacity, sigma: s1, src: c.src1}
		c.b2 = &redrawCounter{dim: c.p * c.n, capacity: capacity, sigma: s2, src: c.src2}
		return nil
	}
	// Symmetric node noise of B_1: one N(0, σ_1²) draw per packed upper-triangle entry, mirrored
	// (noise.Mirror: every multiplier is 1, so no CoordScale is needed; lq spec §3.1, pitfall 7).
	t1, err := counter.NewTree(counter.TreeConfig{Dim: noise.PackedLen(c.p), Capacity: capacity, Node: noise.GaussianNoise(s1)}, c.src1)
	if err != nil {
		return err
	}
	t2, err := counter.NewTree(counter.TreeConfig{Dim: c.p * c.n, Capacity: capacity, Node: noise.GaussianNoise(s2)}, c.src2)
	if err != nil {
		return err
	}
	if t1.NodesPerElement() != c.consts.M {
		return fmt.Errorf("lq: internal: tree has %d levels, constants assume m = %d", t1.NodesPerElement(), c.consts.M)
	}
	c.b1, c.b2 = t1, t2
	return nil
}

// Release returns the billboard for episode k = (number of users received) + 1.
func (c *Curator) Release() *Billboard {
	p, n := c.p, c.n
	b := &Billboard{T1: make([]float64, p*p), T2: make([]float64, p*n)}
	c.releaseInto(b)
	return b
}

// releaseInto writes the current release into b (whose slices must have the right lengths).
func (c *Curator) releaseInto(b *Billboard) {
	p := c.p
	b.Episode = c.inserted + 1
	c.released++
	if !c.consts.Private || c.broken == brokenRawPlanner {
		copy(b.T1, c.g)
		copy(b.T2, c.y)
		return
	}
	if c.b1 == nil { // brokenDataSigma before the first insertion
		clear(b.T1)
		clear(b.T2)
		return
	}
	pk := c.b1.Prefix()
	for i := 0; i < p; i++ {
		for j := i; j < p; j++ {
			v := pk[noise.PackedIndex(p, i, j)]
			b.T1[i*p+j], b.T1[j*p+i] = v, v
		}
	}
	copy(b.T2, c.b2.Prefix())
}

// Receive takes user k's raw trajectory, applies the deterministic sensitivity enforcement
// ("pair scaling", lq spec §3.6) to every pair (z_h, x_{h+1}), and inserts the episode's
// elements e1 = Σ_h z̄ z̄ᵀ into B_1 and e2 = Σ_h z̄ x̄ᵀ into B_2. With pair scaling every
// possible user response satisfies ‖z̄ z̄ᵀ‖_F ≤ (1+γ)² and ‖z̄ x̄ᵀ‖_F ≤ 1+γ, so Δ_1, Δ_2 hold
// unconditionally.
func (c *Curator) Receive(tr *Trajectory) error {
	p, n, H := c.p, c.n, c.pub.H
	if c.consts.Private && c.inserted >= c.consts.maxElems {
		// Pitfall 6 of the spec: the calibration covers K−1 elements; the K-th is never inserted.
		return fmt.Errorf("lq: curator holds %d elements already: nothing is released after episode K, so the K-th user's data must not be inserted", c.inserted)
	}
	if len(tr.X) != H+1 || len(tr.U) != H {
		return fmt.Errorf("lq: trajectory has %d states and %d controls, want %d and %d", len(tr.X), len(tr.U), H+1, H)
	}
	clear(c.e1)
	clear(c.e2)
	z, xn := c.z, c.xn
	for h := 0; h < H; h++ {
		if len(tr.X[h]) != n || len(tr.X[h+1]) != n || len(tr.U[h]) != c.pub.D {
			return fmt.Errorf("lq: trajectory step %d has wrong dimensions", h+1)
		}
		copy(z, tr.X[h])
		copy(z[n:], tr.U[h])
		copy(xn, tr.X[h+1])
		nz, nx := norm(z), norm(xn)
		if math.IsNaN(nz) || math.IsInf(nz, 0) || math.IsNaN(nx) || math.IsInf(nx, 0) {
			return fmt.Errorf("lq: trajectory step %d is not finite", h+1)
		}
		s := 1.0
		if nz > 0 {
			s = math.Min(s, (1+c.pub.Gamma)/nz)
		}
		if nx > 0 {
			s = math.Min(s, 1/nx)
		}
		if s < 1 {
			c.ScaledPairs++
			scaleAll(s, z, xn)
		}
		for i := 0; i < p; i++ {
			for j := 0; j < p; j++ {
				c.e1[i*p+j] += z[i] * z[j]
			}
			for j := 0; j < n; j++ {
				c.e2[i*n+j] += z[i] * xn[j]
			}
		}
	}
	for i := range c.g {
		c.g[i] += c.e1[i]
	}
	for i := range c.y {
		c.y[i] += c.e2[i]
	}
	c.inserted++
	if !c.consts.Private {
		return nil
	}
	if c.b1 == nil { // brokenDataSigma: the noise level is computed from the data (wrong)
		if err := c.makeCounters(math.Max(1e-3, frob(c.e1)/c.consts.Delta1)); err != nil {
			return err
		}
	}
	for i := 0; i < p; i++ {
		for j := i; j < p; j++ {
			c.packed[noise.PackedIndex(p, i, j)] = c.e1[i*p+j]
		}
	}
	if err := c.b1.Insert(c.packed); err != nil {
		return err
	}
	return c.b2.Insert(c.e2)
}

func norm(x []float64) float64 { return frob(x) }

// scaleAll multiplies every entry of every vector by s (the pair scaling of a user's step).
func scaleAll(s float64, vs ...[]float64) {
	for _, v := range vs {
		for i := range v {
			v[i] *= s
		}
	}
}

func frob(x []float64) float64 {
	s := 0.0
	for _, v := range x {
		s += v * v
	}
	return math.Sqrt(s)
}

// redrawCounter is the broken "tree noise redrawn per release" variant: exact prefix sums
// plus fresh noise of the tree's total variance at every Prefix call.
type redrawCounter struct {
	dim, capacity, t int
	sigma            float64
	src              noise.Source
	sum, out         []float64
}

// The methods of redrawCounter implement counter.Counter.

// Dim implements counter.Counter.
func (r *redrawCounter) Dim() int { return r.dim }

// Capacity implements counter.Counter.
func (r *redrawCounter) Capacity() int { return r.capacity }

// Len implements counter.Counter.
func (r *redrawCounter) Len() int { return r.t }

// NodesInPrefix implements counter.Counter.
func (r *redrawCounter) NodesInPrefix() int { return bits.OnesCount(uint(r.t)) }

// NodesPerElement implements counter.Counter.
func (r *redrawCounter) NodesPerElement() int { return counter.Levels(r.capacity) }

// Insert implements counter.Counter.
func (r *redrawCounter) Insert(x []float64) error {
	if r.sum == nil {
		r.sum, r.out = make([]float64, r.dim), make([]float64, r.dim)
	}
	r.t++
	for i, v := range x {
		r.sum[i] += v
	}
	return nil
}

// Prefix implements counter.Counter.
func (r *redrawCounter) Prefix() []float64 {
	if r.sum == nil {
		r.sum, r.out = make([]float64, r.dim), make([]float64, r.dim)
	}
	s := r.sigma * math.Sqrt(float64(r.NodesInPrefix()))
	for i, v := range r.sum {
		r.out[i] = r.src.AddGaussian(v, s)
	}
	return r.out
}
