// Package smallmat holds the dense, row-major, allocation-free kernels the linear agents run
// on their hot paths for small d (d ≲ 50): Cholesky factorisation, triangular solves and
// Mahalanobis norms. For larger or one-off problems use gonum's mat; these kernels are tested
// against it.
package smallmat

import "math"

// Cholesky writes the lower Cholesky factor of the symmetric d×d matrix a (row-major; only the
// lower triangle is read) into l (d×d, row-major, upper triangle zeroed) and reports whether a
// is numerically positive definite (every pivot finite and > 0).
func Cholesky(a []float64, d int, l []float64) bool {
	for i := 0; i < d; i++ {
		for j := 0; j <= i; j++ {
			s := a[i*d+j]
			li, lj := l[i*d:i*d+j], l[j*d:j*d+j]
			for k, v := range li {
				s -= v * lj[k]
			}
			if i == j {
				if !(s > 0) || math.IsInf(s, 1) {
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

// LogDet returns ln det(L·Lᵀ) = 2 Σ ln L_ii from a Cholesky factor l.
func LogDet(l []float64, d int) float64 {
	s := 0.0
	for i := 0; i < d; i++ {
		s += math.Log(l[i*d+i])
	}
	return 2 * s
}

// Forward solves L·z = x for z; z may alias x.
func Forward(l []float64, d int, x, z []float64) {
	for i := 0; i < d; i++ {
		s := x[i]
		row := l[i*d : i*d+i]
		for k, v := range row {
			s -= v * z[k]
		}
		z[i] = s / l[i*d+i]
	}
}

// Backward solves Lᵀ·y = z for y; y may alias z.
func Backward(l []float64, d int, z, y []float64) {
	for i := d - 1; i >= 0; i-- {
		s := z[i]
		for k := i + 1; k < d; k++ {
			s -= l[k*d+i] * y[k]
		}
		y[i] = s / l[i*d+i]
	}
}

// Solve solves (L·Lᵀ)·x = b for x; x may alias b.
func Solve(l []float64, d int, b, x []float64) {
	Forward(l, d, b, x)
	Backward(l, d, x, x)
}

// InvQuad returns xᵀ(L·Lᵀ)⁻¹x = ‖L⁻¹x‖², using tmp (length ≥ d) as scratch.
func InvQuad(l []float64, d int, x, tmp []float64) float64 {
	Forward(l, d, x, tmp)
	s := 0.0
	for _, v := range tmp[:d] {
		s += v * v
	}
	return s
}

// Dot returns ⟨a, b⟩ (b at least as long as a), summed in index order.
func Dot(a, b []float64) float64 {
	s := 0.0
	for i, v := range a {
		s += v * b[i]
	}
	return s
}

// Norm returns the Euclidean norm ‖a‖₂ = √⟨a, a⟩.
func Norm(a []float64) float64 { return math.Sqrt(Dot(a, a)) }
