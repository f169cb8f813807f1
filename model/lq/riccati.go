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
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				v := 0.0
				for k := 0; k < n; k++ {
					v += pn[i*n+k] * a[k*n+j]
				}
				s.pa[i*n+j] = v
			}
			for j := 0; j < d; j++ {
				v := 0.0
				for k := 0; k < n; k++ {
					v += pn[i*n+k] * b[k*d+j]
				}
				s.pb[i*d+j] = v
			}
		}
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
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				v := 0.0
				for k := 0; k < n; k++ {
					v += lh[i*n+k] * sig[k*n+j]
				}
				s.tmp[i*n+j] = v
			}
		}
		// tmp2 = P L Σ
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				v := 0.0
				for k := 0; k < n; k++ {
					v += pn[i*n+k] * s.tmp[k*n+j]
				}
				s.tmp2[i*n+j] = v
			}
		}
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
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				v := s.w[i*n+j]
				for k := 0; k < n; k++ {
					v += s.tmp[i*n+k] * lh[j*n+k]
				}
				sig[i*n+j] = v
			}
		}
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

// PolicyCost returns J^π_1(Θ, x) for the linear time-varying policy u_h = K_h x_h
// (gains[h−1] = K_h, d×n) on the system Θ with costs q, r and noise covariance w, by the
// backward value recursion of lq spec §1.4:
//
//	S_{H+1} = 0,  S_h = Q + K_hᵀ R K_h + L_hᵀ S_{h+1} L_h,  J = xᵀ S_1 x + Σ_h tr(S_{h+1} W).
func PolicyCost(theta []float64, n, d int, q, r, w []float64, gains [][]float64, x []float64) (float64, error) {
	for _, k := range gains {
		if len(k) != d*n {
			return 0, ErrBadGains
		}
	}
	if len(gains) == 0 || len(theta) != (n+d)*n || len(x) != n {
		return 0, ErrBadGains
	}
	a, b := Split(theta, n, d)
	sNext := make([]float64, n*n)
	sCur := make([]float64, n*n)
	l := make([]float64, n*n)
	rk := make([]float64, d*n)
	noise := 0.0
	for h := len(gains); h >= 1; h-- {
		k := gains[h-1]
		noise += traceProd(sNext, w, n)
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				v := a[i*n+j]
				for t := 0; t < d; t++ {
					v += b[i*d+t] * k[t*n+j]
				}
				l[i*n+j] = v
			}
		}
		for i := 0; i < d; i++ {
			for j := 0; j < n; j++ {
				v := 0.0
				for t := 0; t < d; t++ {
					v += r[i*d+t] * k[t*n+j]
				}
				rk[i*n+j] = v
			}
		}
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
	for _, k := range gains {
		if len(k) != d*n {
			return 0, ErrBadGains
		}
	}
	if len(gains) == 0 || len(theta) != (n+d)*n || len(x) != n {
		return 0, ErrBadGains
	}
	a, b := Split(theta, n, d)
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
				lv := a[i*n+j]
				for t := 0; t < d; t++ {
					lv += b[i*d+t] * k[t*n+j]
				}
				l[i*n+j] = lv
			}
		}
		total += traceProd(m, sig, n)
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				v := 0.0
				for t := 0; t < n; t++ {
					v += l[i*n+t] * sig[t*n+j]
				}
				ls[i*n+j] = v
			}
		}
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				v := w[i*n+j]
				for t := 0; t < n; t++ {
					v += ls[i*n+t] * l[j*n+t]
				}
				sig[i*n+j] = v
			}
		}
	}
	return total, nil
}
