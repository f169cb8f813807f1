package counter_test

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/dprl/dprl/privacy/accounting"
	"github.com/dprl/dprl/privacy/counter"
	"github.com/dprl/dprl/privacy/noise"
)

// A Gaussian continual counter calibrated by exact GDP accounting: fit a BLT encoder for the
// capacity, calibrate σ so that one element of ℓ2 sensitivity Δ = √120 costs (1, 1e-5)-DP for
// the whole stream, and read the noise of every release before any data is seen.
func ExampleNewSqrtBLT() {
	const T = 50000
	target, _ := accounting.NewApproxDP(1, 1e-5)
	g, _ := accounting.GDPFor(target)

	// The sensitivity factor depends on the capacity only: build a noise-free twin to read it.
	probe, err := counter.NewSqrtBLT(counter.GaussianConfig{Dim: 1, Capacity: T}, 0, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	sigma, _ := counter.CalibrateSigma(g.Mu, math.Sqrt(120), probe.SensitivityFactor(), 1, 1, false)

	c, _ := counter.NewBLT(counter.GaussianConfig{Dim: 1, Capacity: T, Sigma: sigma}, probe.Params(),
		noise.NewSeeded(rand.New(rand.NewPCG(1, 2))))
	fmt.Printf("factor %.4f, sigma %.2f, prefix std at t=T %.1f\n", c.SensitivityFactor(), sigma, c.StdAt(T))

	// The accountant recovers the target from the noise actually used.
	back, _ := accounting.GaussianGDP(math.Sqrt(120)*c.SensitivityFactor(), c.Sigma())
	dp, _ := back.ToApproxDP(1e-5)
	fmt.Printf("eps = %.4f at delta = 1e-5\n", dp.Epsilon)

	for _, x := range []float64{1, 0, 1} {
		_ = c.Insert([]float64{x})
	}
	fmt.Printf("after 3 inserts: noise std %.1f\n", c.PrefixStd())
	// Output:
	// factor 2.1227, sigma 86.75, prefix std at t=T 184.5
	// eps = 1.0000 at delta = 1e-5
	// after 3 inserts: noise std 102.3
}

// The Gaussian binary tree and Honaker's estimator on the same nodes: same privacy (factor √L),
// lower variance.
func ExampleNewHonakerTree() {
	cfg := counter.GaussianConfig{Dim: 1, Capacity: 1 << 10, Sigma: 1}
	src := noise.NewSeeded(rand.New(rand.NewPCG(3, 4)))
	tr, _ := counter.NewGaussianTree(cfg, src)
	hk, _ := counter.NewHonakerTree(cfg, src)
	for _, t := range []int{1, 2, 512, 1023} {
		fmt.Printf("t=%4d tree std %.3f  Honaker std %.3f\n", t, tr.StdAt(t), hk.StdAt(t))
	}
	fmt.Printf("factors: %.4f %.4f\n", tr.SensitivityFactor(), hk.SensitivityFactor())
	// Output:
	// t=   1 tree std 1.000  Honaker std 1.000
	// t=   2 tree std 1.000  Honaker std 0.816
	// t= 512 tree std 1.000  Honaker std 0.707
	// t=1023 tree std 3.162  Honaker std 2.409
	// factors: 3.3166 3.3166
}
