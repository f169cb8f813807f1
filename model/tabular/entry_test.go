package tabular

import (
	"math"
	"math/rand/v2"
	"testing"
)

// entryModel is a small terminating model whose goal pays on entry (FrozenLake-like): from
// state 0 action 1 reaches the goal 2 with probability 0.5, the hole 3 with 0.25.
func entryModel(t *testing.T) *MDP {
	t.Helper()
	S, A, H := 4, 2, 4
	p := make([]float64, S*A*S)
	set := func(s, a int, row ...float64) { copy(p[(s*A+a)*S:], row) }
	set(0, 0, 0.5, 0.5, 0, 0)
	set(0, 1, 0.25, 0, 0.5, 0.25)
	set(1, 0, 0, 0.2, 0.8, 0)
	set(1, 1, 1, 0, 0, 0)
	for _, s := range []int{2, 3} {
		set(s, 0, 0, 0, 1, 0)
		set(s, 1, 0, 0, 1, 0)
	}
	r := make([]float64, S*A)
	r[1*A+1] = 0.1
	m, err := NewHomogeneous("entry", S, A, H, p, r, []float64{1, 0, 0, 0}, Deterministic)
	if err != nil {
		t.Fatal(err)
	}
	m.Terminal = []bool{false, false, true, true}
	m.EntryReward = []float64{0, 0, 0.9, 0}
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestEntryRewardEqualsFolded: a model with entry rewards has the values of the model with
// those rewards folded into R (Absorbing), and its rollouts realise them on entry.
func TestEntryRewardEqualsFolded(t *testing.T) {
	m := entryModel(t)
	if got, want := m.Reward(0, 0, 1), 0.5*0.9; math.Abs(got-want) > 1e-15 {
		t.Fatalf("Reward(0,0,1) = %g, want %g", got, want)
	}
	if got, want := m.Reward(0, 1, 1), 0.1; got != want {
		t.Fatalf("Reward(0,1,1) = %g, want %g", got, want)
	}
	abs, err := m.Absorbing()
	if err != nil {
		t.Fatal(err)
	}
	if abs.EntryReward != nil || abs.Terminal != nil {
		t.Fatal("Absorbing kept entry rewards or terminal states")
	}
	if a, b := m.Start(m.Optimal()), abs.Start(abs.Optimal()); math.Abs(a-b) > 1e-12 {
		t.Fatalf("V* = %g, folded %g", a, b)
	}
	pol := NewDeterministic(m.S, m.H)
	for h := range pol.Act {
		pol.Act[h][0] = 1
	}
	want := m.Start(m.Evaluate(pol))
	u := rand.New(rand.NewPCG(1, 2))
	tr := NewTrajectory(m.H)
	sum, n := 0.0, 200000
	for i := 0; i < n; i++ {
		m.Rollout(pol, u, tr)
		for h, r := range tr.R {
			if tr.S[h+1] == 2 && r != 0.9+m.R[0][tr.S[h]*m.A+tr.A[h]] {
				t.Fatalf("entering the goal realised %g", r)
			}
			sum += r
		}
	}
	if got := sum / float64(n); math.Abs(got-want) > 5*0.9/math.Sqrt(float64(n)) {
		t.Fatalf("mean return %g, V^π %g", got, want)
	}
}

// TestEntryRewardRefused: entry rewards need deterministic rewards and must keep every
// realised reward in [0, 1].
func TestEntryRewardRefused(t *testing.T) {
	m := entryModel(t)
	m.R[0][1*m.A+0] = 0.2 // (1,0) enters the goal (0.9) with probability 0.8: 1.1 > 1
	if err := m.Validate(); err == nil {
		t.Fatal("accepted R + entry reward > 1")
	}
	m = entryModel(t)
	m.Rewards = Bernoulli
	if err := m.Validate(); err == nil {
		t.Fatal("accepted entry rewards with Bernoulli rewards")
	}
	m = entryModel(t)
	m.EntryReward = []float64{0, 0, 1.5, 0}
	if err := m.Validate(); err == nil {
		t.Fatal("accepted an entry reward above 1")
	}
}
