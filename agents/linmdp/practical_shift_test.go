package linmdp

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/dprl/dprl/rng"
)

// TestShiftComparison checks the claim of practical_shift.go on seeded draws: whenever ‖E‖ ≤
// λ_t, Λ̃_κ = G + E + κI ⪰ c(κ)(G + λ₀I) with c(κ) = min(1, (κ + ℓ)/(ℓ + λ_t + λ₀)), ℓ =
// λ_min(G + E), for every κ of the candidate grid with κ + ℓ > 0. Gram matrices range from
// nearly empty to well conditioned relative to the noise.
func TestShiftComparison(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	const d, s, l0 = 5, 10.0, 1.0
	lt := gramNoiseBound(s, d, 0.05)
	checked := 0
	for trial := 0; trial < 600; trial++ {
		// G = Σ n_i x_i x_iᵀ with a random number of random features (scale up to 10⁴).
		G := make([]float64, d*d)
		n := int(math.Pow(10, 4*r.Float64()))
		for k := 0; k < n; k++ {
			addRandomOuter(G, d, r.Float64)
		}
		E := make([]float64, d*d)
		for i := 0; i < d; i++ {
			for j := i; j < d; j++ {
				sd := s
				if j != i {
					sd /= math.Sqrt2
				}
				v := sd * r.NormFloat64()
				E[i*d+j], E[j*d+i] = v, v
			}
		}
		if norm := math.Max(-minEigSym(E, d), -minEigSym(neg(E), d)); norm > lt {
			continue // outside the event
		}
		Gt := make([]float64, d*d)
		for i := range Gt {
			Gt[i] = G[i] + E[i]
		}
		ell := minEigSym(Gt, d)
		for j := 0; j < practicalShifts; j++ {
			kappa, c, ok := shiftCandidate(j, lt+l0, ell, lt, l0)
			if !ok {
				continue
			}
			diff := make([]float64, d*d)
			for i := range diff {
				diff[i] = Gt[i] - c*G[i]
			}
			for i := 0; i < d; i++ {
				diff[i*d+i] += kappa - c*l0
			}
			if m := minEigSym(diff, d); m < -1e-7*(1+math.Abs(ell)) {
				t.Fatalf("trial %d κ=%g: λ_min(Λ̃_κ − c(G+λ₀I)) = %g < 0 (ℓ=%g, c=%g)", trial, kappa, m, ell, c)
			}
			checked++
		}
	}
	if checked < 1000 {
		t.Fatalf("only %d comparisons checked", checked)
	}
}

func neg(a []float64) []float64 {
	b := make([]float64, len(a))
	for i, x := range a {
		b[i] = -x
	}
	return b
}

// TestCentredTarget: on exact statistics (noise-off twin) of a simplex feature table the
// centred target b + Σ_{s′}G[s′](V(s′) − c) + c·G·1 equals the plain target b + Σ_{s′}G[s′]V(s′)
// for every c (Σ_{s′}G[s′] = G·1 when every φ sums to 1), and the agent detects the simplex
// table.
func TestCentredTarget(t *testing.T) {
	env := practicalSmall(t)
	sd := rng.NewSeed(3).Child("agent")
	a, err := NewPractical(env, PracticalConfig{Common: Common{K: 300, Seed: &sd}, Epsilon: 1, Delta: 1e-5, Mode: PracticalNoiseOff})
	if err != nil {
		t.Fatal(err)
	}
	if !a.simplex {
		t.Fatal("LatentRiver's feature table is a simplex table but was not detected")
	}
	runAgent(t, env, a, 300, 3)
	rel := &a.cur.rel
	d := a.d
	G := make([]float64, d*d)
	rel.Gram(0, G)
	r := rand.New(rand.NewPCG(1, 2))
	v := make([]float64, env.N)
	for s := range v {
		v[s] = float64(env.H) * r.Float64()
	}
	plain, cent := make([]float64, d), make([]float64, d)
	rel.Target(0, v, plain)
	for _, c := range []float64{0.5, 3, 7} {
		vc := make([]float64, env.N)
		for s := range v {
			vc[s] = v[s] - c
		}
		rel.Target(0, vc, cent)
		for i := 0; i < d; i++ {
			for j := 0; j < d; j++ {
				cent[i] += c * G[i*d+j]
			}
			if math.Abs(cent[i]-plain[i]) > 1e-9*(1+math.Abs(plain[i])) {
				t.Errorf("c=%g coordinate %d: centred %v, plain %v", c, i, cent[i], plain[i])
			}
		}
	}
	// A non-simplex table (features scaled by 1/2) is not centred.
	half := *env
	half.Phi = make([][][]float64, env.N)
	for s, row := range env.Phi {
		half.Phi[s] = make([][]float64, len(row))
		for act, f := range row {
			g := make([]float64, len(f))
			for i, x := range f {
				g[i] = x / 2
			}
			half.Phi[s][act] = g
		}
	}
	b, err := NewPractical(&half, PracticalConfig{Common: Common{K: 300, Seed: &sd}, Epsilon: 1, Delta: 1e-5, Mode: PracticalNoiseOff})
	if err != nil {
		t.Fatal(err)
	}
	if b.simplex {
		t.Error("a feature table summing to 1/2 was taken for a simplex table")
	}
}

// TestShiftNotWider: at every practical update the chosen (κ, c) gives a total bonus, summed
// over the distinct features and clipped at H, no larger than the full shift κ₀ = λ_t + λ₀
// with c = 1 would, and κ ≤ κ₀; the theory variant keeps κ₀ (shift_last stays 0 = unset).
func TestShiftNotWider(t *testing.T) {
	env := practicalSmall(t)
	sd := rng.NewSeed(4).Child("agent")
	a, err := NewPractical(env, PracticalConfig{Common: Common{K: 2000, Seed: &sd}, Epsilon: 1, Delta: 1e-5})
	if err != nil {
		t.Fatal(err)
	}
	runAgent(t, env, a, 2000, 4)
	if a.version == 0 {
		t.Fatal("no update")
	}
	if k0 := a.lamT + a.lambda0; !(a.shift >= 0 && a.shift <= k0) {
		t.Errorf("shift %g outside [0, λ_t+λ₀ = %g]", a.shift, k0)
	}
	for g := 0; g < a.groups; g++ {
		l, beta, w := a.chooseShift(g, 100, 10, 10)
		H := float64(a.H)
		score := func(l []float64, beta, w float64) float64 {
			s := 0.0
			for _, f := range a.pl.uniq {
				x := make([]float64, a.d)
				solveInto(l, a.d, f, x)
				q := dot(f, x)
				s += math.Min(beta*math.Sqrt(q)+w*math.Sqrt(dot(x, x)), H)
			}
			return s
		}
		e0 := a.lamT
		full := score(a.chol[g], a.betaStat, 100+(a.lamT+a.lambda0)*10+e0*10)
		if got := score(l, beta, w); got > full*(1+1e-12) {
			t.Errorf("group %d: chosen bonus sum %g > full-shift %g", g, got, full)
		}
	}
	th, err := NewPractical(env, PracticalConfig{Common: Common{K: 2000, Seed: &sd, CBeta: 1}, Epsilon: 1, Delta: 1e-5, Theory: true})
	if err != nil {
		t.Fatal(err)
	}
	runAgent(t, env, th, 2000, 4)
	if th.relG != nil || th.shift != 0 {
		t.Error("the theory variant used the practical shift")
	}
}

// solveInto solves Λ̃x = f from the lower Cholesky factor l (row-major) by forward and back
// substitution (independent of smallmat).
func solveInto(l []float64, d int, f, x []float64) {
	y := make([]float64, d)
	for i := 0; i < d; i++ {
		v := f[i]
		for j := 0; j < i; j++ {
			v -= l[i*d+j] * y[j]
		}
		y[i] = v / l[i*d+i]
	}
	for i := d - 1; i >= 0; i-- {
		v := y[i]
		for j := i + 1; j < d; j++ {
			v -= l[j*d+i] * x[j]
		}
		x[i] = v / l[i*d+i]
	}
}
