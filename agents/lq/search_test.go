package lq

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/dprl/dprl/model/lq"
)

func randEllipsoid(r *rand.Rand, p, n int, vscale float64) ([]float64, []float64) {
	w := make([]float64, p)
	for i := range w {
		w[i] = vscale * math.Exp(2*r.NormFloat64())
	}
	c := make([]float64, p*n)
	for i := range c {
		c[i] = r.NormFloat64()
	}
	return w, c
}

// TestProjection checks the exact projection onto two ellipsoids (lq spec §4.6 test 2):
// feasibility, P(Y) = Y for feasible Y, idempotence and the variational inequality
// ⟨Y − P(Y), Z − P(Y)⟩ ≤ 0 for 200 random feasible Z.
func TestProjection(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for trial := 0; trial < 40; trial++ {
		p, n := 2+r.IntN(4), 1+r.IntN(3)
		wa, ca := randEllipsoid(r, p, n, 1)
		wb, cb := randEllipsoid(r, p, n, 1)
		// Make the intersection non-empty: both contain a common point m.
		m := make([]float64, p*n)
		for i := range m {
			m[i] = r.NormFloat64()
		}
		ea := ellipsoid{w: wa, c: ca}
		eb := ellipsoid{w: wb, c: cb}
		ea.r = math.Sqrt(ea.value(m, p, n)+0) * (1 + r.Float64())
		eb.r = math.Sqrt(eb.value(m, p, n)+0) * (1 + r.Float64())
		y := make([]float64, p*n)
		for i := range y {
			y[i] = 3 * r.NormFloat64()
		}
		py := make([]float64, p*n)
		projTwoEllipsoids(y, p, n, ea, eb, py)
		tol := 1e-10
		if ea.value(py, p, n) > tol*(1+ea.r*ea.r) || eb.value(py, p, n) > tol*(1+eb.r*eb.r) {
			t.Fatalf("trial %d: projection infeasible: %g %g", trial, ea.value(py, p, n), eb.value(py, p, n))
		}
		ppy := make([]float64, p*n)
		projTwoEllipsoids(py, p, n, ea, eb, ppy)
		for i := range py {
			if math.Abs(ppy[i]-py[i]) > 1e-9*(1+math.Abs(py[i])) {
				t.Fatalf("trial %d: not idempotent: %v vs %v", trial, ppy, py)
			}
		}
		active := projTwoEllipsoids(m, p, n, ea, eb, ppy)
		if active || !equalSlices(ppy, m) {
			t.Fatalf("trial %d: feasible point moved", trial)
		}
		for z := 0; z < 200; z++ {
			zz := make([]float64, p*n)
			for i := range zz {
				zz[i] = m[i] + r.NormFloat64()
			}
			pz := make([]float64, p*n)
			projTwoEllipsoids(zz, p, n, ea, eb, pz)
			vi := 0.0
			for i := range y {
				vi += (y[i] - py[i]) * (pz[i] - py[i])
			}
			if vi > 1e-8*(1+frob(y)*frob(pz)) {
				t.Fatalf("trial %d: variational inequality violated: %g", trial, vi)
			}
		}
	}
}

func equalSlices(a, b []float64) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return len(a) == len(b)
}

// testEllipsoid builds C_k from Θ̂ and a symmetric positive definite V.
func testEllipsoid(t *testing.T, hat, v []float64, p, n int, beta float64) *Ellipsoid {
	t.Helper()
	pub := Public{N: n, D: p - n}
	_ = pub
	// Eigendecomposition through the planner's code path.
	b := &Billboard{Episode: 1, T1: append([]float64(nil), v...), T2: make([]float64, p*n)}
	// T2 = V Θ̂ so that Θ̂ = V⁻¹ T2.
	for i := 0; i < p; i++ {
		for j := 0; j < n; j++ {
			s := 0.0
			for k := 0; k < p; k++ {
				s += v[i*p+k] * hat[k*n+j]
			}
			b.T2[i*n+j] = s
		}
	}
	sys := lq.LQE1()
	if sys.P != p {
		t.Fatal("testEllipsoid supports LQ-E1 shapes only")
	}
	pl := NewPlanner(PublicOf(sys), DefaultConfig(math.Inf(1), 10), Constants{LambdaMin: 1e-300})
	plan, err := pl.Plan(b, []float64{1, 0}, rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	e := plan.Set
	e.Beta = beta
	return &e
}

// TestSearchOptimism checks lq spec §4.6 tests 3, 4 and 8 on random instances around a random
// Θ* ∈ S̄ ∩ C_k: f(Θ̃) ≤ f(Proj Θ̂), f(Θ̃) ≤ f(Θ*), f(Θ̃) ≥ J_LB, and feasibility of Θ̃.
func TestSearchOptimism(t *testing.T) {
	sys := lq.LQE1()
	pub := PublicOf(sys)
	s := newSearcher(pub, DefaultSearch())
	r := rand.New(rand.NewPCG(21, 22))
	p, n := 3, 2
	for trial := 0; trial < 40; trial++ {
		star := make([]float64, p*n)
		for i := range star {
			star[i] = r.NormFloat64()
		}
		nf := frob(star) / (0.95 * r.Float64())
		for i := range star {
			star[i] /= nf
		}
		v := make([]float64, p*p)
		a := make([]float64, p*p)
		for i := range a {
			a[i] = r.NormFloat64()
		}
		scale := math.Exp(3 * r.NormFloat64())
		for i := 0; i < p; i++ {
			for j := 0; j < p; j++ {
				for k := 0; k < p; k++ {
					v[i*p+j] += scale * a[i*p+k] * a[j*p+k]
				}
			}
			v[i*p+i] += 0.1 * scale
		}
		hat := make([]float64, p*n)
		for i := range hat {
			hat[i] = star[i] + 0.3*r.NormFloat64()
		}
		e := testEllipsoid(t, hat, v, p, n, 1)
		e.Beta = math.Sqrt(e.Dist2(star)) * (1 + 0.5*r.Float64())
		x := []float64{r.NormFloat64(), r.NormFloat64()}
		res := s.search(e, x, rand.New(rand.NewPCG(uint64(trial), 0)))
		if res.Empty {
			t.Fatalf("trial %d: empty set although Θ* is in it", trial)
		}
		fstar := sys.LowerBound(x) // placeholder to get J_LB
		ric := lq.NewRiccati(n, 1, sys.H, sys.Q, sys.R, sys.W)
		ric.Solve(star)
		jstar := ric.Value(x)
		if res.F > jstar+1e-9*(1+jstar) {
			t.Fatalf("trial %d: f(Θ̃) = %v > f(Θ*) = %v", trial, res.F, jstar)
		}
		if res.F > res.FProjHat+1e-12*(1+res.FProjHat) {
			t.Fatalf("trial %d: f(Θ̃) = %v > f(Proj Θ̂) = %v", trial, res.F, res.FProjHat)
		}
		if res.F < fstar-1e-12 {
			t.Fatalf("trial %d: f(Θ̃) = %v < J_LB = %v", trial, res.F, fstar)
		}
		if !e.Contains(res.Theta) && e.Dist2(res.Theta) > e.Beta*e.Beta*(1+1e-9) || frob(res.Theta) > 1+1e-9 {
			t.Fatalf("trial %d: Θ̃ infeasible", trial)
		}
	}
}

// TestSearchGridOracle compares the optimistic step with a polar grid over the feasible set
// for n = d = 1 (lq spec §4.6 test 5).
func TestSearchGridOracle(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	pub := Public{N: 1, D: 1, H: 6, Q: []float64{1}, R: []float64{0.5}, W: []float64{0.02}, Cw: 0.2, Gamma: 0.3}
	s := newSearcher(pub, DefaultSearch())
	ric := lq.NewRiccati(1, 1, pub.H, pub.Q, pub.R, pub.W)
	for trial := 0; trial < 20; trial++ {
		pub.R[0] = 0.2 + r.Float64()
		pub.W[0] = 0.05 * r.Float64()
		// V = Q diag(v) Qᵀ with a random rotation.
		th := r.Float64() * math.Pi
		c, sn := math.Cos(th), math.Sin(th)
		ev := []float64{math.Exp(2 * r.NormFloat64()), math.Exp(2 * r.NormFloat64())}
		e := &Ellipsoid{P: 2, N: 1, QV: []float64{c, -sn, sn, c}, V: ev,
			ThetaHat: []float64{0.8 * r.NormFloat64(), 0.8 * r.NormFloat64()}}
		e.Beta = math.Sqrt(e.Dist2([]float64{0, 0.5})) * (0.3 + r.Float64())
		x := []float64{1}
		res := s.search(e, x, rand.New(rand.NewPCG(uint64(trial), 9)))
		if res.Empty {
			continue
		}
		best := math.Inf(1)
		const N = 300
		for i := 1; i <= N; i++ {
			rad := float64(i) / N
			for j := 0; j < 4*N; j++ {
				a := 2 * math.Pi * float64(j) / (4 * N)
				pt := []float64{rad * math.Cos(a), rad * math.Sin(a)}
				if !e.Contains(pt) {
					continue
				}
				ric.Solve(pt)
				best = math.Min(best, ric.Value(x))
			}
		}
		if res.F > best+1e-6 {
			t.Fatalf("trial %d: optimiser %v worse than grid %v", trial, res.F, best)
		}
	}
}

// TestSearchEscapesZeroGain is lq spec §4.6 test 6: with B̂ = 0 exactly and A = 0 infeasible the
// B-excited starts find a Θ̃ with B ≠ 0 and non-zero gains, better than the B = 0 estimate.
func TestSearchEscapesZeroGain(t *testing.T) {
	sys := lq.LQE1()
	s := newSearcher(PublicOf(sys), DefaultSearch())
	hat := append([]float64(nil), sys.Theta...)
	hat[4], hat[5] = 0, 0 // B-block zero
	e := &Ellipsoid{P: 3, N: 2, ThetaHat: hat, QV: []float64{1, 0, 0, 0, 1, 0, 0, 0, 1}, V: []float64{1000, 1000, 1}, Beta: 1}
	if !e.Contains(sys.Theta) {
		t.Fatal("Θ* not in the set")
	}
	x := []float64{1, 0}
	res := s.search(e, x, rand.New(rand.NewPCG(1, 2)))
	ric := lq.NewRiccati(2, 1, sys.H, sys.Q, sys.R, sys.W)
	ric.Solve(hat)
	fhat := ric.Value(x)
	ric.Solve(res.Theta)
	if res.Theta[4] == 0 && res.Theta[5] == 0 || ric.K[1][0] == 0 && ric.K[1][1] == 0 {
		t.Fatalf("stuck at B = 0: Θ̃ = %v", res.Theta)
	}
	if !(res.F < fhat-1e-3) {
		t.Fatalf("f(Θ̃) = %v, f(Θ̂ with B = 0) = %v", res.F, fhat)
	}
	t.Logf("f(Θ̃) = %.4f vs %.4f at B = 0", res.F, fhat)
}

// TestSearchUninformed is lq spec §4.6 test 7: when S̄ ⊆ C_k, f(Θ̃) = J_LB and all gains are 0.
func TestSearchUninformed(t *testing.T) {
	sys := lq.LQE1()
	s := newSearcher(PublicOf(sys), DefaultSearch())
	r := rand.New(rand.NewPCG(41, 42))
	for trial := 0; trial < 20; trial++ {
		hat := make([]float64, 6)
		for i := range hat {
			hat[i] = 0.3 * r.NormFloat64()
		}
		e := &Ellipsoid{P: 3, N: 2, ThetaHat: hat, QV: []float64{1, 0, 0, 0, 1, 0, 0, 0, 1}, V: []float64{2, 3, 1}}
		e.Beta = (1 + frob(hat)) * math.Sqrt(3) // sufficient: S̄ ⊆ C_k
		x := []float64{r.NormFloat64(), r.NormFloat64()}
		res := s.search(e, x, rand.New(rand.NewPCG(3, 4)))
		if !res.EarlyExit || math.Abs(res.F-sys.LowerBound(x)) > 1e-12*(1+res.F) {
			t.Fatalf("trial %d: f = %v, J_LB = %v, early exit %v", trial, res.F, sys.LowerBound(x), res.EarlyExit)
		}
		s.ric.Solve(res.Theta)
		for h := 1; h <= sys.H; h++ {
			for _, k := range s.ric.K[h] {
				if math.Abs(k) > 1e-12 {
					t.Fatalf("gain %v", k)
				}
			}
		}
	}
}

// TestEmptySet checks the emptiness test and its fallback Θ̂/max(1, ‖Θ̂‖_F).
func TestEmptySet(t *testing.T) {
	sys := lq.LQE1()
	s := newSearcher(PublicOf(sys), DefaultSearch())
	hat := []float64{3, 0, 0, 3, 0, 0}
	e := &Ellipsoid{P: 3, N: 2, ThetaHat: hat, QV: []float64{1, 0, 0, 0, 1, 0, 0, 0, 1}, V: []float64{1, 1, 1}, Beta: 0.5}
	res := s.search(e, []float64{1, 0}, rand.New(rand.NewPCG(1, 1)))
	if !res.Empty || math.Abs(frob(res.Theta)-1) > 1e-15 {
		t.Fatalf("empty %v, Θ̃ %v", res.Empty, res.Theta)
	}
	e.Beta = 3.5 // now the ball and the ellipsoid intersect
	if res = s.search(e, []float64{1, 0}, rand.New(rand.NewPCG(1, 1))); res.Empty {
		t.Fatal("non-empty set reported empty")
	}
}

// TestMappingsAgree is lq spec §4.6 test 2(v): the U-space constraints of the searcher equal
// the Θ-space constraints after the change of variables Θ = Θ̂ + Q_V diag(β/√v) Y, and toY
// inverts toTheta.
func TestMappingsAgree(t *testing.T) {
	sys := lq.LQE1()
	s := newSearcher(PublicOf(sys), DefaultSearch())
	r := rand.New(rand.NewPCG(51, 52))
	th := 0.7
	c, sn := math.Cos(th), math.Sin(th)
	e := &Ellipsoid{P: 3, N: 2, ThetaHat: []float64{0.5, 0.1, -0.2, 0.3, 0.05, 0.2},
		QV: []float64{c, -sn, 0, sn, c, 0, 0, 0, 1}, V: []float64{40, 3, 700}, Beta: 0.8}
	s.setup(e, []float64{1, 0})
	for trial := 0; trial < 50; trial++ {
		y := make([]float64, 6)
		for i := range y {
			y[i] = r.NormFloat64()
		}
		theta := make([]float64, 6)
		s.toTheta(y, theta)
		ny2 := frob(y) * frob(y)
		if got, want := s.ea.value(y, 3, 2), ny2-1; math.Abs(got-want) > 1e-12*(1+ny2) {
			t.Fatalf("C_k in U-space %v, want %v", got, want)
		}
		if got, want := e.Dist2(theta), e.Beta*e.Beta*ny2; math.Abs(got-want) > 1e-10*(1+want) {
			t.Fatalf("‖Θ−Θ̂‖_V² = %v, β²‖Y‖² = %v", got, want)
		}
		nt2 := frob(theta) * frob(theta)
		if got := s.eb.value(y, 3, 2); math.Abs(got-(nt2-1)) > 1e-10*(1+nt2) {
			t.Fatalf("S̄ in U-space %v, ‖Θ‖²−1 = %v", got, nt2-1)
		}
		back := make([]float64, 6)
		s.toY(theta, back)
		for i := range y {
			if math.Abs(back[i]-y[i]) > 1e-10*(1+math.Abs(y[i])) {
				t.Fatalf("toY(toTheta(y)) = %v, y = %v", back, y)
			}
		}
	}
}

// TestNoiselessRegression: exact statistics of noiseless data recover Θ* (lq spec pitfall 1:
// the Θ layout), through the curator and the planner.
func TestNoiselessRegression(t *testing.T) {
	sys := lq.LQE1()
	pub := PublicOf(sys)
	cfg := DefaultConfig(math.Inf(1), 10)
	consts := Constants{Eta: 1e-9, LambdaMin: 1e-9, LambdaMax: 1e-9}
	cur, _ := NewCurator(pub, cfg, consts, nil, nil)
	r := rand.New(rand.NewPCG(61, 62))
	for k := 0; k < 5; k++ {
		tr := &Trajectory{X: [][]float64{{0.5 * r.NormFloat64(), 0.5 * r.NormFloat64()}}}
		for h := 0; h < sys.H; h++ {
			u := []float64{0.3 * r.NormFloat64()}
			next := make([]float64, 2)
			sys.Step(tr.X[h], u, []float64{0, 0}, next)
			tr.U = append(tr.U, u)
			tr.X = append(tr.X, next)
		}
		if err := cur.Receive(tr); err != nil {
			t.Fatal(err)
		}
	}
	pl := NewPlanner(pub, cfg, consts)
	plan, err := pl.Plan(cur.Release(), []float64{1, 0}, rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range plan.Set.ThetaHat {
		if math.Abs(v-sys.Theta[i]) > 1e-6 {
			t.Fatalf("Θ̂ = %v, Θ* = %v", plan.Set.ThetaHat, sys.Theta)
		}
	}
}
