package linmix

// LinOpt-VI-Reg (Zhou Alg. 1; private instance Private-LinOpt-VI, Def. 6.2; spec §5.3):
//
//	for h = H..1:
//	    θ̂_{h,p} ← Λ_{h,p}⁻¹ u_{h,p};  θ̂_{h,r} ← Λ_{h,r}⁻¹ u_{h,r}        (eqs. (1), (2))
//	    for all (s,a):  φ ← Σ_{s'} ψ(s,a,s')·V^k_{h+1}(s')
//	        Q^k_h(s,a) ← clip(ϕ(s,a)ᵀθ̂_{h,r} + φᵀθ̂_{h,p} + β_p‖φ‖_{Λ_{h,p}⁻¹} + β_r‖ϕ(s,a)‖_{Λ_{h,r}⁻¹}, 0, H−h+1)
//	    V^k_h(s) ← max_a Q^k_h(s,a);  π^k_h(s) ← argmax_a
//	roll out; leaves φ^k_h φ^k_hᵀ, φ^k_h·V^k_{h+1}(s_{h+1}), ϕϕᵀ, ϕ·r^k_h (four counters per step)
//
// Regression 0 is the transition regression (p), regression 1 the reward regression (r). The
// REGULARIZER (§5.5) is the curator's Z = tree noise + 2Σ·I, z = vector tree noise (JDP), the
// sum of user noises + 2Σ^L·I (LDP [D], §5.7), or λI, 0 (non-private, λ = 1). The paper's
// "Λ¹ = 0" is read as Λ¹ = Z¹ (spec P15).

// qLinOpt returns Zhou's optimistic Q before clipping.
func (p *planner) qLinOpt(bb *Billboard, h, s, a int, next []float64) float64 {
	p.m.PsiV(s, a, next, p.x)
	mp, bp := p.meanBonus(bb, h, 0, p.x, p.beta[0])
	mr, br := p.meanBonus(bb, h, 1, p.m.RewardFeature(s, a), p.beta[1])
	return mr + mp + bp + br
}

// leavesLinOpt builds the four leaves per step from the user's own trajectory and the
// published values (next[h] = V^k_{h+1}).
func (p *planner) leavesLinOpt(next [][]float64, tr *trajectory, lv *Leaves) {
	for h := 0; h < p.H; h++ {
		p.m.PsiV(tr.s[h], tr.a[h], next[h], lv.x[h][0])
		lv.y[h][0] = next[h][tr.s[h+1]]
		copy(lv.x[h][1], p.m.RewardFeature(tr.s[h], tr.a[h]))
		lv.y[h][1] = tr.r[h]
	}
}
