package lq

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// Planner computes user k's policy from the billboard and user k's own initial state only
// (Algorithm 1 lines 3–5 and the gains of line 7). It never sees raw statistics.
type Planner struct {
	pub    Public
	cfg    Config
	consts Constants
	s      *searcher
}

// NewPlanner returns the planner for the given public problem, configuration and constants.
func NewPlanner(pub Public, cfg Config, consts Constants) *Planner {
	return &Planner{pub: pub, cfg: cfg, consts: consts, s: newSearcher(pub, cfg.Search)}
}

// Plan is the outcome of one episode's planning: the policy handed to the user and diagnostics.
type Plan struct {
	// Gains are K_1(Θ̃)..K_H(Θ̃) (d×n each): the policy u_h = K_h x_h (eq. (10)).
	Gains [][]float64
	// Set is the confidence set C_k (Θ̂_k, V_k, β_k).
	Set Ellipsoid
	// PDRepair reports that V_k had an eigenvalue below λ_min and was clipped (§3.3).
	PDRepair bool
	// LogDet is the ld(k) used in β_k (§3.4).
	LogDet float64
	// Search is the optimistic step's result (Θ̃, f(Θ̃), diagnostics).
	Search SearchResult
}

// Plan computes Θ̂_k = V_k^{-1} U_k with V_k = T_{1,k} + ηI (private; λI for ε = ∞), the
// confidence radius β_k (Lemma 1 with the private log-det bound of lq spec §3.4 — the paper's
// β uses the non-private G_k, a [PAPER BUG]), the optimistic Θ̃_k (eq. (9)) and its gains
// (eq. (10)). rng is the episode's optimiser stream, derived from public values only.
func (pl *Planner) Plan(b *Billboard, x1 []float64, rng *rand.Rand) (*Plan, error) {
	n, d := pl.pub.N, pl.pub.D
	p := n + d
	if len(b.T1) != p*p || len(b.T2) != p*n || len(x1) != n {
		return nil, fmt.Errorf("lq: billboard or initial state has the wrong shape")
	}
	v, qv, ok := eigenRidge(b.T1, p, pl.consts.Eta)
	if !ok {
		return nil, fmt.Errorf("lq: eigendecomposition of V_k failed")
	}
	plan := &Plan{}
	for i := range v {
		if v[i] < pl.consts.LambdaMin {
			v[i] = pl.consts.LambdaMin // post-processing; a no-op on the good event
			plan.PDRepair = true
		}
	}
	hat := ridgeEstimate(qv, v, b.T2, p, n)
	// ld(k) (lq spec §3.4): ln det V_k − p ln λ_min; for ε = ∞ this is exactly
	// ln det(I + G_k/λ) (§2.5); privately it is min'ed with the deterministic bound.
	ld := logDetRatio(v, pl.consts.LambdaMin)
	if pl.consts.Private {
		k := float64(b.Episode)
		g := 1 + pl.pub.Gamma
		ldDet := float64(p) * math.Log1p(float64(pl.pub.H)*(k-1)*g*g/(float64(p)*pl.consts.LambdaMin))
		ld = math.Min(ld, ldDet)
	}
	ld = math.Max(ld, 0)
	beta := pl.pub.Cw*math.Sqrt(2*math.Log(2/pl.cfg.Alpha)+float64(n)*ld) + math.Sqrt(pl.consts.LambdaMax) + pl.consts.Nu
	beta *= pl.cfg.WidthMultiplier
	plan.LogDet = ld
	plan.Set = Ellipsoid{P: p, N: n, ThetaHat: hat, QV: qv, V: v, Beta: beta}
	plan.Search = pl.s.search(&plan.Set, x1, rng)
	if !pl.s.ric.Solve(plan.Search.Theta) {
		return nil, fmt.Errorf("lq: Riccati recursion failed at Θ̃")
	}
	plan.Gains = make([][]float64, pl.pub.H)
	for h := range plan.Gains {
		plan.Gains[h] = append([]float64(nil), pl.s.ric.K[h+1]...)
	}
	return plan, nil
}
