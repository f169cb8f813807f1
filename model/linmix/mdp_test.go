package linmix

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/dprl/dprl/internal/smallmat"
)

// uniformValue evaluates the uniform random policy exactly.
func uniformValue(m *MDP) float64 {
	p := Policy{Prob: make([]float64, m.Horizon()*m.NumStates()*m.NumActions())}
	for i := range p.Prob {
		p.Prob[i] = 1 / float64(m.NumActions())
	}
	return m.NewEvaluator().Value(p)
}

// worstValue evaluates the policy playing at x0 the action minimising P(x1|x0,a).
func worstValue(m *MDP) float64 {
	p := m.NewPolicy()
	best, arg := 2.0, 0
	for a := 0; a < m.NumActions(); a++ {
		if v := m.Prob(0, 0, a, 1); v < best {
			best, arg = v, a
		}
	}
	for h := 0; h < m.Horizon(); h++ {
		p.Act[h*m.NumStates()] = arg
	}
	return m.NewEvaluator().Value(p)
}

func TestTwoStateHardGolden(t *testing.T) {
	// Spec §7.1 golden values (tolerance 1e-9).
	for _, c := range []struct {
		d, H                  int
		q, rho                float64
		vstar, worst, uni, cw float64
	}{
		{5, 10, 0.1, 0.5, 3.7351524353, 1.5486097874, 2.7684354560, 1.4159802259},
		{5, 10, 0.1, 0.9, 4.3660518757, 0.3403447928, 2.7684354560, 1.4199295757},
		{8, 10, 0.1, 0.5, 3.7351524353, 1.5486097874, 2.7684354560, 1.4159802259},
		{4, 5, 0.2, 0.5, 1.8375000000, 0.7423000000, 1.3472000000, 1.4212670404},
	} {
		m, err := TwoStateHard(c.d, c.H, c.q, c.rho, nil)
		if err != nil {
			t.Fatal(err)
		}
		got := []float64{m.VStar(), worstValue(m), uniformValue(m), m.Cw()}
		want := []float64{c.vstar, c.worst, c.uni, c.cw}
		for i := range got {
			if math.Abs(got[i]-want[i]) > 1e-9 {
				t.Errorf("%+v: value %d = %.10f, want %.10f", c, i, got[i], want[i])
			}
		}
		// C_w = sqrt(2 + 2ρ²q²).
		if cw := math.Sqrt(2 + 2*c.rho*c.rho*c.q*c.q); math.Abs(cw-m.Cw()) > 1e-12 {
			t.Errorf("C_w = %v, want %v", m.Cw(), cw)
		}
	}
}

func TestNormalisationAtVertices(t *testing.T) {
	m, err := TwoStateHard(5, 10, 0.1, 0.5, nil)
	if err != nil {
		t.Fatal(err)
	}
	x := make([]float64, m.Dim())
	for _, v := range [][]float64{{0, 0}, {0, 1}, {1, 0}, {1, 1}} {
		for s := 0; s < 2; s++ {
			for a := 0; a < m.NumActions(); a++ {
				m.PsiV(s, a, v, x)
				if n := smallmat.Norm(x); n > 1+1e-12 {
					t.Fatalf("‖ψ_v(%d,%d)‖ = %v > 1 at v = %v", s, a, n, v)
				}
				// ⟨ψ_v, w⟩ = (P v)(s,a).
				want := 0.0
				for t2 := 0; t2 < 2; t2++ {
					want += m.Prob(0, s, a, t2) * v[t2]
				}
				if got := smallmat.Dot(x, m.W(0)); math.Abs(got-want) > 1e-12 {
					t.Fatalf("⟨ψ_v, w⟩ = %v, want (Pv) = %v", got, want)
				}
			}
		}
	}
}

func TestRiverSwimGolden(t *testing.T) {
	m, err := RiverSwim(5, 20)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(m.VStar()-4.6799178884) > 1e-9 {
		t.Errorf("V* = %.10f, want 4.6799178884", m.VStar())
	}
	if math.Abs(m.Cw()-6.1216827752) > 1e-9 {
		t.Errorf("C_w = %.10f, want 6.1216827752", m.Cw())
	}
	left := m.NewPolicy() // all actions 0 = left
	if v := m.NewEvaluator().Value(left); math.Abs(v-0.1) > 1e-12 {
		t.Errorf("always-left value %v, want 0.1", v)
	}
}

func TestHardToLearn(t *testing.T) {
	m, err := HardToLearn(5, 6, 10000, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	if m.NumStates() != 8 || m.NumActions() != 16 {
		t.Fatalf("S, A = %d, %d, want 8, 16", m.NumStates(), m.NumActions())
	}
	Delta := math.Sqrt(1.0/6/10000) / (4 * math.Sqrt2)
	// C_w = 1 + Δ(d−1) (derived from θ = (1/α, μ/β)).
	if math.Abs(m.Cw()-(1+4*Delta)) > 1e-12 {
		t.Errorf("C_w = %v, want %v", m.Cw(), 1+4*Delta)
	}
	// Absorption probability δ + ⟨μ_h, a⟩ lies in δ ± 4Δ and the best action attains δ + 4Δ.
	for h := 0; h < 6; h++ {
		best := 0.0
		for a := 0; a < 16; a++ {
			p := m.Prob(h, 0, a, 7)
			if p < 1.0/6-4*Delta-1e-12 || p > 1.0/6+4*Delta+1e-12 {
				t.Fatalf("P(absorb) = %v out of range", p)
			}
			best = math.Max(best, p)
		}
		if math.Abs(best-(1.0/6+4*Delta)) > 1e-12 {
			t.Fatalf("best absorption %v, want %v", best, 1.0/6+4*Delta)
		}
	}
	if m.VStar() <= uniformValue(m) {
		t.Fatalf("V* = %v not above uniform %v", m.VStar(), uniformValue(m))
	}
	// Same seed, same instance.
	m2, _ := HardToLearn(5, 6, 10000, rand.New(rand.NewPCG(1, 2)))
	if m2.VStar() != m.VStar() {
		t.Fatal("HardToLearn is not deterministic in its seed")
	}
}

func TestBaseMixture(t *testing.T) {
	m, err := BaseMixture(10, 4, 6, 8, rand.New(rand.NewPCG(3, 4)))
	if err != nil {
		t.Fatal(err)
	}
	if m.Cw() > math.Sqrt(6)+1e-12 {
		t.Errorf("C_w = %v > √d", m.Cw())
	}
	if !(m.VStar() > uniformValue(m)) {
		t.Errorf("V* %v ≤ uniform %v", m.VStar(), uniformValue(m))
	}
}

func TestStepMatchesKernel(t *testing.T) {
	m, _ := TwoStateHard(5, 10, 0.1, 0.5, nil)
	r := rand.New(rand.NewPCG(5, 6))
	const n = 200000
	hits := 0
	for i := 0; i < n; i++ {
		if nx, _ := m.Step(0, 0, 0, r); nx == 1 {
			hits++
		}
	}
	p := m.Prob(0, 0, 0, 1)
	// 5 standard deviations of a binomial proportion.
	if math.Abs(float64(hits)/n-p) > 5*math.Sqrt(p*(1-p)/n) {
		t.Fatalf("empirical P = %v, want %v", float64(hits)/n, p)
	}
}

func TestLoad(t *testing.T) {
	m, err := Load("testdata/tiny.yaml")
	if err != nil {
		t.Fatal(err)
	}
	// V*: from state 1 reward 1 each step; from 0 action 1 goes to 1 surely.
	if math.Abs(m.VStar()-2) > 1e-12 {
		t.Fatalf("V* = %v, want 2", m.VStar())
	}
}

func TestBadInput(t *testing.T) {
	good := `{"states":2,"actions":1,"horizon":2,"dim":1,"start":0,"psi":[{"s":0,"a":0,"next":1,"vec":[1]},{"s":1,"a":0,"next":1,"vec":[1]}],"w":[[1]],"reward":[[0],[1]]}`
	if _, err := Parse([]byte(good), "json"); err != nil {
		t.Fatalf("good file rejected: %v", err)
	}
	for _, c := range []struct{ name, in, format, want string }{
		{"format", good, "toml", "unknown format"},
		{"unknown field", strings.Replace(good, `"dim":1`, `"dim":1,"bogus":3`, 1), "json", "unknown field"},
		{"horizon", strings.Replace(good, `"horizon":2`, `"horizon":0`, 1), "json", "horizon = 0"},
		{"w length", strings.Replace(good, `"w":[[1]]`, `"w":[[1],[1],[1]]`, 1), "json", "w has 3"},
		{"probability", strings.Replace(good, `"w":[[1]]`, `"w":[[0.5]]`, 1), "json", "sums to"},
		{"start", strings.Replace(good, `"start":0`, `"start":5`, 1), "json", "start = 5"},
		{"next", strings.Replace(good, `"next":1,"vec":[1]},{"s":1`, `"next":9,"vec":[1]},{"s":1`, 1), "json", "out of range"},
		{"reward", strings.Replace(good, `"reward":[[0],[1]]`, `"reward":[[0],[2]]`, 1), "json", "mean reward"},
		{"missing reward", strings.Replace(good, `,"reward":[[0],[1]]`, ``, 1), "json", "missing rewards"},
		{"normalisation", strings.Replace(strings.Replace(good, `"vec":[1]},{"s":1`, `"vec":[2]},{"s":1`, 1), `"w":[[1]]`, `"w":[[1]]`, 1), "json", ""},
		{"nan", strings.Replace(good, `"w":[[1]]`, `"w":[[1e999]]`, 1), "json", ""},
	} {
		_, err := Parse([]byte(c.in), c.format)
		if err == nil {
			t.Errorf("%s: accepted", c.name)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %q does not mention %q", c.name, err, c.want)
		}
	}
	if _, err := TwoStateHard(1, 10, 0.1, 0.5, nil); err == nil {
		t.Error("TwoStateHard d=1 accepted")
	}
	if _, err := TwoStateHard(5, 10, 0.7, 0.5, nil); err == nil {
		t.Error("TwoStateHard q=0.7 accepted")
	}
	if _, err := HardToLearn(5, 6, 0, rand.New(rand.NewPCG(1, 1))); err == nil {
		t.Error("HardToLearn K=0 accepted")
	}
}
