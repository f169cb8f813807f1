package linmdp

import (
	"math"
	"math/rand/v2"
	"testing"

	model "github.com/dprl/dprl/model/linmdp"
)

// packedDiffNorm returns the ℓ2 norm of the packed upper triangle of φφᵀ − ψψᵀ: what one
// user's leaf of a Gram tree changes when she is replaced (the trees add noise to the packed
// triangle).
func packedDiffNorm(phi, psi []float64) float64 {
	d := len(phi)
	a, b := make([]float64, d*(d+1)/2), make([]float64, d*(d+1)/2)
	packOuter(phi, a)
	packOuter(psi, b)
	s := 0.0
	for i := range a {
		s += (a[i] - b[i]) * (a[i] - b[i])
	}
	return math.Sqrt(s)
}

// TestGramSensitivityDerived re-derives the ledger's Gram sensitivity (gramSensitivity = 2,
// the papers' Δ_Λ) instead of trusting it: for ‖φ‖, ‖ψ‖ ≤ 1 the packed triangle of
// φφᵀ − ψψᵀ has ℓ2 norm ≤ ‖φφᵀ − ψψᵀ‖_F = √(‖φ‖⁴ + ‖ψ‖⁴ − 2(φ·ψ)²) ≤ √2 ≤ 2. The test checks
// the supremum √2 (attained by orthogonal unit vectors), that no pair of random vectors of the
// unit ball exceeds it, and that no pair of feature vectors of the built-in environments
// exceeds it, so the ledger's bound holds with room √2 for every agent that calibrates with it.
func TestGramSensitivityDerived(t *testing.T) {
	const sup = math.Sqrt2
	if sup > gramSensitivity {
		t.Fatalf("the derived supremum %v exceeds gramSensitivity %v", sup, gramSensitivity)
	}
	if got := packedDiffNorm([]float64{1, 0, 0}, []float64{0, 1, 0}); math.Abs(got-sup) > 1e-12 {
		t.Errorf("orthogonal unit vectors: %v, want the supremum √2", got)
	}
	r := rand.New(rand.NewPCG(1, 2))
	unitBall := func(d int) []float64 {
		v := make([]float64, d)
		n := 0.0
		for i := range v {
			v[i] = r.NormFloat64()
			n += v[i] * v[i]
		}
		scale := math.Pow(r.Float64(), 1/float64(d)) / math.Sqrt(n)
		for i := range v {
			v[i] *= scale
		}
		return v
	}
	for range 20000 {
		d := 1 + r.IntN(8)
		if got := packedDiffNorm(unitBall(d), unitBall(d)); got > sup+1e-12 {
			t.Fatalf("a pair of the unit ball (d = %d): %v > √2", d, got)
		}
	}
	river, err := model.RiverSwimOneHot(6, 10)
	if err != nil {
		t.Fatal(err)
	}
	latent, err := model.LatentRiver(3, 2, 0.3, 0.9, 0.01, 10)
	if err != nil {
		t.Fatal(err)
	}
	simplex, err := model.RandomSimplex(20, 3, 5, 10, 3, 3, 7, true)
	if err != nil {
		t.Fatal(err)
	}
	two, err := model.TwoState100(1, 10)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []*model.MDP{river, latent, simplex, two} {
		var feats [][]float64
		for s := range m.N {
			feats = append(feats, m.Phi[s]...)
		}
		worst := 0.0
		for _, phi := range feats {
			if n := math.Sqrt(dot(phi, phi)); n > 1+1e-12 {
				t.Fatalf("%s: ‖φ‖ = %v > 1", m.Name, n)
			}
			for _, psi := range feats {
				worst = max(worst, packedDiffNorm(phi, psi))
			}
		}
		if worst > sup+1e-12 {
			t.Errorf("%s: a replaced leaf changes a Gram tree by %v > √2", m.Name, worst)
		}
	}
}
