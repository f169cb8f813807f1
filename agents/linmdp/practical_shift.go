package linmdp

import (
	"math"

	"github.com/dprl/dprl/internal/smallmat"
	"gonum.org/v1/gonum/mat"
)

// This file holds the practical agents' choice of the regulariser shift at a policy update
// (practical.go, Practical.update; not used by the theory variant, which keeps the shift
// λ_t + λ₀ and the bias width (2λ_t + λ₀)·2H√d). Everything here reads the release and public
// constants only: it is post-processing and changes no privacy quantity.
//
// Why. With Λ̃ = G̃ + (λ_t + λ₀)I the bias of w̃ = Λ̃⁻¹ỹ is −Λ̃⁻¹(E + (λ_t + λ₀)I)w, bounded by
// (2λ_t + λ₀)·‖w‖·‖Λ̃⁻¹φ‖: at (1, 1e−5) on E2 this term is ≈ 30× the statistical width and is
// what the private agent (and its noise-off twin) pay. The shift λ_t is there only to make
// Λ̃ ⪰ G + λ₀I, the comparison the statistical term needs; once the released Gram matrix is
// large compared with the noise, a much smaller shift keeps a weaker comparison that costs a
// constant factor on the (small) statistical term and removes most of the (large) bias.
//
// Claim (comparison). Let ℓ = λ_min(G̃) (G̃ the released Gram matrix), κ ≥ 0 with κ + ℓ > 0,
// Λ̃_κ = G̃ + κI and c(κ) = min(1, (κ + ℓ)/(ℓ + λ_t + λ₀)). On the event ‖E‖ ≤ λ_t (E = G̃ − G,
// gramNoiseBound, probability ≥ 1 − β_c), Λ̃_κ ⪰ c(κ)·(G + λ₀I).
// Proof. Λ̃_κ − c(G + λ₀I) = G̃ − E + E + κI − c(G̃ − E) − cλ₀I = (1 − c)G̃ + cE + (κ − cλ₀)I
// ⪰ ((1 − c)ℓ − cλ_t + κ − cλ₀)I, which is ⪰ 0 iff κ + ℓ ≥ c(ℓ + λ_t + λ₀). □
// Hence |φᵀΛ̃_κ⁻¹Σφ_iη_i| ≤ ‖φ‖_{Λ̃_κ⁻¹}·‖Σφ_iη_i‖_{(G+λ₀I)⁻¹}/√c(κ): the statistical width
// becomes β_stat/√c(κ). κ = λ_t + λ₀ gives c = 1 (the previous agent).
//
// Bias. φᵀΛ̃_κ⁻¹(Λ̃_κ − G)w = κ·uᵀw + uᵀEw with u = Λ̃_κ⁻¹φ: |κuᵀw| ≤ κ‖u‖W_w, and |uᵀEw| ≤
// e·‖u‖W_w with e = min(λ_t, e₁). λ_t is the spectral bound; e₁ is the Gaussian bound of the
// same kind as the target's W_y (for a fixed w, i.e. a fixed V_{h+1}): for FIXED u₀, w the
// scalar u₀ᵀEw is Gaussian with variance (s_g²/2)(‖u₀‖²‖w‖² + (u₀ᵀw)²) ≤ s_g²‖u₀‖²‖w‖² (s_g
// the Gram diagonal std). u = Λ̃_κ⁻¹φ depends on E; with u₀ = (G + κI)⁻¹φ, u₀ − u = Λ̃_κ⁻¹E·u₀,
// so with ρ = λ_t/(ℓ + κ) < 1, ‖u₀‖ ≤ ‖u‖/(1 − ρ) and ‖u − u₀‖ ≤ ρ‖u‖/(1 − ρ); then
// |uᵀEw| ≤ |u₀ᵀEw| + λ_t‖u − u₀‖‖w‖ ≤ ‖u‖‖w‖·(z_E s_g + ρλ_t)/(1 − ρ) =: ‖u‖‖w‖·e₁, with
// z_E = Φ⁻¹(1 − β_c/n) split over the n candidate shifts. The target noise e_y (independent
// coordinates of the counter) keeps its width W_y.
//
// Choice of κ. Every bound above holds on the same events for every κ at once, so κ may be
// chosen from the release: among κ ∈ {κ₀, κ₀/2, …, κ₀/2^{n−2}, 0} (κ₀ = λ_t + λ₀; only those
// with κ + ℓ > 0) the planner takes the κ minimising Σ_f min(H, bonus_κ(f)) over the distinct
// feature vectors f, where bonus_κ(f) = β_stat/√c(κ)·‖f‖_{Λ̃_κ⁻¹} + ‖Λ̃_κ⁻¹f‖·(W_y + (κ + e)W_w);
// ties keep the larger κ. Practical (no regret proof): the Gaussian step treats V_{h+1} as
// fixed, as W_y does.
//
// Centred target (simplex feature tables only, a public property: every φ(s, a) ≥ 0 sums to
// 1). Then Σ_{s′}G[s′] = Σ_i φ_i = G·1, so for any c the target can be read as ỹ_c = b̃ +
// Σ_{s′}G̃[s′](V(s′) − c) + c·G̃·1 = y + e_b + E_Gᵀ(V − c1) + c·E·1. The error of w̃ becomes
// Λ̃_κ⁻¹(Σφ_iη_i + e_b + E_Gᵀ(V − c1) − κw − E(w − c1)): the target noise has the width
// W_y = z·s_y·√(1 + ‖V − c1‖²) instead of z·s_y·√(1 + ‖V‖²), and the E part bounds ‖w − c1‖
// ≤ √d·max(c, 1 + max V − c) ≤ √d(1 + max V) (each w_i = θ_i + ∫V dμ_i ∈ [0, 1 + max V]).
// c is chosen by chooseCentre from V and the public stds only. On E2 at (1, 1e−5), K = 2·10⁵,
// the shift and the centre together cut the practical agent's R(K) from 530 649 to ≈ 147 000
// (3 seeds; last-decile regret 0.380 → 0.036).

// practicalShifts is n, the number of candidate shifts.
const practicalShifts = 12

// shiftCandidate returns the j-th candidate shift κ_j of the grid from κ₀ (κ₀/2^j, 0 for the
// last), its comparison factor c(κ_j) = min(1, (κ_j + ℓ)/(ℓ + λ_t + λ₀)) and whether κ_j is
// usable (κ_j + ℓ > 0 and c > 0).
func shiftCandidate(j int, k0, ell, lt, l0 float64) (kappa, c float64, ok bool) {
	if j < practicalShifts-1 {
		kappa = math.Ldexp(k0, -j)
	}
	if !(kappa+ell > 0) {
		return kappa, 0, false
	}
	c = math.Min(1, (kappa+ell)/(ell+lt+l0))
	return kappa, c, c > 0
}

// minEigSym returns the smallest eigenvalue of the symmetric d×d matrix a (row-major); NaN
// if the decomposition fails.
func minEigSym(a []float64, d int) float64 {
	var es mat.EigenSym
	if !es.Factorize(mat.NewSymDense(d, append([]float64(nil), a...)), false) {
		return math.NaN()
	}
	v := es.Values(nil)
	return v[0]
}

// refreshShift reads the released Gram matrix of every group and its smallest eigenvalue
// (once per update).
func (a *Practical) refreshShift(rel *PracticalRelease) {
	d := a.d
	if a.relG == nil {
		a.relG, a.ell = make([][]float64, a.groups), make([]float64, a.groups)
		a.shChol = [2][]float64{make([]float64, d*d), make([]float64, d*d)}
		a.shM = make([]float64, d*d)
		for g := range a.relG {
			a.relG[g] = make([]float64, d*d)
		}
	}
	for g := range a.relG {
		rel.Gram(g, a.relG[g])
		a.ell[g] = minEigSym(a.relG[g], d)
	}
}

// chooseShift returns the Cholesky factor of Λ̃_κ, the statistical width β_stat/√c(κ) and the
// noise width W_y + (κ + e)·W_w for the κ chosen as described at the top of this file, for
// group g with target width wy and weight bound ww.
func (a *Practical) chooseShift(g int, wy, wk, we float64) ([]float64, float64, float64) {
	d := a.d
	H := float64(a.H)
	lt, l0 := a.lamT, a.lambda0
	k0 := lt + l0
	// κ₀: the guarded matrix of the switching rule, c = 1.
	ell := a.ell[g]
	sg := a.std * a.cur.lay.gramScale
	zE := zQuantile(a.conf / practicalShifts)
	eOf := func(kappa float64) float64 {
		e := lt
		if rho := lt / (ell + kappa); ell+kappa > 0 && rho < 1 {
			e = math.Min(lt, (zE*sg+rho*lt)/(1-rho))
		}
		return e
	}
	score := func(l []float64, beta, w float64) float64 {
		s := 0.0
		for _, f := range a.pl.uniq {
			q := smallmat.InvQuad(l, d, f, a.scratch)
			smallmat.Solve(l, d, f, a.scratch)
			n := 0.0
			for _, x := range a.scratch[:d] {
				n += x * x
			}
			s += math.Min(beta*math.Sqrt(q)+w*math.Sqrt(n), H)
		}
		return s
	}
	bestL, bestB, bestK := a.chol[g], a.betaStat, k0
	bestW := wy + k0*wk + eOf(k0)*we
	best := score(bestL, bestB, bestW)
	buf := 0
	a.shift = k0
	if math.IsNaN(ell) {
		return bestL, bestB, bestW
	}
	for j := 1; j < practicalShifts; j++ {
		kappa, c, ok := shiftCandidate(j, k0, ell, lt, l0)
		if !ok {
			continue
		}
		copy(a.shM, a.relG[g])
		for i := 0; i < d; i++ {
			a.shM[i*d+i] += kappa
		}
		l := a.shChol[buf]
		if !smallmat.Cholesky(a.shM, d, l) {
			continue
		}
		beta := a.betaStat / math.Sqrt(c)
		w := wy + kappa*wk + eOf(kappa)*we
		if s := score(l, beta, w); s < best {
			best, bestL, bestB, bestW, bestK = s, l, beta, w, kappa
			buf = 1 - buf
		}
	}
	a.shift = bestK
	return bestL, bestB, bestW
}

// practicalStep plans step h of a practical (non-theory) update from release rel: the
// (centred) target, the shift and the widths. zsy is z·s_y (the target's noise std times
// Φ⁻¹(1 − β_c)).
func (a *Practical) practicalStep(h, g int, v []float64, rel *PracticalRelease, zsy float64) {
	d := a.d
	sd := math.Sqrt(float64(d))
	vmax := 0.0
	for _, x := range v {
		vmax = math.Max(vmax, x)
	}
	c := 0.0
	if a.simplex && len(v) > 0 {
		c = a.chooseCentre(v, vmax, zsy)
	}
	vn := 0.0
	if c != 0 {
		if a.vc == nil {
			a.vc = make([]float64, len(v))
		}
		for s, x := range v {
			a.vc[s] = x - c
			vn += (x - c) * (x - c)
		}
		rel.Target(g, a.vc, a.y)
		G := a.relG[g]
		for i := 0; i < d; i++ {
			r := 0.0
			for _, x := range G[i*d : i*d+d] {
				r += x
			}
			a.y[i] += c * r
		}
	} else {
		for _, x := range v {
			vn += x * x
		}
		rel.Target(g, v, a.y)
	}
	a.centre = c
	wy := zsy * math.Sqrt(1+vn)
	wk := sd * (1 + vmax)
	we := sd * math.Max(c, 1+vmax-c)
	chol, beta, w := a.chooseShift(g, wy, wk, we)
	a.pl.beta = beta
	a.pl.noiseW = w
	a.lastW = w
	a.pl.planStep(h, Release{Chol: chol, Y: a.y})
}

// practicalCentres is the number of grid points of the centre search.
const practicalCentres = 41

// chooseCentre returns the centre c ∈ [0, 1 + max V] minimising the leading-order noise width
// z·s_y·√(1 + ‖V − c‖²) + z_E·s_g·√d·max(c, 1 + max V − c) on a grid (a convex function of c).
// It reads V and the public stds only.
func (a *Practical) chooseCentre(v []float64, vmax, zsy float64) float64 {
	zE := zQuantile(a.conf/practicalShifts) * a.std * a.cur.lay.gramScale * math.Sqrt(float64(a.d))
	best, bc := math.Inf(1), 0.0
	for j := 0; j < practicalCentres; j++ {
		c := (1 + vmax) * float64(j) / (practicalCentres - 1)
		n := 0.0
		for _, x := range v {
			n += (x - c) * (x - c)
		}
		if f := zsy*math.Sqrt(1+n) + zE*math.Max(c, 1+vmax-c); f < best {
			best, bc = f, c
		}
	}
	return bc
}
