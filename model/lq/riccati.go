package lq

import (
	"math"
)

// Riccati solves the finite-horizon Riccati recursion (eqs. (3)–(4), lq spec §1.3) for any
// parameter Θ with preallocated buffers, and evaluates J*_1(Θ, x) (eq. (5)) and its exact
// gradient (lq spec §4.4). A Riccati value is not safe for concurrent use.
type Riccati struct {
	n, d, p, h int
	q, r, w    []float64
	// P holds P_1..P_{H+1} at indices 1..H+1 (n×n each; P_{H+1} = 0); index 0 is unused.
	P [][]float64
	// K holds the optimal gains K_1..K_H at indices 1..H (d×n each); index 0 is unused.
	K [][]float64
	// NoiseTerm is Σ_{h=1}^{H} tr(P_{h+1} W).
	NoiseTerm float64

	a, b           []float64 // current A (n×n), B (n×d)
	l              [][]float64
	pa, pb, g, f   []float64
	sig, tmp, tmp2 []float64
	ga, gb         []float64
}

// NewRiccati returns a solver for n states, d controls, horizon h and costs q (n×n), r (d×d),
// noise covariance w (n×n); the slices are retained, not copied.
func NewRiccati(n, d, h int, q, r, w []float64) *Riccati {
	s := &Riccati{n: n, d: d, p: n + d, h: h, q: q, r: r, w: w}
	s.P = make([][]float64, h+2)
	s.K = make([][]float64, h+1)
	s.l = make([][]float64, h+1)
	for i := range s.P {
		s.P[i] = make([]float64, n*n)
	}
	for i := range s.K {
		s.K[i] = make([]float64, d*n)
		s.l[i] = make([]float64, n*n)
	}
	s.a, s.b = make([]float64, n*n), make([]float64, n*d)
	s.pa, s.pb = make([]float64, n*n), make([]float64, n*d)
	s.g, s.f = make([]float64, d*d), make([]float64, d*n)
	s.sig, s.tmp, s.tmp2 = make([]float64, n*n), make([]float64, n*n), make([]float64, n*n)
	s.ga, s.gb = make([]float64, n*n), make([]float64, n*d)
	return s
}

// cholSolve solves G X = F in place (G d×d SPD, destroyed; F d×c, overwritten by X).
// It reports false if G is not numerically positive definite.
func cholSolve(g []float64, d int, f []float64, c int) bool {
	for j := 0; j < d; j++ {
		s := g[j*d+j]
		for k := 0; k < j; k++ {
			s -= g[j*d+k] * g[j*d+k]
		}
		if !(s > 0) {
			return false
		}
		s = math.Sqrt(s)
		g[j*d+j] = s
		for i := j + 1; i < d; i++ {
			t := g[i*d+j]
			for k := 0; k < j; k++ {
				t -= g[i*d+k] * g[j*d+k]
			}
			g[i*d+j] = t / s
		}
	}
	for col := 0; col < c; col++ {
		for i := 0; i < d; i++ { // forward: L y = f
			t := f[i*c+col]
			for k := 0; k < i; k++ {
				t -= g[i*d+k] * f[k*c+col]
			}
			f[i*c+col] = t / g[i*d+i]
		}
		for i := d - 1; i >= 0; i-- { // backward: Lᵀ x = y
			t := f[i*c+col]
			for k := i + 1; k < d; k++ {
				t -= g[k*d+i] * f[k*c+col]
			}
			f[i*c+col] = t / g[i*d+i]
		}
	}
	return true
}

// Solve runs the recursion at Θ (p×n, lq spec §0 layout). It reports false if some G_h was not
// numerically positive definite (impossible in exact arithmetic since R ≻ 0).
func (s *Riccati) Solve(theta []float64) bool {
	n, d := s.n, s.d
	a, b := s.a, s.b
	for r := 0; r < n; r++ {
		for c := 0; c < n; c++ {
			a[r*n+c] = theta[c*n+r]
		}
		for c := 0; c < d; c++ {
			b[r*d+c] = theta[(n+c)*n+r]
		}
	}
	clear(s.P[s.h+1])
	s.NoiseTerm = 0
	for h := s.h; h >= 1; h-- {
		pn := s.P[h+1]
		// PA = P_{h+1} A, PB = P_{h+1} B
		mulAdd(s.pa, nil, pn, a, n, n, n)
		mulAdd(s.pb, nil, pn, b, n, n, d)
		// G = R + Bᵀ P B; F = Bᵀ P A
		for i := 0; i < d; i++ {
			for j := 0; j < d; j++ {
				v := s.r[i*d+j]
				for k := 0; k < n; k++ {
					v += b[k*d+i] * s.pb[k*d+j]
				}
				s.g[i*d+j] = v
			}
			for j := 0; j < n; j++ {
				v := 0.0
				for k := 0; k < n; k++ {
					v += b[k*d+i] * s.pa[k*n+j]
				}
				s.f[i*n+j] = v
			}
		}
		if !cholSolve(s.g, d, s.f, n) {
			return false
		}
		kh, lh := s.K[h], s.l[h]
		for i := range kh {
			kh[i] = -s.f[i]
		}
		// L = A + B K; P_h = Q + Aᵀ (PA + PB K) = Q + Aᵀ P L
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				v, u := a[i*n+j], s.pa[i*n+j]
				for k := 0; k < d; k++ {
					v += b[i*d+k] * kh[k*n+j]
					u += s.pb[i*d+k] * kh[k*n+j]
				}
				lh[i*n+j] = v
				s.tmp[i*n+j] = u
			}
		}
		ph := s.P[h]
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				v := s.q[i*n+j]
				for k := 0; k < n; k++ {
					v += a[k*n+i] * s.tmp[k*n+j]
				}
				ph[i*n+j] = v
			}
		}
		for i := 0; i < n; i++ { // symmetrise
			for j := i + 1; j < n; j++ {
				m := (ph[i*n+j] + ph[j*n+i]) / 2
				ph[i*n+j], ph[j*n+i] = m, m
			}
		}
		s.NoiseTerm += traceProd(pn, s.w, n)
	}
	return true
}

// mulAdd sets dst (r×c) to base + X Y, X r×m and Y m×c, all row-major (base nil: 0). Each
// entry sums its terms in order, starting from its base entry.
func mulAdd(dst, base, x, y []float64, r, m, c int) { mulStrided(dst, base, x, y, r, m, c, c, 1) }

// mulAddT sets dst (r×c) to base + X Yᵀ, X r×m and Y c×m, all row-major (base nil: 0).
func mulAddT(dst, base, x, y []float64, r, m, c int) { mulStrided(dst, base, x, y, r, m, c, 1, m) }

// mulStrided sets dst[i][j] (r×c, row-major) to base[i][j] + Σ_k X[i][k]·y[k·yk + j·yj], X r×m
// row-major (base nil: 0).
func mulStrided(dst, base, x, y []float64, r, m, c, yk, yj int) {
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			v := 0.0
			if base != nil {
				v = base[i*c+j]
			}
			for k := 0; k < m; k++ {
				v += x[i*m+k] * y[k*yk+j*yj]
			}
			dst[i*c+j] = v
		}
	}
}

func traceProd(a, b []float64, n int) float64 {
	t := 0.0
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			t += a[i*n+j] * b[j*n+i]
		}
	}
	return t
}

// Value returns J*_1(Θ, x) = xᵀ P_1 x + Σ_h tr(P_{h+1} W) for the Θ of the last Solve.
func (s *Riccati) Value(x []float64) float64 {
	return quad(s.P[1], x, s.n) + s.NoiseTerm
}

// Gradient writes ∇_Θ J*_1(Θ, x) (p×n, lq spec §0 layout) into grad, for the Θ of the last
// Solve. By the envelope theorem (lq spec §4.4), with L_h = A + B K_h, Σ_1 = x xᵀ,
// Σ_{h+1} = L_h Σ_h L_hᵀ + W:
//
//	∇_A f = 2 Σ_{h=1}^{H−1} P_{h+1} L_h Σ_h,   ∇_B f = 2 Σ_{h=1}^{H−1} P_{h+1} L_h Σ_h K_hᵀ.
func (s *Riccati) Gradient(x, grad []float64) {
	n, d := s.n, s.d
	sig := s.sig
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			sig[i*n+j] = x[i] * x[j]
		}
	}
	clear(s.ga)
	clear(s.gb)
	for h := 1; h <= s.h-1; h++ {
		lh, kh, pn := s.l[h], s.K[h], s.P[h+1]
		// tmp = L Σ
		mulAdd(s.tmp, nil, lh, sig, n, n, n)
		// tmp2 = P L Σ
		mulAdd(s.tmp2, nil, pn, s.tmp, n, n, n)
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				s.ga[i*n+j] += 2 * s.tmp2[i*n+j]
			}
			for j := 0; j < d; j++ {
				v := 0.0
				for k := 0; k < n; k++ {
					v += s.tmp2[i*n+k] * kh[j*n+k]
				}
				s.gb[i*d+j] += 2 * v
			}
		}
		// Σ ← L Σ Lᵀ + W = tmp Lᵀ + W
		mulAddT(sig, s.w, s.tmp, lh, n, n, n)
	}
	for r := 0; r < n; r++ {
		for c := 0; c < n; c++ {
			grad[c*n+r] = s.ga[r*n+c]
		}
		for c := 0; c < d; c++ {
			grad[(n+c)*n+r] = s.gb[r*d+c]
		}
	}
}

// splitPolicy checks the arguments of PolicyCost and PolicyCostForward (ErrBadGains) and
// splits Θ into A and B.
func splitPolicy(theta []float64, n, d int, gains [][]float64, x []float64) (a, b []float64, err error) {
	for _, k := range gains {
		if len(k) != d*n {
			return nil, nil, ErrBadGains
		}
	}
	if len(gains) == 0 || len(theta) != (n+d)*n || len(x) != n {
		return nil, nil, ErrBadGains
	}
	a, b = Split(theta, n, d)
	return a, b, nil
}

// PolicyCost returns J^π_1(Θ, x) for the linear time-varying policy u_h = K_h x_h
// (gains[h−1] = K_h, d×n) on the system Θ with costs q, r and noise covariance w, by the
// backward value recursion of lq spec §1.4:
//
//	S_{H+1} = 0,  S_h = Q + K_hᵀ R K_h + L_hᵀ S_{h+1} L_h,  J = xᵀ S_1 x + Σ_h tr(S_{h+1} W).
func PolicyCost(theta []float64, n, d int, q, r, w []float64, gains [][]float64, x []float64) (float64, error) {
	a, b, err := splitPolicy(theta, n, d, gains, x)
	if err != nil {
		return 0, err
	}
	sNext := make([]float64, n*n)
	sCur := make([]float64, n*n)
	l := make([]float64, n*n)
	rk := make([]float64, d*n)
	noise := 0.0
	for h := len(gains); h >= 1; h-- {
		k := gains[h-1]
		noise += traceProd(sNext, w, n)
		mulAdd(l, a, b, k, n, d, n)
		mulAdd(rk, nil, r, k, d, d, n)
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				v := q[i*n+j]
				for t := 0; t < d; t++ {
					v += k[t*n+i] * rk[t*n+j]
				}
				for s1 := 0; s1 < n; s1++ {
					ls := 0.0
					for s2 := 0; s2 < n; s2++ {
						ls += sNext[s1*n+s2] * l[s2*n+j]
					}
					v += l[s1*n+i] * ls
				}
				sCur[i*n+j] = v
			}
		}
		for i := 0; i < n; i++ {
			for j := i + 1; j < n; j++ {
				m := (sCur[i*n+j] + sCur[j*n+i]) / 2
				sCur[i*n+j], sCur[j*n+i] = m, m
			}
		}
		sNext, sCur = sCur, sNext
	}
	return quad(sNext, x, n) + noise, nil
}

// PolicyCostForward returns J^π_1(Θ, x) by the forward covariance recursion of lq spec §1.4
// (Σ_1 = x xᵀ, Σ_{h+1} = L_h Σ_h L_hᵀ + W, J = Σ_h tr((Q + K_hᵀ R K_h) Σ_h)); it is the
// cross-check of PolicyCost.
func PolicyCostForward(theta []float64, n, d int, q, r, w []float64, gains [][]float64, x []float64) (float64, error) {
	a, b, err := splitPolicy(theta, n, d, gains, x)
	if err != nil {
		return 0, err
	}
	sig := make([]float64, n*n)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			sig[i*n+j] = x[i] * x[j]
		}
	}
	l := make([]float64, n*n)
	m := make([]float64, n*n)
	ls := make([]float64, n*n)
	total := 0.0
	for _, k := range gains {
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				v := q[i*n+j]
				for t := 0; t < d; t++ {
					for u := 0; u < d; u++ {
						v += k[t*n+i] * r[t*d+u] * k[u*n+j]
					}
				}
				m[i*n+j] = v
			}
		}
		mulAdd(l, a, b, k, n, d, n)
		total += traceProd(m, sig, n)
		mulAdd(ls, nil, l, sig, n, n, n)
		mulAddT(sig, w, ls, l, n, n, n)
	}
	return total, nil
}
