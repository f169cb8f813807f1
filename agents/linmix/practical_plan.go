package linmix

import (
	"math"
	"math/rand/v2"

	"github.com/dprl/dprl/internal/smallmat"
	model "github.com/dprl/dprl/model/linmix"
	"github.com/dprl/dprl/privacy/counter"
)

// practicalPlanner computes a user's policy from a PracticalRelease alone (plus the public
// features ψ, the known rewards r and public constants). Its only persistent state is a cache
// keyed by the release version and the tie stream, so every policy is a post-processing of
// releases and data-independent randomness (billboard lemma).
type practicalPlanner struct {
	m       *model.MDP
	cfg     *PracticalConfig
	H, S, A int
	d       int
	cw, B   float64
	kn      *practicalKnown
	ties    *rand.Rand
	version int
	planned bool
	lam     float64   // λ_t of the current release
	beta    float64   // β_t of the current release (after BetaMult)
	L, w    []float64 // Cholesky factor of Λ̃ and θ̂ (estimate of θ/(2Y)), both in N coordinates
	mat     []float64
	tmp     []float64
	g, t    []float64   // d × d Gram and d target of the release (unpacked)
	v       [][]float64 // [h][s], h = 0..H; V_H ≡ 0
	q       []float64
	qTab    []float64 // clipped Q_h(s, a) of the current release, [(h·S + s)·A + a]
	qFor    int       // release version qTab holds (-1: none)
	x, vn   []float64
	z       []float64 // Uᵀx
	pol     model.Policy
	// diagnostics
	fallbacks        int
	saturated, cells int64
}

func newPracticalPlanner(m *model.MDP, cfg *PracticalConfig, cw, B float64, ties *rand.Rand) *practicalPlanner {
	p := &practicalPlanner{m: m, cfg: cfg, H: m.Horizon(), S: m.NumStates(), A: m.NumActions(), d: m.Dim(), cw: cw, B: B,
		kn: newPracticalKnown(m), ties: ties}
	d, dn := p.d, p.kn.dn
	p.L, p.w, p.mat, p.tmp = make([]float64, dn*dn), make([]float64, dn), make([]float64, dn*dn), make([]float64, dn)
	p.g, p.t, p.z = make([]float64, d*d), make([]float64, d), make([]float64, dn)
	p.v = make([][]float64, p.H+1)
	for h := range p.v {
		p.v[h] = make([]float64, p.S)
	}
	p.q = make([]float64, p.A)
	p.qTab, p.qFor = make([]float64, p.H*p.S*p.A), -1
	p.x, p.vn = make([]float64, d), make([]float64, p.S)
	p.pol = m.NewPolicy()
	return p
}

// practicalWidth returns the regulariser shift λ_t and the confidence width β_t (before
// BetaMult) of a release with n_u users whose noise has std s per Gram diagonal / target
// coordinate (practical-privacy spec §5), for a d-dimensional regression with parameter norm
// ≤ C and R-sub-Gaussian target noise. With b = s·(2√d + √(2 ln(2/β_e))):
//
//	λ_t = λ₀ + 2b,
//	β_t = R·√(2 ln(1/β_s) + d·ln(1 + n·B²/(d·λ₀)))          (self-normalised, n = n_u·(H−1))
//	    + (λ₀ + 3b)·C / √(λ₀ + b)                            (regulariser and Gram noise)
//	    + s·(√d + √(2 ln(1/β_e))) / √(λ₀ + b)                (target noise),
//
// where β_e is the failure probability of each noise event and β_s that of the self-normalised
// bound. Derivation. The released Gram is G + E with E = (s/2)(Z + Zᵀ), Z a d×d matrix of i.i.d.
// N(0,1) (diagonal std s, off-diagonal s/√2: the counter's multipliers; this law is invariant
// under U·Uᵀ, so the d_N-dimensional block Uᵀ E U the planner uses has it too), so ‖E‖ ≤ s‖Z‖ ≤
// s·(2√d + t) with probability ≥ 1 − 2e^{−t²/2} (Vershynin 2018, Cor. 7.3.3; Davidson & Szarek
// 2001), t = √(2 ln(2/β_e)): ‖E‖ ≤ b. Then Λ̃ = G + E + λ_t I satisfies G + (λ₀+b)I ⪯ Λ̃ and
// (λ₀+b)I ⪯ E + λ_t I ⪯ (λ₀+3b)I. The released target is u + g = G w + ξ + g, ξ = Σ X η with
// R-sub-Gaussian η, g ~ N(0, s²I), ‖g‖ ≤ s(√d + √(2 ln(1/β_e))) with probability
// ≥ 1 − β_e (Gaussian concentration of the s-Lipschitz norm, E‖g‖ ≤ s√d). Hence
// ŵ − w = Λ̃⁻¹(ξ + g − (E + λ_t I)w) and ‖ŵ − w‖_Λ̃ ≤ ‖ξ‖_{(G+λ₀I)⁻¹} + ‖g‖/√(λ₀+b) +
// (λ₀+3b)‖w‖/√(λ₀+b), the first term bounded, uniformly in time, by Abbasi-Yadkori, Pál &
// Szepesvári (2011, Thm 1) with det(G + λ₀I) ≤ (λ₀ + n B²/d)^d. The planner uses d = d_N,
// C = C_θ/(2Y) and R = 1/(4Y) (η = (v(s′) − E v(s′))/(2Y) lies in an interval of length
// 1/(2Y)): practicalKnown. Privacy never depends on it.
func practicalWidth(cfg *PracticalConfig, d, H, releases, users int, s, cw, B, R float64) (lam, beta float64) {
	be, bs := cfg.Confidence, cfg.Confidence
	if cfg.Theory {
		be, bs = cfg.P/(3*float64(releases+1)), cfg.P/3
	}
	fd := float64(d)
	b := s * (2*math.Sqrt(fd) + math.Sqrt(2*math.Log(2/be)))
	l0 := cfg.Lambda0
	n := float64(users) * float64(H-1)
	self := R * math.Sqrt(2*math.Log(1/bs)+fd*math.Log1p(n*B*B/(fd*l0)))
	bias := (l0 + 3*b) * cw / math.Sqrt(l0+b)
	gn := s * (math.Sqrt(fd) + math.Sqrt(2*math.Log(1/be))) / math.Sqrt(l0+b)
	return l0 + 2*b, self + bias + gn
}

// refresh rebuilds Λ̃ = Uᵀ(G̃ + λ_t I)U's Cholesky factor, θ̂ = Λ̃⁻¹Uᵀũ and the widths when the
// release changed.
func (p *practicalPlanner) refresh(rel *PracticalRelease) {
	if p.planned && rel.version == p.version {
		return
	}
	p.planned, p.version = true, rel.version
	kn := p.kn
	releases := counter.Schedule{Every: p.cfg.Privacy.BatchEvery}.Batches(p.cfg.Episodes - 1)
	lam, beta := practicalWidth(p.cfg, kn.dn, p.H, releases, rel.Users, rel.Std, kn.cTheta(p.cw)/(2*kn.y), p.B, 1/(4*kn.y))
	p.lam, p.beta = lam, beta*p.cfg.BetaMult
	d, dn := p.d, kn.dn
	clear(p.g)
	addPacked(p.g, d, rel.Gram, 1)
	// mat = Uᵀ G U + λ_t I (dn × dn)
	for a := 0; a < dn; a++ {
		for b := 0; b < dn; b++ {
			s := 0.0
			for i := 0; i < d; i++ {
				ui := kn.u[i*dn+a]
				if ui == 0 {
					continue
				}
				for j := 0; j < d; j++ {
					s += ui * p.g[i*d+j] * kn.u[j*dn+b]
				}
			}
			p.mat[a*dn+b] = s
		}
		p.mat[a*dn+a] += lam
	}
	if !smallmat.Cholesky(p.mat, dn, p.L) {
		// PD repair: post-processing of the release (spec P2).
		p.fallbacks++
		clampEigen(p.mat, dn, p.cfg.Lambda0)
		if !smallmat.Cholesky(p.mat, dn, p.L) {
			clear(p.L)
			for i := 0; i < dn; i++ {
				p.L[i*dn+i] = math.Sqrt(p.cfg.Lambda0)
			}
		}
	}
	kn.reduce(rel.Target, p.t[:dn])
	smallmat.Forward(p.L, dn, p.t[:dn], p.tmp)
	smallmat.Backward(p.L, dn, p.tmp, p.w)
}

// centre returns c = (max v + min v)/2 and r = max v − min v.
func centre(v []float64) (c, r float64) {
	lo, hi := v[0], v[0]
	for _, x := range v[1:] {
		lo, hi = min(lo, x), max(hi, x)
	}
	return (lo + hi) / 2, hi - lo
}

// plan fills p.pol and p.v: optimistic value iteration with
// Q_h(s,a) = clip_{[0, H−h]}( r_h(s,a) + c + ⟨x, w₀⟩ + 2Y·(⟨Uᵀx, θ̂⟩ + β_t‖Uᵀx‖_{Λ̃⁻¹}) ),
// x = ψ_{Ṽ_{h+1} − c}(s,a), c the mid-range of Ṽ_{h+1} (exact since ⟨ψ_1(s,a), w⟩ = 1 and
// w = w₀ + Uθ: practicalKnown), ties broken at random (spec P6).
//
// Value iteration depends on the release alone (the tie-break changes the action chosen among
// equal Q values, never a value), so the clipped Q table is computed once per release and
// kept: the users between two releases only redo the greedy tie-breaks, drawing the same
// random numbers in the same order as a full recomputation would (bit-identical results; at
// the reproduction's M = 500 this removes ≈ 80 % of an episode's cost).
func (p *practicalPlanner) plan(rel *PracticalRelease) {
	p.refresh(rel)
	if p.qFor == rel.version {
		for h := p.H - 1; h >= 0; h-- {
			cp := float64(p.H - h)
			for s := 0; s < p.S; s++ {
				copy(p.q, p.qTab[(h*p.S+s)*p.A:])
				p.v[h][s] = p.greedy(h, s)
				p.cells++
				if p.v[h][s] >= cp*(1-1e-12) {
					p.saturated++
				}
			}
		}
		return
	}
	p.qFor = rel.version
	kn := p.kn
	dn, y2 := kn.dn, 2*kn.y
	for h := p.H - 1; h >= 0; h-- {
		next := p.v[h+1]
		c, _ := centre(next)
		for s := range p.vn {
			p.vn[s] = next[s] - c
		}
		cp := float64(p.H - h)
		for s := 0; s < p.S; s++ {
			for a := 0; a < p.A; a++ {
				q := p.m.Reward(h, s, a)
				if h < p.H-1 {
					p.m.PsiV(s, a, p.vn, p.x)
					kn.reduce(p.x, p.z)
					q += c + dot(p.x, kn.w0) + y2*(dot(p.z, p.w)+p.beta*math.Sqrt(smallmat.InvQuad(p.L, dn, p.z, p.tmp)))
				}
				p.q[a] = min(cp, max(0, q))
			}
			copy(p.qTab[(h*p.S+s)*p.A:], p.q)
			p.v[h][s] = p.greedy(h, s)
			p.cells++
			if p.v[h][s] >= cp*(1-1e-12) {
				p.saturated++
			}
		}
	}
}

// greedy sets π_h(s) to an argmax of p.q, ties broken from the planner's own tie stream
// (argmaxTies), and returns the max.
func (p *practicalPlanner) greedy(h, s int) float64 {
	pick, best := argmaxTies(p.q, p.ties)
	p.pol.Act[h*p.S+s] = pick
	return best
}

// leaves builds the user's normalised leaves from her trajectory and the values she planned
// with: v = (Ṽ_{h+1} − c_h)/r_h, X_h = U Uᵀψ_v(s_h, a_h), y_h = (v(s_{h+1}) − ⟨ψ_v(s_h, a_h), w₀⟩)/(2Y)
// (both zero when r_h = 0; practicalKnown). next[h] is Ṽ_{h+1}, read from the published rule;
// the planner lends only its public constants and scratch.
func (p *practicalPlanner) leaves(values [][]float64, tr *trajectory, lv *PracticalLeaves) {
	kn := p.kn
	for h := 0; h < p.H-1; h++ {
		next := values[h]
		c, r := centre(next)
		if !(r > 0) {
			clear(lv.x[h])
			lv.y[h] = 0
			continue
		}
		for s := range p.vn {
			p.vn[s] = (next[s] - c) / r
		}
		p.m.PsiV(tr.s[h], tr.a[h], p.vn, p.x)
		kn.reduce(p.x, p.z)
		kn.expand(p.z, lv.x[h])
		lv.y[h] = (p.vn[tr.s[h+1]] - dot(p.x, kn.w0)) / (2 * kn.y)
	}
}
