package lq

import "math"

// ellipsoid is a row-separable constraint Σ_i w_i ‖x_i − c_i‖² ≤ r² over the rows x_i (length
// n) of a p×n matrix. c == nil means c = 0.
type ellipsoid struct {
	w []float64 // per-row weights (length p), ≥ 0
	c []float64 // centre, p×n row-major, or nil
	r float64
}

func (e ellipsoid) centre(i, j, n int) float64 {
	if e.c == nil {
		return 0
	}
	return e.c[i*n+j]
}

// value returns Σ_i w_i ‖x_i − c_i‖² − r².
func (e ellipsoid) value(x []float64, p, n int) float64 {
	s := 0.0
	for i := 0; i < p; i++ {
		ri := 0.0
		for j := 0; j < n; j++ {
			d := x[i*n+j] - e.centre(i, j, n)
			ri += d * d
		}
		s += e.w[i] * ri
	}
	return s - e.r*e.r
}

// projTwoEllipsoids writes into out the exact Euclidean projection of y (p×n) onto the
// intersection of the ellipsoids ea and eb (lq spec §4.5): the KKT point
//
//	x_i(μ, ν) = (y_i + μ a_i c_i + ν b_i e_i) / (1 + μ a_i + ν b_i)
//
// with μ*(ν) found by Newton's method on the convex decreasing g(μ) and ν* by doubling and
// bisection on the non-increasing ψ(ν). It reports whether any constraint was active; if not,
// out is an exact copy of y. The intersection must be non-empty. y and out must not alias.
func projTwoEllipsoids(y []float64, p, n int, ea, eb ellipsoid, out []float64) bool {
	mu := func(nu float64) float64 {
		g := func(m float64) (float64, float64) {
			v, dv := 0.0, 0.0
			for i := 0; i < p; i++ {
				if ea.w[i] == 0 {
					continue
				}
				di := 0.0
				for j := 0; j < n; j++ {
					t := y[i*n+j] - ea.centre(i, j, n) + nu*eb.w[i]*(eb.centre(i, j, n)-ea.centre(i, j, n))
					di += t * t
				}
				den := 1 + m*ea.w[i] + nu*eb.w[i]
				v += ea.w[i] * di / (den * den)
				dv -= 2 * ea.w[i] * ea.w[i] * di / (den * den * den)
			}
			return v - ea.r*ea.r, dv
		}
		m := 0.0
		v, dv := g(m)
		if v <= 0 {
			return 0
		}
		for it := 0; it < 500; it++ {
			step := -v / dv
			if !(step > 0) || math.IsInf(step, 0) {
				break
			}
			m += step
			if step <= 1e-13*math.Max(1, m) {
				break
			}
			v, dv = g(m)
			if v <= 0 {
				break
			}
		}
		return m
	}
	point := func(m, nu float64) {
		for i := 0; i < p; i++ {
			den := 1 + m*ea.w[i] + nu*eb.w[i]
			for j := 0; j < n; j++ {
				out[i*n+j] = (y[i*n+j] + m*ea.w[i]*ea.centre(i, j, n) + nu*eb.w[i]*eb.centre(i, j, n)) / den
			}
		}
	}
	psi := func(nu float64) (float64, float64) {
		m := mu(nu)
		point(m, nu)
		return eb.value(out, p, n), m
	}
	v0, m0 := psi(0)
	if v0 <= 0 {
		if m0 == 0 {
			copy(out, y)
			return false
		}
		return true
	}
	lo, hi := 0.0, 1.0
	for it := 0; it < 1100; it++ {
		if v, _ := psi(hi); v <= 0 {
			break
		}
		lo, hi = hi, 2*hi
	}
	for it := 0; it < 200 && hi-lo > 1e-13*hi; it++ {
		mid := (lo + hi) / 2
		if v, _ := psi(mid); v <= 0 {
			hi = mid
		} else {
			lo = mid
		}
	}
	psi(hi)
	return true
}
