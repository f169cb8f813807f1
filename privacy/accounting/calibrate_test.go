package accounting

import (
	"math"
	"testing"
)

func TestCalibrationKnown(t *testing.T) {
	tests := []struct {
		name      string
		got       func() (float64, error)
		want      float64
		tolerance float64
	}{
		{"LaplaceScale(2, 0.5)", func() (float64, error) { return LaplaceScale(2, 0.5) }, 4, 0},
		{"LaplaceScale(30, 1)", func() (float64, error) { return LaplaceScale(30, 1) }, 30, 0},
		{"GaussSigmaZCDP(1, 0.5)", func() (float64, error) { return GaussSigmaZCDP(1, 0.5) }, 1, 0},
		{"GaussSigmaZCDP(2, 0.02)", func() (float64, error) { return GaussSigmaZCDP(2, 0.02) }, 10, 1e-15},
		{"GaussSigmaClassic(1, 0.5, 1e-5)", func() (float64, error) { return GaussSigmaClassic(1, 0.5, 1e-5) },
			math.Sqrt(2*math.Log(1.25e5)) / 0.5, 1e-15},
		{"GaussSigmaSeed001(3, 0.1, 1e-6)", func() (float64, error) { return GaussSigmaSeed001(3, 0.1, 1e-6) },
			3 * math.Sqrt(2*math.Log(2e6)) / 0.1, 1e-15},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.got()
			if err != nil {
				t.Fatal(err)
			}
			if relErr(got, tt.want) > tt.tolerance+1e-16 {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
		})
	}
	// The seed-001 calibration adds slightly more noise than the classic one (spec §1.3).
	c, _ := GaussSigmaClassic(1, 0.5, 1e-5)
	s, _ := GaussSigmaSeed001(1, 0.5, 1e-5)
	if !(s > c) {
		t.Errorf("seed-001 sigma %v not > classic %v", s, c)
	}
}

// Calibrating for a target and recomputing the guarantee forward never exceeds the target.
func TestCalibrationInverses(t *testing.T) {
	sens := []float64{1e-3, 0.3, 1, 2, 7, 1e4}
	targets := []float64{1e-6, 1e-3, 0.1, 0.7, 1, 3.3, 10, 1e3}
	for _, s := range sens {
		for _, tgt := range targets {
			b, err := LaplaceScale(s, tgt)
			if err != nil {
				t.Fatal(err)
			}
			if e := LaplaceEpsilon(s, b); e > tgt || relErr(e, tgt) > 1e-14 {
				t.Errorf("LaplaceEpsilon(%v, LaplaceScale(%v, %v)) = %v", s, s, tgt, e)
			}
			sigma, err := GaussSigmaZCDP(s, tgt)
			if err != nil {
				t.Fatal(err)
			}
			if r := GaussianRho(s, sigma); r > tgt || relErr(r, tgt) > 1e-14 {
				t.Errorf("GaussianRho(%v, GaussSigmaZCDP(%v, %v)) = %v", s, s, tgt, r)
			}
		}
	}
	tests := []struct {
		name        string
		sens, scale float64
		got, want   float64
	}{
		{"LaplaceEpsilon", 3, 1.5, LaplaceEpsilon(3, 1.5), 2},
		{"GaussianRho", 2, 1, GaussianRho(2, 1), 2},
		{"GaussianRho tree", math.Sqrt(10) * 2, 4, GaussianRho(math.Sqrt(10)*2, 4), 10 * 4 / 32.0},
	}
	for _, tt := range tests {
		if relErr(tt.got, tt.want) > 1e-15 {
			t.Errorf("%s(%v, %v) = %v, want %v", tt.name, tt.sens, tt.scale, tt.got, tt.want)
		}
	}
}

func TestGaussianExactDeltaKnown(t *testing.T) {
	phi := func(x float64) float64 { return 0.5 * math.Erfc(-x/math.Sqrt2) }
	tests := []struct {
		mu, eps float64
	}{
		{1, 0}, {1, 1}, {0.5, 0.3}, {2, 1}, {3, 4}, {0.1, 0.05},
	}
	for _, tt := range tests {
		want := phi(-tt.eps/tt.mu+tt.mu/2) - math.Exp(tt.eps)*phi(-tt.eps/tt.mu-tt.mu/2)
		got := GaussianExactDelta(tt.mu, tt.eps)
		if relErr(got, want) > 1e-10 {
			t.Errorf("GaussianExactDelta(%v, %v) = %v, want %v", tt.mu, tt.eps, got, want)
		}
	}
	// δ(0) is the total variation distance 2Φ(μ/2) − 1; for μ = 1 that is 0.38292492254802624.
	if got := GaussianExactDelta(1, 0); math.Abs(got-0.38292492254802624) > 1e-15 {
		t.Errorf("GaussianExactDelta(1, 0) = %v", got)
	}
}

func TestLogPhiTail(t *testing.T) {
	// At the switch-over point both methods are accurate; they must agree.
	for _, x := range []float64{-30, -30.5, -32, -35} {
		direct := math.Log(0.5 * math.Erfc(-x/math.Sqrt2))
		if relErr(logPhi(x), direct) > 1e-13 {
			t.Errorf("logPhi(%v) = %v, erfc gives %v", x, logPhi(x), direct)
		}
	}
	for _, x := range []float64{-29.999, -30.001} {
		if relErr(logPhi(x), math.Log(0.5*math.Erfc(-x/math.Sqrt2))) > 1e-13 {
			t.Errorf("logPhi discontinuous near %v", x)
		}
	}
	if !math.IsInf(logPhi(math.Inf(-1)), -1) || logPhi(math.Inf(1)) != 0 {
		t.Error("logPhi at ±Inf")
	}
}

// δ(ε) of the Gaussian mechanism is non-increasing in ε and never above the δ of the zCDP
// conversion for the same ε (privacy spec §1.4, §5.1).
func TestGaussianExactDeltaMonotoneAndBelowZCDP(t *testing.T) {
	mus := []float64{0.01, 0.1, 0.3, 1, 2, 5, 20, 60}
	for _, mu := range mus {
		prev := math.Inf(1)
		for i := 0; i <= 3000; i++ {
			eps := float64(i) * 0.1
			d := GaussianExactDelta(mu, eps)
			if math.IsNaN(d) || d < 0 || d > 1 {
				t.Fatalf("GaussianExactDelta(%v, %v) = %v out of [0, 1]", mu, eps, d)
			}
			if d > prev {
				t.Fatalf("mu=%v: delta(%v) = %v > delta(%v) = %v", mu, eps, d, eps-0.1, prev)
			}
			prev = d
		}
		if d0 := GaussianExactDelta(mu, 0); d0 <= 0 {
			t.Errorf("mu=%v: delta(0) = %v, want > 0", mu, d0)
		}
		z := ZCDP{mu * mu / 2} // the Gaussian mechanism with Δ/σ = μ is μ²/2-zCDP
		for _, delta := range []float64{1e-15, 1e-10, 1e-6, 1e-3, 0.05, 0.3, 0.9} {
			a, err := z.ToApproxDP(delta)
			if err != nil {
				t.Fatal(err)
			}
			if d := GaussianExactDelta(mu, a.Epsilon); d > delta {
				t.Errorf("mu=%v: exact delta(%v) = %v > zCDP delta %v", mu, a.Epsilon, d, delta)
			}
		}
	}
}

// Spec §5.1 analytic check: a Gaussian tree counter calibrated through ZCDPFor has an exact
// δ(ε_target) far below δ_target.
func TestGaussianCounterAnalyticCheck(t *testing.T) {
	tests := []struct {
		levels int
		sens   float64
		target ApproxDP
	}{
		{10, 2, ApproxDP{1, 1e-5}},
		{17, math.Sqrt2, ApproxDP{0.5, 1e-6}},
		{5, 1, ApproxDP{8, 1e-3}},
	}
	for _, tt := range tests {
		z, err := ZCDPFor(tt.target)
		if err != nil {
			t.Fatal(err)
		}
		counterSens := math.Sqrt(float64(tt.levels)) * tt.sens // one element enters L nodes
		sigma, err := GaussSigmaZCDP(counterSens, z.Rho)
		if err != nil {
			t.Fatal(err)
		}
		back, err := ZCDP{GaussianRho(counterSens, sigma)}.ToApproxDP(tt.target.Delta)
		if err != nil {
			t.Fatal(err)
		}
		if back.Epsilon > tt.target.Epsilon {
			t.Errorf("%+v: forward eps %v > target", tt, back.Epsilon)
		}
		exact := GaussianExactDelta(counterSens/sigma, tt.target.Epsilon)
		t.Logf("L=%d Δ=%.3g target %v: sigma=%.4g, exact delta(eps)=%.3g (zCDP delta %.3g)",
			tt.levels, tt.sens, tt.target, sigma, exact, tt.target.Delta)
		if exact > tt.target.Delta {
			t.Errorf("%+v: exact delta %v > target delta", tt, exact)
		}
	}
}
