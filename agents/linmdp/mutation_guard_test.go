package linmdp

import (
	"context"
	"math"
	"math/bits"
	"math/rand/v2"
	"testing"

	model "github.com/dprl/dprl/model/linmdp"
	"github.com/dprl/dprl/privacy/accounting"
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

// TestConstantsNoiseWithinBudget recomputes, from the noise levels the constants fix and the
// sensitivities of spec §3.2/§4.6 (a changed user alters one leaf of each of the H Gram trees,
// Frobenius sensitivity 2 per released node, and one term of each released regression vector,
// sensitivity 2(H+1)), the zCDP cost with the accountant's Gaussian formula ρ = Δ²/(2σ²)
// (Bun & Steinke 2016, Prop. 1.6) summed over releases, and requires it within the budget:
// ρ for Ngo [S] (at most L nodes per tree and U_max released ỹ per step), and the target
// (ε, δ) for Luyo (TreeLevels nodes per tree, B−1 released u per step). Noise below the
// calibration (e.g. σ halved: 4× the cost) fails.
func TestConstantsNoiseWithinBudget(t *testing.T) {
	for _, c := range []struct {
		K, H, D int
		rho     float64
	}{{100, 3, 4, 0.5}, {1000, 5, 8, 2}, {20000, 10, 10, 0.1}} {
		cons, err := NewNgoConstants(c.K, c.H, c.D, c.rho, 0.05, CalibSound)
		if err != nil {
			t.Fatal(err)
		}
		h := float64(c.H)
		levels := bits.Len(uint(c.K))
		spent := accounting.GaussianRho(math.Sqrt(h*float64(levels))*2, cons.SigmaNode)
		if cons.UMax > 0 {
			spent += accounting.GaussianRho(math.Sqrt(float64(cons.UMax)*h)*2*(h+1), cons.SigmaY)
		}
		if spent > c.rho*(1+1e-9) {
			t.Errorf("Ngo %+v: noise of σ_node = %g, σ_y = %g costs ρ = %g > budget %g", c, cons.SigmaNode, cons.SigmaY, spent, c.rho)
		}
	}
	for _, mode := range []LuyoCalibration{LuyoPaper, LuyoZCDP} {
		for _, c := range []struct {
			K, H, D, B int
			eps, delta float64
		}{{100, 3, 4, 10, 1, 1e-5}, {1000, 5, 8, 1000, 0.5, 1e-6}, {5000, 4, 6, 50, 2, 1e-5}} {
			cons, err := NewLuyoConstants(c.K, c.H, c.D, c.eps, c.delta, 0.05, c.B, mode)
			if err != nil {
				t.Fatal(err)
			}
			h := float64(c.H)
			levels := bits.Len(uint(max(cons.B-1, 1)))
			rho := accounting.GaussianRho(math.Sqrt(h*float64(levels))*2, cons.SigmaLam)
			if cons.B > 1 {
				rho += accounting.GaussianRho(math.Sqrt(float64(cons.B-1)*h)*2*(h+1), cons.SigmaU)
			}
			got, err := accounting.ZCDP{Rho: rho}.ToApproxDP(c.delta)
			if err != nil {
				t.Fatal(err)
			}
			if got.Epsilon > c.eps*(1+1e-9) {
				t.Errorf("Luyo %s %+v: noise of σ_Λ = %g, σ_u = %g costs ρ = %g, i.e. ε = %g > target %g", mode, c, cons.SigmaLam, cons.SigmaU, rho, got.Epsilon, c.eps)
			}
		}
	}
}

// TestPracticalFeaturesProjected: the practical agents' privacy boundary projects the public
// feature table onto the unit ball before any user data is recorded, so a (buggy or hostile)
// table with ‖φ‖ > 1 cannot raise one user's contribution above the sensitivity
// PracticalSensitivity assumes (‖φφᵀ‖_F ≤ 1, ‖φ r‖ ≤ 1). One step at a feature of norm 10
// must enter the counter's element with ‖φφᵀ‖_F = ‖packed Gram‖₂·gramScale ≤ 1 and
// ‖φ r‖ ≤ r.
func TestPracticalFeaturesProjected(t *testing.T) {
	env := practicalSmall(t)
	f := append([]float64(nil), env.Phi[0][0]...)
	n0 := 0.0
	for i := range f {
		f[i] *= 10
		n0 += f[i] * f[i]
	}
	if !(n0 > 1) {
		t.Fatalf("feature (0,0) has norm %v after scaling: test would be vacuous", math.Sqrt(n0))
	}
	env.Phi[0][0] = f
	sd := rng.NewSeed(1)
	a, err := NewPractical(env, PracticalConfig{Common: Common{K: 10, Seed: &sd}, Epsilon: 1, Delta: 1e-5})
	if err != nil {
		t.Fatal(err)
	}
	const r = 0.5
	a.cur.observe(0, 0, 0, r, 0)
	l := a.cur.lay
	g := 0.0
	for _, v := range a.cur.batch[:l.packed] {
		g += v * v
	}
	if fro := math.Sqrt(g) * l.gramScale; fro > 1+1e-12 {
		t.Errorf("a feature of norm %.3g entered the Gram element with ‖φφᵀ‖_F = %.4g > 1", math.Sqrt(n0), fro)
	}
	b := 0.0
	for _, v := range a.cur.batch[l.packed : l.packed+l.d] {
		b += v * v
	}
	if nb := math.Sqrt(b) * l.tgtScale; nb > r*(1+1e-12) {
		t.Errorf("a feature of norm %.3g entered the target element with ‖φ r‖ = %.4g > r = %v", math.Sqrt(n0), nb, r)
	}
}
