package linmix

import (
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/dprl/dprl/agents/internal/agentkit"
)

// clampEigen replaces the symmetric matrix a by V·max(Λ, floor)·Vᵀ, its projection onto
// {M ⪰ floor·I} in Frobenius norm (spec P2). It operates on released quantities only, so it
// is post-processing and costs no privacy.
func clampEigen(a []float64, d int, floor float64) {
	s := mat.NewSymDense(d, nil)
	for i := 0; i < d; i++ {
		for j := i; j < d; j++ {
			v := (a[i*d+j] + a[j*d+i]) / 2
			if math.IsNaN(v) || math.IsInf(v, 0) {
				v = 0
			}
			s.SetSym(i, j, v)
		}
	}
	var eig mat.EigenSym
	if !eig.Factorize(s, true) {
		agentkit.SetScaledIdentity(a[:d*d], d, floor)
		return
	}
	vals := eig.Values(nil)
	var vec mat.Dense
	eig.VectorsTo(&vec)
	for i := 0; i < d; i++ {
		for j := 0; j < d; j++ {
			x := 0.0
			for k := 0; k < d; k++ {
				x += vec.At(i, k) * max(vals[k], floor) * vec.At(j, k)
			}
			a[i*d+j] = x
		}
	}
}
