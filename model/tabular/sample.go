package tabular

import "math/rand/v2"

// Trajectory is one episode: states S[0..H] (S[H] is the final next state), actions A[0..H−1]
// and realised rewards R[0..H−1].
type Trajectory struct {
	S []int
	A []int
	R []float64
}

// NewTrajectory allocates a trajectory for horizon H.
func NewTrajectory(H int) *Trajectory {
	return &Trajectory{S: make([]int, H+1), A: make([]int, H), R: make([]float64, H)}
}

// Clone returns a deep copy of t.
func (t *Trajectory) Clone() *Trajectory {
	return &Trajectory{S: append([]int(nil), t.S...), A: append([]int(nil), t.A...), R: append([]float64(nil), t.R...)}
}

// Rollout runs the deterministic policy p for one episode, with all of the user's responses
// (initial state, rewards, next states) drawn from the user's own stream u, and writes it to t.
// Exactly 1 + 2H uniforms are drawn in a fixed order, so the response at step h is a
// deterministic function of (user stream, h, s, a): a user is a response tree.
func (m *MDP) Rollout(p *Policy, u *rand.Rand, t *Trajectory) {
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
		t.R[h] = r
		s = sampleIndex(m.Trans(h, s, a), us)
	}
	t.S[m.H] = s
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
