package stattest

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestClopperPearson(t *testing.T) {
	cases := []struct {
		k, n   int
		lo, hi float64
	}{{0, 10, 0, 0.30850}, {5, 10, 0.18709, 0.81291}, {10, 10, 0.69150, 1}}
	for _, c := range cases {
		lo, hi := ClopperPearson(c.k, c.n, 0.95)
		if math.Abs(lo-c.lo) > 1e-5 || math.Abs(hi-c.hi) > 1e-5 {
			t.Errorf("CP(%d,%d) = [%.5f, %.5f], want [%.5f, %.5f]", c.k, c.n, lo, hi, c.lo, c.hi)
		}
	}
}

func TestKS(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	xs := make([]float64, 20000)
	for i := range xs {
		xs[i] = r.NormFloat64()
	}
	phi := func(x float64) float64 { return 0.5 * math.Erfc(-x/math.Sqrt2) }
	if _, p := KSOneSample(xs, phi); p < 0.001 {
		t.Errorf("standard normal sample rejected: p = %g", p)
	}
	for i := range xs {
		xs[i] += 0.05
	}
	if _, p := KSOneSample(xs, phi); p > 1e-6 {
		t.Errorf("shifted sample not rejected: p = %g", p)
	}
}

func TestDPEventTest(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 2))
	// Holds: p_D = 0.2, p_D' = 0.1 with ε = 1 (0.2 ≤ e·0.1).
	if p := DPEventTest(20000, 100000, 10000, 100000, 1, r); p < 0.01 {
		t.Errorf("valid inequality flagged: p = %g", p)
	}
	// Violated: p_D = 0.4, p_D' = 0.1 with ε = 1 (0.4 > e·0.1 = 0.27).
	if p := DPEventTest(40000, 100000, 10000, 100000, 1, r); p > 1e-9 {
		t.Errorf("violation not flagged: p = %g", p)
	}
	if lb := EpsilonLowerBound(40000, 100000, 10000, 100000, 0, 0.99); math.Abs(lb-math.Log(4)) > 0.05 {
		t.Errorf("ε lower bound %g, want ≈ ln 4", lb)
	}
}
