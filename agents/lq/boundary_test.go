package lq

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/dprl/dprl/internal/privacytest"
	"github.com/dprl/dprl/privacy/noise"
)

// TestSecureReleasesOnGrid (practical-privacy spec §7, the LQ part of the cross-family check):
// with the Secure source both released counters, B_1 (Σ z zᵀ) and B_2 (Σ z x'ᵀ), are exact
// multiples of the grid step of their Gaussian node noise after every user.
func TestSecureReleasesOnGrid(t *testing.T) {
	sys, pub, cfg, consts := lqE1(t, 12)
	cur, err := NewCurator(pub, cfg, consts, noise.NewSecureFromKey([32]byte{1}), noise.NewSecureFromKey([32]byte{2}))
	if err != nil {
		t.Fatal(err)
	}
	g1, g2 := noise.GaussianGranularity(consts.Sigma1), noise.GaussianGranularity(consts.Sigma2)
	r := rand.New(rand.NewPCG(2, 2))
	for k := 0; k < 11; k++ {
		tr := &Trajectory{}
		for h := 0; h <= sys.H; h++ {
			tr.X = append(tr.X, []float64{0.3 * r.NormFloat64(), 0.3 * r.NormFloat64()})
		}
		for h := 0; h < sys.H; h++ {
			tr.U = append(tr.U, []float64{0.3 * r.NormFloat64()})
		}
		if err := cur.Receive(tr); err != nil {
			t.Fatal(err)
		}
		b := cur.Release()
		if i := privacytest.OffGrid(b.T1, func(int) float64 { return g1 }); i >= 0 {
			t.Fatalf("k=%d: released B_1 entry %d = %g is off the grid %g", k+1, i, b.T1[i], g1)
		}
		if i := privacytest.OffGrid(b.T2, func(int) float64 { return g2 }); i >= 0 {
			t.Fatalf("k=%d: released B_2 entry %d = %g is off the grid %g", k+1, i, b.T2[i], g2)
		}
	}
}

// TestHostileTrajectoryBounded (issue 10 items 3b, 4): every hostile value (NaN, ±Inf, huge,
// negative) in any state or control coordinate is either rejected with an error or scaled into
// the sensitivity ball by pair scaling: with noise off the released element stays within
// Δ_1 = H(1+γ)², Δ_2 = H(1+γ) in Frobenius norm, and nothing non-finite is released.
func TestHostileTrajectoryBounded(t *testing.T) {
	sys, pub, cfg, consts := noiseOffLQE1(t, 10)
	H, g := float64(sys.H), sys.Gamma
	for _, v := range privacytest.Hostile {
		for _, where := range []string{"x", "u", "xnext"} {
			cur, err := NewCurator(pub, cfg, consts, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			tr := adversarialTrajectory(userA, sys.H)
			switch where {
			case "x":
				tr.X[2][0] = v
			case "u":
				tr.U[1][0] = v
			case "xnext":
				tr.X[sys.H][1] = v
			}
			if err := cur.Receive(tr); err != nil {
				continue // rejected before anything was inserted
			}
			b := cur.Release()
			if f := frob(b.T1); !(f <= H*(1+g)*(1+g)*(1+1e-12)) {
				t.Errorf("value %g in %s: ‖e1‖_F = %g > H(1+γ)²", v, where, f)
			}
			if f := frob(b.T2); !(f <= H*(1+g)*(1+1e-12)) {
				t.Errorf("value %g in %s: ‖e2‖_F = %g > H(1+γ)", v, where, f)
			}
			for _, x := range append(append([]float64(nil), b.T1...), b.T2...) {
				if math.IsNaN(x) || math.IsInf(x, 0) {
					t.Fatalf("value %g in %s: non-finite release", v, where)
				}
			}
		}
	}
}
