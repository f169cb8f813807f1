// Package lq models episodic linear-quadratic (LQ) control problems
//
//	x_{h+1} = A x_h + B u_h + w_h,   c_h = x_hᵀ Q x_h + u_hᵀ R u_h,   h = 1..H,
//
// with bounded zero-mean noise, as in Chowdhury, Zhou & Shroff, "Adaptive Control of
// Differentially Private Linear Quadratic Systems" (lq spec §1). It provides the finite-horizon
// Riccati recursion (eqs. (3)–(5)), the exact expected cost of any linear time-varying policy
// including the noise term (eq. (2)), the exact per-episode regret (eq. (6)), the exact gradient
// of the optimal cost with respect to the parameter (lq spec §4.4), the reference environment
// LQ-E1 (lq spec §5) and loading a system from a YAML or JSON file.
//
// Storage convention (lq spec §0): the parameter Θ = [A, B]ᵀ is a p×n row-major slice, p = n+d,
// whose first n rows are Aᵀ and last d rows are Bᵀ, so that x_{h+1} = Θᵀ z_h + w_h with
// z_h = [x_h; u_h]. Use Join and Split, never index Θ by hand. All other matrices are row-major
// []float64 slices of known shape.
//
// This package knows nothing of privacy.
package lq

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"
)

// Config describes an LQ system; it is also the file format read by Load (YAML or JSON).
// Matrices are given as lists of rows.
type Config struct {
	// Name labels the system in outputs.
	Name string `yaml:"name" json:"name"`
	// A is the n×n state matrix.
	A [][]float64 `yaml:"A" json:"A"`
	// B is the n×d control matrix.
	B [][]float64 `yaml:"B" json:"B"`
	// Q is the n×n state cost, symmetric positive definite.
	Q [][]float64 `yaml:"Q" json:"Q"`
	// R is the d×d control cost, symmetric positive definite.
	R [][]float64 `yaml:"R" json:"R"`
	// Horizon is H ≥ 1.
	Horizon int `yaml:"horizon" json:"horizon"`
	// Cw is the almost-sure bound C_w ∈ (0, 1) on ‖w‖₂ (Assumption 1(d)).
	Cw float64 `yaml:"cw" json:"cw"`
	// Gamma is γ ≥ 0 of Assumption 1(e): C_A + γ C_B + C_w ≤ 1.
	Gamma float64 `yaml:"gamma" json:"gamma"`
	// Noise is the noise law: "rademacher" (the only one implemented): w = (C_w/√n)·s with
	// s_i i.i.d. uniform on {−1, +1}, so ‖w‖ = C_w, E w = 0, W = (C_w²/n) I.
	Noise string `yaml:"noise" json:"noise"`
	// Initial is the initial-state sequence: "golden" (the only one implemented; lq spec §5.1):
	// x_{k,1} = (cos 2πφ_k, sin 2πφ_k, 0, …), φ_k = frac(k·(√5−1)/2); for n = 1, x_{k,1} = cos 2πφ_k.
	Initial string `yaml:"initial" json:"initial"`
}

// System is a validated LQ system satisfying Assumption 1 of the paper. Its fields must not be
// modified after construction.
type System struct {
	// Name labels the system.
	Name string
	// N, D, P are the state, control and regression dimensions (P = N + D).
	N, D, P int
	// H is the horizon.
	H int
	// A (N×N), B (N×D), Q (N×N), R (D×D) and W = E[w wᵀ] (N×N), row-major.
	A, B, Q, R, W []float64
	// Theta is Θ* = Join(A, B) (P×N).
	Theta []float64
	// Cw and Gamma are the public constants C_w and γ of Assumption 1.
	Cw, Gamma float64
	// CA = ‖A‖ and CB = ‖B‖ (spectral norms), computed exactly at construction.
	CA, CB float64
	// ControllabilitySV is the smallest singular value of [B, AB, …, A^{n−1}B].
	ControllabilitySV float64

	opt *Riccati // Riccati solution at Θ*
}

// errField formats a bad-input error naming the field and the allowed range.
func errField(field, allowed string, got any) error {
	return fmt.Errorf("lq: %s: must be %s, got %v", field, allowed, got)
}

func flatten(field string, m [][]float64, rows, cols int) ([]float64, error) {
	if len(m) != rows {
		return nil, errField(field, fmt.Sprintf("a %d×%d matrix (list of %d rows)", rows, cols, rows), fmt.Sprintf("%d rows", len(m)))
	}
	out := make([]float64, 0, rows*cols)
	for i, r := range m {
		if len(r) != cols {
			return nil, errField(fmt.Sprintf("%s row %d", field, i+1), fmt.Sprintf("of length %d", cols), len(r))
		}
		for j, v := range r {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, errField(fmt.Sprintf("%s[%d][%d]", field, i+1, j+1), "finite", v)
			}
		}
		out = append(out, r...)
	}
	return out, nil
}

// spectralNorm returns the largest singular value of the r×c row-major matrix a.
func spectralNorm(a []float64, r, c int) float64 {
	var svd mat.SVD
	if !svd.Factorize(mat.NewDense(r, c, append([]float64(nil), a...)), mat.SVDNone) {
		return math.NaN()
	}
	return svd.Values(nil)[0]
}

func checkSPD(field string, a []float64, n int) error {
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			if a[i*n+j] != a[j*n+i] {
				return errField(field, "symmetric", fmt.Sprintf("entries (%d,%d)=%g and (%d,%d)=%g", i+1, j+1, a[i*n+j], j+1, i+1, a[j*n+i]))
			}
		}
	}
	var ch mat.Cholesky
	if !ch.Factorize(mat.NewSymDense(n, append([]float64(nil), a...))) {
		return errField(field, "positive definite", "a matrix that is not")
	}
	return nil
}

// NewSystem validates cfg against Assumption 1 of the paper (lq spec §1.2) and returns the
// system. The checks are exact up to floating-point evaluation of the norms:
//
//   - (a) ‖Θ*‖_F ≤ 1 and (A, B) controllable (smallest singular value of the controllability
//     matrix > 1e-12);
//   - (b) ‖A‖ < 1, ‖B‖ < 1 (spectral norms), Q and R symmetric positive definite;
//   - (c) ‖x_{k,1}‖ ≤ 1 holds by construction of the initial-state sequence;
//   - (d) C_w ∈ (0, 1) and the noise law is bounded by C_w with zero mean;
//   - (e) C_A + γ C_B + C_w ≤ 1 with γ ≥ 0.
//
// Every error names the field and the allowed range.
func NewSystem(cfg Config) (*System, error) {
	n := len(cfg.A)
	if n < 1 || n > 64 {
		return nil, errField("A", "a square matrix with 1 to 64 rows", fmt.Sprintf("%d rows", n))
	}
	if len(cfg.B) != n || len(cfg.B[0]) < 1 || len(cfg.B[0]) > 64 {
		return nil, errField("B", fmt.Sprintf("an %d×d matrix with 1 ≤ d ≤ 64", n), fmt.Sprintf("%d rows", len(cfg.B)))
	}
	d := len(cfg.B[0])
	if cfg.Horizon < 1 || cfg.Horizon > 100000 {
		return nil, errField("horizon", "in [1, 100000]", cfg.Horizon)
	}
	if err := CheckSize(n, d, cfg.Horizon); err != nil {
		return nil, err
	}
	if !(cfg.Cw > 0 && cfg.Cw < 1) {
		return nil, errField("cw", "in (0, 1) (Assumption 1(d))", cfg.Cw)
	}
	if !(cfg.Gamma >= 0) || math.IsInf(cfg.Gamma, 0) {
		return nil, errField("gamma", "finite and >= 0", cfg.Gamma)
	}
	if cfg.Noise != "" && cfg.Noise != "rademacher" {
		return nil, errField("noise", `"rademacher"`, fmt.Sprintf("%q", cfg.Noise))
	}
	if cfg.Initial != "" && cfg.Initial != "golden" {
		return nil, errField("initial", `"golden"`, fmt.Sprintf("%q", cfg.Initial))
	}
	s := &System{Name: cfg.Name, N: n, D: d, P: n + d, H: cfg.Horizon, Cw: cfg.Cw, Gamma: cfg.Gamma}
	var err error
	if s.A, err = flatten("A", cfg.A, n, n); err != nil {
		return nil, err
	}
	if s.B, err = flatten("B", cfg.B, n, d); err != nil {
		return nil, err
	}
	if s.Q, err = flatten("Q", cfg.Q, n, n); err != nil {
		return nil, err
	}
	if s.R, err = flatten("R", cfg.R, d, d); err != nil {
		return nil, err
	}
	if err := checkSPD("Q", s.Q, n); err != nil {
		return nil, err
	}
	if err := checkSPD("R", s.R, d); err != nil {
		return nil, err
	}
	s.Theta = Join(s.A, s.B, n, d)
	if f := frob(s.Theta); f > 1 {
		return nil, errField("A, B", "such that ‖Θ*‖_F = sqrt(‖A‖_F² + ‖B‖_F²) ≤ 1 (Assumption 1(a))", f)
	}
	s.CA = spectralNorm(s.A, n, n)
	s.CB = spectralNorm(s.B, n, d)
	if !(s.CA < 1) {
		return nil, errField("A", "of spectral norm < 1 (Assumption 1(b))", s.CA)
	}
	if !(s.CB < 1) {
		return nil, errField("B", "of spectral norm < 1 (Assumption 1(b))", s.CB)
	}
	if v := s.CA + s.Gamma*s.CB + s.Cw; v > 1 {
		return nil, errField("gamma", fmt.Sprintf("such that ‖A‖ + γ‖B‖ + C_w ≤ 1 (Assumption 1(e); ‖A‖=%.6g, ‖B‖=%.6g, C_w=%g)", s.CA, s.CB, s.Cw), fmt.Sprintf("%g (sum %.6g)", s.Gamma, v))
	}
	s.ControllabilitySV = controllabilitySV(s.A, s.B, n, d)
	if !(s.ControllabilitySV > 1e-12) {
		return nil, errField("A, B", "a controllable pair (Assumption 1(a))", fmt.Sprintf("smallest singular value of [B, AB, …] = %g", s.ControllabilitySV))
	}
	s.W = make([]float64, n*n)
	for i := 0; i < n; i++ {
		s.W[i*n+i] = s.Cw * s.Cw / float64(n)
	}
	s.opt = NewRiccati(n, d, s.H, s.Q, s.R, s.W)
	s.opt.Solve(s.Theta)
	return s, nil
}

// controllabilitySV returns the smallest singular value of the n×(n·d) controllability matrix.
func controllabilitySV(a, b []float64, n, d int) float64 {
	c := mat.NewDense(n, n*d, nil)
	cur := mat.NewDense(n, d, append([]float64(nil), b...))
	am := mat.NewDense(n, n, append([]float64(nil), a...))
	for k := 0; k < n; k++ {
		for i := 0; i < n; i++ {
			for j := 0; j < d; j++ {
				c.Set(i, k*d+j, cur.At(i, j))
			}
		}
		var next mat.Dense
		next.Mul(am, cur)
		cur = &next
	}
	var svd mat.SVD
	if !svd.Factorize(c, mat.SVDNone) {
		return 0
	}
	v := svd.Values(nil)
	return v[len(v)-1]
}

// Join returns Θ = [A, B]ᵀ as a (n+d)×n row-major slice: rows 0..n−1 are Aᵀ, rows n..n+d−1
// are Bᵀ (lq spec §0).
func Join(a, b []float64, n, d int) []float64 {
	t := make([]float64, (n+d)*n)
	for r := 0; r < n; r++ {
		for c := 0; c < n; c++ {
			t[c*n+r] = a[r*n+c]
		}
		for c := 0; c < d; c++ {
			t[(n+c)*n+r] = b[r*d+c]
		}
	}
	return t
}

// Split returns A (n×n) and B (n×d) from Θ (lq spec §0); it is the inverse of Join.
func Split(theta []float64, n, d int) (a, b []float64) {
	a = make([]float64, n*n)
	b = make([]float64, n*d)
	for r := 0; r < n; r++ {
		for c := 0; c < n; c++ {
			a[r*n+c] = theta[c*n+r]
		}
		for c := 0; c < d; c++ {
			b[r*d+c] = theta[(n+c)*n+r]
		}
	}
	return a, b
}

func frob(a []float64) float64 {
	s := 0.0
	for _, v := range a {
		s += v * v
	}
	return math.Sqrt(s)
}

// InitialState writes x_{k,1} (k ≥ 1) into x (length N): the deterministic "golden" sequence
// of lq spec §5.1, ‖x_{k,1}‖ = 1. It is user k's private data in the JDP protocol.
func (s *System) InitialState(k int, x []float64) {
	g := (math.Sqrt(5) - 1) / 2
	phi := math.Mod(float64(k)*g, 1)
	clear(x)
	x[0] = math.Cos(2 * math.Pi * phi)
	if s.N > 1 {
		x[1] = math.Sin(2 * math.Pi * phi)
	}
}

// SampleNoise writes one noise vector w into w (length N): Rademacher scaled to ‖w‖ = C_w.
func (s *System) SampleNoise(r *rand.Rand, w []float64) {
	c := s.Cw / math.Sqrt(float64(s.N))
	bits := uint64(0)
	for i := range w {
		if i%64 == 0 {
			bits = r.Uint64()
		}
		if bits&1 != 0 {
			w[i] = c
		} else {
			w[i] = -c
		}
		bits >>= 1
	}
}

// Step writes x' = A x + B u + w into next.
func (s *System) Step(x, u, w, next []float64) {
	n, d := s.N, s.D
	for i := 0; i < n; i++ {
		v := w[i]
		for j := 0; j < n; j++ {
			v += s.A[i*n+j] * x[j]
		}
		for j := 0; j < d; j++ {
			v += s.B[i*d+j] * u[j]
		}
		next[i] = v
	}
}

// Cost returns xᵀ Q x + uᵀ R u.
func (s *System) Cost(x, u []float64) float64 {
	return quad(s.Q, x, s.N) + quad(s.R, u, s.D)
}

func quad(m, x []float64, n int) float64 {
	v := 0.0
	for i := 0; i < n; i++ {
		r := 0.0
		for j := 0; j < n; j++ {
			r += m[i*n+j] * x[j]
		}
		v += x[i] * r
	}
	return v
}

// Optimal returns J*_1(Θ*, x) (eq. (5)).
func (s *System) Optimal(x []float64) float64 { return s.opt.Value(x) }

// OptimalGains returns the optimal gains K_1..K_H at Θ* (eq. (3)); index h−1 holds K_h
// (d×n, row-major). The slices are owned by s; do not modify them.
func (s *System) OptimalGains() [][]float64 { return s.opt.K[1 : s.H+1] }

// OptimalP returns P_h(Θ*) for h = 1..H+1 (index h−1). Owned by s; do not modify.
func (s *System) OptimalP() [][]float64 { return s.opt.P[1 : s.H+2] }

// LowerBound returns J_LB(x) = xᵀ Q x + (H−1) tr(Q W), the global lower bound of J*_1(Θ, x)
// over Θ (lq spec §1.3), attained iff the A-block of Θ is zero.
func (s *System) LowerBound(x []float64) float64 {
	tr := 0.0
	for i := 0; i < s.N; i++ {
		for j := 0; j < s.N; j++ {
			tr += s.Q[i*s.N+j] * s.W[j*s.N+i]
		}
	}
	return quad(s.Q, x, s.N) + float64(s.H-1)*tr
}

// ErrBadGains reports gains of the wrong number or shape.
var ErrBadGains = errors.New("lq: gains must be H matrices of shape d×n")

// PolicyCost returns J^π_1(Θ*, x) for the linear time-varying policy u_h = K_h x_h
// (gains[h−1] = K_h, d×n), by the backward value recursion of lq spec §1.4 (eq. (2)).
func (s *System) PolicyCost(gains [][]float64, x []float64) (float64, error) {
	return PolicyCost(s.Theta, s.N, s.D, s.Q, s.R, s.W, gains, x)
}

// Regret returns J^π_1(Θ*, x) − J*_1(Θ*, x) ≥ 0, the exact expected regret of one episode
// started at x (eq. (6), lq spec §1.5).
func (s *System) Regret(gains [][]float64, x []float64) (float64, error) {
	j, err := s.PolicyCost(gains, x)
	if err != nil {
		return 0, err
	}
	return j - s.Optimal(x), nil
}

// ZeroLine returns Z(k), k = 1..K: the cumulative exact regret of the policy u ≡ 0 over the
// episodes 1..K from the initial states of InitialState (lq spec §5.3).
func (s *System) ZeroLine(K int) []float64 {
	zg := make([][]float64, s.H)
	for h := range zg {
		zg[h] = make([]float64, s.D*s.N)
	}
	out := make([]float64, K)
	x := make([]float64, s.N)
	z := 0.0
	for k := 1; k <= K; k++ {
		s.InitialState(k, x)
		r, _ := s.Regret(zg, x)
		z += r
		out[k-1] = z
	}
	return out
}

// LQE1Config returns the configuration of the reference environment LQ-E1 (lq spec §5.1):
// n = 2, d = 1, H = 10, A* = [[0.6, 0.2], [0, 0.5]], B* = [0; 0.4], Q = I, R = 1, C_w = 0.2,
// γ = 0.3, Rademacher noise (W = 0.02 I), golden-ratio initial states on the unit circle.
func LQE1Config() Config {
	return Config{
		Name:    "LQ-E1",
		A:       [][]float64{{0.6, 0.2}, {0.0, 0.5}},
		B:       [][]float64{{0.0}, {0.4}},
		Q:       [][]float64{{1, 0}, {0, 1}},
		R:       [][]float64{{1}},
		Horizon: 10, Cw: 0.2, Gamma: 0.3, Noise: "rademacher", Initial: "golden",
	}
}

// LQE1 returns the reference environment LQ-E1 (lq spec §5.1).
func LQE1() *System {
	s, err := NewSystem(LQE1Config())
	if err != nil {
		panic("lq: LQ-E1 fails Assumption 1: " + err.Error()) // unreachable: tested
	}
	return s
}
