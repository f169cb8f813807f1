package linmdp

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// NewSimplex builds a simplex linear MDP (spec §6.2): φ(s,a) ∈ Δ_d, latent next-state
// distributions nu[h][i] ∈ Δ_N (μ_h^i = ν_{h,i}) and θ_h ∈ [0,1]^d, so that every
// normalisation of §1.2 holds exactly. nu and theta have 1 (homogeneous) or H entries. The
// initial state is s1.
func NewSimplex(name string, phi [][][]float64, nu [][][]float64, theta [][]float64, s1, H int) (*MDP, error) {
	if len(phi) == 0 || len(nu) == 0 || len(nu[0]) == 0 {
		return nil, fmt.Errorf("linmdp: %s: empty features or latent distributions", name)
	}
	N := len(phi)
	if s1 < 0 || s1 >= N {
		return nil, fmt.Errorf("linmdp: %s: initial state %d not in [0, %d)", name, s1, N)
	}
	mu := make([][][]float64, len(nu))
	for h := range nu {
		d := len(nu[h])
		mu[h] = make([][]float64, N)
		for s2 := 0; s2 < N; s2++ {
			mu[h][s2] = make([]float64, d)
			for i := 0; i < d; i++ {
				if len(nu[h][i]) != N {
					return nil, fmt.Errorf("linmdp: %s: nu[%d][%d] has length %d, want N = %d", name, h, i, len(nu[h][i]), N)
				}
				mu[h][s2][i] = nu[h][i][s2]
			}
		}
	}
	init := make([]float64, N)
	init[s1] = 1
	return New(name, phi, mu, theta, init, H)
}

// RiverSwimOneHot is environment E1 (spec §6.3): the "RiverSwim-style" chain with n states,
// actions 0 = left and 1 = right, written as a linear MDP with one-hot features
// φ(s,a) = e_{2s+a} (d = 2n), time-homogeneous, s_1 = 0. Left moves to max(s−1, 0); right
// moves up with probability 0.6 at s = 0 (else stays), 0.35 in the middle (stays 0.6, down
// 0.05), and at s = n−1 stays with 0.6 and moves down with 0.4. r(0, left) = 0.005,
// r(n−1, right) = 1.
func RiverSwimOneHot(n, H int) (*MDP, error) {
	if n < 2 || n > 1000 {
		return nil, fmt.Errorf("linmdp: riverswim: n must be in [2, 1000], got %d", n)
	}
	d := 2 * n
	phi := make([][][]float64, n)
	nu := make([][]float64, d)
	theta := make([]float64, d)
	for s := 0; s < n; s++ {
		phi[s] = make([][]float64, 2)
		for a := 0; a < 2; a++ {
			phi[s][a] = make([]float64, d)
			phi[s][a][2*s+a] = 1
			nu[2*s+a] = make([]float64, n)
		}
		nu[2*s][max(s-1, 0)] = 1
		r := nu[2*s+1]
		switch {
		case s == 0:
			r[1], r[0] = 0.6, 0.4
		case s < n-1:
			r[s+1], r[s], r[s-1] = 0.35, 0.6, 0.05
		default:
			r[s], r[s-1] = 0.6, 0.4
		}
	}
	theta[0] = 0.005
	theta[2*(n-1)+1] = 1
	return NewSimplex(fmt.Sprintf("riverswim-onehot(n=%d,H=%d)", n, H), phi, [][][]float64{nu}, [][]float64{theta}, 0, H)
}

// LatentRiver is environment E2 (spec §6.4): m latent levels (d = m), M copies per level
// (N = mM), A = 3 (0 back, 1 forward, 2 stay). Copy j of a level has forward quality
// q = qlo + (qhi−qlo)·j/(M−1); φ(s,back) = e_dn, φ(s,forward) = q·e_up + (1−q)·e_dn,
// φ(s,stay) = e_ℓ with dn = max(ℓ−1,0), up = min(ℓ+1,m−1); ν_i is uniform over level i;
// θ = (lure, 0, …, 0, 1); s_1 = 0.
func LatentRiver(m, M int, qlo, qhi, lure float64, H int) (*MDP, error) {
	if m < 2 || m > 100 {
		return nil, fmt.Errorf("linmdp: latentriver: m must be in [2, 100], got %d", m)
	}
	if M < 2 || M > 1000 {
		return nil, fmt.Errorf("linmdp: latentriver: M must be in [2, 1000], got %d", M)
	}
	if !(qlo >= 0 && qlo <= qhi && qhi <= 1) {
		return nil, fmt.Errorf("linmdp: latentriver: need 0 <= qlo <= qhi <= 1, got qlo=%g qhi=%g", qlo, qhi)
	}
	if !(lure >= 0 && lure <= 1) {
		return nil, fmt.Errorf("linmdp: latentriver: lure must be in [0, 1], got %g", lure)
	}
	N := m * M
	if err := CheckSize(N, 3, m, 1, H); err != nil {
		return nil, fmt.Errorf("latentriver: %w", err)
	}
	phi := make([][][]float64, N)
	for s := 0; s < N; s++ {
		l, j := s/M, s%M
		q := qlo + (qhi-qlo)*float64(j)/float64(M-1)
		dn, up := max(l-1, 0), min(l+1, m-1)
		phi[s] = [][]float64{make([]float64, m), make([]float64, m), make([]float64, m)}
		phi[s][0][dn] = 1
		phi[s][1][up] += q
		phi[s][1][dn] += 1 - q
		phi[s][2][l] = 1
	}
	nu := make([][]float64, m)
	for i := range nu {
		nu[i] = make([]float64, N)
		for j := 0; j < M; j++ {
			nu[i][i*M+j] = 1 / float64(M)
		}
	}
	theta := make([]float64, m)
	theta[0] = lure
	theta[m-1] = 1
	return NewSimplex(fmt.Sprintf("latentriver(m=%d,M=%d,H=%d)", m, M, H), phi, [][][]float64{nu}, [][]float64{theta}, 0, H)
}

// RandomSimplex is environment E3 (spec §6.5), drawn from one PCG(seed, 0) stream in the
// fixed order: (1) for each (s,a) a support of size kPhi from [d] without replacement with
// Exp(1) weights normalised (Dirichlet(1) on the support); (2) for each h (once if
// homogeneous) and i ∈ [d] a support of size kNu from [N] with Exp(1) weights; (3)
// θ_{h,i} = U(0,1)³. s_1 = 0.
func RandomSimplex(N, A, d, H, kPhi, kNu int, seed uint64, homogeneous bool) (*MDP, error) {
	switch {
	case N < 1 || N > 100000:
		return nil, fmt.Errorf("linmdp: randomsimplex: N must be in [1, 100000], got %d", N)
	case A < 1 || A > 1000:
		return nil, fmt.Errorf("linmdp: randomsimplex: A must be in [1, 1000], got %d", A)
	case d < 1 || d > 1000:
		return nil, fmt.Errorf("linmdp: randomsimplex: d must be in [1, 1000], got %d", d)
	case kPhi < 1 || kPhi > d:
		return nil, fmt.Errorf("linmdp: randomsimplex: kPhi must be in [1, d=%d], got %d", d, kPhi)
	case kNu < 1 || kNu > N:
		return nil, fmt.Errorf("linmdp: randomsimplex: kNu must be in [1, N=%d], got %d", N, kNu)
	case H < 1 || H > 100000:
		return nil, fmt.Errorf("linmdp: randomsimplex: H must be in [1, 100000], got %d", H)
	}
	steps := H
	if homogeneous {
		steps = 1
	}
	if err := CheckSize(N, A, d, steps, H); err != nil {
		return nil, fmt.Errorf("randomsimplex: %w", err)
	}
	r := rand.New(rand.NewPCG(seed, 0))
	support := func(n, k int) []int {
		p := r.Perm(n)
		return p[:k]
	}
	dirichlet := func(n, k int) []float64 {
		out := make([]float64, n)
		sup := support(n, k)
		w := make([]float64, k)
		t := 0.0
		for i := range w {
			w[i] = r.ExpFloat64()
			t += w[i]
		}
		for i, j := range sup {
			out[j] = w[i] / t
		}
		return out
	}
	phi := make([][][]float64, N)
	for s := range phi {
		phi[s] = make([][]float64, A)
		for a := range phi[s] {
			phi[s][a] = dirichlet(d, kPhi)
		}
	}
	nu := make([][][]float64, steps)
	for h := range nu {
		nu[h] = make([][]float64, d)
		for i := range nu[h] {
			nu[h][i] = dirichlet(N, kNu)
		}
	}
	theta := make([][]float64, steps)
	for h := range theta {
		theta[h] = make([]float64, d)
		for i := range theta[h] {
			u := r.Float64()
			theta[h][i] = u * u * u
		}
	}
	return NewSimplex(fmt.Sprintf("randomsimplex(N=%d,A=%d,d=%d,H=%d,seed=%d)", N, A, d, H, seed), phi, nu, theta, 0, H)
}

// TwoState100 is the "TwoState-100": 2 states with a uniform initial state, A = 100
// actions, d = 10. Each action a has a seeded random sign vector v_a ∈ {−1,1}^8 (drawn from
// PCG(seed, 0) in action order), and with δ = 1{s=0, a=0}
//
//	φ(s,a) = [ v_a/√8 · c, δ, 1−δ ] / √(1+c²),   c = 1,   i.e. [v_a/4, δ/√2, (1−δ)/√2],
//
// so ‖φ(s,a)‖₂ = 1 exactly. θ = (0,…,0, √2, 0) gives r(s,a) = δ, and μ(s') = (0,…,0, 1/√2,
// 1/√2) for both s' gives a uniform next state. ‖θ‖ = √2 and ‖μ(S)‖ = 2 are ≤ √10, μ ≥ 0.
// The only rewarding pair is (0, 0); the 8 random coordinates are distractors.
func TwoState100(seed uint64, H int) (*MDP, error) {
	const A, k = 100, 8
	const d = k + 2
	r := rand.New(rand.NewPCG(seed, 0))
	v := make([][]float64, A)
	for a := range v {
		v[a] = make([]float64, k)
		for i := range v[a] {
			if r.Uint64()&1 == 1 {
				v[a][i] = 1
			} else {
				v[a][i] = -1
			}
		}
	}
	phi := make([][][]float64, 2)
	for s := range phi {
		phi[s] = make([][]float64, A)
		for a := range phi[s] {
			f := make([]float64, d)
			for i := 0; i < k; i++ {
				f[i] = v[a][i] / 4
			}
			if s == 0 && a == 0 {
				f[k] = 1 / math.Sqrt2
			} else {
				f[k+1] = 1 / math.Sqrt2
			}
			phi[s][a] = f
		}
	}
	mu := [][][]float64{make([][]float64, 2)}
	for s := range mu[0] {
		mu[0][s] = make([]float64, d)
		mu[0][s][k], mu[0][s][k+1] = 1/math.Sqrt2, 1/math.Sqrt2
	}
	theta := [][]float64{make([]float64, d)}
	theta[0][k] = math.Sqrt2
	return New(fmt.Sprintf("twostate100(seed=%d,H=%d)", seed, H), phi, mu, theta, []float64{0.5, 0.5}, H)
}
