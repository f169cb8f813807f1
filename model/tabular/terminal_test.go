package tabular

import (
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// bruteValue returns E_{s0~init} of the expected return of the policy given by act (a
// deterministic rule act(h, s)) or prob (π_h(a|s)), by enumerating every trajectory with its
// probability: a trajectory that enters a terminal state after L < H steps ends there and is
// credited TerminalReward for each of the H−L remaining steps. It reads the model only
// through P (dense), R, Init, Terminal and TerminalReward — no backward induction.
func bruteValue(m *MDP, init []float64, act func(h, s int) int, prob func(h, s, a int) float64) float64 {
	type partial struct {
		s      int
		p, ret float64
	}
	frontier := []partial{}
	for s, q := range init {
		if q > 0 {
			frontier = append(frontier, partial{s, q, 0})
		}
	}
	total := 0.0
	for h := 0; h < m.H; h++ {
		var next []partial
		for _, t := range frontier {
			if m.Terminal != nil && m.Terminal[t.s] {
				total += t.p * (t.ret + m.TerminalReward*float64(m.H-h))
				continue
			}
			for a := 0; a < m.A; a++ {
				pa := 0.0
				switch {
				case act != nil && act(h, t.s) == a:
					pa = 1
				case prob != nil:
					pa = prob(h, t.s, a)
				}
				if pa == 0 {
					continue
				}
				r := m.R[h][t.s*m.A+a]
				for s2 := 0; s2 < m.S; s2++ {
					if q := m.P[h][(t.s*m.A+a)*m.S+s2]; q > 0 {
						next = append(next, partial{s2, t.p * pa * q, t.ret + r})
					}
				}
			}
		}
		frontier = next
	}
	for _, t := range frontier {
		total += t.p * t.ret
	}
	return total
}

// bruteOptimal returns max over every deterministic Markov policy of bruteValue from init.
func bruteOptimal(m *MDP, init []float64) float64 {
	n := m.H * m.S
	best := math.Inf(-1)
	digits := make([]int, n)
	for {
		v := bruteValue(m, init, func(h, s int) int { return digits[h*m.S+s] }, nil)
		best = max(best, v)
		i := 0
		for ; i < n; i++ {
			// Actions at terminal states never matter: keep them at 0.
			if m.Terminal != nil && m.Terminal[i%m.S] {
				continue
			}
			digits[i]++
			if digits[i] < m.A {
				break
			}
			digits[i] = 0
		}
		if i == n {
			return best
		}
	}
}

func pointMass(S, s int) []float64 {
	d := make([]float64, S)
	d[s] = 1
	return d
}

// TestTerminalValuesBruteForce: on testdata/terminal.yaml (S = 4, A = 2, H = 4, state 3
// terminal, TerminalReward 0.25) V*, V^π of a deterministic and of a stochastic policy and the
// regret equal those of m.Absorbing() and those of an enumeration of every trajectory (and, for
// V*, of every deterministic policy), from each start state and from Init.
func TestTerminalValuesBruteForce(t *testing.T) {
	dense := mustLoad(t, "testdata/terminal.json") // bruteValue reads P
	sparse := mustLoad(t, "testdata/terminal.yaml")
	abs, err := sparse.Absorbing()
	if err != nil {
		t.Fatal(err)
	}
	det := NewDeterministic(4, 4)
	for h := range det.Act {
		det.Act[h] = []int{h % 2, 1, (h + 1) % 2, 0}
	}
	sto := &Policy{Prob: make([][]float64, 4)}
	for h := range sto.Prob {
		x := 0.2 + 0.2*float64(h)
		sto.Prob[h] = []float64{x, 1 - x, 1 - x, x, 0.5, 0.5, 1, 0}
	}
	const tol = 1e-12
	for _, c := range []struct {
		name string
		m    *MDP
	}{{"dense", dense}, {"sparse", sparse}, {"absorbing", abs}} {
		m := c.m
		vs, vd, vp := m.Optimal(), m.Evaluate(det), m.Evaluate(sto)
		for s := 0; s < m.S; s++ {
			init := pointMass(m.S, s)
			for _, w := range []struct {
				what      string
				got, want float64
			}{
				{"V*", vs.V[0][s], bruteOptimal(dense, init)},
				{"V^det", vd.V[0][s], bruteValue(dense, init, det.Action, nil)},
				{"V^sto", vp.V[0][s], bruteValue(dense, init, nil, func(h, s, a int) float64 { return sto.Prob[h][s*2+a] })},
			} {
				if math.Abs(w.got-w.want) > tol {
					t.Errorf("%s: %s(s0 = %d) = %.15g, enumeration %.15g", c.name, w.what, s, w.got, w.want)
				}
			}
		}
		if s3 := vs.V[1][3]; math.Abs(s3-0.25*3) > tol {
			t.Errorf("%s: V*_1(terminal) = %g, want TerminalReward·(H−1) = 0.75", c.name, s3)
		}
		wantStar := bruteOptimal(dense, dense.Init)
		wantDet := bruteValue(dense, dense.Init, det.Action, nil)
		if g := m.Start(vs); math.Abs(g-wantStar) > tol {
			t.Errorf("%s: E V* = %.15g, enumeration %.15g", c.name, g, wantStar)
		}
		reg := NewRegret(m)
		if g := reg.Of(det); math.Abs(g-(wantStar-wantDet)) > tol {
			t.Errorf("%s: regret of det = %.15g, enumeration %.15g", c.name, g, wantStar-wantDet)
		}
		wantSto := bruteValue(dense, dense.Init, nil, func(h, s, a int) float64 { return sto.Prob[h][s*2+a] })
		if g, w := reg.Of(sto), NewRegret(abs).Of(sto); math.Abs(g-w) > tol || math.Abs(g-(wantStar-wantSto)) > tol {
			t.Errorf("%s: regret of sto = %.15g, absorbing model %.15g, enumeration %.15g", c.name, g, w, wantStar-wantSto)
		}
	}
	// The sparse and dense files are the same model: bit-identical values.
	if !reflect.DeepEqual(dense.Optimal(), sparse.Optimal()) || !reflect.DeepEqual(dense.Evaluate(sto), sparse.Evaluate(sto)) {
		t.Error("terminal.json and terminal.yaml give different values")
	}
}

// TestTerminalRollout: an episode ends exactly on entering a terminal state (L < H, S[L]
// terminal, no earlier state terminal), the steps played are those of the absorbing model's
// episode drawn from the same user stream (a response tree), episodes that end early occur,
// and the mean return (rewards plus TerminalReward per remaining step) matches V^π.
func TestTerminalRollout(t *testing.T) {
	for _, kind := range []RewardKind{Deterministic, Bernoulli} {
		m := mustLoad(t, "testdata/terminal.yaml")
		m.Rewards = kind
		abs, err := m.Absorbing()
		if err != nil {
			t.Fatal(err)
		}
		p := NewDeterministic(m.S, m.H)
		for h := range p.Act {
			p.Act[h] = []int{1, 0, h % 2, 1}
		}
		want := m.Start(m.Evaluate(p))
		const n = 40000
		tr, ta := NewTrajectory(m.H), NewTrajectory(m.H)
		sum, sum2, early := 0.0, 0.0, 0
		for k := 0; k < n; k++ {
			m.Rollout(p, rand.New(rand.NewPCG(7, uint64(k))), tr)
			abs.Rollout(p, rand.New(rand.NewPCG(7, uint64(k))), ta)
			L := tr.Len()
			if len(tr.S) != L+1 || len(tr.R) != L || L < 1 || L > m.H {
				t.Fatalf("episode %d: lengths S %d, A %d, R %d", k, len(tr.S), L, len(tr.R))
			}
			for h := 0; h < L; h++ {
				if m.IsTerminal(tr.S[h]) {
					t.Fatalf("episode %d: state %d at step %d is terminal but the episode went on: %v", k, tr.S[h], h, tr.S)
				}
			}
			if L < m.H {
				early++
				if !m.IsTerminal(tr.S[L]) {
					t.Fatalf("episode %d ended after %d < H steps in non-terminal state %d", k, L, tr.S[L])
				}
			}
			if !reflect.DeepEqual(tr.S, ta.S[:L+1]) || !reflect.DeepEqual(tr.A, ta.A[:L]) || !reflect.DeepEqual(tr.R, ta.R[:L]) {
				t.Fatalf("episode %d: %v %v %v, absorbing model's %v %v %v", k, tr.S, tr.A, tr.R, ta.S, ta.A, ta.R)
			}
			ret := m.TerminalValue(L)
			for _, r := range tr.R {
				ret += r
			}
			sum += ret
			sum2 += ret * ret
		}
		if early < n/10 {
			t.Fatalf("%v: only %d of %d episodes ended early", kind, early, n)
		}
		mean := sum / n
		se := math.Sqrt((sum2/n - mean*mean) / n)
		if math.Abs(mean-want) > 5*se {
			t.Errorf("%v: mean return %.5f ± %.5f, V^π = %.5f", kind, mean, se, want)
		}
		// A trajectory reused after a short episode is resliced to its full capacity.
		m.Rollout(p, rand.New(rand.NewPCG(1, 1)), tr)
		if cap(tr.S) < m.H+1 || cap(tr.A) < m.H {
			t.Fatalf("capacity lost: %d %d", cap(tr.S), cap(tr.A))
		}
	}
}

// terminatingGarnet returns a Garnet model (dense P) with the last two states terminal.
func terminatingGarnet(t testing.TB, S, A, H int, homog bool, seed uint64) *MDP {
	t.Helper()
	g, err := Garnet(GarnetConfig{S: S, A: A, H: H, Branching: 3, Homogeneous: homog, RewardDensity: 0.6, Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	g.Terminal = make([]bool, S)
	g.Terminal[S-1], g.Terminal[S-2] = true, true
	g.TerminalReward = 0.3
	if err := g.Validate(); err != nil {
		t.Fatal(err)
	}
	return g
}

// asSparse returns m's file in the sparse form (m without its dense table) parsed back.
func asSparse(t testing.TB, m *MDP, format string) *MDP {
	t.Helper()
	c := *m
	c.P = nil
	back := roundTrip(t, &c, format)
	if back.P != nil {
		t.Fatal("a model read from a sparse file holds a dense table")
	}
	return back
}

// TestSparseDenseIdentical: a model given densely and sparsely (files in both formats, per-step
// and homogeneous, with terminal states) has bit-identical V*, Q*, V^π (deterministic and
// stochastic), regret and rollouts.
func TestSparseDenseIdentical(t *testing.T) {
	for _, homog := range []bool{true, false} {
		g := terminatingGarnet(t, 9, 3, 6, homog, 4)
		for _, format := range []string{"json", "yaml"} {
			dense := roundTrip(t, g, format)
			if dense.P == nil {
				t.Fatal("dense file read without its dense table")
			}
			sparse := asSparse(t, g, format)
			if sparse.Homogeneous() != homog || (homog && sparse.Sparse[0] != sparse.Sparse[g.H-1]) {
				t.Fatalf("homogeneous %v: sparse model homogeneous %v, tables shared %v", homog, sparse.Homogeneous(), sparse.Sparse[0] == sparse.Sparse[g.H-1])
			}
			det := NewDeterministic(g.S, g.H)
			sto := &Policy{Prob: make([][]float64, g.H)}
			for h := 0; h < g.H; h++ {
				sto.Prob[h] = make([]float64, g.S*g.A)
				for s := 0; s < g.S; s++ {
					det.Act[h][s] = (s + h) % g.A
					for a := 0; a < g.A; a++ {
						sto.Prob[h][s*g.A+a] = float64(a+1) / 6
					}
				}
			}
			if !reflect.DeepEqual(dense.Optimal(), sparse.Optimal()) || !reflect.DeepEqual(dense.Evaluate(det), sparse.Evaluate(det)) ||
				!reflect.DeepEqual(dense.Evaluate(sto), sparse.Evaluate(sto)) || NewRegret(dense).Of(det) != NewRegret(sparse).Of(det) {
				t.Errorf("homogeneous %v, %s: dense and sparse values differ", homog, format)
			}
			if !reflect.DeepEqual(g.Optimal(), dense.Optimal()) {
				t.Errorf("homogeneous %v, %s: the file's values differ from the model's", homog, format)
			}
			ta, tb := NewTrajectory(g.H), NewTrajectory(g.H)
			for k := 0; k < 2000; k++ {
				dense.Rollout(det, rand.New(rand.NewPCG(3, uint64(k))), ta)
				sparse.Rollout(det, rand.New(rand.NewPCG(3, uint64(k))), tb)
				if !reflect.DeepEqual(ta, tb) {
					t.Fatalf("homogeneous %v, %s, episode %d: dense %v, sparse %v", homog, format, k, ta, tb)
				}
			}
		}
	}
}

// TestValidateSparseRows: Validate refuses a hand-built compressed table whose row is not a
// probability vector, names the row, and accepts an empty row only for a terminal state.
func TestValidateSparseRows(t *testing.T) {
	build := func(next []int32, prob []float64, off []int32, terminal []bool) *MDP {
		tab := &SparseTable{Off: off, Next: next, Prob: prob}
		return &MDP{S: 2, A: 1, H: 2, Init: []float64{1, 0}, R: [][]float64{{0, 0}, {0, 0}},
			Sparse: []*SparseTable{tab, tab}, Terminal: terminal}
	}
	for _, c := range []struct {
		name string
		m    *MDP
		want string
	}{
		{"sum below 1", build([]int32{0, 1, 1}, []float64{0.5, 0.4, 1}, []int32{0, 2, 3}, nil), "P[0][0][0]: probabilities sum to 0.9"},
		{"sum above 1", build([]int32{0, 1, 0}, []float64{0.5, 0.6, 1}, []int32{0, 2, 3}, nil), "P[0][0][0]: probabilities sum to 1.1"},
		{"empty row, not terminal", build([]int32{0}, []float64{1}, []int32{0, 1, 1}, nil), "P[0][1][0]: probabilities sum to 0"},
		{"zero probability", build([]int32{0, 1, 1}, []float64{1, 0, 1}, []int32{0, 2, 3}, nil), "P[0][0][0]: probability of next state 1 is 0"},
		{"next state out of range", build([]int32{2, 1}, []float64{1, 1}, []int32{0, 1, 2}, nil), "P[0][0][0]: next state 2 out of range"},
		{"not increasing", build([]int32{1, 0, 1}, []float64{0.5, 0.5, 1}, []int32{0, 2, 3}, nil), "not increasing"},
	} {
		if err := c.m.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
	}
	if err := build([]int32{0}, []float64{1}, []int32{0, 1, 1}, []bool{false, true}).Validate(); err != nil {
		t.Errorf("empty row of a terminal state refused: %v", err)
	}
}
