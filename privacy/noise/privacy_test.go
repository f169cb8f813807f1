package noise

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/dprl/dprl/privacy/stattest"
)

// TestLaplaceMechanismStatDP: the Laplace mechanism on a counting query (neighbours 0 and 1,
// sensitivity 1) with b = 1/ε is ε-DP; a StatDP event test over thresholds must not flag it
// (Bonferroni-corrected level 0.01), and must flag the broken variant with the noise halved.
func TestLaplaceMechanismStatDP(t *testing.T) {
	const n, eps = 200000, 1.0
	taus := []float64{0.5, 1.5, 2.5, 3.5}
	run := func(scale float64, seed uint64) float64 {
		src := NewSeeded(rand.New(rand.NewPCG(seed, 1)))
		cD, cDp := make([]int, len(taus)), make([]int, len(taus))
		for i := 0; i < n; i++ {
			a, b := src.AddLaplace(1, scale), src.AddLaplace(0, scale)
			for j, tau := range taus {
				if a > tau {
					cD[j]++
				}
				if b > tau {
					cDp[j]++
				}
			}
		}
		r := rand.New(rand.NewPCG(seed, 2))
		minP := 1.0
		for j := range taus {
			minP = math.Min(minP, stattest.DPEventTest(cD[j], n, cDp[j], n, eps, r))
		}
		return minP
	}
	if p := run(1/eps, 10); p < 0.01/float64(len(taus)) {
		t.Errorf("correct Laplace mechanism flagged: p = %g", p)
	}
	if p := run(0.5/eps, 11); p > 1e-6 {
		t.Errorf("broken mechanism (noise halved) not flagged: p = %g", p)
	}
}
