// Package linmix implements finite-state linear mixture MDPs (linear-mixture spec §1.2–1.4):
// transition kernels P_h(s'|s,a) = ⟨ψ(s'|s,a), w_h⟩ with a known feature ψ and an unknown
// parameter w_h, known mean rewards r_h(s,a) (Luyo et al.'s form) and, for Zhou's form, known
// reward features ϕ(s,a) with r_h(s,a) = ⟨ϕ(s,a), θ_{h,r}⟩.
//
// Both papers' transition features are one object here: ψ is stored once, sparsely (zero rows
// dropped), and normalised as in Luyo et al. Asm. 2 (‖ψ_v(s,a)‖ ≤ 1 for every v ∈ [0,1]^S),
// which implies Zhou's weaker normalisation ‖ψ_V‖ ≤ √d·H. Value-targeted features
// ψ_V(s,a) = Σ_{s'} ψ(s'|s,a) V(s') cost O(n_ψ(s,a)·d) per pair (PsiV).
//
// The package also provides exact V*, exact policy evaluation (deterministic and stochastic
// policies) and therefore exact per-episode regret. It knows nothing of privacy.
package linmix

import (
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"

	"github.com/dprl/dprl/internal/smallmat"
)

// MDP is a finite-horizon linear mixture MDP with a fixed initial state. It is immutable after
// construction and safe for concurrent use.
type MDP struct {
	name       string
	s, a, h, d int
	d2         int
	start      int
	// sparse ψ: entries off[sa]..off[sa+1]-1 of next (next state) and vec (d values each).
	off  []int
	next []int
	vec  []float64
	w    [][]float64 // [h] true w_h
	prob [][]float64 // [h][entry] true P_h(next[e]|s,a) = ⟨ψ_e, w_h⟩
	r    [][]float64 // [h][sa] mean reward (known to Luyo's agents)
	phi  []float64   // [sa*d2+j] reward features ϕ(s,a)
	thr  [][]float64 // [h] θ_{h,r}
	bern bool        // observed rewards are Bernoulli(mean) instead of the mean
	cw   float64
	vs   [][]float64 // [h][s] V*_h, h = 0..H (V*_H ≡ 0)
}

// Spec is the complete description of a linear mixture MDP, from which New builds and
// validates an MDP. Indices are 0-based; step h runs over 0..H-1.
type Spec struct {
	// Name labels the environment in outputs.
	Name string
	// States, Actions, Horizon, Dim are S, A, H and d (transition feature dimension).
	States, Actions, Horizon, Dim int
	// Start is the fixed initial state s_1.
	Start int
	// Psi lists the non-zero rows ψ(next|s,a).
	Psi []PsiEntry
	// W holds w_h for every step (length H, each of length Dim).
	W [][]float64
	// RewardDim is d2, the reward-feature dimension.
	RewardDim int
	// Phi holds ϕ(s,a) at index s*Actions+a (each of length RewardDim, ‖ϕ‖ ≤ 1).
	Phi [][]float64
	// ThetaR holds θ_{h,r} for every step; mean rewards are ⟨ϕ(s,a), θ_{h,r}⟩ ∈ [0,1].
	ThetaR [][]float64
	// Bernoulli selects Bernoulli observed rewards (mean as above); otherwise the observed
	// reward equals its mean.
	Bernoulli bool
}

// PsiEntry is one non-zero transition feature row ψ(Next|S,A).
type PsiEntry struct {
	S, A, Next int
	Vec        []float64
}

const probTol = 1e-9

// New validates spec and builds the MDP: every P_h(·|s,a) = ψ·w_h must be a probability
// vector (entries in [−1e-9, 1+1e-9], sum 1 within 1e-9), mean rewards must lie in [0,1],
// ‖ϕ‖ ≤ 1, and ψ must satisfy ‖ψ_v(s,a)‖ ≤ 1 for all v ∈ [0,1]^S (Luyo Asm. 2; checked via
// the triangle inequality, or exactly at the vertices of the support cube when that fails).
func New(sp Spec) (*MDP, error) {
	S, A, H, d := sp.States, sp.Actions, sp.Horizon, sp.Dim
	if S < 1 || S > 1<<20 {
		return nil, fmt.Errorf("linmix: states = %d, want 1..%d", S, 1<<20)
	}
	if A < 1 || A > 1<<16 {
		return nil, fmt.Errorf("linmix: actions = %d, want 1..%d", A, 1<<16)
	}
	if H < 1 || H > 10000 {
		return nil, fmt.Errorf("linmix: horizon = %d, want 1..10000", H)
	}
	if d < 1 || d > 1000 {
		return nil, fmt.Errorf("linmix: dim = %d, want 1..1000", d)
	}
	if err := CheckSize(S, A, H, d, sp.RewardDim, len(sp.Psi)); err != nil {
		return nil, err
	}
	if sp.Start < 0 || sp.Start >= S {
		return nil, fmt.Errorf("linmix: start = %d, want 0..%d", sp.Start, S-1)
	}
	if len(sp.W) != H {
		return nil, fmt.Errorf("linmix: w has %d steps, want horizon = %d", len(sp.W), H)
	}
	m := &MDP{name: sp.Name, s: S, a: A, h: H, d: d, start: sp.Start, bern: sp.Bernoulli}
	for h, w := range sp.W {
		if len(w) != d {
			return nil, fmt.Errorf("linmix: w[%d] has length %d, want dim = %d", h, len(w), d)
		}
		if err := finite(w, fmt.Sprintf("w[%d]", h)); err != nil {
			return nil, err
		}
		m.w = append(m.w, append([]float64(nil), w...))
		m.cw = math.Max(m.cw, smallmat.Norm(w))
	}
	// Bucket ψ rows by (s,a), rejecting duplicates.
	buckets := make([][]PsiEntry, S*A)
	seen := make(map[[3]int]bool, len(sp.Psi))
	for i, e := range sp.Psi {
		if e.S < 0 || e.S >= S || e.A < 0 || e.A >= A || e.Next < 0 || e.Next >= S {
			return nil, fmt.Errorf("linmix: psi[%d] = (s=%d, a=%d, next=%d) out of range (s, next in 0..%d, a in 0..%d)", i, e.S, e.A, e.Next, S-1, A-1)
		}
		if len(e.Vec) != d {
			return nil, fmt.Errorf("linmix: psi[%d] has length %d, want dim = %d", i, len(e.Vec), d)
		}
		if err := finite(e.Vec, fmt.Sprintf("psi[%d]", i)); err != nil {
			return nil, err
		}
		key := [3]int{e.S, e.A, e.Next}
		if seen[key] {
			return nil, fmt.Errorf("linmix: psi[%d] duplicates (s=%d, a=%d, next=%d)", i, e.S, e.A, e.Next)
		}
		seen[key] = true
		buckets[e.S*A+e.A] = append(buckets[e.S*A+e.A], e)
	}
	m.off = make([]int, S*A+1)
	for sa, b := range buckets {
		for _, e := range b {
			m.next = append(m.next, e.Next)
			m.vec = append(m.vec, e.Vec...)
		}
		m.off[sa+1] = len(m.next)
	}
	// True probabilities.
	for h := 0; h < H; h++ {
		p := make([]float64, len(m.next))
		for sa := 0; sa < S*A; sa++ {
			sum := 0.0
			for e := m.off[sa]; e < m.off[sa+1]; e++ {
				v := smallmat.Dot(m.vec[e*d:(e+1)*d], m.w[h])
				if v < -probTol || v > 1+probTol {
					return nil, fmt.Errorf("linmix: P_%d(%d|s=%d,a=%d) = ⟨ψ, w⟩ = %g, want a probability in [0,1]", h, m.next[e], sa/A, sa%A, v)
				}
				v = min(1, max(0, v))
				p[e] = v
				sum += v
			}
			if math.Abs(sum-1) > probTol {
				return nil, fmt.Errorf("linmix: P_%d(·|s=%d,a=%d) sums to %g, want 1 (within %g)", h, sa/A, sa%A, sum, probTol)
			}
		}
		m.prob = append(m.prob, p)
	}
	if err := m.checkNormalisation(); err != nil {
		return nil, err
	}
	// Rewards.
	m.d2 = sp.RewardDim
	if m.d2 < 1 || m.d2 > 1<<20 {
		return nil, fmt.Errorf("linmix: reward_dim = %d, want 1..%d", m.d2, 1<<20)
	}
	if len(sp.Phi) != S*A {
		return nil, fmt.Errorf("linmix: phi has %d rows, want states·actions = %d", len(sp.Phi), S*A)
	}
	if len(sp.ThetaR) != H {
		return nil, fmt.Errorf("linmix: theta_r has %d steps, want horizon = %d", len(sp.ThetaR), H)
	}
	m.phi = make([]float64, 0, S*A*m.d2)
	for sa, f := range sp.Phi {
		if len(f) != m.d2 {
			return nil, fmt.Errorf("linmix: phi[%d] has length %d, want reward_dim = %d", sa, len(f), m.d2)
		}
		if err := finite(f, fmt.Sprintf("phi[%d]", sa)); err != nil {
			return nil, err
		}
		if n := smallmat.Norm(f); n > 1+probTol {
			return nil, fmt.Errorf("linmix: ‖phi[%d]‖ = %g, want ≤ 1", sa, n)
		}
		m.phi = append(m.phi, f...)
	}
	for h, th := range sp.ThetaR {
		if len(th) != m.d2 {
			return nil, fmt.Errorf("linmix: theta_r[%d] has length %d, want reward_dim = %d", h, len(th), m.d2)
		}
		if err := finite(th, fmt.Sprintf("theta_r[%d]", h)); err != nil {
			return nil, err
		}
		m.thr = append(m.thr, append([]float64(nil), th...))
		r := make([]float64, S*A)
		for sa := range r {
			v := smallmat.Dot(m.phi[sa*m.d2:(sa+1)*m.d2], th)
			if v < -probTol || v > 1+probTol {
				return nil, fmt.Errorf("linmix: mean reward r_%d(s=%d,a=%d) = %g, want [0,1]", h, sa/A, sa%A, v)
			}
			r[sa] = min(1, max(0, v))
		}
		m.r = append(m.r, r)
	}
	m.vs = m.optimal()
	return m, nil
}

// checkNormalisation verifies ‖ψ_v(s,a)‖ ≤ 1 for all v ∈ [0,1]^S. ‖ψ_v‖ is convex in v, so
// its maximum over the cube is attained at a vertex of the cube restricted to the support.
func (m *MDP) checkNormalisation() error {
	d := m.d
	// First pass: the sufficient coordinate bound |ψ_v,j| ≤ max(Σ positive parts, Σ negative
	// parts) of coordinate j; collect the pairs where it exceeds 1 and the work of checking
	// them exactly, and refuse before doing that work if it exceeds MaxWork.
	var exact []int
	work := uint64(0)
	for sa := 0; sa < m.s*m.a; sa++ {
		lo, hi := m.off[sa], m.off[sa+1]
		tri := 0.0
		for j := 0; j < d; j++ {
			pos, neg := 0.0, 0.0
			for e := lo; e < hi; e++ {
				if v := m.vec[e*d+j]; v > 0 {
					pos += v
				} else {
					neg -= v
				}
			}
			tri += max(pos, neg) * max(pos, neg)
		}
		tri = math.Sqrt(tri)
		if tri <= 1+probTol {
			continue
		}
		n := hi - lo
		if n > 16 {
			return fmt.Errorf("linmix: cannot verify ‖ψ_v(s=%d,a=%d)‖ ≤ 1: coordinate bound %g > 1 and the support has %d > 16 states", sa/m.a, sa%m.a, tri, n)
		}
		// Each vertex costs one vector update and one norm (2d operations), below.
		if work += uint64(2*d) << n; work > MaxWork {
			return fmt.Errorf("linmix: the exact ψ normalisation check (2^n·2d operations for every (s,a) whose n ψ rows fail the coordinate bound) exceeds the limit 2^30 operations")
		}
		exact = append(exact, sa)
	}
	// Second pass: ‖ψ_v‖ at every 0/1 vertex, visited in Gray-code order so that consecutive
	// vertices differ in one ψ row.
	x := make([]float64, d)
	for _, sa := range exact {
		lo, n := m.off[sa], m.off[sa+1]-m.off[sa]
		clear(x)
		for i := 1; i < 1<<n; i++ {
			k := bits.TrailingZeros(uint(i)) // the row that flips between gray(i−1) and gray(i)
			e := lo + k
			sign := 1.0
			if (i^(i>>1))>>k&1 == 0 {
				sign = -1
			}
			for j := 0; j < d; j++ {
				x[j] += sign * m.vec[e*d+j]
			}
			if v := smallmat.Norm(x); v > 1+probTol {
				return fmt.Errorf("linmix: ‖ψ_v(s=%d,a=%d)‖ = %g > 1 for a 0/1 vector v (Luyo Asm. 2 normalisation)", sa/m.a, sa%m.a, v)
			}
		}
	}
	return nil
}

func finite(x []float64, what string) error {
	for i, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("linmix: %s[%d] = %v, want a finite number", what, i, v)
		}
	}
	return nil
}

// Name returns the environment's label.
func (m *MDP) Name() string { return m.name }

// NumStates returns S.
func (m *MDP) NumStates() int { return m.s }

// NumActions returns A.
func (m *MDP) NumActions() int { return m.a }

// Horizon returns H.
func (m *MDP) Horizon() int { return m.h }

// Dim returns d, the transition-feature dimension.
func (m *MDP) Dim() int { return m.d }

// RewardDim returns d2, the reward-feature dimension.
func (m *MDP) RewardDim() int { return m.d2 }

// Start returns the fixed initial state s_1.
func (m *MDP) Start() int { return m.start }

// Cw returns max_h ‖w_h‖, the exact C_w of Luyo Asm. 2 (spec P21).
func (m *MDP) Cw() float64 { return m.cw }

// ThetaPNorm returns max_h ‖w_h‖ (‖θ_{h,p}‖ in Zhou's notation) and ThetaRNorm max_h ‖θ_{h,r}‖.
func (m *MDP) ThetaRNorm() float64 {
	x := 0.0
	for _, t := range m.thr {
		x = math.Max(x, smallmat.Norm(t))
	}
	return x
}

// NumPsi returns n_ψ, the number of stored non-zero ψ rows.
func (m *MDP) NumPsi() int { return len(m.next) }

// Reward returns the known mean reward r_h(s,a).
func (m *MDP) Reward(h, s, a int) float64 { return m.r[h][s*m.a+a] }

// RewardFeature returns ϕ(s,a) (a view; do not modify).
func (m *MDP) RewardFeature(s, a int) []float64 {
	sa := s*m.a + a
	return m.phi[sa*m.d2 : (sa+1)*m.d2]
}

// W returns a copy of the true w_h.
func (m *MDP) W(h int) []float64 { return append([]float64(nil), m.w[h]...) }

// PsiV writes ψ_V(s,a) = Σ_{s'} ψ(s'|s,a)·V(s') into out (length d). Cost O(n_ψ(s,a)·d).
func (m *MDP) PsiV(s, a int, v, out []float64) { m.psiV(s, a, v, false, out) }

// PsiVSq is PsiV with the pointwise square V² (UCRL-VTR+'s second regression).
func (m *MDP) PsiVSq(s, a int, v, out []float64) { m.psiV(s, a, v, true, out) }

// psiV writes Σ_{s'} ψ(s'|s,a)·g(V(s')) into out for g(x) = x, or g(x) = x² if square. Terms
// with g(V(s')) = 0 are skipped: ψ is finite (NewMDP), so they add nothing.
func (m *MDP) psiV(s, a int, v []float64, square bool, out []float64) {
	clear(out)
	d := m.d
	sa := s*m.a + a
	for e := m.off[sa]; e < m.off[sa+1]; e++ {
		x := v[m.next[e]]
		if square {
			x *= x
		}
		if x == 0 {
			continue
		}
		row := m.vec[e*d : (e+1)*d]
		for j, p := range row {
			out[j] += x * p
		}
	}
}

// Step samples s_{h+1} ~ P_h(·|s,a) and the observed reward from r.
func (m *MDP) Step(h, s, a int, r *rand.Rand) (next int, reward float64) {
	sa := s*m.a + a
	u := r.Float64()
	lo, hi := m.off[sa], m.off[sa+1]
	next = m.next[hi-1]
	p := m.prob[h]
	for e := lo; e < hi; e++ {
		u -= p[e]
		if u < 0 {
			next = m.next[e]
			break
		}
	}
	reward = m.r[h][sa]
	if m.bern {
		if r.Float64() < reward {
			reward = 1
		} else {
			reward = 0
		}
	}
	return next, reward
}

// Prob returns the true P_h(next|s,a) (for tests and reports).
func (m *MDP) Prob(h, s, a, next int) float64 {
	sa := s*m.a + a
	for e := m.off[sa]; e < m.off[sa+1]; e++ {
		if m.next[e] == next {
			return m.prob[h][e]
		}
	}
	return 0
}

// Policy is a (possibly stochastic) Markov policy. Act[h*S+s] is the action of a deterministic
// policy; if Prob is non-nil, Prob[(h*S+s)*A+a] = π_h(a|s) and Act is ignored.
type Policy struct {
	Act  []int
	Prob []float64
}

// NewPolicy returns a deterministic policy table for m (all actions 0).
func (m *MDP) NewPolicy() Policy { return Policy{Act: make([]int, m.h*m.s)} }

// Action returns the action of π at (h, s); for a stochastic policy it samples from r.
func (m *MDP) Action(p Policy, h, s int, r *rand.Rand) int {
	if p.Prob == nil {
		return p.Act[h*m.s+s]
	}
	row := p.Prob[(h*m.s+s)*m.a : (h*m.s+s+1)*m.a]
	u := r.Float64()
	for a, q := range row {
		u -= q
		if u < 0 {
			return a
		}
	}
	return m.a - 1
}

func (m *MDP) expNext(h, sa int, v []float64) float64 {
	x := 0.0
	p := m.prob[h]
	for e := m.off[sa]; e < m.off[sa+1]; e++ {
		x += p[e] * v[m.next[e]]
	}
	return x
}

func (m *MDP) optimal() [][]float64 {
	vs := make([][]float64, m.h+1)
	vs[m.h] = make([]float64, m.s)
	for h := m.h - 1; h >= 0; h-- {
		vs[h] = make([]float64, m.s)
		for s := 0; s < m.s; s++ {
			best := math.Inf(-1)
			for a := 0; a < m.a; a++ {
				sa := s*m.a + a
				best = math.Max(best, m.r[h][sa]+m.expNext(h, sa, vs[h+1]))
			}
			vs[h][s] = best
		}
	}
	return vs
}

// VStar returns V*_1(s_1).
func (m *MDP) VStar() float64 { return m.vs[0][m.start] }

// VStarAt returns V*_h(s) for h in 0..H (V*_H ≡ 0).
func (m *MDP) VStarAt(h, s int) float64 { return m.vs[h][s] }

// Evaluator computes exact values of policies without allocating. Not safe for concurrent use.
type Evaluator struct {
	m    *MDP
	v, w []float64
}

// NewEvaluator returns an Evaluator for m.
func (m *MDP) NewEvaluator() *Evaluator {
	return &Evaluator{m: m, v: make([]float64, m.s), w: make([]float64, m.s)}
}

// Value returns V^π_1(s_1) exactly by backward induction on the true kernel:
// V^π_h(s) = Σ_a π_h(a|s)·[r_h(s,a) + Σ_{s'} P_h(s'|s,a)·V^π_{h+1}(s')]. Cost O(H·n_ψ) for a
// deterministic policy, O(H·n_ψ) summed over all actions for a stochastic one.
func (e *Evaluator) Value(p Policy) float64 {
	m := e.m
	v, w := e.v, e.w
	clear(v)
	for h := m.h - 1; h >= 0; h-- {
		for s := 0; s < m.s; s++ {
			if p.Prob == nil {
				sa := s*m.a + p.Act[h*m.s+s]
				w[s] = m.r[h][sa] + m.expNext(h, sa, v)
				continue
			}
			x := 0.0
			row := p.Prob[(h*m.s+s)*m.a : (h*m.s+s+1)*m.a]
			for a, q := range row {
				if q == 0 {
					continue
				}
				sa := s*m.a + a
				x += q * (m.r[h][sa] + m.expNext(h, sa, v))
			}
			w[s] = x
		}
		v, w = w, v
	}
	return v[m.start]
}

// Regret returns V*_1(s_1) − V^π_1(s_1), the exact regret of one episode played with π.
func (e *Evaluator) Regret(p Policy) float64 { return e.m.VStar() - e.Value(p) }
