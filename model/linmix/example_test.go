package linmix_test

import (
	"fmt"

	"github.com/dprl/dprl/model/linmix"
)

// Build the spec's Environment A, evaluate V* and a policy exactly, and compute a
// value-targeted feature ψ_V.
func Example() {
	m, err := linmix.TwoStateHard(5, 10, 0.1, 0.5, nil)
	if err != nil {
		panic(err)
	}
	fmt.Printf("S=%d A=%d d=%d C_w=%.6f V*=%.6f\n", m.NumStates(), m.NumActions(), m.Dim(), m.Cw(), m.VStar())
	p := m.NewPolicy() // always action 0
	fmt.Printf("regret of always-0: %.6f\n", m.NewEvaluator().Regret(p))
	x := make([]float64, m.Dim())
	m.PsiV(0, 0, []float64{0, 1}, x) // ψ_V with V = 1{x1}: ⟨x, w⟩ = P(x1|x0,a)
	fmt.Printf("ψ_V(x0,0) = %.4f\n", x)
	// Output:
	// S=2 A=16 d=5 C_w=1.415980 V*=3.735152
	// regret of always-0: 0.966717
	// ψ_V(x0,0) = [0.0707 -0.3536 -0.3536 -0.3536 -0.3536]
}
