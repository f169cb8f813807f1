package smallmat

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// randomSPD returns A·Aᵀ + I for a random d×d A.
func randomSPD(r *rand.Rand, d int) []float64 {
	a := make([]float64, d*d)
	for i := range a {
		a[i] = r.NormFloat64()
	}
	m := make([]float64, d*d)
	for i := 0; i < d; i++ {
		for j := 0; j < d; j++ {
			for k := 0; k < d; k++ {
				m[i*d+j] += a[i*d+k] * a[j*d+k]
			}
		}
		m[i*d+i]++
	}
	return m
}

func TestAgainstGonum(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, d := range []int{1, 2, 5, 12, 30} {
		a := randomSPD(r, d)
		l := make([]float64, d*d)
		if !Cholesky(a, d, l) {
			t.Fatalf("d=%d: SPD matrix rejected", d)
		}
		var ch mat.Cholesky
		if !ch.Factorize(mat.NewSymDense(d, append([]float64(nil), a...))) {
			t.Fatal("gonum rejected the matrix")
		}
		if got, want := LogDet(l, d), ch.LogDet(); math.Abs(got-want) > 1e-9*math.Max(1, math.Abs(want)) {
			t.Errorf("d=%d: log det %v, gonum %v", d, got, want)
		}
		b := make([]float64, d)
		for i := range b {
			b[i] = r.NormFloat64()
		}
		x := make([]float64, d)
		Solve(l, d, b, x)
		var want mat.VecDense
		if err := ch.SolveVecTo(&want, mat.NewVecDense(d, b)); err != nil {
			t.Fatal(err)
		}
		q := 0.0
		for i := range x {
			if math.Abs(x[i]-want.AtVec(i)) > 1e-9*(1+math.Abs(want.AtVec(i))) {
				t.Errorf("d=%d: solve x[%d] = %v, gonum %v", d, i, x[i], want.AtVec(i))
			}
			q += b[i] * x[i]
		}
		if got := InvQuad(l, d, b, make([]float64, d)); math.Abs(got-q) > 1e-9*(1+q) {
			t.Errorf("d=%d: InvQuad %v, bᵀx %v", d, got, q)
		}
		// In-place solve gives the same answer.
		y := append([]float64(nil), b...)
		Solve(l, d, y, y)
		for i := range y {
			if y[i] != x[i] {
				t.Errorf("d=%d: aliased solve differs at %d", d, i)
			}
		}
	}
}

func TestCholeskyRejects(t *testing.T) {
	for _, a := range [][]float64{
		{1, 2, 2, 1},           // indefinite
		{0, 0, 0, 0},           // singular
		{math.NaN(), 0, 0, 1},  // NaN
		{math.Inf(1), 0, 0, 1}, // infinite pivot
		{1, 0, 0, -1e-300},     // negative
	} {
		if Cholesky(a, 2, make([]float64, 4)) {
			t.Errorf("%v accepted", a)
		}
	}
}
