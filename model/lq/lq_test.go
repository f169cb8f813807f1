package lq

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol*(1+math.Abs(b)) }

func zeroGains(s *System) [][]float64 {
	g := make([][]float64, s.H)
	for i := range g {
		g[i] = make([]float64, s.D*s.N)
	}
	return g
}

// TestLQE1Golden checks the reference values of lq spec §5.3.
func TestLQE1Golden(t *testing.T) {
	s := LQE1()
	p1 := s.OptimalP()[0]
	wantP1 := []float64{1.5579872295, 0.2465080388, 0.2465080388, 1.3859205090}
	for i := range wantP1 {
		if math.Abs(p1[i]-wantP1[i]) > 1e-10 {
			t.Errorf("P_1[%d] = %.12f, want %.10f", i, p1[i], wantP1[i])
		}
	}
	k := s.OptimalGains()
	for i, want := range []float64{-0.0484098365, -0.2430009302} {
		if math.Abs(k[0][i]-want) > 1e-10 {
			t.Errorf("K_1[%d] = %.12f, want %.10f", i, k[0][i], want)
		}
	}
	if math.Abs(k[8][0]) > 1e-15 || math.Abs(k[8][1]+0.2/1.16) > 1e-12 {
		t.Errorf("K_9 = %v, want [0, -0.2/1.16]", k[8])
	}
	if k[9][0] != 0 || k[9][1] != 0 {
		t.Errorf("K_10 = %v, want 0", k[9])
	}
	if math.Abs(s.opt.NoiseTerm-0.500731837464) > 1e-11 {
		t.Errorf("noise term %.12f, want 0.500731837464", s.opt.NoiseTerm)
	}
	maxK := 0.0
	for _, kh := range k {
		maxK = math.Max(maxK, math.Hypot(kh[0], kh[1]))
	}
	if math.Abs(maxK-0.24778) > 1e-5 {
		t.Errorf("max ‖K_h‖ = %v, want 0.24778", maxK)
	}
	r2 := 1 / math.Sqrt2
	for _, c := range []struct {
		x         []float64
		opt, zero float64
	}{
		{[]float64{1, 0}, 2.058719066961, 2.077181297190},
		{[]float64{0, 1}, 1.886652346483, 2.002666279601},
		{[]float64{r2, r2}, 2.219193745529, 2.307683547444},
	} {
		if got := s.Optimal(c.x); math.Abs(got-c.opt) > 1e-11 {
			t.Errorf("J*(%v) = %.12f, want %.12f", c.x, got, c.opt)
		}
		z, err := s.PolicyCost(zeroGains(s), c.x)
		if err != nil || math.Abs(z-c.zero) > 1e-11 {
			t.Errorf("J^0(%v) = %.12f (%v), want %.12f", c.x, z, err, c.zero)
		}
		if lb := s.LowerBound(c.x); math.Abs(lb-1.36) > 1e-12 {
			t.Errorf("J_LB = %v, want 1.36", lb)
		}
	}
	if s.CA != math.Sqrt(0.45) && math.Abs(s.CA-math.Sqrt(0.45)) > 1e-14 {
		t.Errorf("C_A = %v", s.CA)
	}
	var x [2]float64
	s.InitialState(1, x[:])
	if math.Abs(x[0]+0.737369) > 1e-6 || math.Abs(x[1]+0.675490) > 1e-6 {
		t.Errorf("x_{1,1} = %v", x)
	}
}

// TestZeroPolicyRegret checks the cumulative zero-policy regret Z(k) of lq spec §5.3.
func TestZeroPolicyRegret(t *testing.T) {
	s := LQE1()
	want := map[int]float64{1: 0.0841441658, 10: 0.7191437302, 100: 6.7979261147, 500: 33.6164681649,
		1000: 67.2346882494, 2000: 134.4764520467}
	zg := zeroGains(s)
	z := 0.0
	x := make([]float64, 2)
	for k := 1; k <= 2000; k++ {
		s.InitialState(k, x)
		r, err := s.Regret(zg, x)
		if err != nil {
			t.Fatal(err)
		}
		z += r
		if w, ok := want[k]; ok && math.Abs(z-w) > 1e-9*w {
			t.Errorf("Z(%d) = %.10f, want %.10f", k, z, w)
		}
	}
}

func randSPD(r *rand.Rand, n int, ridge float64) []float64 {
	m := make([]float64, n*n)
	for i := range m {
		m[i] = r.NormFloat64()
	}
	out := make([]float64, n*n)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			v := 0.0
			for k := 0; k < n; k++ {
				v += m[i*n+k] * m[j*n+k]
			}
			out[i*n+j] = v / float64(n)
		}
		out[i*n+i] += ridge
	}
	return out
}

// problem is a random LQ problem: sizes n, d, horizon h, Θ ((n+d)×n), Q, R, W, a state x
// and the problem's Riccati recursion (not solved yet).
type problem struct {
	n, d, h         int
	theta, q, rr, w []float64
	x               []float64
	ric             *Riccati
}

// randProblem draws, in this order, n ∈ [1, maxN], d ∈ [1, maxD], h ∈ [minH, minH+spanH),
// Θ with N(0, thetaStd²) entries, Q and R (ridge 0.5), W (ridge wRidge) and x ~ N(0, I).
func randProblem(r *rand.Rand, maxN, maxD, minH, spanH int, thetaStd, wRidge float64) problem {
	n, d, h := 1+r.IntN(maxN), 1+r.IntN(maxD), minH+r.IntN(spanH)
	pr := problem{n: n, d: d, h: h, theta: make([]float64, (n+d)*n)}
	for i := range pr.theta {
		pr.theta[i] = r.NormFloat64() * thetaStd
	}
	pr.q, pr.rr, pr.w = randSPD(r, n, 0.5), randSPD(r, d, 0.5), randSPD(r, n, wRidge)
	pr.x = make([]float64, n)
	for i := range pr.x {
		pr.x[i] = r.NormFloat64()
	}
	pr.ric = NewRiccati(n, d, h, pr.q, pr.rr, pr.w)
	return pr
}

// TestPolicyCostForms checks that the backward and forward forms agree, that the optimal gains
// reproduce J* (lq spec §4.6 test 9), the performance-difference identity of lq spec §1.5, and
// J* ≥ J_LB, on random systems.
func TestPolicyCostForms(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 30; trial++ {
		pr := randProblem(r, 4, 3, 1, 12, 0.5, 0.01)
		n, d, h, theta, q, rr, w, x, ric := pr.n, pr.d, pr.h, pr.theta, pr.q, pr.rr, pr.w, pr.x, pr.ric
		if !ric.Solve(theta) {
			t.Fatal("Solve failed")
		}
		opt := ric.Value(x)
		gains := ric.K[1 : h+1]
		jb, _ := PolicyCost(theta, n, d, q, rr, w, gains, x)
		jf, _ := PolicyCostForward(theta, n, d, q, rr, w, gains, x)
		if !near(jb, opt, 1e-12) || !near(jf, opt, 1e-12) {
			t.Fatalf("trial %d: J* %v, backward %v, forward %v", trial, opt, jb, jf)
		}
		// Random gains: both forms agree and cost ≥ J*.
		rg := make([][]float64, h)
		for i := range rg {
			rg[i] = make([]float64, d*n)
			for j := range rg[i] {
				rg[i][j] = gains[i][j] + 0.3*r.NormFloat64()
			}
		}
		jb, _ = PolicyCost(theta, n, d, q, rr, w, rg, x)
		jf, _ = PolicyCostForward(theta, n, d, q, rr, w, rg, x)
		if !near(jb, jf, 1e-12) || jb < opt-1e-12*(1+opt) {
			t.Fatalf("trial %d: backward %v forward %v J* %v", trial, jb, jf, opt)
		}
		// J* ≥ J_LB = xᵀQx + (H−1)tr(QW).
		lb := quad(q, x, n) + float64(h-1)*traceProd(q, w, n)
		if opt < lb-1e-12*(1+lb) {
			t.Fatalf("J* %v < J_LB %v", opt, lb)
		}
	}
}

// TestPerformanceDifference checks the per-episode regret formula of lq spec §1.5 on LQ-E1.
func TestPerformanceDifference(t *testing.T) {
	s := LQE1()
	r := rand.New(rand.NewPCG(3, 4))
	x := []float64{0.3, -0.8}
	gains := make([][]float64, s.H)
	for i := range gains {
		gains[i] = []float64{r.NormFloat64() * 0.3, r.NormFloat64() * 0.3}
	}
	reg, err := s.Regret(gains, x)
	if err != nil {
		t.Fatal(err)
	}
	// Σ_h tr((K_h − K*_h)ᵀ (R + Bᵀ P*_{h+1} B)(K_h − K*_h) Σ^π_h), d = 1.
	sig := []float64{x[0] * x[0], x[0] * x[1], x[1] * x[0], x[1] * x[1]}
	ks, ps := s.OptimalGains(), s.OptimalP()
	sum := 0.0
	for h := 0; h < s.H; h++ {
		pn := ps[h+1]
		g := s.R[0] + quad(pn, s.B, 2)
		dk := []float64{gains[h][0] - ks[h][0], gains[h][1] - ks[h][1]}
		sum += g * quad(sig, dk, 2)
		l := []float64{s.A[0] + s.B[0]*gains[h][0], s.A[1] + s.B[0]*gains[h][1], s.A[2] + s.B[1]*gains[h][0], s.A[3] + s.B[1]*gains[h][1]}
		ns := make([]float64, 4)
		for i := 0; i < 2; i++ {
			for j := 0; j < 2; j++ {
				v := s.W[i*2+j]
				for a := 0; a < 2; a++ {
					for b := 0; b < 2; b++ {
						v += l[i*2+a] * sig[a*2+b] * l[j*2+b]
					}
				}
				ns[i*2+j] = v
			}
		}
		sig = ns
	}
	if !near(reg, sum, 1e-11) || reg < 0 {
		t.Fatalf("regret %v, performance-difference formula %v", reg, sum)
	}
}

// TestGradient checks the exact gradient of lq spec §4.4 against central differences (h = 1e-6)
// on 25 random (Θ, x, W) (lq spec §4.6 test 1).
func TestGradient(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for trial := 0; trial < 25; trial++ {
		pr := randProblem(r, 3, 2, 2, 10, 0.4, 0.05)
		theta, x, ric := pr.theta, pr.x, pr.ric
		ric.Solve(theta)
		grad := make([]float64, len(theta))
		ric.Gradient(x, grad)
		scale := 0.0
		for _, g := range grad {
			scale = math.Max(scale, math.Abs(g))
		}
		for i := range theta {
			const eps = 1e-6
			th := append([]float64(nil), theta...)
			th[i] += eps
			ric.Solve(th)
			fp := ric.Value(x)
			th[i] -= 2 * eps
			ric.Solve(th)
			fm := ric.Value(x)
			fd := (fp - fm) / (2 * eps)
			if math.Abs(fd-grad[i]) > 1e-6*math.Max(1, scale) {
				t.Fatalf("trial %d entry %d: gradient %.10g, central difference %.10g", trial, i, grad[i], fd)
			}
		}
	}
}

func TestJoinSplit(t *testing.T) {
	a := []float64{1, 2, 3, 4}
	b := []float64{5, 6}
	th := Join(a, b, 2, 1)
	if want := []float64{1, 3, 2, 4, 5, 6}; !slices.Equal(th, want) {
		t.Fatalf("Join = %v, want %v", th, want)
	}
	a2, b2 := Split(th, 2, 1)
	if !slices.Equal(a, a2) || !slices.Equal(b, b2) {
		t.Fatal("Split ∘ Join != id")
	}
	// x' = Θᵀ z = A x + B u.
	s := LQE1()
	x, u := []float64{0.3, -0.2}, []float64{0.7}
	next := make([]float64, 2)
	s.Step(x, u, []float64{0, 0}, next)
	z := []float64{0.3, -0.2, 0.7}
	for j := 0; j < 2; j++ {
		v := 0.0
		for i := 0; i < 3; i++ {
			v += s.Theta[i*2+j] * z[i]
		}
		if math.Abs(v-next[j]) > 1e-15 {
			t.Fatalf("Θᵀz = %v, Ax+Bu = %v", v, next[j])
		}
	}
}

func TestNoise(t *testing.T) {
	s := LQE1()
	r := rand.New(rand.NewPCG(7, 8))
	w := make([]float64, 2)
	var sum [2]float64
	for i := 0; i < 10000; i++ {
		s.SampleNoise(r, w)
		if math.Abs(math.Hypot(w[0], w[1])-0.2) > 1e-15 {
			t.Fatalf("‖w‖ = %v", math.Hypot(w[0], w[1]))
		}
		sum[0] += w[0]
		sum[1] += w[1]
	}
	// Mean of 10⁴ draws of ±0.1414: std 0.0014; 5 sigma.
	if math.Abs(sum[0]/1e4) > 0.0071 || math.Abs(sum[1]/1e4) > 0.0071 {
		t.Fatalf("noise mean %v", sum)
	}
}

func TestBadInput(t *testing.T) {
	mod := func(f func(*Config)) Config { c := LQE1Config(); f(&c); return c }
	cases := []struct {
		name string
		cfg  Config
		want string
	}{
		{"empty A", mod(func(c *Config) { c.A = nil }), "A:"},
		{"ragged A", mod(func(c *Config) { c.A = [][]float64{{0.6}, {0, 0.5}} }), "A row 1"},
		{"B rows", mod(func(c *Config) { c.B = [][]float64{{0}} }), "B:"},
		{"horizon", mod(func(c *Config) { c.Horizon = 0 }), "horizon"},
		{"cw", mod(func(c *Config) { c.Cw = 1 }), "cw"},
		{"gamma negative", mod(func(c *Config) { c.Gamma = -1 }), "gamma"},
		{"assumption e", mod(func(c *Config) { c.Gamma = 0.6 }), "Assumption 1(e)"},
		{"frobenius", mod(func(c *Config) { c.A = [][]float64{{0.9, 0}, {0, 0.5}} }), "Assumption 1(a)"},
		{"uncontrollable", mod(func(c *Config) { c.A = [][]float64{{0.6, 0}, {0, 0.5}} }), "controllable"},
		{"Q not SPD", mod(func(c *Config) { c.Q = [][]float64{{1, 0}, {0, -1}} }), "Q: must be positive definite"},
		{"Q asym", mod(func(c *Config) { c.Q = [][]float64{{1, 0.1}, {0, 1}} }), "Q: must be symmetric"},
		{"R", mod(func(c *Config) { c.R = [][]float64{{0}} }), "R:"},
		{"noise", mod(func(c *Config) { c.Noise = "gauss" }), "noise"},
		{"initial", mod(func(c *Config) { c.Initial = "x" }), "initial"},
		{"nan", mod(func(c *Config) { c.A = [][]float64{{math.NaN(), 0.2}, {0, 0.5}} }), "finite"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := NewSystem(c.cfg)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one containing %q", err, c.want)
			}
		})
	}
	if _, err := s0().PolicyCost([][]float64{{1}}, []float64{1, 0}); err == nil {
		t.Fatal("bad gains accepted")
	}
}

func s0() *System { return LQE1() }

func TestLoad(t *testing.T) {
	s, err := Load("testdata/lqe1.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(s.Theta, LQE1().Theta) || s.H != 10 || s.Cw != 0.2 {
		t.Fatalf("loaded %+v", s)
	}
	js := `{"A": [[0.6, 0.2], [0, 0.5]], "B": [[0], [0.4]], "Q": [[1,0],[0,1]], "R": [[1]], "horizon": 10, "cw": 0.2, "gamma": 0.3}`
	if _, err := Parse([]byte(js)); err != nil {
		t.Fatal(err)
	}
	if _, err := Parse([]byte(`{"A": [[0.5]], "bogus": 1}`)); err == nil {
		t.Fatal("unknown field accepted")
	}
	if _, err := Parse([]byte("A: [[0.5]]\nbogus: 1\n")); err == nil {
		t.Fatal("unknown YAML field accepted")
	}
	if _, err := Load("testdata/nope.txt"); err == nil {
		t.Fatal("bad extension accepted")
	}
}
