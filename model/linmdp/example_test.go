package linmdp_test

import (
	"fmt"

	"github.com/dprl/dprl/model/linmdp"
)

// Example builds E2 (LatentRiver) and evaluates the optimal and the always-forward policy
// exactly.
func Example() {
	m, err := linmdp.LatentRiver(3, 10, 0.1, 0.9, 0.05, 12)
	if err != nil {
		panic(err)
	}
	vstar, _ := m.OptimalValues()
	fwd := m.Evaluate(m.ConstantPolicy(1))
	fmt.Printf("d=%d N=%d A=%d V*=%.4f always-forward=%.4f regret/episode=%.4f\n",
		m.D, m.N, m.A, vstar[0][0], fwd[0][0], linmdp.Regret(vstar, fwd, 0))
	// Output: d=3 N=30 A=3 V*=7.1784 always-forward=3.4269 regret/episode=3.7515
}
