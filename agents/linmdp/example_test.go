package linmdp_test

import (
	"context"
	"fmt"

	agents "github.com/dprl/dprl/agents/linmdp"
	model "github.com/dprl/dprl/model/linmdp"
	"github.com/dprl/dprl/rng"
)

// ExampleNewNgo runs Ngo et al.'s private LSVI-UCB ([S] calibration, ε = 1, δ = 1e−5) and its
// noise-off twin on E2 and prints the constants that decide what happens: with ε = 1 the
// regulariser 2λ̃_Λ dwarfs K and the noisy log-det test never fires.
func ExampleNewNgo() {
	env, _ := model.LatentRiver(3, 10, 0.1, 0.9, 0.05, 12)
	seed := rng.NewSeed(1) // seeded noise for a reproducible experiment; nil means noise.Secure
	priv, err := agents.NewNgo(env, agents.NgoConfig{Common: agents.Common{K: 2000, Seed: &seed}, Epsilon: 1, Delta: 1e-5})
	if err != nil {
		panic(err)
	}
	twin, _ := agents.NewNgo(env, agents.NgoConfig{Common: agents.Common{K: 2000, CBeta: 0.2, Seed: &seed}, NoiseOff: true})
	c := priv.Constants()
	fmt.Printf("U_max=%d lambda~=%.0f\n", c.UMax, c.LambdaTilde)
	for _, a := range []agents.Agent{priv, twin} {
		tr, _ := agents.Run(context.Background(), env, a, 2000, rng.NewSeed(1).Child("env").Rand())
		fmt.Printf("%s: %d updates, private=%v\n", a.Info().Agent, len(tr.Updates), a.Info().Private)
	}
	// Output:
	// U_max=1 lambda~=18638
	// ngo-private: 0 updates, private=true
	// rare-switch: 30 updates, private=false
}

// ExampleNewLuyoConstants prints App. E.1's constants for the spec's reference inputs.
func ExampleNewLuyoConstants() {
	c, _ := agents.NewLuyoConstants(10000, 5, 5, 1, 1e-5, 0.05, 0, agents.LuyoPaper)
	fmt.Printf("B=%d B0=%d c_K=%.4g beta=%.4g certified eps=%.2g\n", c.B, c.B0, c.CK, c.Beta, c.EpsilonCertified)
	// Output: B=11 B0=5 c_K=9.039e+08 beta=2.733e+08 certified eps=0.00021
}
