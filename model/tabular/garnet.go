package tabular

import (
	"fmt"
	"math/rand/v2"
	"slices"
)

// GarnetConfig configures a seeded random Garnet-style MDP (Archibald, McKinnon & Thomas 1995;
// Bhatnagar et al. 2009).
type GarnetConfig struct {
	// S, A, H are the numbers of states and actions and the horizon.
	S, A, H int
	// Branching is the number of distinct next states of every (s,a), 1 ≤ Branching ≤ S.
	Branching int
	// Homogeneous uses one transition/reward table for every step; otherwise each step gets
	// its own.
	Homogeneous bool
	// RewardDensity is the fraction of (s,a) pairs with a Uniform(0,1) mean reward; the others
	// pay 0.
	RewardDensity float64
	// Rewards is how realised rewards are drawn from their means.
	Rewards RewardKind
	// Seed makes the MDP reproducible (PCG seeded with (Seed, 0x6761726e6574)).
	Seed uint64
}

// Garnet returns a random Garnet MDP: for each (h,s,a) (once if Homogeneous) it picks
// Branching distinct next states uniformly and splits probability 1 among them by a uniform
// random partition of [0,1] (sorted uniforms); a random RewardDensity fraction of pairs get a
// Uniform(0,1) mean reward. The start state is 0.
func Garnet(cfg GarnetConfig) (*MDP, error) {
	if err := CheckSize("garnet.", cfg.S, cfg.A, cfg.H); err != nil {
		return nil, err
	}
	switch {
	case cfg.Branching < 1 || cfg.Branching > cfg.S:
		return nil, fmt.Errorf("garnet.branching: must be in [1, S=%d], got %d", cfg.S, cfg.Branching)
	case !(cfg.RewardDensity >= 0 && cfg.RewardDensity <= 1):
		return nil, fmt.Errorf("garnet.reward_density: must be in [0,1], got %g", cfg.RewardDensity)
	case cfg.Rewards != Deterministic && cfg.Rewards != Bernoulli:
		return nil, fmt.Errorf("garnet.rewards: unknown reward kind %d", int(cfg.Rewards))
	}
	r := rand.New(rand.NewPCG(cfg.Seed, 0x6761726e6574))
	S, A := cfg.S, cfg.A
	table := func() ([]float64, []float64) {
		p := make([]float64, S*A*S)
		rw := make([]float64, S*A)
		cuts := make([]float64, cfg.Branching+1)
		for sa := 0; sa < S*A; sa++ {
			next := r.Perm(S)[:cfg.Branching]
			cuts[0], cuts[cfg.Branching] = 0, 1
			for i := 1; i < cfg.Branching; i++ {
				cuts[i] = r.Float64()
			}
			slices.Sort(cuts[1:cfg.Branching])
			for i, s2 := range next {
				p[sa*S+s2] = cuts[i+1] - cuts[i]
			}
			// Make the row sum exactly 1 in floating point.
			sum := 0.0
			for _, v := range p[sa*S : (sa+1)*S] {
				sum += v
			}
			p[sa*S+next[0]] += 1 - sum
			if r.Float64() < cfg.RewardDensity {
				rw[sa] = r.Float64()
			}
		}
		return p, rw
	}
	init := make([]float64, S)
	init[0] = 1
	m := &MDP{Name: fmt.Sprintf("garnet-S%d-A%d-b%d-seed%d", S, A, cfg.Branching, cfg.Seed), S: S, A: A, H: cfg.H,
		Rewards: cfg.Rewards, Init: init, P: make([][]float64, cfg.H), R: make([][]float64, cfg.H)}
	for h := 0; h < cfg.H; h++ {
		if cfg.Homogeneous && h > 0 {
			m.P[h], m.R[h] = m.P[0], m.R[0]
			continue
		}
		m.P[h], m.R[h] = table()
	}
	if err := m.Validate(); err != nil {
		return nil, fmt.Errorf("garnet: %w", err)
	}
	return m, nil
}
