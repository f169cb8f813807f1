// Package linmdp models finite-state episodic linear MDPs (Jin et al. 2020; linear-MDP spec
// §1.2): a known feature map φ(s,a) ∈ R^d, transitions P_h(s'|s,a) = ⟨φ(s,a), μ_h(s')⟩ and
// rewards r_h(s,a) = ⟨φ(s,a), θ_h⟩. It provides exact sampling, exact optimal values, exact
// policy evaluation and exact per-episode (pseudo-)regret, the spec's environments E1
// (RiverSwim-OneHot), E2 (LatentRiver), E3 (RandomSimplex), TwoState-100, and loading from a
// file. The package knows nothing of privacy.
package linmdp

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/dprl/dprl/internal/smallmat"
)

// Tolerances used by the construction-time checks.
const (
	// NormTol is the slack allowed on ‖φ(s,a)‖₂ ≤ 1 and on r ∈ [0, 1].
	NormTol = 1e-12
	// ProbTol is the slack allowed on the probabilities P_h(s'|s,a) (non-negativity and
	// summing to 1).
	ProbTol = 1e-9
)

// MDP is a finite-state linear MDP. Build it with New (or one of the environment
// constructors); the fields are read-only after construction.
type MDP struct {
	// Name identifies the environment in outputs.
	Name string
	// N, A, D and H are the numbers of states and actions, the feature dimension and the
	// horizon.
	N, A, D, H int
	// Phi[s][a] is φ(s,a) ∈ R^D.
	Phi [][][]float64
	// Mu[h][s'] is μ_h(s') ∈ R^D (h = 0..H−1 is the paper's step h+1).
	Mu [][][]float64
	// Theta[h] is θ_h ∈ R^D.
	Theta [][]float64
	// Init is the initial-state distribution (length N).
	Init []float64

	homog  bool
	reward [][][]float64 // [h][s][a]
	trans  [][][]sparse  // [h][s][a]
	init   sparse
}

// sparse is a discrete distribution stored as its support and cumulative probabilities.
type sparse struct {
	idx []int32
	cum []float64
}

func (d sparse) sample(r *rand.Rand) int {
	if len(d.idx) == 1 {
		return int(d.idx[0])
	}
	u := r.Float64() * d.cum[len(d.cum)-1]
	for i, c := range d.cum {
		if u < c {
			return int(d.idx[i])
		}
	}
	return int(d.idx[len(d.idx)-1])
}

func newSparse(p []float64) sparse {
	var d sparse
	c := 0.0
	for i, v := range p {
		if v > 0 {
			c += v
			d.idx = append(d.idx, int32(i))
			d.cum = append(d.cum, c)
		}
	}
	return d
}

// sumSquares returns Σ x_i², and ok = false if some x_i is NaN or ±Inf.
func sumSquares(x []float64) (sum float64, ok bool) {
	for _, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return 0, false
		}
		sum += v * v
	}
	return sum, true
}

// New validates a linear MDP and precomputes its transition and reward tables. Mu and Theta
// have either H entries (one per step) or exactly one (a time-homogeneous model, shared by all
// steps). New checks, exactly and at construction, every normalisation of spec §1.2:
//
//   - ‖φ(s,a)‖₂ ≤ 1 (all papers; needed for privacy);
//   - P_h(·|s,a) = ⟨φ(s,a), μ_h(·)⟩ is a probability distribution and r_h(s,a) ∈ [0, 1];
//   - ‖θ_h‖₂ ≤ √d ([J], [L]; [N] with its "d" read as √d, spec N11);
//   - ‖μ_h(S)‖₂ ≤ √d ([J], [N]);
//   - ‖Σ_{s'} μ_h(s') v(s')‖₂ ≤ √d·‖v‖_∞ for all v ([L]). When every entry of μ_h is
//     non-negative this is equivalent to the previous condition; otherwise New checks the
//     sufficient condition Σ_{s'} ‖μ_h(s')‖₂ ≤ √d and rejects the model if it fails.
func New(name string, phi [][][]float64, mu [][][]float64, theta [][]float64, init []float64, H int) (*MDP, error) {
	if H < 1 || H > 100000 {
		return nil, fmt.Errorf("linmdp: horizon must be in [1, 100000], got %d", H)
	}
	N := len(phi)
	if N < 1 {
		return nil, errors.New("linmdp: features: need at least one state")
	}
	A := len(phi[0])
	if A < 1 {
		return nil, errors.New("linmdp: features: need at least one action")
	}
	D := len(phi[0][0])
	if D < 1 {
		return nil, errors.New("linmdp: features: dimension must be >= 1")
	}
	m := &MDP{Name: name, N: N, A: A, D: D, H: H, Phi: phi, Init: init}
	for s := range phi {
		if len(phi[s]) != A {
			return nil, fmt.Errorf("linmdp: features[%d] has %d actions, want %d", s, len(phi[s]), A)
		}
		for a := range phi[s] {
			if len(phi[s][a]) != D {
				return nil, fmt.Errorf("linmdp: features[%d][%d] has length %d, want d = %d", s, a, len(phi[s][a]), D)
			}
			n2, ok := sumSquares(phi[s][a])
			if !ok {
				return nil, fmt.Errorf("linmdp: features[%d][%d] is not finite", s, a)
			}
			if math.Sqrt(n2) > 1+NormTol {
				return nil, fmt.Errorf("linmdp: features[%d][%d] has norm %.15g, must be <= 1 (privacy needs ‖φ‖₂ ≤ 1)", s, a, math.Sqrt(n2))
			}
		}
	}
	switch len(mu) {
	case 1:
		m.homog = true
	case H:
	default:
		return nil, fmt.Errorf("linmdp: mu has %d steps, want 1 (homogeneous) or H = %d", len(mu), H)
	}
	if len(theta) != len(mu) {
		return nil, fmt.Errorf("linmdp: theta has %d steps, want %d (same as mu)", len(theta), len(mu))
	}
	if len(init) != N {
		return nil, fmt.Errorf("linmdp: init has length %d, want N = %d", len(init), N)
	}
	if err := CheckSize(N, A, D, len(mu), H); err != nil {
		return nil, err
	}
	sum := 0.0
	for s, p := range init {
		if !(p >= 0) || math.IsInf(p, 0) {
			return nil, fmt.Errorf("linmdp: init[%d] = %g, must be a finite probability", s, p)
		}
		sum += p
	}
	if math.Abs(sum-1) > ProbTol {
		return nil, fmt.Errorf("linmdp: init sums to %.12g, want 1", sum)
	}
	m.init = newSparse(init)
	sqd := math.Sqrt(float64(D))
	nSteps := len(mu)
	rewards := make([][][]float64, nSteps)
	trans := make([][][]sparse, nSteps)
	p := make([]float64, N)
	for h := 0; h < nSteps; h++ {
		if len(mu[h]) != N {
			return nil, fmt.Errorf("linmdp: mu[%d] has %d states, want N = %d", h, len(mu[h]), N)
		}
		if len(theta[h]) != D {
			return nil, fmt.Errorf("linmdp: theta[%d] has length %d, want d = %d", h, len(theta[h]), D)
		}
		tn, ok := sumSquares(theta[h])
		if !ok {
			return nil, fmt.Errorf("linmdp: theta[%d] is not finite", h)
		}
		if math.Sqrt(tn) > sqd*(1+NormTol) {
			return nil, fmt.Errorf("linmdp: ‖theta[%d]‖₂ = %g, must be <= √d = %g", h, math.Sqrt(tn), sqd)
		}
		mass := make([]float64, D)
		nonneg := true
		triangle := 0.0
		for s2 := range mu[h] {
			if len(mu[h][s2]) != D {
				return nil, fmt.Errorf("linmdp: mu[%d][%d] has length %d, want d = %d", h, s2, len(mu[h][s2]), D)
			}
			n2 := 0.0
			for i, v := range mu[h][s2] {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					return nil, fmt.Errorf("linmdp: mu[%d][%d] is not finite", h, s2)
				}
				mass[i] += v
				if v < 0 {
					nonneg = false
				}
				n2 += v * v
			}
			triangle += math.Sqrt(n2)
		}
		if mn := smallmat.Norm(mass); mn > sqd*(1+NormTol) {
			return nil, fmt.Errorf("linmdp: ‖mu[%d](S)‖₂ = %g, must be <= √d = %g", h, mn, sqd)
		}
		if !nonneg && triangle > sqd*(1+NormTol) {
			return nil, fmt.Errorf("linmdp: mu[%d] is signed and Σ_s' ‖mu(s')‖₂ = %g > √d = %g: cannot certify ‖∫V dμ‖ ≤ √d‖V‖∞", h, triangle, sqd)
		}
		rewards[h] = make([][]float64, N)
		trans[h] = make([][]sparse, N)
		for s := 0; s < N; s++ {
			rewards[h][s] = make([]float64, A)
			trans[h][s] = make([]sparse, A)
			for a := 0; a < A; a++ {
				f := phi[s][a]
				r := smallmat.Dot(f, theta[h])
				if r < -NormTol || r > 1+NormTol {
					return nil, fmt.Errorf("linmdp: reward r_%d(%d,%d) = %g, must be in [0, 1]", h+1, s, a, r)
				}
				rewards[h][s][a] = min(max(r, 0), 1)
				tot := 0.0
				for s2 := 0; s2 < N; s2++ {
					q := smallmat.Dot(f, mu[h][s2])
					if q < -ProbTol {
						return nil, fmt.Errorf("linmdp: P_%d(%d|%d,%d) = %g is negative", h+1, s2, s, a, q)
					}
					q = max(q, 0)
					p[s2] = q
					tot += q
				}
				if math.Abs(tot-1) > ProbTol {
					return nil, fmt.Errorf("linmdp: P_%d(·|%d,%d) sums to %.12g, want 1", h+1, s, a, tot)
				}
				trans[h][s][a] = newSparse(p)
			}
		}
	}
	m.Mu = make([][][]float64, H)
	m.Theta = make([][]float64, H)
	m.reward = make([][][]float64, H)
	m.trans = make([][][]sparse, H)
	for h := 0; h < H; h++ {
		j := h
		if m.homog {
			j = 0
		}
		m.Mu[h], m.Theta[h], m.reward[h], m.trans[h] = mu[j], theta[j], rewards[j], trans[j]
	}
	return m, nil
}

// Homogeneous reports whether the model is the same at every step.
func (m *MDP) Homogeneous() bool { return m.homog }

// Reward returns r_h(s,a) for h = 0..H−1.
func (m *MDP) Reward(h, s, a int) float64 { return m.reward[h][s][a] }

// Step samples s' ~ P_h(·|s,a) exactly (h = 0..H−1).
func (m *MDP) Step(h, s, a int, r *rand.Rand) int { return m.trans[h][s][a].sample(r) }

// InitialState samples s_1 from Init. A point mass consumes no randomness.
func (m *MDP) InitialState(r *rand.Rand) int { return m.init.sample(r) }

// P returns P_h(s'|s,a) computed from the factorisation.
func (m *MDP) P(h, s, a, s2 int) float64 { return max(smallmat.Dot(m.Phi[s][a], m.Mu[h][s2]), 0) }

// backup returns w = θ_h + Σ_{s'} μ_h(s') V(s'), so that Q_h(s,a) = ⟨φ(s,a), w⟩.
func (m *MDP) backup(h int, v []float64, w []float64) {
	copy(w, m.Theta[h])
	for s2, x := range v {
		if x == 0 {
			continue
		}
		for i, u := range m.Mu[h][s2] {
			w[i] += u * x
		}
	}
}

// OptimalValues returns V* (V[h][s] for h = 0..H, V[H] ≡ 0) and a greedy optimal policy
// pi[h][s] (lowest index among maximisers), by backward induction on the exact model.
func (m *MDP) OptimalValues() (V [][]float64, pi [][]int) {
	V = make([][]float64, m.H+1)
	pi = make([][]int, m.H)
	V[m.H] = make([]float64, m.N)
	w := make([]float64, m.D)
	for h := m.H - 1; h >= 0; h-- {
		m.backup(h, V[h+1], w)
		V[h] = make([]float64, m.N)
		pi[h] = make([]int, m.N)
		for s := 0; s < m.N; s++ {
			best, ba := math.Inf(-1), 0
			for a := 0; a < m.A; a++ {
				if q := smallmat.Dot(m.Phi[s][a], w); q > best {
					best, ba = q, a
				}
			}
			V[h][s], pi[h][s] = best, ba
		}
	}
	return V, pi
}

// Evaluate returns V^π (V[h][s], h = 0..H, V[H] ≡ 0) of the deterministic policy
// pi[h][s] ∈ [0, A), exactly.
func (m *MDP) Evaluate(pi [][]int) [][]float64 {
	V := make([][]float64, m.H+1)
	V[m.H] = make([]float64, m.N)
	w := make([]float64, m.D)
	for h := m.H - 1; h >= 0; h-- {
		m.backup(h, V[h+1], w)
		V[h] = make([]float64, m.N)
		for s := 0; s < m.N; s++ {
			V[h][s] = smallmat.Dot(m.Phi[s][pi[h][s]], w)
		}
	}
	return V
}

// ConstantPolicy returns the policy that plays action a everywhere.
func (m *MDP) ConstantPolicy(a int) [][]int {
	pi := make([][]int, m.H)
	for h := range pi {
		pi[h] = make([]int, m.N)
		for s := range pi[h] {
			pi[h][s] = a
		}
	}
	return pi
}

// Regret returns the exact per-episode pseudo-regret V*_1(s1) − V^π_1(s1) given the optimal
// and the policy's value tables (spec §1.1, §6.6).
func Regret(vstar, vpi [][]float64, s1 int) float64 { return vstar[0][s1] - vpi[0][s1] }
