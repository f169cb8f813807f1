package noise

import (
	"math/rand/v2"
	"testing"
)

// TestAddGaussianVecMatchesScalar: the vector path gives bit-identical results to AddGaussian
// entry by entry on the same stream.
func TestAddGaussianVecMatchesScalar(t *testing.T) {
	a := NewSeeded(rand.New(rand.NewPCG(3, 4)))
	b := NewSeeded(rand.New(rand.NewPCG(3, 4)))
	x := []float64{1, -2, 3.5, 0, 7}
	y := append([]float64(nil), x...)
	a.AddGaussianVec(x, 2.5)
	for i := range y {
		y[i] = b.AddGaussian(y[i], 2.5)
	}
	for i := range x {
		if x[i] != y[i] {
			t.Fatalf("entry %d: vec %v, scalar %v", i, x[i], y[i])
		}
	}
	z := []float64{1, 2}
	a.AddGaussianVec(z, 0)
	if z[0] != 1 || z[1] != 2 {
		t.Error("sigma = 0 must leave x unchanged")
	}
}
