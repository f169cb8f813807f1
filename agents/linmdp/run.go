package linmdp

import (
	"context"
	"math/rand/v2"

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

// Run plays K episodes of env with agent ag, drawing initial states and transitions from
// envR, and computes the exact per-episode regret by evaluating each distinct policy on the
// true model (spec §6.6). ctx is checked every 1024 episodes.
func Run(ctx context.Context, env *model.MDP, ag Agent, K int, envR *rand.Rand) (Trace, error) {
	vstar, _ := env.OptimalValues()
	tr := Trace{Regret: make([]float64, K)}
	version := -1
	var vpi [][]float64
	H := env.H
	last := make([][]int, H) // copy of the last evaluated policy
	for h := range last {
		last[h] = make([]int, env.N)
	}
	for k := 1; k <= K; k++ {
		if k&1023 == 0 {
			if err := ctx.Err(); err != nil {
				return tr, err
			}
		}
		ag.BeginEpisode(k)
		if v := ag.PolicyVersion(); v != version {
			pi := ag.Policy()
			if version < 0 || !samePolicy(pi, last) {
				vpi = env.Evaluate(pi)
				for h := range last {
					copy(last[h], pi[h])
				}
			}
			version = v
		}
		s := env.InitialState(envR)
		tr.Regret[k-1] = model.Regret(vstar, vpi, s)
		for h := 0; h < H; h++ {
			a := ag.Act(h, s)
			r := env.Reward(h, s, a)
			s2 := env.Step(h, s, a, envR)
			if err := ag.Observe(h, s, a, r, s2); err != nil {
				return tr, err
			}
			tr.Return += r
			s = s2
		}
		ag.EndEpisode()
	}
	tr.Updates = ag.Updates()
	tr.Info = ag.Info()
	return tr, nil
}

func samePolicy(a, b [][]int) bool {
	for h := range a {
		for s, x := range a[h] {
			if b[h][s] != x {
				return false
			}
		}
	}
	return true
}
