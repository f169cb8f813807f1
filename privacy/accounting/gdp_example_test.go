package accounting_test

import (
	"fmt"
	"math"

	"github.com/dprl/dprl/privacy/accounting"
)

// Exact Gaussian accounting: calibrate σ for a target (ε, δ) through μ-GDP, compose two
// Gaussian releases, and convert back to (ε, δ) — no zCDP slack.
func ExampleGDPFor() {
	target, _ := accounting.NewApproxDP(1, 1e-5)
	g, err := accounting.GDPFor(target)
	if err != nil {
		fmt.Println(err)
		return
	}
	// A counter with sensitivity factor √L = √16 on elements of ℓ2 sensitivity √120.
	sigma, err := g.GaussianSigma(math.Sqrt(120) * 4)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("mu=%.6f sigma=%.2f\n", g.Mu, sigma)

	// Two such releases compose to μ√2.
	both, _ := accounting.ComposeGDP(g, g)
	dp, _ := both.ToApproxDP(1e-5)
	fmt.Printf("composed: mu=%.6f -> eps=%.4f at delta=1e-5\n", both.Mu, dp.Epsilon)
	// Output:
	// mu=0.268051 sigma=163.47
	// composed: mu=0.379082 -> eps=1.4652 at delta=1e-5
}
