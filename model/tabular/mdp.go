// Package tabular models finite-horizon episodic tabular MDPs: exact planning (backward
// induction for V*, Q*), exact policy evaluation, exact regret, and trajectory sampling.
//
// Conventions: states 0..S−1, actions 0..A−1, steps 0..H−1 (step index h in code is the paper's
// step h+1). Transitions and rewards may depend on the step. Transitions are held as compressed
// sparse rows (SparseTable), so planning, evaluation and sampling cost the number of non-zero
// transitions, not S²; a model may also keep its dense table P. Terminal states end an episode
// (MDP.Terminal). This package knows nothing of privacy.
package tabular

import (
	"fmt"
	"math"
	"slices"

	"github.com/dprl/dprl/internal/smallmat"
)

// RewardKind says how a realised reward is drawn from its mean.
type RewardKind int

const (
	// Deterministic rewards: the realised reward equals the mean.
	Deterministic RewardKind = iota
	// Bernoulli rewards: the realised reward is 1 with probability equal to the mean, else 0.
	Bernoulli
)

// String returns "deterministic" or "bernoulli".
func (k RewardKind) String() string {
	switch k {
	case Deterministic:
		return "deterministic"
	case Bernoulli:
		return "bernoulli"
	}
	return fmt.Sprintf("RewardKind(%d)", int(k))
}

// ProbTol is the tolerance on probability vectors summing to 1.
const ProbTol = 1e-9

// MDP is a finite-horizon episodic MDP M = (S, A, H, {P_h}, {r_h}, d_1).
type MDP struct {
	// Name identifies the environment in outputs.
	Name string
	// S, A, H are the numbers of states and actions and the horizon.
	S, A, H int
	// P[h][(s*A+a)*S+s'] = P_h(s'|s,a).
	P [][]float64
	// R[h][s*A+a] = mean reward r_h(s,a) ∈ [0,1].
	R [][]float64
	// Rewards says how realised rewards are drawn.
	Rewards RewardKind
	// Init is the initial-state distribution d_1.
	Init []float64
	// Terminal, when non-nil (length S), marks the terminal states: entering one ends the
	// episode. They are public structure: an agent never needs to learn what happens after.
	// A terminal state s_h has the same value V_h(s) = TerminalValue(h) under every policy.
	Terminal []bool
	// TerminalReward ∈ [0, 1] is the mean reward credited per remaining step after the episode
	// ended (0 unless the rewards were mapped affinely from a table whose "nothing happens"
	// reward is not 0; see RewardMap): a terminating model is then valued exactly as the
	// model in which terminal states are absorbing with this reward (Absorbing).
	TerminalReward float64
	// EntryReward, when non-nil (length S), is a reward credited on entering a state at any
	// step (FrozenLake's goal pays on entry): the mean reward of (h, s, a) is then
	// R[h][s*A+a] + Σ_{s'} P_h(s'|s,a)·EntryReward[s'], which Reward returns, and the realised
	// reward of a step is R + EntryReward[s_{h+1}]. It requires deterministic rewards and
	// R[h][s*A+a] + EntryReward[s'] ≤ 1 on every transition.
	EntryReward []float64
	// PublicRewards says that the reward function (R, EntryReward, the terminal rewards) is
	// public structure, as a simulator's published reward table is: an agent may read it and
	// then spends no privacy budget on rewards. It changes nothing in the model's values.
	PublicRewards bool
	// PublicSupport says that the support of the transitions (for every h, s, a the next
	// states s' with P_h(s'|s,a) > 0: the non-zero pattern of Sparse, not its probabilities)
	// is public structure, as a simulator's published transition table is: an agent may read
	// it. It changes nothing in the model's values.
	PublicSupport bool
	// mean caches the total mean rewards per step when EntryReward is set (built by Validate).
	mean [][]float64
	// Sparse holds the transitions as compressed rows, one table per step (the same pointer at
	// every step of a homogeneous model). Validate builds it from P when it is nil; a model read
	// from a sparse file has Sparse only (P nil). Rows of terminal states may be empty.
	Sparse []*SparseTable
}

// SparseTable holds one step's transitions P(·|s,a) as compressed sparse rows: row i = s·A+a
// has the next states Next[Off[i]:Off[i+1]] (increasing) with probabilities Prob[…] (> 0).
type SparseTable struct {
	Off  []int32
	Next []int32
	Prob []float64
}

// Entries returns the number of stored transitions.
func (t *SparseTable) Entries() int { return len(t.Next) }

// sparseFrom compresses a dense table p[(s*A+a)*S+s'], keeping the entries > 0 in order.
func sparseFrom(p []float64, S, A int) *SparseTable {
	n := 0
	for _, x := range p {
		if x > 0 {
			n++
		}
	}
	t := &SparseTable{Off: make([]int32, S*A+1), Next: make([]int32, 0, n), Prob: make([]float64, 0, n)}
	for i := 0; i < S*A; i++ {
		for s2, x := range p[i*S : (i+1)*S] {
			if x > 0 {
				t.Next = append(t.Next, int32(s2))
				t.Prob = append(t.Prob, x)
			}
		}
		t.Off[i+1] = int32(len(t.Next))
	}
	return t
}

// Dense reports whether the model holds its dense table P (Trans may be used).
func (m *MDP) Dense() bool { return m.P != nil }

// IsTerminal reports whether s is a terminal state.
func (m *MDP) IsTerminal(s int) bool { return m.Terminal != nil && m.Terminal[s] }

// TerminalValue returns the value V_h(s) of every terminal state s at step h:
// TerminalReward·(H−h).
func (m *MDP) TerminalValue(h int) float64 { return m.TerminalReward * float64(m.H-h) }

// Row returns the non-zero part of P_h(·|s,a): next states (increasing) and their
// probabilities (views into the model; do not modify). Validate must have run.
func (m *MDP) Row(h, s, a int) ([]int32, []float64) {
	t := m.Sparse[h]
	i := s*m.A + a
	lo, hi := t.Off[i], t.Off[i+1]
	return t.Next[lo:hi], t.Prob[lo:hi]
}

// Expect returns Σ_{s'} P_h(s'|s,a)·v[s']. The sum runs over the non-zero entries in
// increasing s', which gives exactly the floating-point result of the dense dot product.
func (m *MDP) Expect(h, s, a int, v []float64) float64 {
	if m.Sparse == nil {
		return smallmat.Dot(m.Trans(h, s, a), v)
	}
	next, prob := m.Row(h, s, a)
	x := 0.0
	for j, s2 := range next {
		x += prob[j] * v[s2]
	}
	return x
}

// Entries returns the number of stored transitions over the distinct tables of the model.
func (m *MDP) Entries() int {
	n := 0
	for h, t := range m.Sparse {
		if h == 0 || t != m.Sparse[h-1] {
			n += t.Entries()
		}
	}
	return n
}

// Absorbing returns the equivalent model without terminal states or entry rewards: every
// terminal state is absorbing (P(s|s,a) = 1) with mean reward TerminalReward for every action,
// and entry rewards are folded into the mean rewards R, so V*, V^π and regret are those of m.
// It returns m itself when m has neither.
func (m *MDP) Absorbing() (*MDP, error) {
	if m.Terminal == nil && m.EntryReward == nil {
		return m, nil
	}
	c := &MDP{Name: m.Name, S: m.S, A: m.A, H: m.H, Rewards: m.Rewards, Init: m.Init, PublicRewards: m.PublicRewards,
		PublicSupport: m.PublicSupport,
		R:             make([][]float64, m.H), Sparse: make([]*SparseTable, m.H)}
	rewards := m.R
	if m.mean != nil {
		rewards = m.mean // entry rewards folded into the mean: no self-loop may re-earn them
	}
	for h := 0; h < m.H; h++ {
		if h > 0 && m.Sparse[h] == m.Sparse[h-1] && sameArray(rewards[h], rewards[h-1]) {
			c.Sparse[h], c.R[h] = c.Sparse[h-1], c.R[h-1]
			continue
		}
		t := &SparseTable{Off: make([]int32, m.S*m.A+1)}
		r := slices.Clone(rewards[h])
		for s := 0; s < m.S; s++ {
			for a := 0; a < m.A; a++ {
				i := s*m.A + a
				if m.IsTerminal(s) {
					t.Next, t.Prob = append(t.Next, int32(s)), append(t.Prob, 1)
					r[i] = m.TerminalReward
				} else {
					next, prob := m.Row(h, s, a)
					t.Next, t.Prob = append(t.Next, next...), append(t.Prob, prob...)
				}
				t.Off[i+1] = int32(len(t.Next))
			}
		}
		c.Sparse[h], c.R[h] = t, r
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return c, nil
}

// Homogeneous reports whether every step has the same transition and reward tables (a
// time-homogeneous MDP).
func (m *MDP) Homogeneous() bool {
	for h := 1; h < m.H; h++ {
		if !slices.Equal(m.R[h], m.R[0]) {
			return false
		}
		if m.P != nil {
			if !slices.Equal(m.P[h], m.P[0]) {
				return false
			}
			continue
		}
		a, b := m.Sparse[h], m.Sparse[0]
		if a != b && (!slices.Equal(a.Off, b.Off) || !slices.Equal(a.Next, b.Next) || !slices.Equal(a.Prob, b.Prob)) {
			return false
		}
	}
	return true
}

// Validate checks shapes, that every P_h(·|s,a) and Init are probability vectors (entries ≥ 0,
// sum 1 within ProbTol), rewards lie in [0,1] and the terminal states are well formed (Init puts
// no mass on them, TerminalReward ∈ [0, 1], and 0 without terminal states). Errors name the field
// and index. When Sparse is nil it builds it from P (sharing one table between steps that share
// P's backing array); every constructor and loader calls Validate before returning a model.
func (m *MDP) Validate() error {
	if m.S < 1 {
		return fmt.Errorf("S: must be >= 1, got %d", m.S)
	}
	if m.A < 1 {
		return fmt.Errorf("A: must be >= 1, got %d", m.A)
	}
	if m.H < 1 {
		return fmt.Errorf("H: must be >= 1, got %d", m.H)
	}
	if m.Rewards != Deterministic && m.Rewards != Bernoulli {
		return fmt.Errorf("rewards: unknown reward kind %d", int(m.Rewards))
	}
	if m.P == nil && m.Sparse == nil {
		return fmt.Errorf("P: missing (neither a dense nor a sparse transition table)")
	}
	if m.Terminal != nil && len(m.Terminal) != m.S {
		return fmt.Errorf("terminal: has %d entries, want S = %d", len(m.Terminal), m.S)
	}
	if m.P != nil && len(m.P) != m.H {
		return fmt.Errorf("P: has %d steps, want H = %d", len(m.P), m.H)
	}
	if m.Sparse != nil && len(m.Sparse) != m.H {
		return fmt.Errorf("P: has %d sparse steps, want H = %d", len(m.Sparse), m.H)
	}
	if len(m.R) != m.H {
		return fmt.Errorf("R: has %d steps, want H = %d", len(m.R), m.H)
	}
	for h := 0; h < m.H; h++ {
		if m.P != nil {
			if len(m.P[h]) != m.S*m.A*m.S {
				return fmt.Errorf("P[%d]: has %d entries, want S*A*S = %d", h, len(m.P[h]), m.S*m.A*m.S)
			}
			if h == 0 || !sameArray(m.P[h], m.P[h-1]) {
				for s := 0; s < m.S; s++ {
					for a := 0; a < m.A; a++ {
						if err := checkDist(m.P[h][(s*m.A+a)*m.S : (s*m.A+a+1)*m.S]); err != nil {
							return fmt.Errorf("P[%d][%d][%d]: %v", h, s, a, err)
						}
					}
				}
			}
		}
		if len(m.R[h]) != m.S*m.A {
			return fmt.Errorf("R[%d]: has %d entries, want S*A = %d", h, len(m.R[h]), m.S*m.A)
		}
		if h == 0 || !sameArray(m.R[h], m.R[h-1]) {
			for i, r := range m.R[h] {
				if !(r >= 0 && r <= 1) {
					return fmt.Errorf("R[%d][%d][%d]: reward %g outside [0,1]", h, i/m.A, i%m.A, r)
				}
			}
		}
	}
	if m.Sparse == nil {
		m.Sparse = make([]*SparseTable, m.H)
		for h := range m.Sparse {
			if h > 0 && sameArray(m.P[h], m.P[h-1]) {
				m.Sparse[h] = m.Sparse[h-1]
				continue
			}
			m.Sparse[h] = sparseFrom(m.P[h], m.S, m.A)
		}
	} else {
		for h, t := range m.Sparse {
			if t == nil {
				return fmt.Errorf("P[%d]: missing sparse table", h)
			}
			if h > 0 && t == m.Sparse[h-1] {
				continue
			}
			if err := m.checkSparse(t); err != nil {
				return fmt.Errorf("P[%d]%v", h, err)
			}
		}
	}
	if len(m.Init) != m.S {
		return fmt.Errorf("init: has %d entries, want S = %d", len(m.Init), m.S)
	}
	if err := checkDist(m.Init); err != nil {
		return fmt.Errorf("init: %v", err)
	}
	if err := m.checkEntry(); err != nil {
		return err
	}
	if !(m.TerminalReward >= 0 && m.TerminalReward <= 1) {
		return fmt.Errorf("terminal_reward: %g outside [0,1]", m.TerminalReward)
	}
	if m.Terminal == nil {
		if m.TerminalReward != 0 {
			return fmt.Errorf("terminal_reward: %g given without terminal states", m.TerminalReward)
		}
		return nil
	}
	for s, t := range m.Terminal {
		if t && m.Init[s] > 0 {
			return fmt.Errorf("init: state %d is terminal but has initial probability %g", s, m.Init[s])
		}
	}
	return nil
}

// sameArray reports whether a and b are the same slice (same backing array, start and length).
func sameArray(a, b []float64) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// checkSparse checks one compressed table: row offsets, next states in range and increasing,
// probabilities > 0 and finite, every row a probability vector (rows of terminal states may be
// empty). The error starts with the row's index ("[s][a]: …").
func (m *MDP) checkSparse(t *SparseTable) error {
	n := m.S * m.A
	if len(t.Off) != n+1 || t.Off[0] != 0 {
		return fmt.Errorf(": has %d row offsets, want S*A+1 = %d starting at 0", len(t.Off), n+1)
	}
	if len(t.Next) != len(t.Prob) || int(t.Off[n]) != len(t.Next) {
		return fmt.Errorf(": %d next states, %d probabilities and %d by the offsets", len(t.Next), len(t.Prob), t.Off[n])
	}
	for i := 0; i < n; i++ {
		s, a := i/m.A, i%m.A
		lo, hi := t.Off[i], t.Off[i+1]
		if hi < lo {
			return fmt.Errorf("[%d][%d]: row offsets decrease", s, a)
		}
		if lo == hi && m.IsTerminal(s) {
			continue
		}
		sum := 0.0
		for j := lo; j < hi; j++ {
			s2, p := t.Next[j], t.Prob[j]
			if s2 < 0 || int(s2) >= m.S || (j > lo && s2 <= t.Next[j-1]) {
				return fmt.Errorf("[%d][%d]: next state %d out of range [0, %d) or not increasing", s, a, s2, m.S)
			}
			if !(p > 0) || math.IsInf(p, 0) {
				return fmt.Errorf("[%d][%d]: probability of next state %d is %g, must be a finite number > 0", s, a, s2, p)
			}
			sum += p
		}
		if math.Abs(sum-1) > ProbTol {
			return fmt.Errorf("[%d][%d]: probabilities sum to %.12g, want 1 (tolerance %g)", s, a, sum, ProbTol)
		}
	}
	return nil
}

func checkDist(p []float64) error {
	sum := 0.0
	for i, v := range p {
		if !(v >= 0) || math.IsInf(v, 0) {
			return fmt.Errorf("probability of next state %d is %g, must be a finite number >= 0", i, v)
		}
		sum += v
	}
	if math.Abs(sum-1) > ProbTol {
		return fmt.Errorf("probabilities sum to %.12g, want 1 (tolerance %g)", sum, ProbTol)
	}
	return nil
}

// Trans returns P_h(·|s,a) (a view into m.P; do not modify). Only for dense models (Dense);
// Row and Expect work for every model.
func (m *MDP) Trans(h, s, a int) []float64 {
	o := (s*m.A + a) * m.S
	return m.P[h][o : o+m.S]
}

// Reward returns the mean reward r_h(s,a) (including the expected entry reward, EntryReward).
func (m *MDP) Reward(h, s, a int) float64 {
	if m.mean != nil {
		return m.mean[h][s*m.A+a]
	}
	return m.R[h][s*m.A+a]
}

// checkEntry validates EntryReward and builds the cache of total mean rewards.
func (m *MDP) checkEntry() error {
	m.mean = nil
	if m.EntryReward == nil {
		return nil
	}
	if len(m.EntryReward) != m.S {
		return fmt.Errorf("entry_reward: has %d entries, want S = %d", len(m.EntryReward), m.S)
	}
	if m.Rewards != Deterministic {
		return fmt.Errorf("entry_reward: needs deterministic rewards, got %s", m.Rewards)
	}
	for s, e := range m.EntryReward {
		if !(e >= 0 && e <= 1) {
			return fmt.Errorf("entry_reward[%d]: %g outside [0,1]", s, e)
		}
	}
	mean := make([][]float64, m.H)
	for h := range mean {
		if h > 0 && m.Sparse[h] == m.Sparse[h-1] && sameArray(m.R[h], m.R[h-1]) {
			mean[h] = mean[h-1]
			continue
		}
		mean[h] = make([]float64, m.S*m.A)
		for s := 0; s < m.S; s++ {
			if m.IsTerminal(s) {
				continue
			}
			for a := 0; a < m.A; a++ {
				r := m.R[h][s*m.A+a]
				next, prob := m.Row(h, s, a)
				x := 0.0
				for j, s2 := range next {
					e := m.EntryReward[s2]
					if r+e > 1+ProbTol {
						return fmt.Errorf("entry_reward[%d]: reward %g of R[%d][%d][%d] plus entry reward %g exceeds 1", s2, r, h, s, a, e)
					}
					x += prob[j] * e
				}
				mean[h][s*m.A+a] = min(r+x, 1)
			}
		}
	}
	m.mean = mean
	return nil
}

// NewHomogeneous builds a time-homogeneous MDP repeating the transition table p
// ([(s*A+a)*S+s']) and mean rewards r ([s*A+a]) at every step, and validates it.
func NewHomogeneous(name string, S, A, H int, p, r, init []float64, kind RewardKind) (*MDP, error) {
	if err := CheckSize("", S, A, 1); err != nil {
		return nil, err
	}
	if err := CheckSteps("", S, A, H); err != nil {
		return nil, err
	}
	m := &MDP{Name: name, S: S, A: A, H: H, Rewards: kind, Init: init}
	m.P = make([][]float64, H)
	m.R = make([][]float64, H)
	for h := range m.P {
		m.P[h] = p
		m.R[h] = r
	}
	if err := m.Validate(); err != nil {
		return nil, err
	}
	return m, nil
}

// CheckSteps checks the horizon H ∈ [1, 65536] and H·S·A ≤ MaxEntries (the per-step tables of
// values and rewards every planner allocates) without allocating; prefix is prepended to the
// field names. S and A must already lie in [1, 65536].
func CheckSteps(prefix string, S, A, H int) error {
	if H < 1 || H > maxDim {
		return fmt.Errorf("%shorizon: must be in [1, %d], got %d", prefix, maxDim, H)
	}
	if n := uint64(H) * uint64(S) * uint64(A); n > MaxEntries {
		return fmt.Errorf("%shorizon*states*actions = %d exceeds the limit 2^24 entries (%d·%d·%d)", prefix, n, H, S, A)
	}
	return nil
}
