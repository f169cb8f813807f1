package linmix_test

import (
	"fmt"

	agents "github.com/dprl/dprl/agents/linmix"
	model "github.com/dprl/dprl/model/linmix"
	"github.com/dprl/dprl/rng"
)

// Run private UCRL-VTR (Luyo et al. Alg. 1, LDP, Cor. 6 constants) on Environment A with
// seeded noise and print its public constants and privacy statement.
func Example() {
	m, _ := model.TwoStateHard(5, 10, 0.1, 0.5, nil)
	a, err := agents.NewSeeded(m, agents.Config{Algorithm: agents.UCRLVTR, Mode: agents.LDP, Episodes: 10000, Epsilon: 0.5, Delta: 1e-5, Cw: 2}, rng.NewSeed(1))
	if err != nil {
		panic(err)
	}
	c := a.Constants()
	fmt.Printf("σ_B = %.7g, Υ = %.7g, β = %.7g\n", c.SigmaMat[0], c.Upsilon[0], c.Beta[0])
	fmt.Println(c.Privacy)
	total := 0.0
	for k := 0; k < 100; k++ {
		r, _ := a.Episode()
		total += r
	}
	fmt.Printf("regret after 100 episodes within the no-learning band: %v\n", total > 80 && total < 115)
	// Output:
	// σ_B = 44111.57, Υ = 1.83262e+08, β = 121920.8
	// (ε=0.5, δ=1e-05)-ldp (Luyo et al.); privacy ledger (replace-one): ε=0.0508 at δ=1e-05, private at the nominal ε
	// regret after 100 episodes within the no-learning band: true
}

// The golden constants of the spec's Appendix A.
func ExampleLuyoJDP() {
	c := agents.LuyoJDP(agents.Params{K: 10000, H: 10, D: 5, Epsilon: 0.5, Delta: 1e-5, P: 0.05, Cw: 2})
	fmt.Printf("K0=%d σ_B=%.10g Υ=%.10g β=%.10g\n", c.K0, c.SigmaB, c.Upsilon, c.BetaCorollary)
	// Output:
	// K0=15 σ_B=6972479.764 Υ=1121896432 β=301536.3955
}
