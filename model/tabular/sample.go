package tabular

import "math/rand/v2"

// Trajectory is one episode of L ≤ H steps: states S[0..L] (S[L] is the final next state),
// actions A[0..L−1] and realised rewards R[0..L−1]. L < H only when S[L] is a terminal state
// (the episode ended on entering it); no earlier state is terminal.
type Trajectory struct {
	S []int
	A []int
	R []float64
}

// NewTrajectory allocates a trajectory for horizon H.
func NewTrajectory(H int) *Trajectory {
	return &Trajectory{S: make([]int, H+1), A: make([]int, H), R: make([]float64, H)}
}

// Len returns the number of steps played, L = len(t.A).
func (t *Trajectory) Len() int { return len(t.A) }

// Clone returns a deep copy of t.
func (t *Trajectory) Clone() *Trajectory {
	return &Trajectory{S: append([]int(nil), t.S...), A: append([]int(nil), t.A...), R: append([]float64(nil), t.R...)}
}

// Rollout runs the deterministic policy p for one episode, with all of the user's responses
// (initial state, rewards, next states) drawn from the user's own stream u, and writes it to t.
// Exactly 1 + 2L uniforms are drawn in a fixed order (L = H unless the episode ends in a
// terminal state), so the response at step h is a deterministic function of (user stream, h, s,
// a): a user is a response tree. t's slices are resliced to the L steps played (their capacity,
// at least H+1 and H, is kept for the next call).
func (m *MDP) Rollout(p *Policy, u *rand.Rand, t *Trajectory) {
	t.S, t.A, t.R = t.S[:m.H+1], t.A[:m.H], t.R[:m.H]
	s := sampleIndex(m.Init, u.Float64())
	for h := 0; h < m.H; h++ {
		a := p.Act[h][s]
		t.S[h], t.A[h] = s, a
		ur, us := u.Float64(), u.Float64()
		r := m.Reward(h, s, a)
		if m.Rewards == Bernoulli {
			if ur < r {
				r = 1
			} else {
				r = 0
			}
		}
		s = m.sampleNext(h, s, a, us)
		if m.EntryReward != nil {
			r = m.R[h][t.S[h]*m.A+a] + m.EntryReward[s]
		}
		t.R[h] = r
		if m.IsTerminal(s) {
			t.S[h+1] = s
			t.S, t.A, t.R = t.S[:h+2], t.A[:h+1], t.R[:h+1]
			return
		}
	}
	t.S[m.H] = s
}

// sampleNext returns the next state of (h, s, a) for the uniform x ∈ [0,1): the one whose
// cumulative probability first exceeds x, as sampleIndex does on the dense row (the sparse
// row holds exactly the dense row's positive entries in the same order, so both agree).
func (m *MDP) sampleNext(h, s, a int, x float64) int {
	if m.Sparse == nil {
		return sampleIndex(m.Trans(h, s, a), x)
	}
	next, prob := m.Row(h, s, a)
	c := 0.0
	for j, p := range prob {
		c += p
		if x < c {
			return int(next[j])
		}
	}
	if len(next) == 0 {
		return s
	}
	return int(next[len(next)-1])
}

// sampleIndex returns the index i with cumulative probability just exceeding x ∈ [0,1),
// skipping zero-probability entries even under rounding.
func sampleIndex(p []float64, x float64) int {
	c := 0.0
	last := 0
	for i, pi := range p {
		if pi <= 0 {
			continue
		}
		last = i
		c += pi
		if x < c {
			return i
		}
	}
	return last
}
