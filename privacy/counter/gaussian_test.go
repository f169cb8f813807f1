package counter_test

import (
	"math"
	"math/bits"
	"math/rand/v2"
	"testing"

	"github.com/dprl/dprl/privacy/counter"
	"github.com/dprl/dprl/privacy/counter/countertest"
	"github.com/dprl/dprl/privacy/noise"
)

// gaussianFactories are every Gaussian counter of the package, as countertest factories.
var gaussianFactories = []struct {
	name string
	f    countertest.Factory
}{
	{"tree", func(cfg counter.GaussianConfig, src noise.Source) (counter.GaussianCounter, error) {
		return counter.NewGaussianTree(cfg, src)
	}},
	{"honaker", func(cfg counter.GaussianConfig, src noise.Source) (counter.GaussianCounter, error) {
		return counter.NewHonakerTree(cfg, src)
	}},
}

// TestGaussianCountersSuite runs the shared suite (exact without noise, decoder and encoder
// reconstruction, empirical variances and covariances, secure grid) on every Gaussian counter.
func TestGaussianCountersSuite(t *testing.T) {
	for _, c := range gaussianFactories {
		t.Run(c.name, func(t *testing.T) { countertest.Run(t, c.f) })
	}
}

// TestHonakerVariance: Honaker's estimator has the exact variances of the recursion
// v_h = 1/(1 + 1/(2 v_{h−1})) and reduces the tree's prefix variance by ≈ 1.8× on average
// over t ≤ 5·10⁴ (practical-privacy spec §3), never increasing it.
func TestHonakerVariance(t *testing.T) {
	const T = 50000
	src := noise.NewSeeded(rand.New(rand.NewPCG(1, 1)))
	tr, err := counter.NewGaussianTree(counter.GaussianConfig{Dim: 1, Capacity: T, Sigma: 1}, src)
	if err != nil {
		t.Fatal(err)
	}
	hk, err := counter.NewHonakerTree(counter.GaussianConfig{Dim: 1, Capacity: T, Sigma: 1}, src)
	if err != nil {
		t.Fatal(err)
	}
	if tr.SensitivityFactor() != hk.SensitivityFactor() || tr.SensitivityFactor() != math.Sqrt(16) {
		t.Fatalf("sensitivity factors %v, %v; want √16", tr.SensitivityFactor(), hk.SensitivityFactor())
	}
	var sumT, sumH float64
	for s := 1; s <= T; s++ {
		a, b := tr.StdAt(s), hk.StdAt(s)
		if b > a*(1+1e-12) {
			t.Fatalf("t=%d: Honaker std %v > tree std %v", s, b, a)
		}
		sumT += a * a
		sumH += b * b
	}
	if r := sumT / sumH; r < 1.6 || r > 2 {
		t.Errorf("mean variance ratio tree/Honaker = %.3f, want ≈ 1.8", r)
	}
	// Level variances: 1, 2/3, 4/7, 8/15, ... = 2^h/(2^{h+1} − 1).
	for h := 0; h < 10; h++ {
		want := math.Ldexp(1, h) / (math.Ldexp(1, h+1) - 1)
		got := hk.StdAt(1 << h)
		if math.Abs(got*got-want) > 1e-14 {
			t.Errorf("Var at t=2^%d = %v, want %v", h, got*got, want)
		}
	}
	if got := tr.StdAt(T); math.Abs(got-math.Sqrt(float64(bits.OnesCount(T)))) > 1e-15 {
		t.Errorf("tree std at T = %v", got)
	}
}
