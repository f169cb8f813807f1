package counter

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/dprl/dprl/privacy/noise"
)

// scriptSource is a Secure source whose draws are given: AddGaussian(x, σ) returns x plus the
// next scripted value (the counters call it with x = 0, one coordinate at a time).
type scriptSource struct {
	vals []float64
	i    int
}

func (s *scriptSource) AddLaplace(float64, float64) float64 { panic("scriptSource: Laplace") }
func (s *scriptSource) Secure() bool                        { return true }
func (s *scriptSource) AddGaussian(x, _ float64) float64 {
	v := s.vals[s.i]
	s.i++
	return x + v
}

type secureFactory struct {
	name string
	f    func(GaussianConfig, noise.Source) (GaussianCounter, error)
	c    func(T int) []float64 // encoder coefficients c_0, …, c_{T−1}
}

var secureFactorisations = []secureFactory{
	{"sqrt", func(c GaussianConfig, s noise.Source) (GaussianCounter, error) { return NewSqrtFactorization(c, s) }, SqrtCoefficients},
	{"blt-5", func(c GaussianConfig, s noise.Source) (GaussianCounter, error) { return NewSqrtBLT(c, 5, s) },
		func(T int) []float64 { p, _ := FitSqrtBLT(T, 5); return p.Coefficients(T) }},
	{"blt-2", func(c GaussianConfig, s noise.Source) (GaussianCounter, error) { return NewSqrtBLT(c, 2, s) },
		func(T int) []float64 { p, _ := FitSqrtBLT(T, 2); return p.Coefficients(T) }},
}

// scriptedRun feeds x (T×dim, row t = element t+1) with the draws z (same shape) and returns the
// releases.
func scriptedRun(t *testing.T, f secureFactory, cfg GaussianConfig, x, z [][]float64) [][]float64 {
	t.Helper()
	var flat []float64
	for _, r := range z {
		flat = append(flat, r...)
	}
	c, err := f.f(cfg, &scriptSource{vals: flat})
	if err != nil {
		t.Fatal(err)
	}
	out := make([][]float64, len(x))
	for i, e := range x {
		if err := c.Insert(e); err != nil {
			t.Fatal(err)
		}
		out[i] = append([]float64(nil), c.Prefix()...)
	}
	return out
}

// TestSecureReleaseCoupling checks the argument of secure_release.go numerically, on the code.
// For random streams of large magnitude (elements up to 2^40·γ), noise with spikes up to
// 2^10·σ, and a neighbour that changes element τ by up to 100σ per coordinate, it
// reconstructs the draws z′ that make the neighbour's releases equal the original ones, by
// running the counter itself (z′_t = y_t − (release with z′_{<t} and a zero draw at t)), and
// requires:
//
//   - the neighbour fed z′ reproduces every release bit for bit (the coupling is exact, so the
//     mechanism is the step-by-step discrete Gaussian mechanism the argument describes);
//   - every shift ε = z′ − z is on the grid γZ (else the discrete draws could not absorb it);
//   - ‖ε‖₂ ≤ ‖C e_τ‖·‖D‖₂ + 2·G·γ·√((T−τ)·Dim), the bound that SecureReleaseSlack charges
//     (D = x̃_τ − x̃′_τ the rounded elements' difference, G = RoundingGain);
//   - the residual ξ = A D e_τ − B ε (computed in float; ξ_t = 0 for t ≤ τ) has every entry
//     below γ(1 + 10⁻⁶): two roundings, plus the floating-point error η of the noise
//     prediction — which, measured directly for the BLTs against 256-bit arithmetic, must stay
//     below 10⁻⁶·γ, far inside the γ/2 the slack allows.
//
// It logs the worst ratios ‖ε − C D e_τ‖₂ / (G·γ·√((T−τ)·Dim)), max|ξ|/γ and max η/γ.
func TestSecureReleaseCoupling(t *testing.T) {
	r := rand.New(rand.NewPCG(18, 2))
	worstNorm, worstXi, worstEta := 0.0, 0.0, 0.0
	for trial := range 24 {
		f := secureFactorisations[trial%len(secureFactorisations)]
		T := 20 + r.IntN(100)
		if f.name == "sqrt" {
			T = 20 + r.IntN(60)
		}
		dim := 1 + r.IntN(4)
		sigma := math.Ldexp(1+r.Float64(), r.IntN(40)-20)
		cfg := GaussianConfig{Dim: dim, Capacity: T, Sigma: sigma}
		g := noise.GaussianGranularity(sigma)
		tau := 1 + r.IntN(T)
		x, x2, z := make([][]float64, T), make([][]float64, T), make([][]float64, T)
		for i := range T {
			x[i], x2[i], z[i] = make([]float64, dim), make([]float64, dim), make([]float64, dim)
			for k := range dim {
				x[i][k] = g * (float64(r.Int64N(1<<41)-(1<<40)) + r.Float64())
				x2[i][k] = x[i][k]
				s := sigma
				if r.IntN(50) == 0 {
					s *= 1024
				}
				z[i][k] = roundGrid(s*r.NormFloat64(), g)
			}
		}
		D := make([]float64, dim)
		for k := range dim {
			x2[tau-1][k] = x[tau-1][k] + sigma*100*(2*r.Float64()-1)
			D[k] = roundGrid(x[tau-1][k], g) - roundGrid(x2[tau-1][k], g)
		}
		y := scriptedRun(t, f, cfg, x, z)
		// Reconstruct z′ step by step with the counter itself.
		z2 := make([][]float64, T)
		for i := range T {
			z2[i] = make([]float64, dim)
			probe := scriptedRun(t, f, cfg, x2[:i+1], z2[:i+1])
			for k := range dim {
				z2[i][k] = y[i][k] - probe[i][k]
			}
		}
		y2 := scriptedRun(t, f, cfg, x2, z2)
		for i := range T {
			for k := range dim {
				if math.Float64bits(y2[i][k]) != math.Float64bits(y[i][k]) {
					t.Fatalf("%s trial %d: release %d coord %d: the neighbour with the coupled draws releases %v, the original %v", f.name, trial, i+1, k, y2[i][k], y[i][k])
				}
			}
		}
		c := f.c(T)
		G := 0.0
		for k := range c {
			if k == 0 {
				G += math.Abs(c[0])
			} else {
				G += math.Abs(c[k] - c[k-1])
			}
		}
		cnt, err := f.f(GaussianConfig{Dim: 1, Capacity: T}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := cnt.(interface{ RoundingGain() float64 }).RoundingGain(); math.Abs(got-G) > 1e-12*G {
			t.Fatalf("%s T=%d: RoundingGain %v, Σ|c_k − c_{k−1}| = %v", f.name, T, got, G)
		}
		// b_k: the decoder B = A·C⁻¹ (generating function 1/((1 − x)c(x))).
		b := make([]float64, T)
		for m := range T {
			v := 1.0
			for j := 1; j <= m; j++ {
				v -= c[j] * b[m-j] // c·b = all-ones
			}
			b[m] = v
		}
		normD, normEps, normRes := 0.0, 0.0, 0.0
		for k := range dim {
			normD += D[k] * D[k]
		}
		normD = math.Sqrt(normD)
		for i := range T {
			for k := range dim {
				e := z2[i][k] - z[i][k]
				if q := e / g; q != math.Trunc(q) {
					t.Fatalf("%s trial %d: shift ε_%d,%d = %v is not on the grid γ = %g", f.name, trial, i+1, k, e, g)
				}
				normEps += e * e
				ce := 0.0 // (C D e_τ)_t
				if i >= tau-1 {
					ce = c[i-tau+1] * D[k]
				}
				normRes += (e - ce) * (e - ce)
				bEps := 0.0 // (B ε)_t
				for j := 0; j <= i; j++ {
					bEps += b[i-j] * (z2[j][k] - z[j][k])
				}
				ad := 0.0
				if i >= tau-1 {
					ad = D[k]
				}
				xi := ad - bEps
				if i < tau && math.Abs(xi) > 1e-9*g {
					t.Fatalf("%s trial %d: residual ξ_%d = %v at t ≤ τ = %d", f.name, trial, i+1, xi, tau)
				}
				worstXi = math.Max(worstXi, math.Abs(xi)/g)
				if math.Abs(xi) >= g*(1+1e-6) {
					t.Errorf("%s trial %d (T=%d, σ=%g): |ξ_%d,%d| = %.9g·γ, want < γ(1 + 10⁻⁶)", f.name, trial, T, sigma, i+1, k, math.Abs(xi)/g)
				}
			}
		}
		if bc, ok := cnt.(*BLT); ok {
			worstEta = math.Max(worstEta, bltPredictionError(t, bc.Params(), cfg, x, z)/g)
		}
		normEps, normRes = math.Sqrt(normEps), math.Sqrt(normRes)
		sf := cnt.SensitivityFactor()
		n := math.Sqrt(float64((T - tau) * dim))
		if bound := sf*normD + 2*G*g*n; normEps > bound {
			t.Errorf("%s trial %d: ‖ε‖₂ = %v exceeds ‖C e_τ‖·‖D‖ + 2Gγ√((T−τ)·Dim) = %v", f.name, trial, normEps, bound)
		}
		if n > 0 {
			worstNorm = math.Max(worstNorm, normRes/(G*g*n))
		}
	}
	if worstEta > 1e-6 {
		t.Errorf("BLT noise prediction: floating-point error η = %.3g·γ, the argument allows γ/2 and the docs state < 10⁻⁶·γ", worstEta)
	}
	t.Logf("worst ‖ε − C D e_τ‖₂ / (G·γ·√((T−τ)·Dim)) = %.4f; worst |ξ|/γ = %.6f; worst BLT η/γ = %.3g", worstNorm, worstXi, worstEta)
}

// bltPredictionError runs a BLT with parameters p on x with the draws z and returns the largest
// |P_t − Σ_{j<t} b_{t−j} z_j| over t and coordinates: the floating-point error η of the Secure
// path's noise prediction, against the exact sum computed with 256-bit floats from the same θ, ω.
func bltPredictionError(t *testing.T, p BLTParams, cfg GaussianConfig, x, z [][]float64) float64 {
	t.Helper()
	var flat []float64
	for _, r := range z {
		flat = append(flat, r...)
	}
	c, err := NewBLT(cfg, p, &scriptSource{vals: flat})
	if err != nil {
		t.Fatal(err)
	}
	T := len(x)
	const prec = 256
	nf := func(v float64) *big.Float { return new(big.Float).SetPrec(prec).SetFloat64(v) }
	// c_k = Σ θ_i ω_i^{k−1} and b with c·b = all-ones, exactly enough.
	cb := make([]*big.Float, T)
	pow := make([]*big.Float, len(p.Omega))
	for i := range pow {
		pow[i] = nf(1)
	}
	cb[0] = nf(1)
	for k := 1; k < T; k++ {
		s := nf(0)
		for i, th := range p.Theta {
			s.Add(s, new(big.Float).SetPrec(prec).Mul(nf(th), pow[i]))
			pow[i].Mul(pow[i], nf(p.Omega[i]))
		}
		cb[k] = s
	}
	bb := make([]*big.Float, T)
	for m := range T {
		v := nf(1)
		for j := 1; j <= m; j++ {
			v.Sub(v, new(big.Float).SetPrec(prec).Mul(cb[j], bb[m-j]))
		}
		bb[m] = v
	}
	worst := 0.0
	for i := range T {
		if err := c.Insert(x[i]); err != nil {
			t.Fatal(err)
		}
		for k := range cfg.Dim {
			ex := nf(0)
			for j := 0; j < i; j++ {
				ex.Add(ex, new(big.Float).SetPrec(prec).Mul(bb[i-j], nf(z[j][k])))
			}
			e, _ := new(big.Float).SetPrec(prec).Sub(nf(c.pred[k]), ex).Float64()
			worst = math.Max(worst, math.Abs(e))
		}
	}
	return worst
}

// TestSecureReleaseSlack: the slack is G·2^-28·√((T−1)·Dim), at least the exact
// 2·G·γ·√((T−1)·Dim)/(σ·m) for any σ and minimum scale m, zero for the trees and for a single
// release, NaN on invalid input; and the gains: G = 2 − c_{T−1} for the square root, the closed
// form for BLTs with θ ≥ 0 against the O(T·d) sum (a BLT with a negative θ takes the sum).
func TestSecureReleaseSlack(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 200 {
		gain, T, dim := 2*r.Float64(), 1+r.IntN(1_000_000), 1+r.IntN(5000)
		sigma, m := math.Ldexp(1+r.Float64(), r.IntN(60)-30), 0.1+r.Float64()
		g := noise.GaussianGranularity(sigma * m)
		exact := 2 * gain * g * math.Sqrt(float64(T-1)*float64(dim)) / (sigma * m)
		if got := SecureReleaseSlack(gain, T, dim); !(got >= exact) || got > 2*exact*(1+1e-12) {
			t.Fatalf("gain %v T %d dim %d σ %v m %v: slack %v, exact term %v", gain, T, dim, sigma, m, got, exact)
		}
	}
	if SecureReleaseSlack(0, 100, 3) != 0 || SecureReleaseSlack(1.5, 1, 3) != 0 {
		t.Error("slack with gain 0 or one release must be 0")
	}
	if got, want := SecureReleaseSlack(2, 200_001, 4000), 2*math.Ldexp(1, -28)*math.Sqrt(8e8); got != want {
		t.Errorf("slack %v, want %v", got, want)
	}
	for _, bad := range [][3]float64{{-1, 10, 1}, {1, 0, 1}, {1, 10, 0}, {math.NaN(), 10, 1}, {math.Inf(1), 10, 1}} {
		if s := SecureReleaseSlack(bad[0], int(bad[1]), int(bad[2])); !math.IsNaN(s) {
			t.Errorf("SecureReleaseSlack%v = %v, want NaN", bad, s)
		}
	}
	for _, T := range []int{1, 2, 3, 50, 5000} {
		sq, err := NewSqrtFactorization(GaussianConfig{Dim: 1, Capacity: T}, nil)
		if err != nil {
			t.Fatal(err)
		}
		c := SqrtCoefficients(T)
		want := 2 - c[T-1]
		if T == 1 {
			want = 1
		}
		if got := sq.RoundingGain(); math.Abs(got-want) > 1e-15 || got >= 2 {
			t.Errorf("sqrt T=%d: gain %v, want %v < 2", T, got, want)
		}
		for _, p := range []BLTParams{
			{Theta: []float64{0.3, 0.1}, Omega: []float64{0.5, 0.99}},
			{Theta: []float64{0.9, 0.6}, Omega: []float64{0.2, 0.9}}, // c_1 > 1
			{Theta: []float64{0.5, -0.2}, Omega: []float64{0.9, 0.5}},
		} {
			c := p.Coefficients(T)
			sum := 0.0
			for k := range c {
				prev := 0.0
				if k > 0 {
					prev = c[k-1]
				}
				sum += math.Abs(c[k] - prev)
			}
			if got := p.RoundingGain(T); math.Abs(got-sum) > 1e-12*sum {
				t.Errorf("%v T=%d: gain %v, Σ|c_k − c_{k−1}| = %v", p, T, got, sum)
			}
		}
	}
	tr, _ := NewGaussianTree(GaussianConfig{Dim: 1, Capacity: 8}, nil)
	ho, _ := NewHonakerTree(GaussianConfig{Dim: 1, Capacity: 8}, nil)
	if tr.RoundingGain() != 0 || ho.RoundingGain() != 0 {
		t.Error("tree gains must be 0")
	}
}
