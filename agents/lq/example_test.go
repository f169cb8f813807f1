package lq_test

import (
	"context"
	"fmt"

	agents "github.com/dprl/dprl/agents/lq"
	"github.com/dprl/dprl/model/lq"
	"github.com/dprl/dprl/privacy/accounting"
	"github.com/dprl/dprl/rng"
)

// Private-OFU-RL at ε = 1 on LQ-E1 for 100 episodes: the constants (public, fixed before any
// data is seen) and the outcome — u ≡ 0 in every episode, as the spec predicts.
func ExampleRun() {
	sys := lq.LQE1()
	res, err := agents.Run(context.Background(), sys, agents.DefaultConfig(1, 100), rng.NewSeed(1), nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	c := res.Constants
	fmt.Printf("m = %d, sigma1 = %.1f, eta = %.4g\n", c.M, c.Sigma1, c.Eta)
	fmt.Printf("zero-control episodes: %d of 100, optimism violations: %d\n", res.Diag.ZeroPolicy, res.Diag.OptimismViolations)
	// Output:
	// m = 7, sigma1 = 631.2, eta = 5.146e+04
	// zero-control episodes: 100 of 100, optimism violations: 0
}

// The constants of lq spec §3.2 for K = 10⁴, ε = 1 with the paper's zero-out sensitivities.
func ExampleComputeConstants() {
	cfg := agents.DefaultConfig(1, 10000)
	cfg.Neighbouring = accounting.ZeroOut
	c, _ := agents.ComputeConstants(agents.PublicOf(lq.LQE1()), cfg)
	fmt.Printf("m = %d, σ1 = %.1f, σ2 = %.1f, Λ = %.3g, ν = %.1f\n", c.M, c.Sigma1, c.Sigma2, c.Lambda, c.Nu)
	fmt.Println(c.Guarantee)
	// Output:
	// m = 14, σ1 = 631.2, σ2 = 485.5, Λ = 4.1e+04, ν = 95.5
	// (eps=0.497957, delta=1e-05)-DP billboard => JDP, zero-out
}
