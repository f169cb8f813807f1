package linmdp

import (
	"math"

	"gonum.org/v1/gonum/mat"
)

// cholesky writes the lower Cholesky factor of the symmetric d×d matrix a (row-major) into l
// and reports whether a is numerically positive definite. Hand-written for small d on the hot
// path; tested against gonum's mat.Cholesky.
func cholesky(a []float64, d int, l []float64) bool {
	for i := 0; i < d; i++ {
		for j := 0; j <= i; j++ {
			s := a[i*d+j]
			li, lj := l[i*d:i*d+j], l[j*d:j*d+j]
			for k, v := range li {
				s -= v * lj[k]
			}
			if i == j {
				if !(s > 0) {
					return false
				}
				l[i*d+i] = math.Sqrt(s)
			} else {
				l[i*d+j] = s / l[j*d+j]
			}
		}
		for j := i + 1; j < d; j++ {
			l[i*d+j] = 0
		}
	}
	return true
}

// logDetChol returns ln det(a) = 2 Σ ln L_ii from a Cholesky factor.
func logDetChol(l []float64, d int) float64 {
	s := 0.0
	for i := 0; i < d; i++ {
		s += math.Log(l[i*d+i])
	}
	return 2 * s
}

// forward solves L z = b in place (b becomes z).
func forward(l []float64, d int, b []float64) {
	for i := 0; i < d; i++ {
		s := b[i]
		row := l[i*d : i*d+i]
		for k, v := range row {
			s -= v * b[k]
		}
		b[i] = s / l[i*d+i]
	}
}

// backward solves Lᵀ x = z in place.
func backward(l []float64, d int, z []float64) {
	for i := d - 1; i >= 0; i-- {
		s := z[i]
		for k := i + 1; k < d; k++ {
			s -= l[k*d+i] * z[k]
		}
		z[i] = s / l[i*d+i]
	}
}

// cholSolve solves (L Lᵀ) x = b into x.
func cholSolve(l []float64, d int, b, x []float64) {
	copy(x, b)
	forward(l, d, x)
	backward(l, d, x)
}

// invQuad returns φᵀ (L Lᵀ)^{-1} φ = ‖L^{-1} φ‖², using tmp (length d) as scratch.
func invQuad(l []float64, d int, phi, tmp []float64) float64 {
	copy(tmp, phi)
	forward(l, d, tmp)
	s := 0.0
	for _, v := range tmp {
		s += v * v
	}
	return s
}

// symmetrize replaces a by (a + aᵀ)/2.
func symmetrize(a []float64, d int) {
	for i := 0; i < d; i++ {
		for j := i + 1; j < d; j++ {
			v := (a[i*d+j] + a[j*d+i]) / 2
			a[i*d+j], a[j*d+i] = v, v
		}
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
		if cholesky(scratch, d, l) && cholesky(a, d, l) {
			return false
		}
	} else if cholesky(a, d, l) {
		return false
	}
	repairEig(a, d, math.Max(floor, 1e-9))
	if !cholesky(a, d, l) {
		// Cannot happen for a finite matrix after repair; fall back to the floor·I matrix.
		for i := range a {
			a[i] = 0
		}
		for i := 0; i < d; i++ {
			a[i*d+i] = math.Max(floor, 1e-9)
		}
		cholesky(a, d, l)
	}
	return true
}

// repairEig raises the eigenvalues of a below floor to floor (gonum EigenSym).
func repairEig(a []float64, d int, floor float64) {
	sym := mat.NewSymDense(d, append([]float64(nil), a...))
	var es mat.EigenSym
	if !es.Factorize(sym, true) {
		for i := range a {
			a[i] = 0
		}
		for i := 0; i < d; i++ {
			a[i*d+i] = floor
		}
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
