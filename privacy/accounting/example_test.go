package accounting_test

import (
	"fmt"

	"github.com/dprl/dprl/privacy/accounting"
)

// A ρ-zCDP guarantee reported as (ε,δ)-DP (Bun–Steinke Lemma 3.5).
func ExampleZCDP_ToApproxDP() {
	z, err := accounting.NewZCDP(0.5)
	if err != nil {
		fmt.Println(err)
		return
	}
	dp, err := z.ToApproxDP(1e-5)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("eps=%.4f delta=%g\n", dp.Epsilon, dp.Delta)
	// Output: eps=5.2985 delta=1e-05
}

// The largest ρ for a target (ε,δ), and the Gaussian noise it implies for a tree counter whose
// elements have L2 sensitivity 2 and enter L = 10 nodes.
func ExampleZCDPFor() {
	target, _ := accounting.NewApproxDP(1, 1e-5)
	z, err := accounting.ZCDPFor(target)
	if err != nil {
		fmt.Println(err)
		return
	}
	sigma, err := accounting.GaussSigmaZCDP(2*3.1622776601683795, z.Rho) // √L·Δ
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("rho=%.6f sigma=%.3f\n", z.Rho, sigma)
	// Output: rho=0.020820 sigma=30.994
}

// Simple composition of three Laplace releases.
func ExampleComposePure() {
	total, err := accounting.ComposePure(
		accounting.PureDP{Epsilon: 0.25},
		accounting.PureDP{Epsilon: 0.25},
		accounting.PureDP{Epsilon: 0.5},
	)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(total)
	// Output: (eps=1)-DP
}

// Advanced composition (Dwork, Rothblum & Vadhan) of 100 (0.1, 1e-6)-DP mechanisms with
// δ′ = 1e-5, against simple composition.
func ExampleAdvancedComposition() {
	adv, err := accounting.AdvancedComposition(0.1, 1e-6, 100, 1e-5)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("advanced: eps=%.4f delta=%.2g\n", adv.Epsilon, adv.Delta)
	fmt.Printf("simple:   eps=%.4f delta=%.2g\n", 100*0.1, 100*1e-6)
	// Output:
	// advanced: eps=5.8502 delta=0.00011
	// simple:   eps=10.0000 delta=0.0001
}

// The seed-001 recipe for splitting (ε, δ) over the L = 12 nodes a counter element enters.
func ExampleAdvancedCompositionSplit() {
	target, _ := accounting.NewApproxDP(0.5, 1e-5)
	eps0, delta0, err := accounting.AdvancedCompositionSplit(target, 12)
	if err != nil {
		fmt.Println(err)
		return
	}
	back, _ := accounting.AdvancedComposition(eps0, delta0, 12, target.Delta/2)
	fmt.Printf("per node: eps0=%.5f delta0=%.3g\n", eps0, delta0)
	fmt.Printf("composed: eps=%.4f delta=%.3g\n", back.Epsilon, back.Delta)
	// Output:
	// per node: eps0=0.01461 delta0=4.17e-07
	// composed: eps=0.2526 delta=1e-05
}

// Budget splitting and calibration of Laplace noise for one of k = 3 statistic types.
func ExamplePureDP_Split() {
	total, _ := accounting.NewPureDP(1)
	each, err := total.Split(3)
	if err != nil {
		fmt.Println(err)
		return
	}
	b, err := accounting.LaplaceScale(10, each.Epsilon) // L1 sensitivity 10 (e.g. L·H)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("eps each=%.4f b=%.2f\n", each.Epsilon, b)
	// Output: eps each=0.3333 b=30.00
}
