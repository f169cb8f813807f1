// Package tabular models finite-horizon episodic tabular MDPs: exact planning (backward
// induction for V*, Q*), exact policy evaluation, exact regret, and trajectory sampling.
//
// Conventions: states 0..S−1, actions 0..A−1, steps 0..H−1 (step index h in code is the paper's
// step h+1). Transitions and rewards may depend on the step. This package knows nothing of
// privacy.
package tabular

import (
	"fmt"
	"math"
	"slices"
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
}

// Homogeneous reports whether every step has the same transition and reward tables (a
// time-homogeneous MDP).
func (m *MDP) Homogeneous() bool {
	for h := 1; h < m.H; h++ {
		if !slices.Equal(m.P[h], m.P[0]) || !slices.Equal(m.R[h], m.R[0]) {
			return false
		}
	}
	return true
}

// Validate checks shapes, that every P_h(·|s,a) and Init are probability vectors (entries ≥ 0,
// sum 1 within ProbTol) and rewards lie in [0,1]. Errors name the field and index.
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
	if len(m.P) != m.H {
		return fmt.Errorf("P: has %d steps, want H = %d", len(m.P), m.H)
	}
	if len(m.R) != m.H {
		return fmt.Errorf("R: has %d steps, want H = %d", len(m.R), m.H)
	}
	for h := 0; h < m.H; h++ {
		if len(m.P[h]) != m.S*m.A*m.S {
			return fmt.Errorf("P[%d]: has %d entries, want S*A*S = %d", h, len(m.P[h]), m.S*m.A*m.S)
		}
		if len(m.R[h]) != m.S*m.A {
			return fmt.Errorf("R[%d]: has %d entries, want S*A = %d", h, len(m.R[h]), m.S*m.A)
		}
		for s := 0; s < m.S; s++ {
			for a := 0; a < m.A; a++ {
				if err := checkDist(m.P[h][(s*m.A+a)*m.S : (s*m.A+a+1)*m.S]); err != nil {
					return fmt.Errorf("P[%d][%d][%d]: %v", h, s, a, err)
				}
				r := m.R[h][s*m.A+a]
				if !(r >= 0 && r <= 1) {
					return fmt.Errorf("R[%d][%d][%d]: reward %g outside [0,1]", h, s, a, r)
				}
			}
		}
	}
	if len(m.Init) != m.S {
		return fmt.Errorf("init: has %d entries, want S = %d", len(m.Init), m.S)
	}
	if err := checkDist(m.Init); err != nil {
		return fmt.Errorf("init: %v", err)
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

// Trans returns P_h(·|s,a) (a view into m.P; do not modify).
func (m *MDP) Trans(h, s, a int) []float64 {
	o := (s*m.A + a) * m.S
	return m.P[h][o : o+m.S]
}

// Reward returns the mean reward r_h(s,a).
func (m *MDP) Reward(h, s, a int) float64 { return m.R[h][s*m.A+a] }

// NewHomogeneous builds a time-homogeneous MDP repeating the transition table p
// ([(s*A+a)*S+s']) and mean rewards r ([s*A+a]) at every step, and validates it.
func NewHomogeneous(name string, S, A, H int, p, r, init []float64, kind RewardKind) (*MDP, error) {
	if err := CheckSize("", S, A, H); err != nil {
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
