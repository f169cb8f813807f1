package noise

import (
	"fmt"
	"math"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"
)

// chiSquareDiscrete draws n values from draw, bins them on {−k..k} plus the two tails, and
// compares with the pmf p (over all integers) by Pearson's χ² test at level 1e-6 (bins with an
// expected count below 5 are merged into the tails). It also checks the mass at 0 alone with a
// 5.5-standard-error binomial test (two-sided level ≈ 4e-8). Tolerances derive from the
// distribution: the χ² critical value from its exact quantile, the binomial one from p(0).
func chiSquareDiscrete(t *testing.T, name string, n int, draw func() int64, p func(y int64) float64) {
	t.Helper()
	counts := map[int64]int{}
	for i := 0; i < n; i++ {
		counts[draw()]++
	}
	// Bins: every y with n·p(y) ≥ 5, then the two tails.
	k := int64(0)
	for float64(n)*p(k+1) >= 5 {
		k++
	}
	var chi2 float64
	df := -1
	tailLo, tailHi := 0, 0
	for y, c := range counts {
		switch {
		case y < -k:
			tailLo += c
		case y > k:
			tailHi += c
		}
	}
	inside := 0.0
	for y := -k; y <= k; y++ {
		e := float64(n) * p(y)
		inside += p(y)
		o := float64(counts[y])
		chi2 += (o - e) * (o - e) / e
		df++
	}
	tail := (1 - inside) / 2 // symmetric pmfs
	if e := float64(n) * tail; e >= 1 {
		chi2 += (float64(tailLo)-e)*(float64(tailLo)-e)/e + (float64(tailHi)-e)*(float64(tailHi)-e)/e
		df += 2
	} else if tailLo+tailHi > 3 {
		t.Errorf("%s: %d draws beyond ±%d, expected %.3g", name, tailLo+tailHi, k, 2*e)
	}
	crit := distuv.ChiSquared{K: float64(df)}.Quantile(1 - 1e-6)
	if chi2 > crit {
		t.Errorf("%s: χ² = %.1f with %d df exceeds the 1e-6 critical value %.1f", name, chi2, df, crit)
	}
	p0 := p(0)
	got := float64(counts[0]) / float64(n)
	if tol := 5.5 * math.Sqrt(p0*(1-p0)/float64(n)); math.Abs(got-p0) > tol {
		t.Errorf("%s: P(0) = %.5f, want %.5f ± %.5f", name, got, p0, tol)
	}
}

// TestDiscreteLaplaceCoarse checks the discrete Laplace sampler where the grid is coarse
// relative to the scale (scale b/γ = 0.5, 1, 2 and 8 grid steps), including the exact mass at 0,
// P(0) = (1 − e^{−λ})/(1 + e^{−λ}) with λ = γ/b: counting 0 twice (not rejecting "−0") or a
// wrong geometric parameter is caught.
func TestDiscreteLaplaceCoarse(t *testing.T) {
	const n = 200000
	for i, scale := range []float64{0.5, 1, 2, 8} {
		lambda := 1 / scale
		s := NewSecureFromKey([32]byte{7, byte(i)})
		q := math.Exp(-lambda)
		pmf := func(y int64) float64 { return (1 - q) / (1 + q) * math.Pow(q, math.Abs(float64(y))) }
		chiSquareDiscrete(t, fmt.Sprintf("discrete laplace scale %g", scale), n, func() int64 { return s.discreteLaplace(lambda) }, pmf)
	}
}

// TestDiscreteGaussianCoarse checks the CKS20 discrete Gaussian sampler at σ = 0.5, 1, 2 and 8
// grid steps: P(y) = exp(−y²/(2σ²)) / Σ_z exp(−z²/(2σ²)), including the mass at 0.
func TestDiscreteGaussianCoarse(t *testing.T) {
	const n = 200000
	for i, sigma := range []float64{0.5, 1, 2, 8} {
		s := NewSecureFromKey([32]byte{9, byte(i)})
		norm := 0.0
		for z := -200; z <= 200; z++ {
			norm += math.Exp(-float64(z*z) / (2 * sigma * sigma))
		}
		pmf := func(y int64) float64 { return math.Exp(-float64(y*y)/(2*sigma*sigma)) / norm }
		chiSquareDiscrete(t, fmt.Sprintf("discrete gaussian sigma %g", sigma), n, func() int64 { return s.discreteGaussian(sigma) }, pmf)
	}
}

// TestSecureRounding checks that Secure rounds the statistic to the grid before adding grid
// noise, for both distributions: two sources with the same key draw the same noise, so
// AddX(x) − AddX(0) is exactly round(x/γ)·γ; it lies on the grid, within γ/2 of x, and equals
// the nearest grid point (not a truncation). Without the rounding the output is off the grid.
func TestSecureRounding(t *testing.T) {
	type adder func(s *Secure, x, scale float64) float64
	for _, c := range []struct {
		name  string
		add   adder
		gamma func(float64) float64
	}{
		{"laplace", (*Secure).AddLaplace, LaplaceGranularity},
		{"gaussian", (*Secure).AddGaussian, GaussianGranularity},
	} {
		for _, scale := range []float64{1e-3, 0.7, 3, 1e4} {
			g := c.gamma(scale)
			for _, frac := range []float64{0, 0.1, 0.49, 0.51, 0.9, -0.3, -0.7} {
				for _, k := range []float64{0, 1, -5, 12345} {
					x := (k + frac) * g
					if k == 12345 {
						x = 1.2345678901 * scale // an arbitrary float statistic
					}
					key := [32]byte{3, byte(len(c.name)), byte(int(frac * 100))}
					s1, s2 := NewSecureFromKey(key), NewSecureFromKey(key)
					y := c.add(s1, x, scale)
					z := c.add(s2, 0, scale)
					if q := y / g; q != math.Trunc(q) {
						t.Fatalf("%s(%g, %g) = %g is not on the grid γ = %g", c.name, x, scale, y, g)
					}
					r := y - z
					if want := math.Round(x/g) * g; r != want {
						t.Fatalf("%s: statistic %g rounded to %g, want the nearest grid point %g (γ = %g)", c.name, x, r, want, g)
					}
					if math.Abs(r-x) > g/2 {
						t.Fatalf("%s: rounding error %g exceeds γ/2 = %g", c.name, math.Abs(r-x), g/2)
					}
				}
			}
		}
	}
}

// TestGranularityBound checks the grid step used by Secure: a power of two in
// (2^-grain·s, 2^(1−grain)·s] for the scale s, which is what the rounding slack bounds of
// RoundingSlackL1 and RoundingSlackL2 rely on.
func TestGranularityBound(t *testing.T) {
	for _, s := range []float64{1e-9, 0.3, 0.5, 1, 1.5, 2, 7, 1e6, 3.3e12} {
		for _, c := range []struct {
			g     float64
			grain int
		}{{LaplaceGranularity(s), laplaceGrain}, {GaussianGranularity(s), gaussGrain}} {
			lo, hi := math.Ldexp(s, -c.grain), math.Ldexp(s, 1-c.grain)
			if !(c.g > lo && c.g <= hi) || math.Log2(c.g) != math.Floor(math.Log2(c.g)) {
				t.Errorf("scale %g: γ = %g, want a power of two in (%g, %g]", s, c.g, lo, hi)
			}
		}
	}
	if GaussianGranularity(1) > math.Ldexp(1, -29) {
		t.Errorf("Gaussian grid %g is coarser than 2^-29·σ: the rounding slack bound is violated", GaussianGranularity(1))
	}
}

// TestRoundingSlack checks the sensitivity increase from rounding to the grid: for
// neighbouring statistics x, x' differing in n coordinates, the rounded statistics differ by
// at most ‖x − x'‖₁ + n·γ (ℓ1) and ‖x − x'‖₂ + √n·γ (ℓ2); the bound is attained in the worst
// case, and RoundingSlackL1/L2 report n·γ/b and √n·γ/σ.
func TestRoundingSlack(t *testing.T) {
	b := 1.0
	g := LaplaceGranularity(b)
	// Worst case: each coordinate moves by a hair across a rounding boundary.
	n := 5
	x, xp := make([]float64, n), make([]float64, n)
	for i := range x {
		x[i] = 0.5*g - g/16
		xp[i] = 0.5*g + g/16
	}
	l1, l2, d1, d2 := 0.0, 0.0, 0.0, 0.0
	for i := range x {
		r := roundTo(xp[i], g) - roundTo(x[i], g)
		l1 += math.Abs(r)
		l2 += r * r
		d1 += math.Abs(xp[i] - x[i])
		d2 += (xp[i] - x[i]) * (xp[i] - x[i])
	}
	l2, d2 = math.Sqrt(l2), math.Sqrt(d2)
	if l1 > d1+float64(n)*g || l2 > d2+math.Sqrt(float64(n))*g {
		t.Fatalf("rounded sensitivity %g (ℓ1), %g (ℓ2) exceeds the bound", l1, l2)
	}
	if l1 <= d1 {
		t.Fatalf("the worst case does not increase the sensitivity (%g ≤ %g): test is vacuous", l1, d1)
	}
	if got, want := RoundingSlackL1(b, n), float64(n)*g/b; got != want {
		t.Errorf("RoundingSlackL1 = %g, want %g", got, want)
	}
	if got := RoundingSlackL1(b, n); got > float64(n)*math.Ldexp(1, 1-laplaceGrain) {
		t.Errorf("RoundingSlackL1 = %g exceeds n·2^-29", got)
	}
	sigma := 3.0
	if got, want := RoundingSlackL2(sigma, n), math.Sqrt(float64(n))*GaussianGranularity(sigma)/sigma; got != want {
		t.Errorf("RoundingSlackL2 = %g, want %g", got, want)
	}
	if RoundingSlackL1(0, 3) != 0 || RoundingSlackL2(0, 3) != 0 {
		t.Error("no noise must mean no slack (nothing is rounded)")
	}
}
