package accounting

import (
	"math"
	"testing"
)

// TestGaussianGDPMatchesMechanism: GaussianGDP(Δ, σ) must state the Gaussian mechanism's true
// privacy. The exact profile of adding N(0, σ²) to a statistic of sensitivity Δ is the
// hockey-stick divergence of N(0, σ²) and N(Δ, σ²) (Balle & Wang 2018, Thm 8):
//
//	δ(ε) = Φ(Δ/(2σ) − εσ/Δ) − e^ε Φ(−Δ/(2σ) − εσ/Δ),
//
// written here in terms of Δ and σ with erfc, independently of μ. The guarantee's profile
// g.Delta(ε) must match it (a μ that is too small under-reports δ), and its (ε, δ) conversion
// must not claim a smaller ε than the mechanism's profile allows.
func TestGaussianGDPMatchesMechanism(t *testing.T) {
	phi := func(x float64) float64 { return 0.5 * math.Erfc(-x/math.Sqrt2) }
	for _, c := range []struct{ sens, sigma float64 }{{1, 1}, {1, 3.73}, {2, 1.5}, {0.5, 4}, {3, 2}} {
		g, err := GaussianGDP(c.sens, c.sigma)
		if err != nil {
			t.Fatal(err)
		}
		a := c.sens / (2 * c.sigma)
		for _, eps := range []float64{0, 0.25, 1, 2} {
			b := eps * c.sigma / c.sens
			want := phi(a-b) - math.Exp(eps)*phi(-a-b)
			got := g.Delta(eps)
			if math.Abs(got-want) > 1e-9*math.Max(want, 1e-6) {
				t.Errorf("Δ=%v σ=%v: GaussianGDP profile δ(%v) = %.12g, the mechanism's is %.12g", c.sens, c.sigma, eps, got, want)
			}
		}
		dp, err := g.ToApproxDP(1e-5)
		if err != nil {
			t.Fatal(err)
		}
		b := dp.Epsilon * c.sigma / c.sens
		if d := phi(a-b) - math.Exp(dp.Epsilon)*phi(-a-b); d > 1e-5*(1+1e-9) {
			t.Errorf("Δ=%v σ=%v: claimed (%v, 1e-5)-DP, but the mechanism's δ at that ε is %v", c.sens, c.sigma, dp.Epsilon, d)
		}
	}
}
