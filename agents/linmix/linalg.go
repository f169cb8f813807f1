package linmix

import (
	"math"

	"gonum.org/v1/gonum/mat"
)

// cholesky factors the symmetric d×d matrix a (row-major, only the lower triangle is read)
// as L·Lᵀ into l (lower triangle, row-major). It reports false if a is not numerically
// positive definite.
func cholesky(a []float64, d int, l []float64) bool {
	for i := 0; i < d; i++ {
		for j := 0; j <= i; j++ {
			s := a[i*d+j]
			for k := 0; k < j; k++ {
				s -= l[i*d+k] * l[j*d+k]
			}
			if i == j {
				if !(s > 0) || math.IsInf(s, 0) {
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

// forward solves L·z = x in place of z (z may alias x).
func forward(l []float64, d int, x, z []float64) {
	for i := 0; i < d; i++ {
		s := x[i]
		row := l[i*d : i*d+i]
		for k, v := range row {
			s -= v * z[k]
		}
		z[i] = s / l[i*d+i]
	}
}

// backward solves Lᵀ·y = z in place (y may alias z).
func backward(l []float64, d int, z, y []float64) {
	for i := d - 1; i >= 0; i-- {
		s := z[i]
		for k := i + 1; k < d; k++ {
			s -= l[k*d+i] * y[k]
		}
		y[i] = s / l[i*d+i]
	}
}

// invNormSq returns ‖x‖²_{Λ⁻¹} = ‖L⁻¹x‖² using tmp (length d) as scratch.
func invNormSq(l []float64, d int, x, tmp []float64) float64 {
	forward(l, d, x, tmp)
	s := 0.0
	for _, v := range tmp[:d] {
		s += v * v
	}
	return s
}

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
		for i := range a[:d*d] {
			a[i] = 0
		}
		for i := 0; i < d; i++ {
			a[i*d+i] = floor
		}
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
