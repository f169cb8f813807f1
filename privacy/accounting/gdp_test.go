package accounting

import (
	"math"
	"strings"
	"testing"
)

// gdpGolden are the spec's golden values (practical-privacy spec §2): the largest μ with
// δ_μ(ε) ≤ 10⁻⁵, to 6 decimals.
var gdpGolden = []struct{ eps, mu float64 }{
	{0.1, 0.032521}, {0.5, 0.142211}, {1, 0.268051}, {2, 0.501552}, {5, 1.121242}, {10, 2.000446},
}

func TestGDPForGolden(t *testing.T) {
	for _, c := range gdpGolden {
		g, err := GDPFor(ApproxDP{Epsilon: c.eps, Delta: 1e-5})
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(g.Mu-c.mu) > 5e-7 {
			t.Errorf("GDPFor(eps=%v, delta=1e-5) = %.7f, want %.6f", c.eps, g.Mu, c.mu)
		}
		// Safe rounding: the profile at μ meets δ, and μ is the largest such (to 1e-12 rel).
		if d := g.Delta(c.eps); !(d <= 1e-5) {
			t.Errorf("eps=%v: delta(mu) = %g > 1e-5", c.eps, d)
		}
		if d := (GDP{Mu: g.Mu * (1 + 1e-12)}).Delta(c.eps); !(d > 1e-5) {
			t.Errorf("eps=%v: mu = %v is not the largest: delta(mu(1+1e-12)) = %g", c.eps, g.Mu, d)
		}
	}
}

func TestGDPToApproxDPGolden(t *testing.T) {
	for _, c := range gdpGolden {
		dp, err := GDP{Mu: c.mu}.ToApproxDP(1e-5)
		if err != nil {
			t.Fatal(err)
		}
		// μ is rounded to 6 decimals: ε moves by at most |dε/dμ|·5e-7 ≤ 1e-4·(1+ε).
		if math.Abs(dp.Epsilon-c.eps) > 1e-4*(1+c.eps) {
			t.Errorf("GDP{%v}.ToApproxDP(1e-5) = %v, want eps ≈ %v", c.mu, dp, c.eps)
		}
		if d := (GDP{Mu: c.mu}).Delta(dp.Epsilon); !(d <= 1e-5) {
			t.Errorf("mu=%v: delta(eps) = %g > 1e-5 (not rounded up)", c.mu, d)
		}
		if d := (GDP{Mu: c.mu}).Delta(dp.Epsilon * (1 - 1e-12)); !(d > 1e-5) {
			t.Errorf("mu=%v: eps = %v is not the smallest", c.mu, dp.Epsilon)
		}
	}
}

// TestGDPRoundTrip: (ε, δ) → μ → ε′ gives ε′ = ε within 1e-9 relative, over a grid. (Exact
// ε′ ≤ ε cannot hold in float64: the profile's own rounding error, ~1e-13 relative, makes it
// flat at the scale of a few ulps of ε; each direction is safe against the computed profile.)
func TestGDPRoundTrip(t *testing.T) {
	for _, eps := range []float64{1e-3, 0.1, 0.5, 1, 3, 10, 30} {
		for _, delta := range []float64{1e-12, 1e-8, 1e-5, 1e-3, 0.1} {
			g, err := GDPFor(ApproxDP{Epsilon: eps, Delta: delta})
			if err != nil {
				t.Fatal(err)
			}
			back, err := g.ToApproxDP(delta)
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(back.Epsilon-eps) > 1e-9*eps {
				t.Errorf("(%v, %v): mu=%v back to eps=%v", eps, delta, g.Mu, back.Epsilon)
			}
		}
	}
}

// TestGDPSigmaGolden: σ/Δ at (1, 10⁻⁵) is 3.73 exactly versus 4.90 through the lossy zCDP
// conversion (practical-privacy spec §2).
func TestGDPSigmaGolden(t *testing.T) {
	g, err := GDPFor(ApproxDP{Epsilon: 1, Delta: 1e-5})
	if err != nil {
		t.Fatal(err)
	}
	sigma, err := g.GaussianSigma(1)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(sigma-3.73) > 0.005 {
		t.Errorf("sigma/Delta at (1, 1e-5) = %.4f, want 3.73", sigma)
	}
	back, err := GaussianGDP(1, sigma)
	if err != nil {
		t.Fatal(err)
	}
	if back.Mu > g.Mu {
		t.Errorf("GaussianGDP(1, GaussianSigma) = %v exceeds %v", back.Mu, g.Mu)
	}
	// Through zCDP: ρ = μ²/2 then Bun–Steinke costs more ε than the exact profile.
	z := g.ToZCDP()
	if math.Abs(z.Rho-g.Mu*g.Mu/2) > 1e-15 {
		t.Errorf("ToZCDP: rho = %v, want %v", z.Rho, g.Mu*g.Mu/2)
	}
	viaZ, err := z.ToApproxDP(1e-5)
	if err != nil {
		t.Fatal(err)
	}
	if !(viaZ.Epsilon > 1.1) {
		t.Errorf("zCDP route gives eps = %v, want clearly above the exact 1", viaZ.Epsilon)
	}
	bs, _ := ZCDPFor(ApproxDP{Epsilon: 1, Delta: 1e-5})
	if s := 1 / math.Sqrt(2*bs.Rho); math.Abs(s-4.90) > 0.005 {
		t.Errorf("Bun–Steinke sigma/Delta = %.4f, want 4.90", s)
	}
}

// TestGDPDeltaDirect compares the log-space profile with the direct formula where the latter
// is accurate (δ not tiny).
func TestGDPDeltaDirect(t *testing.T) {
	phi := func(x float64) float64 { return 0.5 * math.Erfc(-x/math.Sqrt2) }
	for _, mu := range []float64{0.1, 0.5, 1, 2, 4} {
		for _, eps := range []float64{0, 0.1, 0.5, 1, 2} {
			want := phi(-eps/mu+mu/2) - math.Exp(eps)*phi(-eps/mu-mu/2)
			got := GDP{Mu: mu}.Delta(eps)
			if want < 1e-6 {
				continue
			}
			if math.Abs(got-want) > 1e-10*want {
				t.Errorf("Delta(mu=%v, eps=%v) = %.15g, want %.15g", mu, eps, got, want)
			}
		}
	}
	// δ(0) is the total variation distance 2Φ(μ/2) − 1.
	if got, want := (GDP{Mu: 1}).Delta(0), 2*phi(0.5)-1; math.Abs(got-want) > 1e-14 {
		t.Errorf("Delta(mu=1, 0) = %v, want %v", got, want)
	}
	if !math.IsNaN((GDP{Mu: -1}).Delta(1)) || !math.IsNaN((GDP{Mu: 1}).Delta(-1)) {
		t.Error("invalid arguments must give NaN")
	}
}

func TestComposeGDP(t *testing.T) {
	g, err := ComposeGDP(GDP{Mu: 3}, GDP{Mu: 4})
	if err != nil || g.Mu != 5 {
		t.Errorf("ComposeGDP(3, 4) = %v, %v; want 5", g, err)
	}
	// k-fold composition of μ is μ√k.
	gs := make([]GDP, 100)
	for i := range gs {
		gs[i] = GDP{Mu: 0.1}
	}
	g, err = ComposeGDP(gs...)
	if err != nil || math.Abs(g.Mu-1) > 1e-14 {
		t.Errorf("100 × 0.1 = %v, %v; want 1", g, err)
	}
	// No overflow of the squares.
	g, err = ComposeGDP(GDP{Mu: 1e200}, GDP{Mu: 1e200})
	if err != nil || math.Abs(g.Mu/1e200-math.Sqrt2) > 1e-14 {
		t.Errorf("huge: %v, %v", g, err)
	}
	if _, err := ComposeGDP(); err == nil {
		t.Error("empty composition accepted")
	}
	if _, err := ComposeGDP(GDP{Mu: 1}, GDP{Mu: 0}); err == nil || !strings.Contains(err.Error(), "guarantee 1") {
		t.Errorf("invalid element: %v", err)
	}
	if _, err := ComposeGDP(GDP{Mu: math.MaxFloat64}, GDP{Mu: math.MaxFloat64}); err == nil {
		t.Error("overflow accepted")
	}
}

func TestGDPValidation(t *testing.T) {
	for _, mu := range []float64{0, -1, math.NaN(), math.Inf(1)} {
		if _, err := NewGDP(mu); err == nil || !strings.Contains(err.Error(), "mu") {
			t.Errorf("NewGDP(%v): %v", mu, err)
		}
		if _, err := (GDP{Mu: mu}).ToApproxDP(1e-5); err == nil {
			t.Errorf("ToApproxDP on mu=%v accepted", mu)
		}
		if !math.IsNaN(GDP{Mu: mu}.ToZCDP().Rho) {
			t.Errorf("ToZCDP on mu=%v not NaN", mu)
		}
	}
	g, err := NewGDP(0.5)
	if err != nil || g.Kind() != KindGDP || g.String() != "(mu=0.5)-GDP" {
		t.Errorf("NewGDP(0.5) = %v (%s), %v", g, g.Kind(), err)
	}
	var _ Guarantee = g
	for _, d := range []float64{0, 1, -1, math.NaN()} {
		if _, err := g.ToApproxDP(d); err == nil || !strings.Contains(err.Error(), "delta") {
			t.Errorf("ToApproxDP(%v): %v", d, err)
		}
	}
	for _, target := range []ApproxDP{{0, 1e-5}, {1, 0}, {1, 1}, {math.Inf(1), 1e-5}} {
		if _, err := GDPFor(target); err == nil || !strings.Contains(err.Error(), "of target") {
			t.Errorf("GDPFor(%v): %v", target, err)
		}
	}
	for _, c := range []struct{ s, sigma float64 }{{0, 1}, {1, 0}, {math.NaN(), 1}, {1, math.Inf(1)}, {1e300, 1e-300}} {
		if _, err := GaussianGDP(c.s, c.sigma); err == nil {
			t.Errorf("GaussianGDP(%v, %v) accepted", c.s, c.sigma)
		}
	}
	if _, err := g.GaussianSigma(0); err == nil || !strings.Contains(err.Error(), "sens2") {
		t.Errorf("GaussianSigma(0): %v", err)
	}
	// Tiny μ: (0, δ)-DP already; ε is the smallest positive float.
	dp, err := GDP{Mu: 1e-9}.ToApproxDP(1e-5)
	if err != nil || dp.Epsilon != math.SmallestNonzeroFloat64 || dp.Validate() != nil {
		t.Errorf("tiny mu: %v, %v", dp, err)
	}
}
