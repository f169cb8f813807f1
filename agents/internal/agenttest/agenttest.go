// Package agenttest holds test helpers shared by the agent families' tests (agents/tabular,
// agents/linmdp, agents/linmix, agents/lq). It is imported by _test.go files only.
package agenttest

import (
	"fmt"
	"math"
	"testing"

	"github.com/dprl/dprl/privacy/audit"
	"github.com/dprl/dprl/rng"
)

// MaxPairDistance returns max ‖(x − y)/scales‖₂ over all pairs of the vectors, deduplicated
// first (nil scales: the plain ℓ2 distance): the brute-force replace-one sensitivity of an
// encoding enumerated over every episode.
func MaxPairDistance(vs [][]float64, scales []float64) float64 {
	seen := map[string]bool{}
	var u [][]float64
	for _, v := range vs {
		k := fmt.Sprint(v)
		if !seen[k] {
			seen[k] = true
			u = append(u, v)
		}
	}
	best := 0.0
	for i := range u {
		for j := 0; j < i; j++ {
			s := 0.0
			for k, a := range u[i] {
				d := a - u[j][k]
				if scales != nil {
					d /= scales[k]
				}
				s += d * d
			}
			best = max(best, s)
		}
	}
	return math.Sqrt(best)
}

// Canary runs the one-run canary audit (seed 2) on the targets named in names: each must be
// flagged exactly when it is a broken variant.
func Canary(t *testing.T, ts []audit.Target, names ...string) {
	t.Helper()
	for _, tg := range ts {
		keep := false
		for _, n := range names {
			keep = keep || tg.Name == n
		}
		if !keep {
			continue
		}
		r, err := audit.CanaryAudit(tg, audit.CanaryOptions{Seed: rng.NewSeed(2)})
		if err != nil {
			t.Fatal(err)
		}
		if r.Violation != tg.Broken {
			t.Errorf("%s: canary ε_LB = %.3f (%d/%d correct), want violation = %v", tg.Name, r.EpsilonLB, r.Correct, r.Guesses, tg.Broken)
		}
	}
}
