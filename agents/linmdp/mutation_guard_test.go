package linmdp

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	model "github.com/dprl/dprl/model/linmdp"
	"github.com/dprl/dprl/rng"
)

// TestGramTreeNoiseMatchesCalibration: the Gram matrix Λ̃_h that Ngo (Alg. 1 lines 22–23) and
// Luyo (Alg. 2, batch tree) release after their first release is the exact Σφφᵀ plus one tree
// node of symmetric Gaussian noise, N(0, σ²) per packed upper-triangle entry with σ the
// constants' σ_node (Ngo) or σ_Λ (Luyo) — the σ the accountant's ρ is computed from. Over many
// independently seeded agents the residuals (tree prefix − exact packed Gram) divided by σ
// must have mean square 1 within 6 standard errors (√(2/N) for N Gaussian draws). Trees built
// with less noise than the constants state (e.g. σ/2: mean square 1/4) fail.
func TestGramTreeNoiseMatchesCalibration(t *testing.T) {
	env, err := model.RandomSimplex(10, 3, 4, 3, 3, 4, 3, false)
	if err != nil {
		t.Fatal(err)
	}
	d := env.D
	const agents = 120
	for _, name := range []string{"ngo", "luyo"} {
		t.Run(name, func(t *testing.T) {
			var sum float64
			n := 0
			for i := range agents {
				sd := rng.NewSeed(uint64(1000 + i))
				var (
					ag    Agent
					trees func(h int) []float64
					gram  [][]float64
					sigma float64
					lenOf func() int
				)
				switch name {
				case "ngo":
					a, err := NewNgo(env, NgoConfig{Common: Common{K: 12, Seed: &sd}, Epsilon: 1, Delta: 1e-5, UMax: 4})
					if err != nil {
						t.Fatal(err)
					}
					ag, gram, sigma = a, a.st.gram, a.cons.SigmaNode
					trees = func(h int) []float64 { return a.trees[h].Prefix() }
					lenOf = a.trees[0].Len
				case "luyo":
					a, err := NewLuyo(env, LuyoConfig{Common: Common{K: 4, Seed: &sd}, Epsilon: 0.5, Delta: 1e-5, NonBatched: true})
					if err != nil {
						t.Fatal(err)
					}
					ag, gram, sigma = a, a.st.gram, a.cons.SigmaLam
					trees = func(h int) []float64 { return a.trees[h].Prefix() }
					lenOf = a.trees[0].Len
				}
				if !(sigma > 0) {
					t.Fatalf("%s: calibrated σ = %v", name, sigma)
				}
				if _, err := Run(context.Background(), env, ag, 1, rand.New(rand.NewPCG(uint64(i), 7))); err != nil {
					t.Fatal(err)
				}
				if got := lenOf(); got != 1 {
					t.Fatalf("%s: %d tree insertions after one episode, want 1 (test would be vacuous)", name, got)
				}
				for h := range gram {
					p := trees(h)
					k := 0
					for r := 0; r < d; r++ {
						for c := r; c < d; c++ {
							z := (p[k] - gram[h][r*d+c]) / sigma
							sum += z * z
							n++
							k++
						}
					}
				}
			}
			ms := sum / float64(n)
			tol := 6 * math.Sqrt(2/float64(n))
			if math.Abs(ms-1) > tol {
				t.Errorf("%s: released Gram noise has mean square %.4f σ², want 1 ± %.4f (%d draws)", name, ms, tol, n)
			}
		})
	}
}
