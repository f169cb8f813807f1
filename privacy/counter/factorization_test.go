package counter_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/dprl/dprl/privacy/counter"
	"github.com/dprl/dprl/privacy/counter/countertest"
	"github.com/dprl/dprl/privacy/noise"
)

func init() {
	cache := map[[2]int]counter.BLTParams{}
	bltFactory := func(buffers int) countertest.Factory {
		return func(cfg counter.GaussianConfig, src noise.Source) (counter.GaussianCounter, error) {
			if err := cfg.Validate(); err != nil {
				return nil, err
			}
			key := [2]int{cfg.Capacity, buffers}
			p, ok := cache[key]
			if !ok {
				var err error
				if p, err = counter.FitSqrtBLT(cfg.Capacity, buffers); err != nil {
					return nil, err
				}
				cache[key] = p
			}
			return counter.NewBLT(cfg, p, src)
		}
	}
	gaussianFactories = append(gaussianFactories,
		struct {
			name string
			f    countertest.Factory
		}{"sqrt", func(cfg counter.GaussianConfig, src noise.Source) (counter.GaussianCounter, error) {
			return counter.NewSqrtFactorization(cfg, src)
		}},
		struct {
			name string
			f    countertest.Factory
		}{"blt-5", bltFactory(5)},
		struct {
			name string
			f    countertest.Factory
		}{"blt-2", bltFactory(2)},
	)
}

// TestSqrtGolden: Σ_{k<n} c_k² at the spec's golden points (practical-privacy spec §3), and
// c_k = C(2k,k)/4^k for small k.
func TestSqrtGolden(t *testing.T) {
	for _, c := range []struct {
		n    int
		want float64
	}{{50000, 4.510317}, {1000000, 5.463889}} {
		s := 0.0
		for _, v := range counter.SqrtCoefficients(c.n) {
			s += v * v
		}
		if math.Abs(s-c.want) > 5e-7 {
			t.Errorf("Σ_{k<%d} c_k² = %.7f, want %.6f", c.n, s, c.want)
		}
	}
	for k, want := range []float64{1, 1. / 2, 3. / 8, 5. / 16, 35. / 128, 63. / 256} {
		if got := counter.SqrtCoefficients(6)[k]; got != want {
			t.Errorf("c_%d = %v, want %v", k, got, want)
		}
	}
	// C² = A: Σ_{j≤k} c_j c_{k−j} = 1.
	c := counter.SqrtCoefficients(200)
	for k := range c {
		s := 0.0
		for j := 0; j <= k; j++ {
			s += c[j] * c[k-j]
		}
		if math.Abs(s-1) > 1e-12 {
			t.Fatalf("(C²)_k = %v at k=%d, want 1", s, k)
		}
	}
	sq, _ := counter.NewSqrtFactorization(counter.GaussianConfig{Dim: 1, Capacity: 50000, Sigma: 1}, noise.NewSeeded(rand.New(rand.NewPCG(1, 1))))
	if got := sq.SensitivityFactor(); math.Abs(got*got-4.510317) > 5e-7 || math.Abs(sq.StdAt(50000)-got) > 1e-15 {
		t.Errorf("sqrt counter at T=5e4: factor² = %v, StdAt(T) = %v", got*got, sq.StdAt(50000))
	}
}

// TestBLTFactorization: the decoder is B = A·C⁻¹ (B's coefficients convolved with C's give all
// ones), MaxLoss by doubling equals the direct O(T) sums, and the fitted BLT is within the
// documented distance of the square-root factorisation.
func TestBLTFactorization(t *testing.T) {
	p, err := counter.FitSqrtBLT(50000, counter.DefaultBLTBuffers)
	if err != nil {
		t.Fatal(err)
	}
	const n = 3000
	c, b := p.Coefficients(n), p.DecoderCoefficients(n)
	for k := 0; k < n; k++ {
		s := 0.0
		for j := 0; j <= k; j++ {
			s += b[j] * c[k-j]
		}
		if math.Abs(s-1) > 1e-9 {
			t.Fatalf("(B·C)_k = %v at k=%d, want 1 (A = B C)", s, k)
		}
	}
	for _, T := range []int{1, 2, 17, 1000, 50000} {
		var sc, sb float64
		for _, v := range p.Coefficients(T) {
			sc += v * v
		}
		for _, v := range p.DecoderCoefficients(T) {
			sb += v * v
		}
		if got := p.MaxLoss(T); math.Abs(got-sc*sb) > 1e-10*sc*sb {
			t.Errorf("T=%d: MaxLoss (doubling) %v, direct %v", T, got, sc*sb)
		}
	}
	sqrt := counter.SqrtCoefficients(50000)
	ss := 0.0
	for _, v := range sqrt {
		ss += v * v
	}
	for _, c := range []struct {
		T, d int
		tol  float64
	}{{50000, 5, 1.005}, {50000, 4, 1.01}, {1000000, 5, 1.01}} {
		p, err := counter.FitSqrtBLT(c.T, c.d)
		if err != nil {
			t.Fatal(err)
		}
		ref := 0.0
		for _, v := range counter.SqrtCoefficients(c.T) {
			ref += v * v
		}
		if r := p.MaxLoss(c.T) / (ref * ref); r > c.tol || r < 0.99 {
			t.Errorf("T=%d, %d buffers: MaxLoss / sqrt's = %.5f, want ≤ %v", c.T, c.d, r, c.tol)
		}
	}
	for _, bad := range []counter.BLTParams{{}, {Theta: []float64{1}, Omega: []float64{1}}, {Theta: []float64{math.NaN()}, Omega: []float64{0.5}}, {Theta: []float64{1, 2}, Omega: []float64{0.5}}} {
		if _, err := counter.NewBLT(counter.GaussianConfig{Dim: 1, Capacity: 3}, bad, nil); err == nil {
			t.Errorf("BLT params %+v accepted", bad)
		}
	}
	if _, err := counter.FitSqrtBLT(10, 0); err == nil {
		t.Error("0 buffers accepted")
	}
	// An unstable decoder (c(x) has a root inside the unit disk) is rejected with a clear error.
	if _, err := counter.NewBLT(counter.GaussianConfig{Dim: 1, Capacity: 100000}, counter.BLTParams{Theta: []float64{-3}, Omega: []float64{0.9}}, nil); err == nil {
		t.Error("unstable BLT accepted")
	}
}

// TestPrefixStdAt5e4 records the prefix std at t = 5·10⁴, σ = 1, of every counter and checks
// the ordering tree > Honaker > BLT ≈ sqrt in units of the calibrated noise
// (SensitivityFactor·StdAt).
func TestPrefixStdAt5e4(t *testing.T) {
	const T = 50000
	src := noise.NewSeeded(rand.New(rand.NewPCG(1, 1)))
	cfg := counter.GaussianConfig{Dim: 1, Capacity: T, Sigma: 1}
	tr, _ := counter.NewGaussianTree(cfg, src)
	hk, _ := counter.NewHonakerTree(cfg, src)
	sq, _ := counter.NewSqrtFactorization(cfg, src)
	bl, err := counter.NewSqrtBLT(cfg, 0, src)
	if err != nil {
		t.Fatal(err)
	}
	var eff []float64
	for _, c := range []counter.GaussianCounter{tr, hk, bl, sq} {
		e := c.SensitivityFactor() * c.StdAt(T)
		t.Logf("%T: factor %.4f, StdAt(5e4) %.4f, factor·std %.4f", c, c.SensitivityFactor(), c.StdAt(T), e)
		eff = append(eff, e)
	}
	if !(eff[0] > eff[1] && eff[1] > eff[2] && eff[2] < eff[3]*1.003 && eff[2] > eff[3]*0.99) {
		t.Errorf("factor·std at 5e4: tree %v, Honaker %v, BLT %v, sqrt %v", eff[0], eff[1], eff[2], eff[3])
	}
}
