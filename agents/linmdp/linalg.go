package linmdp

import (
	"math"
	"math/bits"

	"gonum.org/v1/gonum/mat"

	"github.com/dprl/dprl/agents/internal/agentkit"
	"github.com/dprl/dprl/internal/smallmat"
	"github.com/dprl/dprl/privacy/noise"
)

// symmetrize replaces a by (a + aᵀ)/2.
func symmetrize(a []float64, d int) {
	for i := 0; i < d; i++ {
		for j := i + 1; j < d; j++ {
			v := (a[i*d+j] + a[j*d+i]) / 2
			a[i*d+j], a[j*d+i] = v, v
		}
	}
}

// addScaled adds a·x to dst, which is at least as long as x.
func addScaled(dst []float64, a float64, x []float64) {
	for i, v := range x {
		dst[i] += a * v
	}
}

// unpackAdd adds the packed row-major upper triangle p of a d×d symmetric matrix to a.
func unpackAdd(p []float64, d int, a []float64) {
	k := 0
	for i := 0; i < d; i++ {
		for j := i; j < d; j++ {
			a[i*d+j] += p[k]
			if j != i {
				a[j*d+i] += p[k]
			}
			k++
		}
	}
}

// addRedrawnNoise adds to the d×d matrix m fresh symmetric Gaussian noise of the variance of
// a tree's prefix after n insertions (σ²·popcount(n); σ divided by div when div > 0): the broken
// variants that redraw the tree noise at every release instead of reusing the tree's nodes.
func addRedrawnNoise(m []float64, d int, src noise.Source, sigma float64, n int, div float64) {
	sd := sigma * math.Sqrt(float64(bits.OnesCount(uint(n))))
	if div > 0 {
		sd /= div
	}
	for i := 0; i < d; i++ {
		for j := i; j < d; j++ {
			v := src.AddGaussian(0, sd)
			m[i*d+j] += v
			if j != i {
				m[j*d+i] += v
			}
		}
	}
}

// packOuter writes the packed upper triangle of φφᵀ into p.
func packOuter(phi []float64, p []float64) {
	k := 0
	for i, x := range phi {
		for _, y := range phi[i:] {
			p[k] = x * y
			k++
		}
	}
}

// guardPD makes the symmetric matrix a safe to factor (spec pitfall P3): if its Cholesky
// fails or λ_min(a) < floor (tested by factoring a − floor·I), it raises every eigenvalue
// below floor to floor and rebuilds a. It then factors a into l and reports whether a repair
// was needed. Repair is post-processing of a released matrix and costs no privacy. scratch
// has length d·d.
func guardPD(a []float64, d int, floor float64, l, scratch []float64) (repaired bool) {
	if floor > 0 {
		copy(scratch, a)
		for i := 0; i < d; i++ {
			scratch[i*d+i] -= floor
		}
		if smallmat.Cholesky(scratch, d, l) && smallmat.Cholesky(a, d, l) {
			return false
		}
	} else if smallmat.Cholesky(a, d, l) {
		return false
	}
	repairEig(a, d, math.Max(floor, 1e-9))
	if !smallmat.Cholesky(a, d, l) {
		// Cannot happen for a finite matrix after repair; fall back to the floor·I matrix.
		agentkit.SetScaledIdentity(a, d, math.Max(floor, 1e-9))
		smallmat.Cholesky(a, d, l)
	}
	return true
}

// repairEig raises the eigenvalues of a below floor to floor (gonum EigenSym).
func repairEig(a []float64, d int, floor float64) {
	sym := mat.NewSymDense(d, append([]float64(nil), a...))
	var es mat.EigenSym
	if !es.Factorize(sym, true) {
		agentkit.SetScaledIdentity(a, d, floor)
		return
	}
	vals := es.Values(nil)
	var vecs mat.Dense
	es.VectorsTo(&vecs)
	for i := range a {
		a[i] = 0
	}
	for k, lam := range vals {
		lam = math.Max(lam, floor)
		for i := 0; i < d; i++ {
			vi := vecs.At(i, k) * lam
			for j := 0; j < d; j++ {
				a[i*d+j] += vi * vecs.At(j, k)
			}
		}
	}
	symmetrize(a, d)
}
