package linmix

import (
	"math"

	"github.com/dprl/dprl/internal/smallmat"
)

// Privacy-preserving UCRL-VTR+ (Luyo et al. Alg. 3, App. D), as reconstructed in the spec §4
// (the printed algorithm's typos — D² in both matrices, ψ_V for ψ_{V²}, f for g — resolved as
// Thm 9, Lemma 12 and the proofs D.3/D.4 require). Two regressions per step:
//
//	hat   (r = 0): weighted regression of V̂ on ψ_V̂ with weights σ̄⁻² → (Λ̂, ŵ), drives optimism
//	tilde (r = 1): unweighted regression of V̂² on ψ_{V̂²}        → (Λ̃, w̃), drives the variance
//
// User k plans with Q̂ = min{H, r + ⟨ψ_V̂, ŵ⟩ + β̂_k‖ψ_V̂‖_{Λ̂⁻¹}} and, for h = 1..H at (s,a) =
// (s_h, a_h), with x = ψ_{V̂_{h+1}}(s,a), x2 = ψ_{V̂²_{h+1}}(s,a):
//
//	VarEst = clip(⟨x2, w̃⟩, 0, H²) − clip(⟨x, ŵ⟩, 0, H)²
//	E      = min{H², 2H·β̌_k‖x‖_{Λ̂⁻¹}} + min{H², β̃_k‖x2‖_{Λ̃⁻¹}}
//	σ̄²     = max{H²/d, VarEst + E}
//	send σ̄⁻²x xᵀ + B¹, σ̄⁻²x·V̂(s_{h+1}) + f¹, x2 x2ᵀ + B², x2·V̂²(s_{h+1}) + g¹
//
// The weighted leaf is written as (X, y) = (x/σ̄, V̂(s_{h+1})/σ̄), so X Xᵀ = σ̄⁻²x xᵀ and X y =
// σ̄⁻²x·V̂; with σ̄ ≥ H/√d, ‖X‖ ≤ √d and y ≤ √d, which gives the sensitivity d of App. D.

// leavesPlus builds the two leaves per step from the user's own trajectory and the published
// rule: the values next[h] = V̂_{h+1}, the broadcast factors and the episode's widths (pr).
func (p *planner) leavesPlus(pr *plusRule, next [][]float64, tr *trajectory, lv *Leaves) {
	H := float64(p.H)
	d := float64(p.d)
	for h := 0; h < p.H; h++ {
		s, a, s1 := tr.s[h], tr.a[h], tr.s[h+1]
		vn := next[h]
		x, x2 := lv.x[h][0], lv.x[h][1]
		p.m.PsiV(s, a, vn, x)
		p.m.PsiVSq(s, a, vn, x2)
		Lh, wh := pr.chol[2*h], pr.w[2*h]
		Lt, wt := pr.chol[2*h+1], pr.w[2*h+1]
		varEst := min(H*H, max(0, dot(x2, wt))) - math.Pow(min(H, max(0, dot(x, wh))), 2)
		e := min(H*H, 2*H*pr.bCheck*math.Sqrt(smallmat.InvQuad(Lh, p.d, x, p.tmp))) +
			min(H*H, pr.bTilde*math.Sqrt(smallmat.InvQuad(Lt, p.d, x2, p.tmp)))
		sig := math.Sqrt(max(H*H/d, varEst+e))
		y := vn[s1]
		for i := range x {
			x[i] /= sig
		}
		lv.y[h][0] = y / sig
		lv.y[h][1] = y * y
	}
}
