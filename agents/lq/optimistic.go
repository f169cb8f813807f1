package lq

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/dprl/dprl/model/lq"
)

// SearchConfig configures OptimisticSearch (lq spec §4.3).
type SearchConfig struct {
	// NumRandomStarts is the number of uniform random starts in the confidence ellipsoid.
	NumRandomStarts int
	// MaxIter bounds the projected-gradient iterations per start.
	MaxIter int
	// Armijo is the sufficient-decrease constant c.
	Armijo float64
	// StepInit, StepMin, StepGrow, StepMax control the step size (in whitened coordinates).
	StepInit, StepMin, StepGrow, StepMax float64
	// TolX stops a start when the step moves U by at most TolX (Frobenius).
	TolX float64
}

// DefaultSearch returns the defaults of lq spec §4.3.
func DefaultSearch() SearchConfig {
	return SearchConfig{NumRandomStarts: 4, MaxIter: 100, Armijo: 1e-4, StepInit: 1, StepMin: 1e-14,
		StepGrow: 2, StepMax: 1e6, TolX: 1e-10}
}

func (s SearchConfig) validate() error {
	switch {
	case s.NumRandomStarts < 0 || s.NumRandomStarts > 1000:
		return fmt.Errorf("lq: search random starts: must be in [0, 1000], got %d", s.NumRandomStarts)
	case s.MaxIter < 0 || s.MaxIter > 100000:
		return fmt.Errorf("lq: search max iterations: must be in [0, 100000], got %d", s.MaxIter)
	case !(s.Armijo > 0 && s.Armijo < 1):
		return fmt.Errorf("lq: search Armijo constant: must be in (0, 1), got %v", s.Armijo)
	case !(s.StepInit > 0 && s.StepMin > 0 && s.StepMin <= s.StepInit && s.StepGrow >= 1 && s.StepMax >= s.StepInit):
		return fmt.Errorf("lq: search steps: need 0 < StepMin ≤ StepInit ≤ StepMax and StepGrow ≥ 1, got %+v", s)
	case !(s.TolX >= 0):
		return fmt.Errorf("lq: search TolX: must be >= 0, got %v", s.TolX)
	}
	return nil
}

// SearchResult is the outcome of one optimistic step.
type SearchResult struct {
	// Theta is Θ̃ (p×n).
	Theta []float64
	// F is f(Θ̃) = J*_1(Θ̃, x).
	F float64
	// FProjHat is f at the projection of Θ̂ onto F_k (the optimism-vs-estimate reference).
	FProjHat float64
	// Empty reports F_k = ∅ (fallback Θ̂/max(1, ‖Θ̂‖_F), lq spec pitfall 12).
	Empty bool
	// EarlyExit reports that the A-zeroed start was feasible after projection with A = 0, a
	// certificate of global optimality (f = J_LB, policy u ≡ 0).
	EarlyExit bool
	// Fevals counts Riccati solves (f or ∇f evaluations); Iters counts accepted steps;
	// BestStart is the index of the start that produced Θ̃.
	Fevals, Iters, BestStart int
}

// Ellipsoid is the confidence set C_k = {Θ : tr((Θ−Θ̂)ᵀ V (Θ−Θ̂)) ≤ β²} in eigen-coordinates
// V = Q_V diag(v) Q_Vᵀ (lq spec §2.2).
type Ellipsoid struct {
	P, N     int
	ThetaHat []float64 // p×n
	QV       []float64 // p×p, column j is the eigenvector of v[j]
	V        []float64 // eigenvalues, > 0
	Beta     float64
}

// Contains reports whether ‖Θ − Θ̂‖_V ≤ β (up to a relative 1e-12).
func (e *Ellipsoid) Contains(theta []float64) bool {
	return e.Dist2(theta) <= e.Beta*e.Beta*(1+1e-12)
}

// Dist2 returns ‖Θ − Θ̂‖_V² = tr((Θ−Θ̂)ᵀ V (Θ−Θ̂)).
func (e *Ellipsoid) Dist2(theta []float64) float64 {
	p, n := e.P, e.N
	s := 0.0
	for k := 0; k < p; k++ {
		for j := 0; j < n; j++ {
			r := 0.0
			for i := 0; i < p; i++ {
				r += e.QV[i*p+k] * (theta[i*n+j] - e.ThetaHat[i*n+j])
			}
			s += e.V[k] * r * r
		}
	}
	return s
}

// searcher runs OptimisticSearch with preallocated buffers; it works in rotated whitened
// coordinates Y = Q_Vᵀ U, Θ = Θ̂ + Q_V diag(β/√v) Y, where C_k is the unit Frobenius ball and
// both constraints are row-separable (lq spec §4.3, §4.5).
type searcher struct {
	n, d, p, h int
	cfg        SearchConfig
	ric        *lq.Riccati

	el            *Ellipsoid
	sc            []float64 // β/√v_k
	eb            ellipsoid // S̄ in Y coordinates
	ea            ellipsoid // C_k in Y coordinates (unit ball)
	x             []float64
	fevals, iters int
	bufG, bufD    []float64 // scratch (p×n): a gradient; Θ − Θ̂ in toY
}

func newSearcher(pub Public, cfg SearchConfig) *searcher {
	n, d := pub.N, pub.D
	p := n + d
	s := &searcher{n: n, d: d, p: p, h: pub.H, cfg: cfg, ric: lq.NewRiccati(n, d, pub.H, pub.Q, pub.R, pub.W)}
	s.sc = make([]float64, p)
	ones := make([]float64, p)
	for i := range ones {
		ones[i] = 1
	}
	s.ea = ellipsoid{w: ones, r: 1}
	s.eb = ellipsoid{w: make([]float64, p), c: make([]float64, p*n), r: 1}
	for _, b := range []*[]float64{&s.bufG, &s.bufD} {
		*b = make([]float64, p*n)
	}
	return s
}

func (s *searcher) f(theta []float64) float64 {
	s.fevals++
	if !s.ric.Solve(theta) {
		return math.Inf(1)
	}
	return s.ric.Value(s.x)
}

func (s *searcher) toTheta(y, out []float64) {
	p, n, q := s.p, s.n, s.el.QV
	for i := 0; i < p; i++ {
		for j := 0; j < n; j++ {
			v := s.el.ThetaHat[i*n+j]
			for k := 0; k < p; k++ {
				v += q[i*p+k] * s.sc[k] * y[k*n+j]
			}
			out[i*n+j] = v
		}
	}
}

func (s *searcher) toY(theta, out []float64) {
	p, n, d := s.p, s.n, s.bufD
	for i := range d {
		d[i] = theta[i] - s.el.ThetaHat[i]
	}
	mulQT(s.el.QV, d, p, n, out)
	for k := 0; k < p; k++ {
		for j := 0; j < n; j++ {
			out[k*n+j] /= s.sc[k]
		}
	}
}

// gradY writes ∇_Y f = diag(β/√v) Q_Vᵀ ∇_Θ f.
func (s *searcher) gradY(g, out []float64) {
	p, n := s.p, s.n
	mulQT(s.el.QV, g, p, n, out)
	for k := 0; k < p; k++ {
		for j := 0; j < n; j++ {
			out[k*n+j] *= s.sc[k]
		}
	}
}

// proj writes the Euclidean projection of y onto F_k (in Y coordinates) into out.
func (s *searcher) proj(y, out []float64) bool {
	return projTwoEllipsoids(y, s.p, s.n, s.ea, s.eb, out)
}

// setup prepares the per-episode mapping (lq spec §4.5, U-space: a = 1, C = 0, r_a = 1;
// b_i = β²/v_i, e_i = −(√v_i/β)(Q_Vᵀ Θ̂)_i, r_b = 1).
// armijo backtracks along the projection arc y(t) = Proj(U − t·GU) from t = step, halving t
// until f(y(t)) ≤ fT − Armijo·⟨GU, U − y(t)⟩ or t < StepMin. It leaves y(t) in U2 and its Θ in
// T2 (step0 is scratch) and returns f(T2) and the last t.
func (s *searcher) armijo(U, GU, step0, U2, T2 []float64, fT, step float64) (f2, t float64) {
	for {
		for i := range step0 {
			step0[i] = U[i] - step*GU[i]
		}
		s.proj(step0, U2)
		s.toTheta(U2, T2)
		f2 = s.f(T2)
		dec := 0.0
		for i := range GU {
			dec += GU[i] * (U[i] - U2[i])
		}
		if f2 <= fT-s.cfg.Armijo*dec || step < s.cfg.StepMin {
			return f2, step
		}
		step /= 2
	}
}

func (s *searcher) setup(el *Ellipsoid, x []float64) {
	s.el, s.x = el, x
	p, n := s.p, s.n
	mulQT(el.QV, el.ThetaHat, p, n, s.eb.c)
	for k := 0; k < p; k++ {
		s.sc[k] = el.Beta / math.Sqrt(el.V[k])
		s.eb.w[k] = el.Beta * el.Beta / el.V[k]
		for j := 0; j < n; j++ {
			s.eb.c[k*n+j] = -s.eb.c[k*n+j] / s.sc[k]
		}
	}
}

// empty reports F_k = ∅: the projection of 0 onto C_k (Θ-space mapping a = v, C = Q_Vᵀ Θ̂,
// r_a = β, no second constraint) has Frobenius norm > 1 + 1e-12 (lq spec §4.5).
func (s *searcher) empty() bool {
	p, n := s.p, s.n
	c := make([]float64, p*n)
	mulQT(s.el.QV, s.el.ThetaHat, p, n, c)
	zero := make([]float64, p*n)
	out := make([]float64, p*n)
	projTwoEllipsoids(zero, p, n, ellipsoid{w: s.el.V, c: c, r: s.el.Beta},
		ellipsoid{w: make([]float64, p), r: math.Inf(1)}, out)
	return frob(out) > 1+1e-12
}

// descentBuffers is the scratch of one descent (p×n each).
type descentBuffers struct {
	u, u2, t, t2, g, gu, step0 []float64
}

func newDescentBuffers(m int) *descentBuffers {
	b := &descentBuffers{}
	for _, v := range []*[]float64{&b.u, &b.u2, &b.t, &b.t2, &b.g, &b.gu, &b.step0} {
		*v = make([]float64, m)
	}
	return b
}

// descend runs the preconditioned projected-gradient descent of OptimisticSearch from Proj(st)
// (Y coordinates) for state x, with Armijo backtracking on the projection arc, and returns f
// and Θ at its end (Θ in one of b's buffers). It stops after MaxIter iterations, when no
// step is accepted, when an accepted step moves Y by at most TolX and, if tolF ≥ 0, when an
// accepted step lowers f by at most tolF·(1 + |f|).
func (s *searcher) descend(x, st []float64, b *descentBuffers, tolF float64) (float64, []float64) {
	U, U2, T, T2, G, GU := b.u, b.u2, b.t, b.t2, b.g, b.gu
	s.proj(st, U)
	s.toTheta(U, T)
	fT := s.f(T)
	s.ric.Gradient(x, G)
	step := s.cfg.StepInit
	for it := 0; it < s.cfg.MaxIter; it++ {
		s.gradY(G, GU)
		var f2 float64
		f2, step = s.armijo(U, GU, b.step0, U2, T2, fT, step)
		if step < s.cfg.StepMin || !(f2 <= fT) {
			break
		}
		dU := 0.0
		for i := range U {
			d := U2[i] - U[i]
			dU += d * d
		}
		U, U2 = U2, U
		T, T2 = T2, T
		gain := fT - f2
		fT = f2
		s.iters++
		s.ric.Gradient(x, G) // the last Solve was at T (now accepted)
		step = math.Min(s.cfg.StepGrow*step, s.cfg.StepMax)
		if math.Sqrt(dU) <= s.cfg.TolX || (tolF >= 0 && gain <= tolF*(1+math.Abs(fT))) {
			break
		}
	}
	return fT, T
}

// earlyExit returns res with Θ̃ = theta, the projection of the A-zeroed start (start 1),
// which keeps A = 0 and is therefore a global minimiser (the early exit of OptimisticSearch).
func (s *searcher) earlyExit(res SearchResult, theta []float64) SearchResult {
	copy(res.Theta, theta)
	res.F = s.f(theta)
	res.EarlyExit = true
	res.BestStart = 1
	res.Fevals = s.fevals
	return res
}

// OptimisticSearch solves eq. (9), Θ̃ ∈ argmin_{Θ ∈ C_k ∩ S̄} J*_1(Θ, x), by multi-start
// preconditioned projected gradient descent with Armijo backtracking on the projection arc,
// exact gradients (lq spec §4.4) and the exact projection (§4.5), following the pseudocode of
// lq spec §4.3. Starts: Θ̂; Θ̂ with its A-block zeroed (early exit with a global-optimality
// certificate when its projection keeps A = 0); the first-order optimistic point; one
// "B-excited" start per control/state pair (escapes the degenerate K ≡ 0 stationary set);
// NumRandomStarts uniform points of C_k drawn from rng. Descent is monotone per start, so
// f(Θ̃) ≤ f(Proj(Θ̂)). rng must be a per-episode stream derived from public values only (no
// warm start, no RNG state carried from user to user: lq spec §3.8).
func (s *searcher) search(el *Ellipsoid, x []float64, rng *rand.Rand) SearchResult {
	s.setup(el, x)
	s.fevals, s.iters = 0, 0
	p, n := s.p, s.n
	res := SearchResult{Theta: make([]float64, p*n), BestStart: -1}
	if s.empty() {
		res.Empty = true
		nf := math.Max(1, frob(el.ThetaHat))
		for i, v := range el.ThetaHat {
			res.Theta[i] = v / nf
		}
		res.F = s.f(res.Theta)
		res.FProjHat = res.F
		res.Fevals = s.fevals
		return res
	}
	// Start 1: Θ̂ (Y = 0).
	y0 := make([]float64, p*n)
	py0 := make([]float64, p*n)
	s.proj(y0, py0)
	th := make([]float64, p*n)
	s.toTheta(py0, th)
	res.FProjHat = s.f(th)
	// Start 2: Θ̂ with A-block zeroed; early exit if its projection keeps A = 0.
	thA := append([]float64(nil), el.ThetaHat...)
	clear(thA[:n*n])
	yA := make([]float64, p*n)
	s.toY(thA, yA)
	pyA := make([]float64, p*n)
	if !s.proj(yA, pyA) {
		// Feasible as it is: Θ̃ = the A-zeroed Θ̂ exactly (A = 0 ⇒ K ≡ 0, f = J_LB).
		return s.earlyExit(res, thA)
	}
	thPA := make([]float64, p*n)
	s.toTheta(pyA, thPA)
	maxA := 0.0
	for _, v := range thPA[:n*n] {
		maxA = math.Max(maxA, math.Abs(v))
	}
	if maxA <= 1e-12 {
		return s.earlyExit(res, thPA)
	}
	starts := [][]float64{y0, yA}
	// Start 3: first-order optimistic point −∇_Y f/‖∇_Y f‖ at Proj(Θ̂).
	s.ric.Solve(th)
	s.fevals++
	s.ric.Gradient(x, s.bufG)
	gy := make([]float64, p*n)
	s.gradY(s.bufG, gy)
	if ng := frob(gy); ng > 0 {
		for i := range gy {
			gy[i] = -gy[i] / ng
		}
		starts = append(starts, gy)
	}
	// B-excited starts Θ̂ + 2·E_(n+i, j).
	for i := 0; i < s.d; i++ {
		for j := 0; j < n; j++ {
			t := append([]float64(nil), el.ThetaHat...)
			t[(n+i)*n+j] += 2
			y := make([]float64, p*n)
			s.toY(t, y)
			starts = append(starts, y)
		}
	}
	// Random starts, uniform in the unit ball of Y (= C_k).
	for r := 0; r < s.cfg.NumRandomStarts; r++ {
		y := make([]float64, p*n)
		for i := range y {
			y[i] = rng.NormFloat64()
		}
		ny := frob(y)
		rad := math.Pow(rng.Float64(), 1/float64(p*n))
		for i := range y {
			y[i] *= rad / ny
		}
		starts = append(starts, y)
	}
	res.F = math.Inf(1)
	buf := newDescentBuffers(p * n)
	for si, st := range starts {
		fT, T := s.descend(x, st, buf, -1)
		if fT < res.F {
			res.F = fT
			copy(res.Theta, T)
			res.BestStart = si
		}
	}
	res.Fevals, res.Iters = s.fevals, s.iters
	return res
}
