package lq

import (
	"fmt"
	"math"

	"github.com/dprl/dprl/privacy/counter"
	"github.com/dprl/dprl/rng"
)

// PracticalSpectralBound returns b such that P(‖E‖ > b) ≤ a for a p×p symmetric Gaussian
// matrix E whose off-diagonal entries have std s and diagonal entries std √2·s, all
// independent (s times a GOE matrix; the noise of a PracticalRelease's V):
//
//	b = s·(2√p + 2√(ln(2/a))).
//
// Proof. (i) Mean: X_u = uᵀEu over unit u is a centred Gaussian process with
// E(X_u − X_v)² = 2s²‖uuᵀ − vvᵀ‖_F² = 4s²(1 − ⟨u,v⟩²) ≤ 4s²‖u − v‖² (as 2(1−c²) ≤ 4(1−c) for
// |c| ≤ 1), the increments of Y_u = 2s⟨g, u⟩, g ~ N(0, I_p); Sudakov–Fernique (Vershynin,
// High-Dimensional Probability, Thm 7.2.11) gives E λ_max(E) ≤ 2s·E‖g‖ ≤ 2s√p, and the same
// for −λ_min(E) = λ_max(−E). (ii) Concentration: with E = E(ξ), ξ ~ N(0, I) one standard
// normal per packed entry, ‖E(ξ) − E(ξ′)‖ ≤ ‖E(ξ) − E(ξ′)‖_F = √2·s‖ξ − ξ′‖, so λ_max is
// √2·s-Lipschitz and P(λ_max ≥ E λ_max + √2·s·r) ≤ e^{−r²/2} (Gaussian concentration,
// Tsirelson–Ibragimov–Sudakov; Boucheron, Lugosi & Massart 2013, Thm 5.6). A union over the two
// extreme eigenvalues with r = √(2 ln(2/a)) gives the claim. (Davidson & Szarek 2001, §II,
// give the same 2√p·s leading term for the GOE.) TestPracticalSpectralBound checks it on
// seeded draws of the counter's own noise.
func PracticalSpectralBound(p int, s, a float64) float64 {
	return s * (2*math.Sqrt(float64(p)) + 2*math.Sqrt(math.Log(2/a)))
}

// PracticalFrobeniusBound returns b such that P(‖L‖_F > b) ≤ a for a matrix L of m
// independent N(0, s²) entries: ‖L‖_F is s-Lipschitz in the standard normal vector with
// E‖L‖_F ≤ s√m, so b = s·(√m + √(2 ln(1/a))) (Gaussian concentration, as above).
func PracticalFrobeniusBound(m int, s, a float64) float64 {
	return s * (math.Sqrt(float64(m)) + math.Sqrt(2*math.Log(1/a)))
}

// PracticalSet is the confidence set a practical planner derives from one release, with the
// parts of its radius (practical-privacy spec §5).
type PracticalSet struct {
	// Set is C = {Θ : ‖Θ − Θ̂‖_V ≤ β} (Θ̂ = V⁻¹U, V = released Gram + ηI).
	Set Ellipsoid
	// NoiseBound is λ_E, the bound on ‖E‖ (plus grid slack) that holds with the stated
	// probability; Eta = 2λ_E is the shift (private) or λ₀ (noise-off). HMin and HMax bound the
	// eigenvalues of H = V − Gram on that event.
	NoiseBound, Eta, HMin, HMax float64
	// Stat, Cross and Bias are the three terms of β: the self-normalised martingale term
	// C_w√(2 ln(2/α_S) + n·ld), ‖L‖_F-bound/√v_min and S·‖V^{−1/2}H‖-bound.
	Stat, Cross, Bias float64
	// LogDet is ld, PDRepair reports eigenvalues of V below HMin clipped (never on the event).
	LogDet   float64
	PDRepair bool
}

// practicalConfidence computes the confidence set of release r (post-processing of the release
// and public values only).
//
// Claim (per release, honest users: x̄' = Θ*ᵀz̄ + w on every kept pair, ‖Θ*‖_F ≤ S = 1). With
// probability ≥ 1 − α_E − α_L − α_S, Θ* ∈ C. Proof. Write the release as V_rel = G + E + D_V,
// U = GΘ* + Z̄ᵀW̄ + L + D_U (G the kept Gram, D the grid slack). On the event ‖E‖ ≤
// PracticalSpectralBound(α_E) (so ‖E + D_V‖ ≤ λ_E) and ‖L‖_F ≤ PracticalFrobeniusBound(α_L):
// H = V − G = E + D_V + 2λ_E I has λ_E I ⪯ H ⪯ 3λ_E I, hence V ⪰ G + λ_E I and no repair
// happens. Then Θ̂ − Θ* = V⁻¹(Z̄ᵀW̄ + L + D_U) − V⁻¹HΘ*, and
// ‖Θ̂ − Θ*‖_V ≤ ‖Z̄ᵀW̄‖_{V⁻¹} + ‖V^{−1/2}(L + D_U)‖_F + ‖V^{−1/2}H‖·‖Θ*‖_F. The first term is
// at most ‖Z̄ᵀW̄‖_{(G+λ_E I)⁻¹} ≤ C_w√(2 ln(2/α_S) + n ln det(I + G/λ_E)) with probability
// 1 − α_S (Lemma 1 of Chowdhury et al., after Abbasi-Yadkori & Szepesvári 2011; the kept pairs
// are a predictable selection, practicalEncoder), and ln det(I + G/λ_E) ≤ ld := min(ln det V −
// p ln λ_E, p ln(1 + users·B/(p λ_E))) (V ⪰ G + λ_E I; tr G ≤ users·B). The second is at most
// ‖L + D_U‖_F/√v_min(V). For the third, ‖V^{−1/2}H‖² = 1/λ_min(H⁻¹GH⁻¹ + H⁻¹) ≤
// 1/(λ_min(G)/‖H‖² + 1/‖H‖) with λ_min(G) ≥ v_min(V) − ‖H‖ (Weyl). Nothing here is needed
// for privacy; only for the (unproved) regret.
func (pl *PracticalPlanner) practicalConfidence(r *PracticalRelease) (*PracticalSet, error) {
	n, d := pl.pub.N, pl.pub.D
	p := n + d
	if len(r.V) != p*p || len(r.U) != p*n {
		return nil, fmt.Errorf("practical lq: release has the wrong shape")
	}
	ps := &PracticalSet{}
	aE, aL, aS := pl.cfg.Confidence/3, pl.cfg.Confidence/3, pl.cfg.Confidence/3
	if pl.cfg.Theory {
		aE /= float64(pl.releases)
		aL /= float64(pl.releases)
	}
	cross := 0.0
	if pl.cfg.NoiseOff {
		ps.Eta, ps.HMin, ps.HMax = pl.cfg.Lambda, pl.cfg.Lambda, pl.cfg.Lambda
	} else {
		lam := PracticalSpectralBound(p, r.Std, aE) + float64(p)*r.Slack
		lam = math.Max(lam, pl.cfg.Lambda) // a larger bound stays valid; keeps V ≻ 0 before any data
		ps.NoiseBound, ps.Eta, ps.HMin, ps.HMax = lam, 2*lam, lam, 3*lam
		cross = PracticalFrobeniusBound(p*n, r.Std, aL) + math.Sqrt(float64(p*n))*r.Slack
	}
	v, qv, ok := eigenRidge(r.V, p, ps.Eta)
	if !ok {
		return nil, fmt.Errorf("practical lq: eigendecomposition of V failed")
	}
	vmin := math.Inf(1)
	for i := range v {
		if !(v[i] >= ps.HMin) {
			v[i] = ps.HMin // post-processing; a no-op on the event of the claim
			ps.PDRepair = true
		}
		vmin = math.Min(vmin, v[i])
	}
	hat := ridgeEstimate(qv, v, r.U, p, n)
	ld := logDetRatio(v, ps.HMin)
	if !pl.cfg.NoiseOff {
		ld = math.Min(ld, float64(p)*math.Log1p(float64(r.Users)*pl.cfg.Budget/(float64(p)*ps.HMin)))
	}
	ld = math.Max(ld, 0)
	ps.LogDet = ld
	ps.Stat = pl.pub.Cw * math.Sqrt(2*math.Log(2/aS)+float64(n)*ld)
	ps.Cross = cross / math.Sqrt(vmin)
	const S = 1.0 // Assumption 1(a): ‖Θ*‖_F ≤ 1
	ps.Bias = S / math.Sqrt(math.Max(0, vmin-ps.HMax)/(ps.HMax*ps.HMax)+1/ps.HMax)
	beta := ps.Stat + ps.Cross + ps.Bias
	ps.Set = Ellipsoid{P: p, N: n, ThetaHat: hat, QV: qv, V: v, Beta: beta}
	return ps, nil
}

// PracticalPlanner computes the practical agent's policies. Per release it derives the
// confidence set (practicalConfidence) and, for each public reference initial state r_j, the
// optimistic Θ̃_j ∈ argmin_{Θ ∈ C ∩ S̄} J*_1(Θ, r_j) with the optimistic step of lq spec §4.3
// (OptimisticSearch, unchanged), warm-started from the previous release's Θ̃_j with full
// multi-start searches on the first release, periodically and whenever the warm start fails
// (practicalSearch, practical_search.go); user k plays the gains K_h(Θ̃_j) of the reference
// closest in angle to her own x_{k,1} (eq. (9) with x_{k,1} quantised to a public grid of
// directions; the gains of a Riccati solution do not depend on the state, only the choice of
// Θ̃ does). It reads only PracticalRelease values, public constants, public random streams and
// the current user's own initial state, and carries from release to release only its own
// earlier outputs (the minimisers Θ̃_j): its plans are a function of the release sequence.
type PracticalPlanner struct {
	pub      Public
	cfg      PracticalConfig
	refs     [][]float64
	s        *searcher
	ws       *practicalSearch
	releases int
	seed     rng.Seed

	index int // release index of the cached plans (−1: none)
	// Set is the current confidence set; Refs the per-reference search results and gains.
	Set  *PracticalSet
	Refs []PracticalRefPlan
	// wire marks an output decoded from its wire form (wire.go); checked, that it was checked.
	wire, checked bool
}

// PracticalRefPlan is the plan for one reference initial state.
type PracticalRefPlan struct {
	// X is the reference state r_j (unit norm).
	X []float64
	// Search is the optimistic step's result, Mode how it was computed (cold, warm, …), Gains
	// the policy K_1(Θ̃)..K_H(Θ̃).
	Search SearchResult
	Mode   SearchMode
	Gains  [][]float64
	// Zero reports that every gain is exactly 0 (u ≡ 0).
	Zero bool
}

// practicalReferences returns the public reference directions.
func practicalReferences(n, m int) [][]float64 {
	var refs [][]float64
	switch {
	case n == 1:
		refs = append(refs, []float64{1})
	case n == 2:
		for j := 0; j < m; j++ {
			a := math.Pi * float64(j) / float64(m)
			refs = append(refs, []float64{math.Cos(a), math.Sin(a)})
		}
	default:
		for i := 0; i < n && len(refs) < m; i++ {
			r := make([]float64, n)
			r[i] = 1
			refs = append(refs, r)
		}
		for i := 0; i < n && len(refs) < m; i++ {
			for j := i + 1; j < n && len(refs) < m; j++ {
				for _, sg := range []float64{1, -1} {
					if len(refs) < m {
						r := make([]float64, n)
						r[i], r[j] = 1/math.Sqrt2, sg/math.Sqrt2
						refs = append(refs, r)
					}
				}
			}
		}
	}
	return refs
}

// NewPracticalPlanner returns the planner; seed is the public optimiser stream (release j,
// reference i use seed.Index(j).Index(i)).
func NewPracticalPlanner(pub Public, cfg PracticalConfig, seed rng.Seed) (*PracticalPlanner, error) {
	cfg, err := cfg.resolve(pub)
	if err != nil {
		return nil, err
	}
	capacity := max(counter.Schedule{Every: cfg.BatchEvery}.Batches(cfg.Episodes-1), 1)
	pl := &PracticalPlanner{pub: pub, cfg: cfg, refs: practicalReferences(pub.N, cfg.References),
		s: newSearcher(pub, cfg.Search), releases: capacity + 1, seed: seed, index: -1}
	pl.ws = newPracticalSearch(pl.s, cfg.Warm, len(pl.refs))
	return pl, nil
}

// Prepare computes the confidence set and the reference plans for release r (a no-op if r's
// index is the cached one). Releases must be passed in the order the curator made them: each
// reference's search is warm-started from its plan for the previous release.
func (pl *PracticalPlanner) Prepare(r *PracticalRelease) error {
	if r.Index == pl.index && pl.Set != nil {
		return nil
	}
	if err := r.finite(); err != nil {
		return err
	}
	set, err := pl.practicalConfidence(r)
	if err != nil {
		return err
	}
	pl.Set = set
	pl.Refs = pl.Refs[:0]
	for i, x := range pl.refs {
		sr, mode := pl.ws.search(&set.Set, x, i, r.Index, pl.seed.Index(uint64(r.Index)).Index(uint64(i)).Rand())
		if !pl.s.ric.Solve(sr.Theta) {
			return fmt.Errorf("practical lq: Riccati recursion failed at Θ̃")
		}
		rp := PracticalRefPlan{X: x, Search: sr, Mode: mode, Gains: make([][]float64, pl.pub.H), Zero: true}
		for h := range rp.Gains {
			rp.Gains[h] = append([]float64(nil), pl.s.ric.K[h+1]...)
			for _, g := range rp.Gains[h] {
				rp.Zero = rp.Zero && g == 0
				if g-g != 0 {
					return fmt.Errorf("practical lq: the plan's gains are not finite (the release is out of the planner's domain); not published")
				}
			}
		}
		pl.Refs = append(pl.Refs, rp)
	}
	pl.index = r.Index
	return nil
}

// Choose returns the index in Refs of the reference closest in angle to x1 (largest
// |⟨x1, r_j⟩|; the lowest index on ties; 0 for x1 = 0, or before the first Prepare). J*_1(Θ, x)
// is even in x, so ±r_j are equivalent. It reads only the published plans (Refs[j].X = r_j), so
// a decoded output chooses as the planner does.
func (pl *PracticalPlanner) Choose(x1 []float64) int {
	best, bv := 0, -1.0
	for j := range pl.Refs {
		r := pl.Refs[j].X
		v := 0.0
		for i := range r {
			v += r[i] * x1[i]
		}
		if v = math.Abs(v); v > bv {
			best, bv = j, v
		}
	}
	return best
}
