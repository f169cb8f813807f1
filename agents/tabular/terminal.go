package tabular

import (
	"fmt"

	model "github.com/dprl/dprl/model/tabular"
)

// Terminal states are public structure (model.MDP.Terminal): entering one ends the episode,
// and a terminal state s_h has the value TerminalReward·(H−h) under every policy. Every
// tabular agent receives them from its configuration (Config.Terminal, TerminalReward;
// PracticalConfig likewise), which the runners fill from the environment's model. With them:
//
//   - a user's trajectory has L ≤ H steps: L < H exactly when it ends in a terminal state,
//     and no state before the last is terminal (checked where reports enter: the protocol's
//     Trajectory.Validate, validateTrajectory, contribution.add);
//   - she contributes exactly her L transitions (the counters, the LDP randomisers and the
//     practical contribution vector count steps h < L only): a transition out of a terminal
//     state does not exist, and the noise σ is that of an episode of H steps (fewer steps
//     never raise the sensitivity);
//   - the planners value a terminal state s_h at TerminalReward·(H−h) for every action, with
//     no bonus and no estimate there (its action is 0, no tie is drawn).
//
// Without terminal states every rule reduces to the earlier arithmetic exactly.

// terminal is an agent's copy of the environment's public terminal structure.
type terminal struct {
	// set marks the terminal states (nil: none).
	set []bool
	// reward is the mean reward per remaining step after the end.
	reward float64
}

// newTerminal checks the terminal structure of an (S, ·, ·) model given to an agent (set nil
// or of length S, reward in [0, 1] and 0 without terminal states) and copies it; prefix names
// the configuration (e.g. "agent.terminal").
func newTerminal(prefix string, S int, set []bool, reward float64) (terminal, error) {
	if !(reward >= 0 && reward <= 1) {
		return terminal{}, fmt.Errorf("%s_reward: must be in [0, 1], got %g", prefix, reward)
	}
	if set == nil {
		if reward != 0 {
			return terminal{}, fmt.Errorf("%s_reward: %g given without terminal states", prefix, reward)
		}
		return terminal{}, nil
	}
	if len(set) != S {
		return terminal{}, fmt.Errorf("%s: has %d entries, want S = %d", prefix, len(set), S)
	}
	return terminal{set: append([]bool(nil), set...), reward: reward}, nil
}

// is reports whether s is terminal.
func (t terminal) is(s int) bool { return t.set != nil && t.set[s] }

// value returns the value of a terminal state at step h of an H-step episode,
// TerminalReward·(H−h) (model.MDP.TerminalValue).
func (t terminal) value(H, h int) float64 { return t.reward * float64(H-h) }

// list returns the terminal states in increasing order (the reports' header,
// protocol.Dims.Terminal); nil when there are none.
func (t terminal) list() []int {
	var out []int
	for s, x := range t.set {
		if x {
			out = append(out, s)
		}
	}
	return out
}

// same reports whether the model m (validated, with m.S states) has exactly this terminal
// structure.
func (t terminal) same(m *model.MDP) bool {
	if m.TerminalReward != t.reward {
		return false
	}
	for s := 0; s < m.S; s++ {
		if t.is(s) != m.IsTerminal(s) {
			return false
		}
	}
	return true
}

// steps checks the length of a user's trajectory for horizon H and returns L, the number of
// steps played: exactly H without terminal states (the earlier error message), else L ∈ [1, H]
// with L+1 states and L rewards.
func (t terminal) steps(tr *model.Trajectory, H int) (int, error) {
	if t.set == nil {
		if tr == nil || len(tr.S) != H+1 || len(tr.A) != H || len(tr.R) != H {
			return 0, fmt.Errorf("trajectory: want %d states, %d actions and %d rewards", H+1, H, H)
		}
		return H, nil
	}
	if tr == nil {
		return 0, fmt.Errorf("trajectory: missing")
	}
	L := len(tr.A)
	if L < 1 || L > H || len(tr.S) != L+1 || len(tr.R) != L {
		return 0, fmt.Errorf("trajectory: got %d states, %d actions and %d rewards; want L+1 states, L actions and L rewards, L in [1, H = %d] the steps played", len(tr.S), len(tr.A), len(tr.R), H)
	}
	return L, nil
}

// ends checks where a trajectory of L steps (its states already in range) ends: no state
// before S[L] is terminal (the episode would have ended there), and L < H only if S[L] is
// terminal.
func (t terminal) ends(tr *model.Trajectory, L, H int) error {
	if t.set == nil {
		return nil
	}
	for h := 0; h < L; h++ {
		if t.set[tr.S[h]] {
			return fmt.Errorf("trajectory.S[%d]: state %d is terminal but the episode goes on", h, tr.S[h])
		}
	}
	if L < H && !t.set[tr.S[L]] {
		return fmt.Errorf("trajectory: %d steps end in non-terminal state %d (an episode shorter than H = %d must end in a terminal state)", L, tr.S[L], H)
	}
	return nil
}

// setTerminal is a planner's step at a terminal state s: every action's value q (len A) and
// the state's value v[0] are the exact value tv, and the action is 0 (all are equal; no tie
// is drawn, so the tie stream is consumed as without the state).
func setTerminal(q, v []float64, act []int, s int, tv float64) {
	for a := range q {
		q[a] = tv
	}
	v[0] = tv
	act[s] = 0
}
