package tabular

import (
	"fmt"
	"math"
	"slices"

	model "github.com/dprl/dprl/model/tabular"
)

// Public rewards (model.MDP.PublicRewards): a simulator that publishes its reward table makes
// the reward function public structure, like the terminal states (terminal.go). A practical
// agent given it (PracticalPrivacy.PublicRewards, PracticalConfig.Rewards and EntryReward,
// which the runners copy from the model):
//
//   - releases no reward statistics: a user's contribution is her transition counts only
//     (dimension G·S·A·S), so Δ₂² = 2·min(M₂, B) instead of 2(1+w²)·min(M₂, B)
//     (PracticalSensitivity), and her reported rewards are never read;
//   - plans with the exact rewards: Q_h(s,a) = R_h(s,a) + Σ_{s'} P̃(s'|s,a)·(E(s') +
//     V_{h+1}(s')) + bonus, E the entry rewards (0 without), P̃ the planner's estimate of the
//     transitions; terminal states keep their exact value (terminal.go);
//   - states it in its privacy report (PublicRewardsStructure), since what is private is then
//     the transitions only.
//
// The noise-off twins (practical-ucbvi, practical-psrl) do the same, so the privacy cost is
// measured against a twin with the same public knowledge. Without public rewards nothing
// changes.

// rewardTable is a practical agent's copy of the environment's public reward function.
type rewardTable struct {
	// r[h][s*A+a] = R_h(s,a), the mean reward of the step without the entry reward (steps
	// that share an array in the model share the copy).
	r [][]float64
	// entry[s'] is the reward earned on entering s' (nil: none).
	entry []float64
}

// newRewardTable checks the public reward function of an (S, A, H) model given to an agent
// (r: H steps of S·A mean rewards in [0, 1]; entry nil or S rewards in [0, 1]) and copies it;
// it returns nil when the rewards are not public (then r and entry must be nil). prefix names
// the configuration (e.g. "agent").
func newRewardTable(prefix string, S, A, H int, public bool, r [][]float64, entry []float64) (*rewardTable, error) {
	if !public {
		if r != nil || entry != nil {
			return nil, fmt.Errorf("%s.rewards: a public reward table is given but privacy.public_rewards is false", prefix)
		}
		return nil, nil
	}
	if len(r) != H {
		return nil, fmt.Errorf("%s.rewards: public rewards need the reward table: %d steps, want H = %d", prefix, len(r), H)
	}
	in01 := func(x float64) bool { return x >= 0 && x <= 1 && !math.IsNaN(x) }
	t := &rewardTable{r: make([][]float64, H)}
	for h, row := range r {
		if h > 0 && len(row) > 0 && len(r[h-1]) == len(row) && &row[0] == &r[h-1][0] {
			t.r[h] = t.r[h-1]
			continue
		}
		if len(row) != S*A {
			return nil, fmt.Errorf("%s.rewards[%d]: has %d entries, want S*A = %d", prefix, h, len(row), S*A)
		}
		for i, x := range row {
			if !in01(x) {
				return nil, fmt.Errorf("%s.rewards[%d][%d][%d]: reward %g outside [0,1]", prefix, h, i/A, i%A, x)
			}
		}
		t.r[h] = slices.Clone(row)
	}
	if entry != nil {
		if len(entry) != S {
			return nil, fmt.Errorf("%s.entry_reward: has %d entries, want S = %d", prefix, len(entry), S)
		}
		for s, x := range entry {
			if !in01(x) {
				return nil, fmt.Errorf("%s.entry_reward[%d]: reward %g outside [0,1]", prefix, s, x)
			}
		}
		t.entry = slices.Clone(entry)
	}
	return t, nil
}

// sameAs checks that the environment m has exactly this public reward function: it declares
// its rewards public, and its mean rewards per step (without entry rewards) and entry rewards
// are the table's. A nil table (rewards not public to the agent) accepts every m.
func (t *rewardTable) sameAs(m *model.MDP) error {
	if t == nil {
		return nil
	}
	if !m.PublicRewards {
		return fmt.Errorf("agent.rewards: the agent uses a public reward table but the environment does not declare its rewards public")
	}
	if !slices.Equal(t.entry, m.EntryReward) {
		return fmt.Errorf("agent.entry_reward: the environment's entry rewards differ from the agent's public table")
	}
	for h := range t.r {
		if !slices.Equal(t.r[h], m.R[h]) {
			return fmt.Errorf("agent.rewards[%d]: the environment's rewards differ from the agent's public table", h)
		}
	}
	return nil
}
