package lq

import (
	"context"
	"math"
	"testing"

	"github.com/dprl/dprl/model/lq"
	"github.com/dprl/dprl/rng"
)

func cumulative(r []float64) []float64 {
	out := make([]float64, len(r))
	s := 0.0
	for i, v := range r {
		s += v
		out[i] = s
	}
	return out
}

// TestNonPrivateLearns is the CI-sized check (ii) of lq spec §5.4: ε = ∞, K = 300: zero
// optimism violations, Θ* in the set every episode, R(300) in [15, 35].
func TestNonPrivateLearns(t *testing.T) {
	sys := lq.LQE1()
	for _, seed := range []uint64{1, 2} {
		res, err := Run(context.Background(), sys, DefaultConfig(math.Inf(1), 300), rng.NewSeed(seed), nil)
		if err != nil {
			t.Fatal(err)
		}
		R := cumulative(res.Regret)[299]
		d := res.Diag
		t.Logf("seed %d: R(300) = %.3f, diag %+v", seed, R, d)
		if d.OptimismViolations != 0 || d.EstimateViolations != 0 || d.InSet != 300 || d.EmptySets != 0 {
			t.Errorf("diagnostics %+v", d)
		}
		if !(R >= 15 && R <= 35) {
			t.Errorf("R(300) = %v, want in [15, 35]", R)
		}
		for k, r := range res.Regret {
			if r < -1e-12 {
				t.Fatalf("negative regret %v at episode %d", r, k+1)
			}
		}
	}
}

// TestPrivateIsZeroLine is the exact identity of lq spec §5.3 / §5.4 (i), (iii): at ε ∈ {0.1, 1}
// (K = 2000) and ε = 10 (K = 300) the private agent plays u ≡ 0 in every episode and its
// cumulative regret equals Z(k) to 1e−9 relative at every k.
func TestPrivateIsZeroLine(t *testing.T) {
	sys := lq.LQE1()
	for _, c := range []struct {
		eps float64
		K   int
	}{{0.1, 2000}, {1, 2000}, {10, 300}} {
		res, err := Run(context.Background(), sys, DefaultConfig(c.eps, c.K), rng.NewSeed(7), nil)
		if err != nil {
			t.Fatal(err)
		}
		z := sys.ZeroLine(c.K)
		R := cumulative(res.Regret)
		for k := range R {
			if math.Abs(R[k]-z[k]) > 1e-9*z[k] {
				t.Fatalf("ε=%v: R(%d) = %.12f, Z = %.12f", c.eps, k+1, R[k], z[k])
			}
		}
		d := res.Diag
		if d.ZeroPolicy != c.K || d.OptimismViolations != 0 || d.InSet != c.K || d.PDRepairs != 0 || d.ScaledPairs != 0 {
			t.Errorf("ε=%v: diagnostics %+v", c.eps, d)
		}
	}
}
