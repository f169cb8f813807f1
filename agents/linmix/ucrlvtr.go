package linmix

// UCRL-VTR and privacy-preserving UCRL-VTR (Luyo et al. Alg. 1; spec §2, §3.1):
//
//	Ṽ_{H+1} ≡ 0
//	for h = H..1, for every (s,a):
//	    x ← ψ_{Ṽ_{h+1}}(s,a)
//	    Q̃_h(s,a) ← min{H, r_h(s,a) + ⟨x, w̃_{k,h}⟩ + β·‖x‖_{Λ̃_{k,h}⁻¹}}   (also max{0,·}, spec P3)
//	    Ṽ_h(s) ← max_a Q̃_h(s,a);  π_{k,h}(s) ← argmax_a Q̃_h(s,a)
//	play π; for h = 1..H: X_h ← ψ_{Ṽ_{h+1}}(s_h,a_h), y_h ← Ṽ_{h+1}(s_{h+1})
//	msg_h ← (X_h X_hᵀ + B¹, X_h y_h + g¹)    (B¹ = g¹ = 0 in JDP; user-side noise in LDP)
//
// The server side (sums, tree noise, shift 2Υ·I, Cholesky) is in stats.go; the constants
// (Cor. 5, Cor. 6, Remark 1 [D], P7 [D]) in constants.go.

// qVTR returns r_h(s,a) + ⟨x, w̃⟩ + β‖x‖_{Λ̃⁻¹} with x = ψ_{V_{h+1}}(s,a) (unclipped). It is
// also UCRL-VTR+'s optimistic Q with the "hat" regression (regression 0).
func (p *planner) qVTR(bb *Billboard, h, s, a int, next []float64, beta float64) float64 {
	p.m.PsiV(s, a, next, p.x)
	mean, bonus := p.meanBonus(bb, h, 0, p.x, beta)
	return p.m.Reward(h, s, a) + mean + bonus
}

// leavesVTR builds user k's regression leaves X_h = ψ_{Ṽ_{h+1}}(s_h, a_h), y_h = Ṽ_{h+1}(s_{h+1})
// from the user's own trajectory and the values the user planned with (the data-index rule of
// spec §1.4: episode k's regressor uses episode k's Ṽ and is never recomputed); next[h] is
// Ṽ_{h+1}, read from the published rule.
func (p *planner) leavesVTR(next [][]float64, tr *trajectory, lv *Leaves) {
	for h := 0; h < p.H; h++ {
		p.m.PsiV(tr.s[h], tr.a[h], next[h], lv.x[h][0])
		lv.y[h][0] = next[h][tr.s[h+1]]
	}
}
