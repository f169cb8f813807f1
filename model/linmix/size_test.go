package linmix

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestSizeLimits: files and specs whose tables exceed MaxEntries (the one-hot reward features
// of the reward form are S·A × S·A) or whose ψ normalisation check would exceed MaxWork are
// refused before allocating, with the product and the limit named.
func TestSizeLimits(t *testing.T) {
	// reward form with S·A = 10000: the one-hot reward features are 10⁸ entries.
	const S = 10000
	var b strings.Builder
	fmt.Fprintf(&b, `{"states": %d, "actions": 1, "horizon": 1, "dim": 1, "start": 0, "w": [[1]], "psi": [], "reward": [`, S)
	for s := 0; s < S; s++ {
		if s > 0 {
			b.WriteByte(',')
		}
		b.WriteString("[0]")
	}
	b.WriteString("]}")
	if _, err := Parse([]byte(b.String()), "json"); err == nil || !strings.Contains(err.Error(), "exceeds the limit 2^26") {
		t.Errorf("reward form with S·A = %d: error %v, want the reward-feature limit", S, err)
	}

	for _, c := range []struct {
		name string
		sp   Spec
		want string
	}{
		{"per-step probabilities", Spec{States: 2, Actions: 1, Horizon: 10000, Dim: 1, RewardDim: 1, Psi: make([]PsiEntry, 7000)}, "exceeds the limit 2^26"},
		{"reward features", Spec{States: 1 << 11, Actions: 1 << 11, Horizon: 1, Dim: 1, RewardDim: 1 << 5}, "exceeds the limit 2^26"},
		{"values", Spec{States: 1 << 20, Actions: 1, Horizon: 10000, Dim: 1, RewardDim: 1}, "exceeds the limit 2^26"},
	} {
		if _, err := New(c.sp); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one mentioning %q", c.name, err, c.want)
		}
	}

	// The environment constructors check before building their ψ rows and base kernels.
	if _, err := HardToLearn(16, 1000, 100, rand.New(rand.NewPCG(1, 2))); err == nil || !strings.Contains(err.Error(), "exceeds the limit 2^26") {
		t.Errorf("HardToLearn(d = 16, H = 1000): error %v, want the size limit", err)
	}
	if _, err := BaseMixture(1000, 64, 64, 10, rand.New(rand.NewPCG(1, 2))); err == nil || !strings.Contains(err.Error(), "exceeds the limit 2^26") {
		t.Errorf("BaseMixture(S = 1000, A = 64, d = 64): error %v, want the size limit", err)
	}
	if _, err := HardToLearn(5, 10, 100, rand.New(rand.NewPCG(1, 2))); err != nil {
		t.Errorf("a small HardToLearn was refused: %v", err)
	}

	// The exact ψ normalisation check enumerates the 2^n vertices of every (s,a) whose
	// coordinate bound exceeds 1: 80 pairs with 16 entries of dimension 1000 each is
	// 80·2^16·2000 ≈ 2^33.3 operations even with one vector update per vertex.
	sp := Spec{States: 16, Actions: 5, Horizon: 1, Dim: 1000, RewardDim: 1, ThetaR: [][]float64{{0}}}
	w := make([]float64, sp.Dim)
	w[0] = 1
	sp.W = [][]float64{w}
	for s := 0; s < sp.States; s++ {
		for a := 0; a < sp.Actions; a++ {
			for n := 0; n < 16; n++ {
				v := make([]float64, sp.Dim)
				v[0] = 1.0 / 16 // P(n|s,a) = 1/16 …
				v[1] = 0.01     // … and ±0.01 in another coordinate: the coordinate bound is
				if n%2 == 1 {   // > 1, every 0/1 combination has norm ≤ 1 (a valid model)
					v[1] = -0.01
				}
				sp.Psi = append(sp.Psi, PsiEntry{S: s, A: a, Next: n, Vec: v})
			}
			sp.Phi = append(sp.Phi, []float64{0})
		}
	}
	if _, err := New(sp); err == nil || !strings.Contains(err.Error(), "2^30 operations") {
		t.Errorf("normalisation check of 80 pairs × 2^16 vertices × d = 1000: error %v, want the work limit", err)
	}
}

// TestNormalisationExact: when the coordinate bound fails, the exact check visits every 0/1
// vertex (in Gray-code order): a model whose only violation is at the vertex {0, 1} is
// rejected, and its valid variant is accepted; within MaxWork large checks are accepted.
func TestNormalisationExact(t *testing.T) {
	spec := func(c1 float64, d int) Spec {
		const S = 4
		sp := Spec{States: S, Actions: 1, Horizon: 1, Dim: d, RewardDim: 1, ThetaR: [][]float64{{0}}}
		w := make([]float64, d)
		w[0] = 1
		sp.W = [][]float64{w}
		for s := 0; s < S; s++ {
			for n, sign := range []float64{1, 1, -1, -1} {
				v := make([]float64, d)
				v[0] = 1.0 / S
				v[1] = sign * c1
				sp.Psi = append(sp.Psi, PsiEntry{S: s, A: 0, Next: n, Vec: v})
			}
			sp.Phi = append(sp.Phi, []float64{0})
		}
		return sp
	}
	// Coordinate bound √(1 + (2·c1)²) > 1 in both; the vertex {0, 1} has norm
	// √(0.5² + (2·c1)²): 1.118 for c1 = 0.5, 0.64 for c1 = 0.2.
	if _, err := New(spec(0.5, 2)); err == nil || !strings.Contains(err.Error(), "for a 0/1 vector v") {
		t.Errorf("violation at a vertex: error %v", err)
	}
	if _, err := New(spec(0.2, 2)); err != nil {
		t.Errorf("valid signed ψ rejected: %v", err)
	}
	if _, err := New(spec(0.2, 1000)); err != nil {
		t.Errorf("valid signed ψ with d = 1000 rejected: %v", err)
	}
}
