package linmdp

import (
	"context"
	"math/rand/v2"

	"github.com/dprl/dprl/agents/protocol"
	model "github.com/dprl/dprl/model/linmdp"
)

// Trace is the outcome of one run.
type Trace struct {
	// Regret[k-1] is the exact pseudo-regret V*_1(s_1^k) − V^{π_k}_1(s_1^k) of episode k.
	Regret []float64
	// Updates lists the policy updates.
	Updates []Update
	// Info is the agent's Info at the end of the run.
	Info Info
	// Return is the realised return summed over episodes (for reference).
	Return float64
}

// Run plays K episodes of env with agent ag through the one episode loop (protocol.Run: the
// agent's curator publishes, the user plays from envR — one stream for every user, as the
// family's experiments draw them — and reports, the curator receives) and returns the exact
// per-episode regret (spec §6.6: each distinct policy is evaluated on the true model). It is
// the agents' tests' entry point; the experiment runner calls protocol.Run itself.
func Run(ctx context.Context, env *model.MDP, ag Agent, K int, envR *rand.Rand) (Trace, error) {
	sess, _, ev := NewSession(env, ag, ag.Info().Agent, K)
	tr := Trace{Regret: make([]float64, K)}
	err := protocol.Run(ctx, sess, protocol.Options{Episodes: K, Users: func(int) *rand.Rand { return envR },
		Each: func(k int, regret float64) { tr.Regret[k-1] = regret }})
	tr.Return = ev.Return
	if err != nil {
		return tr, err
	}
	tr.Updates = ag.Updates()
	tr.Info = ag.Info()
	return tr, nil
}
