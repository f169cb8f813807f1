package linmdp

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/dprl/dprl/internal/smallmat"
)

func close9(a, b float64) bool { return math.Abs(a-b) <= 1e-9*max(1, math.Abs(b)) }

// TestReferenceValues checks V* and fixed-policy values against the spec's tables (§6.3, §6.4).
func TestReferenceValues(t *testing.T) {
	type row struct {
		name       string
		build      func() (*MDP, error)
		vstar      float64
		policy     int // constant action to evaluate, -1 for none
		policyVal  float64
		policy2    int
		policy2Val float64
	}
	rs := func(n, H int) func() (*MDP, error) { return func() (*MDP, error) { return RiverSwimOneHot(n, H) } }
	lr := func(m, H int) func() (*MDP, error) {
		return func() (*MDP, error) { return LatentRiver(m, 10, 0.1, 0.9, 0.05, H) }
	}
	rows := []row{
		{"E1 n6 H20", rs(6, 20), 3.3972639592, 0, 0.1, 1, 3.3966369762},
		{"E1 n6 H10", rs(6, 10), 0.3523839780, 0, 0.05, 1, 0.3466700357},
		{"E1 n6 H30", rs(6, 30), 7.5208105279, -1, 0, -1, 0},
		{"E1 n10 H40", rs(10, 40), 6.2621993777, -1, 0, -1, 0},
		{"E1-small", rs(4, 10), 1.8543520363, 0, 0.05, 1, 1.8532720928},
		{"E2 m3", lr(3, 12), 7.1784015709, 1, 3.4268554688, -1, 0},
		{"E2 m4", lr(4, 16), 7.7000164312, 1, 3.0851953125, -1, 0},
		{"E2 m5", lr(5, 20), 8.0824275632, 1, 2.7767671585, 0, 1.0},
		{"E2 m6", lr(6, 24), 8.3904360568, 1, 2.5015430474, -1, 0},
		{"E2 m8", lr(8, 32), 8.8715116787, 1, 2.0448239154, -1, 0},
		{"E2 m5 H10", lr(5, 10), 1.5667711554, 1, 0.858203125, 0, 0.5},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			m, err := r.build()
			if err != nil {
				t.Fatal(err)
			}
			V, pi := m.OptimalValues()
			if !close9(V[0][0], r.vstar) {
				t.Errorf("V*_1(0) = %.10f, want %.10f", V[0][0], r.vstar)
			}
			if got := m.Evaluate(pi)[0][0]; !close9(got, r.vstar) {
				t.Errorf("evaluating the optimal policy gives %.10f, want %.10f", got, r.vstar)
			}
			for _, c := range [][2]float64{{float64(r.policy), r.policyVal}, {float64(r.policy2), r.policy2Val}} {
				if c[0] < 0 {
					continue
				}
				if got := m.Evaluate(m.ConstantPolicy(int(c[0])))[0][0]; !close9(got, c[1]) {
					t.Errorf("always-%d = %.10f, want %.10f", int(c[0]), got, c[1])
				}
			}
		})
	}
	m, _ := LatentRiver(5, 10, 0.1, 0.9, 0.05, 20)
	V, pi := m.OptimalValues()
	if !close9(V[0][9], 9.317098) && math.Abs(V[0][9]-9.317098) > 1e-6 {
		t.Errorf("V*_1(9) = %.7f, want 9.317098", V[0][9])
	}
	want := []int{2, 2, 2, 1, 1, 1, 1, 1, 1, 1}
	for j, a := range want {
		if pi[0][10+j] != a {
			t.Errorf("π*_1(%d) = %d, want %d", 10+j, pi[0][10+j], a)
		}
	}
	e1, _ := RiverSwimOneHot(6, 20)
	V1, _ := e1.OptimalValues()
	for s, v := range []float64{3.397264, 4.052651, 5.301868, 6.678367, 8.094, 9.521445} {
		if math.Abs(V1[0][s]-v) > 1e-6 {
			t.Errorf("E1 V*_1(%d) = %.7f, want %.6f", s, V1[0][s], v)
		}
	}
}

// TestMonteCarloTransitions checks sampled next-state frequencies against P within 4
// standard errors.
func TestMonteCarloTransitions(t *testing.T) {
	m, err := RandomSimplex(30, 3, 6, 4, 3, 5, 7, false)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	const n = 20000
	for _, c := range [][3]int{{0, 0, 0}, {2, 5, 1}, {3, 29, 2}} {
		cnt := make([]float64, m.N)
		for i := 0; i < n; i++ {
			cnt[m.Step(c[0], c[1], c[2], r)]++
		}
		for s2 := range cnt {
			p := m.P(c[0], c[1], c[2], s2)
			se := math.Sqrt(p*(1-p)/n) + 1e-12
			if math.Abs(cnt[s2]/n-p) > 4*se {
				t.Errorf("h=%d s=%d a=%d s'=%d: freq %g, P = %g", c[0], c[1], c[2], s2, cnt[s2]/n, p)
			}
		}
	}
}

func TestTwoState100(t *testing.T) {
	m, err := TwoState100(3, 15)
	if err != nil {
		t.Fatal(err)
	}
	if m.N != 2 || m.A != 100 || m.D != 10 {
		t.Fatalf("dims %d %d %d", m.N, m.A, m.D)
	}
	for s := 0; s < 2; s++ {
		for a := 0; a < 100; a++ {
			if n := smallmat.Norm(m.Phi[s][a]); math.Abs(n-1) > 1e-12 {
				t.Fatalf("‖φ(%d,%d)‖ = %g, want 1", s, a, n)
			}
			want := 0.0
			if s == 0 && a == 0 {
				want = 1
			}
			if r := m.Reward(0, s, a); math.Abs(r-want) > 1e-12 {
				t.Fatalf("r(%d,%d) = %g", s, a, r)
			}
			if p := m.P(0, s, a, 1); math.Abs(p-0.5) > 1e-12 {
				t.Fatalf("P(1|%d,%d) = %g", s, a, p)
			}
		}
	}
	V, _ := m.OptimalValues()
	// V*_1(0) = 1 + 14·0.5, V*_1(1) = 14·0.5.
	if !close9(V[0][0], 8) || !close9(V[0][1], 7) {
		t.Errorf("V* = %v", V[0])
	}
}

func TestBadInput(t *testing.T) {
	phi := [][][]float64{{{1, 0}, {0, 1}}}
	mu := [][][]float64{{{1, 1}}}
	theta := [][]float64{{0, 1}}
	init := []float64{1}
	if _, err := New("ok", phi, mu, theta, init, 2); err != nil {
		t.Fatalf("valid model rejected: %v", err)
	}
	cases := []struct {
		name  string
		phi   [][][]float64
		mu    [][][]float64
		theta [][]float64
		init  []float64
		H     int
		want  string
	}{
		{"big phi", [][][]float64{{{1, 0.1}, {0, 1}}}, mu, theta, init, 2, "norm"},
		{"reward > 1", phi, mu, [][]float64{{0.2, 1.3}}, init, 2, "reward"},
		{"negative P", [][][]float64{{{1, 0}, {0, 1}}}, [][][]float64{{{1, -1}}}, theta, init, 2, ""},
		{"P not summing", phi, [][][]float64{{{0.5, 1}}}, theta, init, 2, "sums"},
		{"horizon", phi, mu, theta, init, 0, "horizon"},
		{"init", phi, mu, theta, []float64{0.5}, 2, "init"},
		{"mu steps", phi, [][][]float64{{{1, 1}}, {{1, 1}}}, theta, init, 3, "mu"},
		{"dims", [][][]float64{{{1, 0}, {1}}}, mu, theta, init, 2, "length"},
		{"nan", [][][]float64{{{math.NaN(), 0}, {0, 1}}}, mu, theta, init, 2, "finite"},
	}
	for _, c := range cases {
		_, err := New("bad", c.phi, c.mu, c.theta, c.init, c.H)
		if err == nil {
			t.Errorf("%s: accepted", c.name)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %q does not mention %q", c.name, err, c.want)
		}
	}
	if _, err := LatentRiver(1, 10, 0.1, 0.9, 0.05, 4); err == nil || !strings.Contains(err.Error(), "m must be") {
		t.Errorf("LatentRiver m=1: %v", err)
	}
	if _, err := RiverSwimOneHot(1, 4); err == nil {
		t.Error("RiverSwim n=1 accepted")
	}
	if _, err := RandomSimplex(10, 2, 3, 4, 5, 2, 1, true); err == nil || !strings.Contains(err.Error(), "kPhi") {
		t.Errorf("RandomSimplex kPhi > d: %v", err)
	}
}

func TestLoad(t *testing.T) {
	m, err := Load("testdata/tiny.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if m.N != 2 || m.A != 2 || m.D != 2 || m.H != 3 {
		t.Fatalf("dims %d %d %d %d", m.N, m.A, m.D, m.H)
	}
	V, _ := m.OptimalValues()
	if !close9(V[0][0], 2.25) {
		t.Errorf("V* = %v, want 2.25 = 1 + (0.5 + 0.5·1 + 0.5·0.5)", V[0][0])
	}
	bad := map[string]string{
		`{"horizon": 2, "features": [[[2, 0]]], "mu": [[[1, 0]]], "theta": [[0, 0]], "init": [1]}`:         "norm",
		`{"horizon": 2, "features": [[[1, 0]]], "mu": [[[1, 0]]], "theta": [[0, 0]], "init": [1], "x": 1}`: "unknown field",
		`{"horizon": 0}`:                 "horizon",
		`{"horizon": 2, "features": []}`: "features",
	}
	for data, want := range bad {
		if _, err := Parse([]byte(data), "json"); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v, want mention of %q", data, err, want)
		}
	}
	if _, err := Parse([]byte("{}"), "toml"); err == nil {
		t.Error("unknown format accepted")
	}
}

func TestRandomSimplexDeterministic(t *testing.T) {
	a, _ := RandomSimplex(100, 4, 8, 10, 3, 10, 5, true)
	b, _ := RandomSimplex(100, 4, 8, 10, 3, 10, 5, true)
	for s := range a.Phi {
		for x := range a.Phi[s] {
			for i := range a.Phi[s][x] {
				if a.Phi[s][x][i] != b.Phi[s][x][i] {
					t.Fatal("not deterministic")
				}
			}
		}
	}
}
