package linmix

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/dprl/dprl/internal/bounds"
)

// HypercubeAction returns the vector a ∈ {−1,+1}^{n} of action index idx: a_i = +1 if bit i
// of idx is 1 and −1 otherwise (linear-mixture spec §7.1).
func HypercubeAction(idx, n int) []float64 {
	a := make([]float64, n)
	for i := range a {
		if idx>>i&1 == 1 {
			a[i] = 1
		} else {
			a[i] = -1
		}
	}
	return a
}

// TwoStateHard builds Environment A of the linear-mixture spec §7.1: S = {x0, x1}, s_1 = x0,
// A = {−1,+1}^{d−1}, μ = (ρq/(d−1))·σ, P(x1|x0,a) = q + ⟨μ,a⟩, P(x1|x1,a) = 1 − q, reward
// 1 in x1 and 0 in x0, features ψ(x1|x0,a) = (c1·q, c2·a), ψ(x0|x0,a) = (c1(1−q), −c2·a),
// ψ(x1|x1,a) = (c1(1−q), 0), ψ(x0|x1,a) = (c1·q, 0), w_h = (√2, √(2(d−1))·μ), with
// c1 = 1/√2, c2 = 1/√(2(d−1)). signs is σ ∈ {±1}^{d−1}; nil selects the default σ_i = +1 for
// even i and −1 for odd i. Zhou's reward features are ϕ(s,a) = e_s ∈ R², θ_{h,r} = (0,1).
// Requires d ≥ 2, q ∈ (0, 1/2], ρ ∈ [0, 1].
func TwoStateHard(d, H int, q, rho float64, signs []int) (*MDP, error) {
	if d < 2 || d > 16 {
		return nil, fmt.Errorf("two-state-hard: dim = %d, want 2..16 (|A| = 2^(d-1))", d)
	}
	if !(q > 0 && q <= 0.5) {
		return nil, fmt.Errorf("two-state-hard: q = %v, want (0, 0.5]", q)
	}
	if !(rho >= 0 && rho <= 1) {
		return nil, fmt.Errorf("two-state-hard: rho = %v, want [0, 1]", rho)
	}
	n := d - 1
	if signs == nil {
		signs = make([]int, n)
		for i := range signs {
			signs[i] = 1 - 2*(i%2)
		}
	}
	if len(signs) != n {
		return nil, fmt.Errorf("two-state-hard: %d signs, want dim-1 = %d", len(signs), n)
	}
	mu := make([]float64, n)
	for i, s := range signs {
		if s != 1 && s != -1 {
			return nil, fmt.Errorf("two-state-hard: signs[%d] = %d, want ±1", i, s)
		}
		mu[i] = rho * q / float64(n) * float64(s)
	}
	c1, c2 := 1/math.Sqrt2, 1/math.Sqrt(2*float64(n))
	A := 1 << n
	sp := Spec{Name: fmt.Sprintf("two-state-hard(d=%d,H=%d,q=%g,rho=%g)", d, H, q, rho),
		States: 2, Actions: A, Horizon: H, Dim: d, Start: 0, RewardDim: 2}
	for a := 0; a < A; a++ {
		av := HypercubeAction(a, n)
		v1 := append([]float64{c1 * q}, scale(av, c2)...)
		v0 := append([]float64{c1 * (1 - q)}, scale(av, -c2)...)
		sp.Psi = append(sp.Psi, PsiEntry{S: 0, A: a, Next: 0, Vec: v0}, PsiEntry{S: 0, A: a, Next: 1, Vec: v1})
		sp.Psi = append(sp.Psi,
			PsiEntry{S: 1, A: a, Next: 0, Vec: append([]float64{c1 * q}, make([]float64, n)...)},
			PsiEntry{S: 1, A: a, Next: 1, Vec: append([]float64{c1 * (1 - q)}, make([]float64, n)...)})
	}
	for s := 0; s < 2; s++ {
		for a := 0; a < A; a++ {
			f := []float64{0, 0}
			f[s] = 1
			sp.Phi = append(sp.Phi, f)
		}
	}
	w := append([]float64{1 / c1}, scale(mu, 1/c2)...)
	for h := 0; h < H; h++ {
		sp.W = append(sp.W, w)
		sp.ThetaR = append(sp.ThetaR, []float64{0, 1})
	}
	return New(sp)
}

func scale(x []float64, c float64) []float64 {
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = c * v
	}
	return out
}

// RiverSwim builds Environment B of the spec §7.2: RiverSwim with S states viewed as a linear
// mixture with d = S²A, ψ(s'|s,a) = e_{(sA+a)S+s'}/√S for every s' (the full known feature,
// zero-probability rows included) and w_h = √S·vec(P). Rewards r(0,left) = 0.005,
// r(S−1,right) = 1; ϕ(s,a) = e_{sA+a}, θ_r = vec(r). Zhou's scaling (ψ = e_idx, θ_p = vec P)
// is the same model reparametrised by √S; we keep Luyo's, which satisfies both papers'
// normalisations.
func RiverSwim(S, H int) (*MDP, error) {
	if S < 3 || S > 20 {
		return nil, fmt.Errorf("riverswim: states = %d, want 3..20", S)
	}
	const A = 2
	P := make([]float64, S*A*S)
	set := func(s, a, t int, p float64) { P[(s*A+a)*S+t] = p }
	for s := 0; s < S; s++ {
		set(s, 0, max(s-1, 0), 1)
		switch {
		case s == 0:
			set(0, 1, 0, 0.4)
			set(0, 1, 1, 0.6)
		case s == S-1:
			set(s, 1, s, 0.6)
			set(s, 1, s-1, 0.4)
		default:
			set(s, 1, s+1, 0.35)
			set(s, 1, s, 0.6)
			set(s, 1, s-1, 0.05)
		}
	}
	d := S * S * A
	rs := math.Sqrt(float64(S))
	sp := Spec{Name: fmt.Sprintf("riverswim-mixture(S=%d,H=%d)", S, H), States: S, Actions: A, Horizon: H, Dim: d, RewardDim: S * A}
	for s := 0; s < S; s++ {
		for a := 0; a < A; a++ {
			for t := 0; t < S; t++ {
				v := make([]float64, d)
				v[(s*A+a)*S+t] = 1 / rs
				sp.Psi = append(sp.Psi, PsiEntry{S: s, A: a, Next: t, Vec: v})
			}
			f := make([]float64, S*A)
			f[s*A+a] = 1
			sp.Phi = append(sp.Phi, f)
		}
	}
	w := scale(P, rs)
	thr := make([]float64, S*A)
	thr[0] = 0.005
	thr[(S-1)*A+1] = 1
	for h := 0; h < H; h++ {
		sp.W = append(sp.W, w)
		sp.ThetaR = append(sp.ThetaR, thr)
	}
	return New(sp)
}

// BaseMixture builds Environment C of the spec §7.3 from seed: d base kernels P_j, each
// P_j(·|s,a) supported on 3 distinct next states drawn uniformly with Dirichlet(1) weights,
// mixture weights θ ~ Dirichlet(1), rewards r(s,a) ~ U[0,1]; ψ(s'|s,a) =
// (P_1(s'|s,a), …, P_d(s'|s,a))/√d, w = √d·θ (the same for all h), ϕ = e_{sA+a}, θ_r = vec(r).
func BaseMixture(S, A, d, H int, seed *rand.Rand) (*MDP, error) {
	if S < 3 || S > 1000 || A < 1 || A > 64 || d < 1 || d > 64 {
		return nil, fmt.Errorf("base-mixture: states = %d (want 3..1000), actions = %d (want 1..64), dim = %d (want 1..64)", S, A, d)
	}
	if H < 1 || H > 10000 {
		return nil, fmt.Errorf("base-mixture: horizon = %d, want 1..10000", H)
	}
	if n, ok := bounds.Product(MaxEntries, d, S, A, S); !ok {
		return nil, fmt.Errorf("base-mixture: base kernels dim·states·actions·states = %s exceeds the limit 2^26 entries (states=%d, actions=%d, dim=%d)", n, S, A, d)
	}
	if err := CheckSize(S, A, H, d, S*A, 3*S*A); err != nil {
		return nil, fmt.Errorf("base-mixture: %w", err)
	}
	const supp = 3
	base := make([][]float64, d) // [j][(sa)*S+s']
	for j := range base {
		base[j] = make([]float64, S*A*S)
		for sa := 0; sa < S*A; sa++ {
			perm := seed.Perm(S)[:supp]
			var ws [supp]float64
			tot := 0.0
			for i := range ws {
				ws[i] = seed.ExpFloat64()
				tot += ws[i]
			}
			for i, t := range perm {
				base[j][sa*S+t] = ws[i] / tot
			}
		}
	}
	theta := make([]float64, d)
	tot := 0.0
	for j := range theta {
		theta[j] = seed.ExpFloat64()
		tot += theta[j]
	}
	for j := range theta {
		theta[j] /= tot
	}
	rd := math.Sqrt(float64(d))
	sp := Spec{Name: fmt.Sprintf("base-mixture(S=%d,A=%d,d=%d,H=%d)", S, A, d, H), States: S, Actions: A, Horizon: H, Dim: d, RewardDim: S * A}
	thr := make([]float64, S*A)
	for sa := 0; sa < S*A; sa++ {
		for t := 0; t < S; t++ {
			v := make([]float64, d)
			nz := false
			for j := 0; j < d; j++ {
				v[j] = base[j][sa*S+t] / rd
				nz = nz || v[j] != 0
			}
			if nz {
				sp.Psi = append(sp.Psi, PsiEntry{S: sa / A, A: sa % A, Next: t, Vec: v})
			}
		}
		f := make([]float64, S*A)
		f[sa] = 1
		sp.Phi = append(sp.Phi, f)
		thr[sa] = seed.Float64()
	}
	for h := 0; h < H; h++ {
		sp.W = append(sp.W, scale(theta, rd))
		sp.ThetaR = append(sp.ThetaR, thr)
	}
	return New(sp)
}

// HardToLearn builds the hard-to-learn linear mixture MDP of Zhou, Gu & Szepesvári (2021,
// arXiv:2012.08507) as used by the public LDP-UCRL-VTR code: S = H+2 states (chain states
// 0..H−1, a non-rewarding absorbing state H and a rewarding absorbing state H+1), s_1 = 0,
// A = 2^{d−1} hypercube actions, δ = 1/H, Δ = √(δ/K)/(4√2), α = √(1/(1+Δ(d−1))),
// β = √(Δ/(1+Δ(d−1))). From a chain state s: ψ(s+1|s,a) = (α(1−δ), −β·a),
// ψ(H+1|s,a) = (αδ, β·a); absorbing states: ψ(s|s,a) = (α, 0). θ_h = (1/α, μ_h/β) with
// μ_h ∈ {−Δ, +Δ}^{d−1} drawn from seed, so P(H+1|s,a) = δ + ⟨μ_h, a⟩. Reward 1 in state H+1,
// 0 elsewhere (ϕ = e_{[s = H+1]} ∈ R², θ_r = (0,1)). The public code orders the action bits
// most-significant first; ours maps bit i to coordinate i, a fixed permutation of the
// coordinates that leaves the distribution of the instance unchanged.
func HardToLearn(d, H, K int, seed *rand.Rand) (*MDP, error) {
	if d < 2 || d > 16 {
		return nil, fmt.Errorf("hard-to-learn: dim = %d, want 2..16 (|A| = 2^(d-1))", d)
	}
	if H < 2 || H > 1000 {
		return nil, fmt.Errorf("hard-to-learn: horizon = %d, want 2..1000", H)
	}
	if K < 1 {
		return nil, fmt.Errorf("hard-to-learn: episodes = %d, want ≥ 1 (Δ depends on K)", K)
	}
	n := d - 1
	delta := 1 / float64(H)
	Delta := math.Sqrt(delta/float64(K)) / (4 * math.Sqrt2)
	alpha := math.Sqrt(1 / (1 + Delta*float64(n)))
	beta := math.Sqrt(Delta / (1 + Delta*float64(n)))
	S := H + 2
	A := 1 << n
	if err := CheckSize(S, A, H, d, 2, 2*S*A); err != nil {
		return nil, fmt.Errorf("hard-to-learn: %w", err)
	}
	sp := Spec{Name: fmt.Sprintf("hard-to-learn(d=%d,H=%d,K=%d)", d, H, K), States: S, Actions: A, Horizon: H, Dim: d, RewardDim: 2}
	for s := 0; s < S; s++ {
		for a := 0; a < A; a++ {
			if s < H {
				av := HypercubeAction(a, n)
				sp.Psi = append(sp.Psi,
					PsiEntry{S: s, A: a, Next: s + 1, Vec: append([]float64{alpha * (1 - delta)}, scale(av, -beta)...)},
					PsiEntry{S: s, A: a, Next: S - 1, Vec: append([]float64{alpha * delta}, scale(av, beta)...)})
			} else {
				sp.Psi = append(sp.Psi, PsiEntry{S: s, A: a, Next: s, Vec: append([]float64{alpha}, make([]float64, n)...)})
			}
			if s == S-1 {
				sp.Phi = append(sp.Phi, []float64{0, 1})
			} else {
				sp.Phi = append(sp.Phi, []float64{1, 0})
			}
		}
	}
	for h := 0; h < H; h++ {
		w := []float64{1 / alpha}
		for i := 0; i < n; i++ {
			mu := Delta
			if seed.IntN(2) == 0 {
				mu = -Delta
			}
			w = append(w, mu/beta)
		}
		sp.W = append(sp.W, w)
		sp.ThetaR = append(sp.ThetaR, []float64{0, 1})
	}
	return New(sp)
}
