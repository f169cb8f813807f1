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
//
// All row norms are expanded once, so that g and ψ cost O(p) per evaluation:
// D_i(ν) = ‖y_i−c_i‖² + 2νb_i⟨y_i−c_i, e_i−c_i⟩ + ν²b_i²‖e_i−c_i‖² and
// ‖x_i−e_i‖²·den_i² = ‖y_i−e_i‖² + 2μa_i⟨y_i−e_i, c_i−e_i⟩ + μ²a_i²‖c_i−e_i‖².
func projTwoEllipsoids(y []float64, p, n int, ea, eb ellipsoid, out []float64) bool {
	var buf [5 * 16]float64
	var co []float64
	if 5*p <= len(buf) {
		co = buf[:5*p]
	} else {
		co = make([]float64, 5*p)
	}
	yc, ycec, ec, ye, yece := co[:p], co[p:2*p], co[2*p:3*p], co[3*p:4*p], co[4*p:]
	for i := 0; i < p; i++ {
		var a1, a2, a3, a4, a5 float64
		for j := 0; j < n; j++ {
			ci, ei := ea.centre(i, j, n), eb.centre(i, j, n)
			u := y[i*n+j] - ci
			w := ei - ci
			v := y[i*n+j] - ei
			a1 += u * u
			a2 += u * w
			a3 += w * w
			a4 += v * v
			a5 += v * -w
		}
		yc[i], ycec[i], ec[i], ye[i], yece[i] = a1, a2, a3, a4, a5
	}
	ra2, rb2 := ea.r*ea.r, eb.r*eb.r
	g := func(m, nu float64) (float64, float64) {
		v, dv := 0.0, 0.0
		for i := 0; i < p; i++ {
			a, b := ea.w[i], eb.w[i]
			if a == 0 {
				continue
			}
			di := yc[i] + 2*nu*b*ycec[i] + nu*nu*b*b*ec[i]
			den := 1 + m*a + nu*b
			q := a * di / (den * den)
			v += q
			dv -= 2 * a * q / den
		}
		return v - ra2, dv
	}
	mu := func(nu float64) float64 {
		m := 0.0
		v, dv := g(m, nu)
		if v <= 0 {
			return 0
		}
		for it := 0; it < 500; it++ {
			step := -v / dv
			if !(step > 0) || step > math.MaxFloat64 {
				break
			}
			m += step
			if step <= 1e-13*math.Max(1, m) {
				break
			}
			v, dv = g(m, nu)
			if v <= 0 {
				break
			}
		}
		return m
	}
	psi := func(nu float64) (float64, float64) {
		m := mu(nu)
		s := 0.0
		for i := 0; i < p; i++ {
			a, b := ea.w[i], eb.w[i]
			if b == 0 {
				continue
			}
			den := 1 + m*a + nu*b
			s += b * (ye[i] + 2*m*a*yece[i] + m*m*a*a*ec[i]) / (den * den)
		}
		return s - rb2, m
	}
	point := func(m, nu float64) {
		for i := 0; i < p; i++ {
			a, b := ea.w[i], eb.w[i]
			den := 1 + m*a + nu*b
			for j := 0; j < n; j++ {
				out[i*n+j] = (y[i*n+j] + m*a*ea.centre(i, j, n) + nu*b*eb.centre(i, j, n)) / den
			}
		}
	}
	v0, m0 := psi(0)
	if v0 <= 0 {
		if m0 == 0 {
			copy(out, y)
			return false
		}
		point(m0, 0)
		return true
	}
	// Bracket ν* in [lo, hi] with ψ(lo) > 0 ≥ ψ(hi), then the Illinois variant of regula falsi
	// (superlinear, never leaves the bracket); hi stays on the feasible side.
	lo, hi := 0.0, 1.0
	flo, fhi := v0, 0.0
	for it := 0; it < 1100; it++ {
		v, _ := psi(hi)
		if v <= 0 {
			fhi = v
			break
		}
		lo, flo, hi = hi, v, 2*hi
	}
	side := 0
	for it := 0; it < 200 && hi-lo > 1e-13*hi && fhi < -1e-15*math.Max(1, rb2); it++ {
		mid := hi - fhi*(hi-lo)/(fhi-flo)
		if !(mid > lo && mid < hi) {
			mid = (lo + hi) / 2
		}
		v, _ := psi(mid)
		if v <= 0 {
			hi, fhi = mid, v
			if side == -1 {
				flo /= 2
			}
			side = -1
		} else {
			lo, flo = mid, v
			if side == 1 {
				fhi /= 2
			}
			side = 1
		}
	}
	_, m := psi(hi)
	point(m, hi)
	return true
}
