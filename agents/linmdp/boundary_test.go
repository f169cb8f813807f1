package linmdp

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/dprl/dprl/internal/privacytest"
	model "github.com/dprl/dprl/model/linmdp"
	"github.com/dprl/dprl/privacy/noise"
	"github.com/dprl/dprl/rng"
)

func boundaryEnv(t *testing.T) *model.MDP { return river(t, 6, 4) }

// everyAgent returns one agent of each kind (LSVI-UCB, Ngo, Luyo), seeded.
func everyAgent(t *testing.T, env *model.MDP, K int) map[string]Agent {
	sd := rng.NewSeed(3)
	c := Common{K: K, Seed: &sd}
	n, err := NewNgo(env, NgoConfig{Common: c, Epsilon: 1, Delta: 1e-5})
	if err != nil {
		t.Fatal(err)
	}
	l, err := NewLuyo(env, LuyoConfig{Common: c, Epsilon: 0.5, Delta: 1e-5, NonBatched: true})
	if err != nil {
		t.Fatal(err)
	}
	u, err := NewLSVIUCB(env, c)
	if err != nil {
		t.Fatal(err)
	}
	return map[string]Agent{"ngo": n, "luyo": l, "lsvi-ucb": u}
}

func statsOf(a Agent) *stats {
	switch x := a.(type) {
	case *Ngo:
		return x.st
	case *Luyo:
		return x.st
	case *LSVIUCB:
		return x.st
	}
	return nil
}

// TestHostileRewardsClipped (issue 10 items 3b, 4): the agents clip observed rewards to
// [0, 1] (NaN → 0) at Observe, the privacy boundary, so the regression target statistic
// b_h = Σ φ·r that the private y is built from moves by at most ‖φ‖ ≤ 1 per step whatever a
// hostile user reports (Δ_y = 2H+2 assumes r ∈ [0, 1]). On the old code a reward of 1e9 or
// NaN went straight into the statistic.
func TestHostileRewardsClipped(t *testing.T) {
	env := boundaryEnv(t)
	for _, r := range privacytest.Hostile {
		for name := range everyAgent(t, env, 4) {
			ref, bad := everyAgent(t, env, 4)[name], everyAgent(t, env, 4)[name]
			ref.BeginEpisode(1)
			bad.BeginEpisode(1)
			for h := 0; h < env.H; h++ {
				if err := ref.Observe(h, 0, 0, 0, 1); err != nil {
					t.Fatal(err)
				}
				if err := bad.Observe(h, 0, 0, r, 1); err != nil {
					t.Fatalf("%s: reward %g: %v", name, r, err)
				}
			}
			for h := 0; h < env.H; h++ {
				d := 0.0
				for i, v := range statsOf(bad).b[h] {
					d += (v - statsOf(ref).b[h][i]) * (v - statsOf(ref).b[h][i])
				}
				if !(math.Sqrt(d) <= 1+1e-12) {
					t.Errorf("%s: reward %g moved b_%d by %g > ‖φ‖·1", name, r, h, math.Sqrt(d))
				}
			}
		}
	}
}

// TestHostileIndicesRejected (issue 10 item 4): out-of-range step, state, action or next
// state give an error naming the field, not a panic or a write into another state's statistic,
// and nothing is recorded.
func TestHostileIndicesRejected(t *testing.T) {
	env := boundaryEnv(t)
	for _, c := range [][4]int{{-1, 0, 0, 0}, {env.H, 0, 0, 0}, {0, env.N, 0, 0}, {0, -1, 0, 0}, {0, 0, env.A, 0}, {0, 0, -2, 0}, {0, 0, 0, env.N}, {0, 0, 0, -1}} {
		for name, a := range everyAgent(t, env, 4) {
			func() {
				defer func() {
					if p := recover(); p != nil {
						t.Errorf("%s %v: panic %v", name, c, p)
					}
				}()
				a.BeginEpisode(1)
				if err := a.Observe(c[0], c[1], c[2], 0.5, c[3]); err == nil {
					t.Errorf("%s %v: accepted", name, c)
				}
				for h := range statsOf(a).gram {
					for _, v := range statsOf(a).gram[h] {
						if v != 0 {
							t.Fatalf("%s %v: a rejected step was recorded", name, c)
						}
					}
				}
			}()
		}
	}
}

// TestSecureReleasesOnGrid (practical-privacy spec §7, the linear-MDP part of the cross-family
// check): with the Secure source (Seed nil) the released Gram matrices Λ̃_h (off-diagonal
// entries: the diagonal also carries the public shift) and the released regression vectors
// ỹ_h / ũ_h are exact multiples of the grid step of their Gaussian noise.
func TestSecureReleasesOnGrid(t *testing.T) {
	env, err := model.RandomSimplex(10, 3, 4, 3, 3, 4, 3, false) // float features: exact sums are off the grid
	if err != nil {
		t.Fatal(err)
	}
	const K = 12
	ngo, err := NewNgo(env, NgoConfig{Common: Common{K: K}, Epsilon: 1, Delta: 1e-5, UMax: 4, C: 1.0001})
	if err != nil {
		t.Fatal(err)
	}
	ngo.cfg.broken.record = true
	luyo, err := NewLuyo(env, LuyoConfig{Common: Common{K: K}, Epsilon: 0.5, Delta: 1e-5, NonBatched: true})
	if err != nil {
		t.Fatal(err)
	}
	luyo.cfg.broken.record = true
	if !ngo.gsrc[0].Secure() || !luyo.gsrc[0].Secure() {
		t.Fatal("agents without a seed must use the Secure source")
	}
	for _, ag := range []Agent{ngo, luyo} {
		if _, err := Run(context.Background(), env, ag, K, rand.New(rand.NewPCG(1, 2))); err != nil {
			t.Fatal(err)
		}
	}
	d := env.D
	offDiag := func(name string, m []float64, g float64) {
		for i := 0; i < d; i++ {
			for j := 0; j < d; j++ {
				if v := m[i*d+j]; i != j && math.Trunc(v/g) != v/g {
					t.Fatalf("%s: released Λ̃[%d,%d] = %g is off the grid %g", name, i, j, v, g)
				}
			}
		}
	}
	gN, gY := noise.GaussianGranularity(ngo.cons.SigmaNode), noise.GaussianGranularity(ngo.cons.SigmaY)
	for h := range ngo.rel {
		offDiag("ngo", ngo.rel[h], gN)
	}
	if len(ngo.ylog) == 0 {
		t.Fatal("ngo never released ỹ: test is vacuous")
	}
	for _, y := range ngo.ylog {
		if i := privacytest.OffGrid(y, func(int) float64 { return gY }); i >= 0 {
			t.Fatalf("ngo: released ỹ[%d] = %g is off the grid %g", i, y[i], gY)
		}
	}
	gL, gU := noise.GaussianGranularity(luyo.cons.SigmaLam), noise.GaussianGranularity(luyo.cons.SigmaU)
	if len(luyo.log) == 0 {
		t.Fatal("luyo never released: test is vacuous")
	}
	for i, x := range luyo.log {
		if i%(env.H+env.H) < env.H { // per batch: H Gram matrices, then H vectors
			if luyo.repairs == 0 {
				offDiag("luyo", x, gL)
			}
		} else if j := privacytest.OffGrid(x, func(int) float64 { return gU }); j >= 0 {
			t.Fatalf("luyo: released ũ[%d] = %g is off the grid %g", j, x[j], gU)
		}
	}
}
