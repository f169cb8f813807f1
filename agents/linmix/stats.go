package linmix

import (
	"errors"
	"fmt"
	"github.com/dprl/dprl/internal/smallmat"
	"math"

	"github.com/dprl/dprl/privacy/noise"
)

// regSpec fixes, from public parameters only, how one ridge regression (one statistic pair
// Σ X Xᵀ, Σ X y per step) is regularised, clipped and privatised.
type regSpec struct {
	name  string
	dim   int
	ridge float64 // λ (deterministic part of the regulariser)
	shift float64 // c_shift · 2Υ (or 2Σ): deterministic diagonal shift of the private modes
	floor float64 // eigenvalue floor of the PD fallback (spec P2)
	maxX  float64 // privacy guard: ‖X‖ ≤ maxX
	maxY  float64 // privacy guard: y ∈ [0, maxY]
	mat   noise.Calibration
	vec   noise.Calibration
	sym   noise.SymKind
}

// Leaves are one user's regression observations: for step h and regression r, the regressor
// X = x[h][r] and the target y[h][r]. They are built on the user's side from the user's own
// trajectory and the broadcast, and clipped by guard before they leave the user.
type Leaves struct {
	x [][][]float64
	y [][]float64
}

func newLeaves(H int, specs []regSpec) *Leaves {
	l := &Leaves{x: make([][][]float64, H), y: make([][]float64, H)}
	for h := range l.x {
		l.x[h] = make([][]float64, len(specs))
		l.y[h] = make([]float64, len(specs))
		for r, sp := range specs {
			l.x[h][r] = make([]float64, sp.dim)
		}
	}
	return l
}

// guard projects X onto the ball of radius maxX and clips y to [0, maxY] (spec P3(b)): if the
// assumptions hold it is a no-op, and it makes the sensitivity bounds — hence the privacy
// guarantee — unconditional, for every input a buggy or hostile client can send. Non-finite
// inputs are mapped to safe in-range values before any noise: a regressor with a NaN or ±Inf
// entry becomes X = 0 (the user contributes nothing), y = NaN becomes 0 and y = +Inf becomes
// maxY; a finite regressor whose squared norm overflows is rescaled through its largest entry.
func guard(x []float64, y float64, sp regSpec) float64 {
	n := math.Sqrt(dot(x, x))
	if math.IsNaN(n) || math.IsInf(n, 0) {
		m := 0.0
		for _, v := range x {
			m = max(m, math.Abs(v))
		}
		if math.IsNaN(m) || math.IsInf(m, 0) {
			clear(x)
			n = 0
		} else { // finite entries, overflowing squares: ‖x‖ = m·‖x/m‖
			s := 0.0
			for _, v := range x {
				s += (v / m) * (v / m)
			}
			n = m * math.Sqrt(s)
		}
	}
	if n > sp.maxX {
		f := sp.maxX / n
		for i := range x {
			x[i] *= f
		}
	}
	if !(y >= 0) {
		y = 0
	}
	return min(y, sp.maxY)
}

func dot(a, b []float64) float64 {
	s := 0.0
	for i, v := range a {
		s += v * b[i]
	}
	return s
}

// Billboard is the released (ε,δ)-DP object broadcast to user k (Luyo Alg. 1 "SERVER → USER";
// Zhou's privatised statistics): for every step h and regression r the Cholesky factor of
// the released Gram matrix Λ̃_{k,h} and the released estimate w̃_{k,h} = Λ̃⁻¹ũ. Planners read
// nothing else. Its fields are unexported: it can only be produced by a curator or an LDP
// server, from privatised statistics.
type Billboard struct {
	k    int // the billboard is used in episode k; it contains episodes 1..k−1
	nreg int
	dims []int
	chol [][]float64 // [h*nreg+r] lower factor L, Λ̃ = L·Lᵀ
	w    [][]float64 // [h*nreg+r]
}

func newBillboard(H int, specs []regSpec) *Billboard {
	b := &Billboard{k: 1, nreg: len(specs)}
	for _, sp := range specs {
		b.dims = append(b.dims, sp.dim)
	}
	for h := 0; h < H; h++ {
		for _, sp := range specs {
			d := sp.dim
			l := make([]float64, d*d)
			lam := sp.ridge + sp.shift
			if !(lam > 0) {
				lam = sp.floor
			}
			for i := 0; i < d; i++ {
				l[i*d+i] = math.Sqrt(lam)
			}
			b.chol = append(b.chol, l)
			b.w = append(b.w, make([]float64, d))
		}
	}
	return b
}

// Episode returns k, the episode this billboard is broadcast for (it summarises 1..k−1).
func (b *Billboard) Episode() int { return b.k }

// Clone returns a deep copy (for recording and replaying releases).
func (b *Billboard) Clone() *Billboard {
	c := &Billboard{k: b.k, nreg: b.nreg, dims: b.dims}
	for i := range b.chol {
		c.chol = append(c.chol, append([]float64(nil), b.chol[i]...))
		c.w = append(c.w, append([]float64(nil), b.w[i]...))
	}
	return c
}

// Values returns the released numbers as one vector (w̃ then the factor, per (h, r)).
func (b *Billboard) Values() []float64 { return interleave(b.w, b.chol) }

// interleave returns a[0], b[0], a[1], b[1], … concatenated into one vector.
func interleave(a, b [][]float64) []float64 {
	var out []float64
	for i := range a {
		out = append(out, a[i]...)
		out = append(out, b[i]...)
	}
	return out
}

func (b *Billboard) factor(h, r int) ([]float64, []float64) {
	i := h*b.nreg + r
	return b.chol[i], b.w[i]
}

// releaser turns released Gram matrices and target vectors into billboard entries: the ridge
// (λ + shift)·I added, PD repair (post-processing, spec P2), Cholesky, and w̃ by two
// triangular solves.
type releaser struct {
	tmp       []float64
	fallbacks int
}

// release writes the billboard entry of step h, regression r from the released Gram matrix
// lam (d×d, to which it adds the ridge in place) and target vector u.
func (rl *releaser) release(b *Billboard, h, r int, lam, u []float64, sp regSpec) {
	d := sp.dim
	for a := 0; a < d; a++ {
		lam[a*d+a] += sp.ridge + sp.shift
	}
	L, w := b.factor(h, r)
	if !smallmat.Cholesky(lam, d, L) {
		rl.fallbacks++
		clampEigen(lam, d, sp.floor)
		if !smallmat.Cholesky(lam, d, L) {
			// Numerically degenerate even after clamping: release floor·I.
			clear(L)
			for i := 0; i < d; i++ {
				L[i*d+i] = math.Sqrt(sp.floor)
			}
		}
	}
	if cap(rl.tmp) < d {
		rl.tmp = make([]float64, d)
	}
	smallmat.Forward(L, d, u, rl.tmp[:d])
	smallmat.Backward(L, d, rl.tmp[:d], w)
}

// central is the trusted JDP curator (Luyo Alg. 1 server in JDP mode; Zhou's PRIVATIZER): it
// keeps the exact sums G = Σ X Xᵀ, U = Σ X y per (h, r) and one noise-only tree per statistic
// (2 per regression per step: the "four binary counters per step" of Zhou when there are two
// regressions), and its only output is the Billboard. In non-private mode the trees are off.
type central struct {
	specs []regSpec
	H     int
	g, u  [][]float64 // exact sums [h*nreg+r], full d×d / d
	mt    []*noiseTree
	vt    []*noiseTree
	bb    *Billboard
	rl    releaser
	lam   [][]float64
	uu    [][]float64 // released Σ X y statistic (what the billboard's w̃ is computed from)
	stat  [][]float64 // released Σ X Xᵀ statistic, packed, before λ and the shift are added
	leafM []float64   // scratch: packed X Xᵀ of the current leaf (Secure form)
	leafV []float64   // scratch: X y of the current leaf (Secure form)
	k     int
	// broken variants (audit only)
	raw       bool    // planner reads raw statistics: release without tree noise
	dataScale bool    // noise level computed from the data
	lastNorm  float64 // |X_1|/maxX of the latest leaf (used by dataScale)
}

func newCentral(H, K int, specs []regSpec, src func(name string, h, r int) noise.Source) (*central, error) {
	c := &central{specs: specs, H: H, bb: newBillboard(H, specs)}
	for h := 0; h < H; h++ {
		for r, sp := range specs {
			d := sp.dim
			c.g = append(c.g, make([]float64, d*d))
			c.u = append(c.u, make([]float64, d))
			c.lam = append(c.lam, make([]float64, d*d))
			c.uu = append(c.uu, make([]float64, d))
			c.stat = append(c.stat, make([]float64, noise.PackedLen(d)))
			var scales []float64
			if sp.sym != noise.Mirror {
				scales = noise.SymScales(d, sp.sym)
			}
			mt, err := newNoiseTree(noise.PackedLen(d), K, sp.mat, scales, src("mat", h, r))
			if err != nil {
				return nil, err
			}
			vt, err := newNoiseTree(d, K, sp.vec, nil, src("vec", h, r))
			if err != nil {
				return nil, err
			}
			c.mt, c.vt = append(c.mt, mt), append(c.vt, vt)
		}
	}
	c.leafM = make([]float64, noise.PackedLen(maxDim(specs)))
	c.leafV = make([]float64, maxDim(specs))
	return c, nil
}

func maxDim(specs []regSpec) int {
	d := 0
	for _, sp := range specs {
		d = max(d, sp.dim)
	}
	return d
}

// observe appends user k's leaves (already guarded by the user; guarded again here, which is
// the privacy boundary) and releases the billboard for episode k+1, which contains episodes
// 1..k and the tree noise of the prefix of length k (Luyo Alg. 1's index convention, spec §3.1
// and P1). With a Secure source the released statistic is the trees' grid prefix (see
// noiseTree); with a Seeded one it is the exact sums plus the trees' noise.
func (c *central) observe(lv *Leaves) error {
	c.k++
	nreg := len(c.specs)
	for h := 0; h < c.H; h++ {
		for r, sp := range c.specs {
			i := h*nreg + r
			d := sp.dim
			x := lv.x[h][r]
			y := guard(x, lv.y[h][r], sp)
			g, u := c.g[i], c.u[i]
			for a := 0; a < d; a++ {
				xa := x[a]
				if xa == 0 {
					continue
				}
				row := g[a*d : (a+1)*d]
				for b, xb := range x {
					row[b] += xa * xb
				}
				u[a] += xa * y
			}
			c.lastNorm = math.Abs(x[0]) / sp.maxX
			var lm, lvec []float64
			if c.mt[i].onGrid() || c.vt[i].onGrid() {
				lm, lvec = c.leafM[:noise.PackedLen(d)], c.leafV[:d]
				idx := 0
				for a := 0; a < d; a++ {
					for b := a; b < d; b++ {
						lm[idx] = x[a] * x[b]
						idx++
					}
					lvec[a] = x[a] * y
				}
			}
			if err := c.mt[i].append(lm); err != nil {
				return err
			}
			if err := c.vt[i].append(lvec); err != nil {
				return err
			}
			lam, uu := c.lam[i], c.uu[i]
			copy(lam, g)
			copy(uu, u)
			if !c.raw {
				f := 1.0
				if c.dataScale {
					f = c.lastNorm
				}
				if rel := c.mt[i].released(); rel != nil {
					clear(lam)
					addPacked(lam, d, rel, 1)
				} else {
					addPacked(lam, d, c.mt[i].sum, f)
				}
				if rel := c.vt[i].released(); rel != nil {
					copy(uu, rel)
				} else {
					for a := range uu {
						uu[a] += f * c.vt[i].sum[a]
					}
				}
			}
			packUpper(c.stat[i], lam, d)
			c.rl.release(c.bb, h, r, lam, uu, sp)
		}
	}
	c.bb.k = c.k + 1
	return nil
}

// packUpper writes the upper triangle of the symmetric d×d matrix a into p (noise.PackedIndex
// order).
func packUpper(p, a []float64, d int) {
	idx := 0
	for i := 0; i < d; i++ {
		for j := i; j < d; j++ {
			p[idx] = a[i*d+j]
			idx++
		}
	}
}

// addPacked adds f times the packed upper triangle p (row-major, noise.PackedIndex order) to
// the symmetric matrix a, mirrored.
func addPacked(a []float64, d int, p []float64, f float64) {
	idx := 0
	for i := 0; i < d; i++ {
		for j := i; j < d; j++ {
			v := f * p[idx]
			idx++
			a[i*d+j] += v
			if j != i {
				a[j*d+i] += v
			}
		}
	}
}

// Report is one user's privatised message in LDP mode (Luyo Alg. 1 msg_h; Zhou Rem. 6.9's local
// PRIVATIZER): for every (h, r) the packed upper triangle of X Xᵀ + B¹ and the vector X y + g¹.
// Its fields are unexported, so the only way to obtain one is Randomizer.Privatize on the
// user's side; the LDP server accepts nothing else.
type Report struct {
	mat [][]float64
	vec [][]float64
}

// Values returns the report's numbers as one vector (what the server observes).
func (r *Report) Values() []float64 { return interleave(r.mat, r.vec) }

// Randomizer is the user-side local privatiser: it adds fresh noise, calibrated from public
// parameters only, to each of the user's statistics before they leave the user.
type Randomizer struct {
	specs []regSpec
	src   noise.Source
	// broken variants (audit only)
	div       float64 // divide every noise scale by div (> 1 breaks privacy)
	dataScale bool    // noise scale proportional to the user's own |X_1|
}

// Privatize returns the report of leaves lv. It never modifies the calibration.
func (z *Randomizer) Privatize(lv *Leaves) *Report {
	rep := &Report{}
	for h := range lv.x {
		for r, sp := range z.specs {
			d := sp.dim
			x := lv.x[h][r]
			y := guard(x, lv.y[h][r], sp)
			f := 1.0
			if z.div > 0 {
				f = 1 / z.div
			}
			if z.dataScale {
				f = math.Abs(x[0]) / sp.maxX
			}
			m := make([]float64, noise.PackedLen(d))
			idx := 0
			for a := 0; a < d; a++ {
				for b := a; b < d; b++ {
					m[idx] = sp.mat.Add(x[a]*x[b], f, z.src)
					idx++
				}
			}
			v := make([]float64, d)
			for a := range v {
				v[a] = sp.vec.Add(x[a]*y, f, z.src)
			}
			rep.mat = append(rep.mat, m)
			rep.vec = append(rep.vec, v)
		}
	}
	return rep
}

// LocalServer is the LDP server (Luyo Alg. 1 in LDP mode): it sums privatised reports and
// releases Λ̃ = λI + Σ (X Xᵀ + B¹) + 2Υ·I and ũ = Σ (X y + g¹). It never sees states, actions,
// features, regressors or targets.
type LocalServer struct {
	specs []regSpec
	H     int
	m, n  [][]float64
	bb    *Billboard
	rl    releaser
	lam   []float64
	k     int
}

func newLocalServer(H int, specs []regSpec) *LocalServer {
	s := &LocalServer{specs: specs, H: H, bb: newBillboard(H, specs)}
	for h := 0; h < H; h++ {
		for _, sp := range specs {
			s.m = append(s.m, make([]float64, noise.PackedLen(sp.dim)))
			s.n = append(s.n, make([]float64, sp.dim))
		}
	}
	return s
}

// Receive adds one user's report and releases the billboard for the next episode.
func (s *LocalServer) Receive(rep *Report) error {
	if rep == nil || len(rep.mat) != len(s.m) {
		return errors.New("linmix: malformed report")
	}
	for i := range s.m {
		if len(rep.mat[i]) != len(s.m[i]) || len(rep.vec[i]) != len(s.n[i]) {
			return fmt.Errorf("linmix: report entry %d has the wrong shape", i)
		}
		for j, v := range rep.mat[i] {
			s.m[i][j] += v
		}
		for j, v := range rep.vec[i] {
			s.n[i][j] += v
		}
	}
	s.k++
	nreg := len(s.specs)
	for h := 0; h < s.H; h++ {
		for r, sp := range s.specs {
			i := h*nreg + r
			d := sp.dim
			if cap(s.lam) < d*d {
				s.lam = make([]float64, d*d)
			}
			lam := s.lam[:d*d]
			clear(lam)
			addPacked(lam, d, s.m[i], 1)
			s.rl.release(s.bb, h, r, lam, s.n[i], sp)
		}
	}
	s.bb.k = s.k + 1
	return nil
}
