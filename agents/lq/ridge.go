package lq

import (
	"math"

	"gonum.org/v1/gonum/mat"
)

// This file holds the ridge-regression algebra the paper's planner (planner.go) and the
// practical planner (practical_plan.go) share: the eigendecomposition of the regularised Gram
// matrix V, the estimate Θ̂ = V⁻¹U and the log-determinant ratio of the confidence radius.
// Matrices are dense row-major slices; Q holds the eigenvectors of V as its columns.

// eigenRidge returns the eigenvalues v and the eigenvectors qv (p×p, column k is the
// eigenvector of v[k]) of V = (T + Tᵀ)/2 + ηI for the p×p matrix t. ok is false if the
// decomposition failed.
func eigenRidge(t []float64, p int, eta float64) (v, qv []float64, ok bool) {
	vs := mat.NewSymDense(p, nil)
	for i := 0; i < p; i++ {
		for j := i; j < p; j++ {
			vs.SetSym(i, j, (t[i*p+j]+t[j*p+i])/2)
		}
		vs.SetSym(i, i, vs.At(i, i)+eta)
	}
	var eig mat.EigenSym
	if !eig.Factorize(vs, true) {
		return nil, nil, false
	}
	v = eig.Values(nil)
	var q mat.Dense
	eig.VectorsTo(&q)
	qv = make([]float64, p*p)
	for i := 0; i < p; i++ {
		for j := 0; j < p; j++ {
			qv[i*p+j] = q.At(i, j)
		}
	}
	return v, qv, true
}

// mulQT writes Qᵀa into out (p×n each; q is p×p).
func mulQT(q, a []float64, p, n int, out []float64) { mulStrided(q, 1, p, a, p, n, out) }

// mulQ writes Qa into out (p×n each; q is p×p).
func mulQ(q, a []float64, p, n int, out []float64) { mulStrided(q, p, 1, a, p, n, out) }

// mulStrided writes Ma into out (p×n each) for the p×p matrix M with M_rc = m[r·rs + c·cs],
// summing in the order c = 0..p−1.
func mulStrided(m []float64, rs, cs int, a []float64, p, n int, out []float64) {
	for r := 0; r < p; r++ {
		for j := 0; j < n; j++ {
			t := 0.0
			for c := 0; c < p; c++ {
				t += m[r*rs+c*cs] * a[c*n+j]
			}
			out[r*n+j] = t
		}
	}
}

// ridgeEstimate returns Θ̂ = Q diag(1/v) Qᵀ u (p×n), V⁻¹u for V = Q diag(v) Qᵀ.
func ridgeEstimate(qv, v, u []float64, p, n int) []float64 {
	tmp := make([]float64, p*n)
	mulQT(qv, u, p, n, tmp)
	for k := 0; k < p; k++ {
		for j := 0; j < n; j++ {
			tmp[k*n+j] /= v[k]
		}
	}
	hat := make([]float64, p*n)
	mulQ(qv, tmp, p, n, hat)
	return hat
}

// logDetRatio returns Σ_i ln(v_i/floor) = ln det V − p ln floor for the eigenvalues v of V.
func logDetRatio(v []float64, floor float64) float64 {
	ld := 0.0
	for _, e := range v {
		ld += math.Log(e / floor)
	}
	return ld
}
