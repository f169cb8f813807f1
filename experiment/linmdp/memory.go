package linmdp

import (
	"fmt"

	"github.com/dprl/dprl/experiment/engine"
	"github.com/dprl/dprl/internal/membudget"
	model "github.com/dprl/dprl/model/linmdp"
	"github.com/dprl/dprl/privacy/counter"
	"github.com/dprl/dprl/privacy/noise"
)

// Parameters to lower named by the linear MDP estimates.
const (
	lowerEnv      = "the environment's size: env.params (n, a, d, m, copies, horizon; --env-param)"
	lowerEpisodes = "episodes (--episodes)"
	lowerSeeds    = "seeds (--seeds)"
)

// agentBytes bounds one agent of the named kind on env for K episodes: the papers' agents'
// statistics (per step the Gram d², the target d and the next-state sums N·d), their private
// forms' binary-mechanism trees per step (2L+1 packed Grams and targets) and released and
// factored Grams (3d² per step); a practical agent's pooled layout instead (the packed Gram,
// the target and the next-state sums, exact, batched and in its BLT counter: 5 buffers and 10
// vectors) and its copy of the features (N·A·d); the planner's per-state and per-feature
// tables (N·A, H·N) and the run's values and policies ((H+1)·N); the per-episode regret (K)
// and, for agents that refit every episode (Work Refit),
// the list of updates (K × 32 bytes, grown by append). An agent with Probes builds as many
// probe agents besides its own. The layout and probes are the agent's row (Agent.Memory).
func agentBytes(env *model.MDP, K int, agent string) int64 {
	a := row(agent)
	N, A, D, H := int64(env.N), int64(env.A), int64(env.D), int64(env.H)
	pk := int64(noise.PackedLen(int(min(D, 1<<20))))
	// The planner: feature ids, scores and bonuses per (s, a), the map of distinct features it
	// builds them with (a printed key of ~24 bytes a coordinate), Q-values and actions per
	// (h, s); the run: V*, π*, the last policy and its values (twice while it is replaced).
	b := 3*membudget.Floats(N*A) + membudget.Slice(N*A, 8) + membudget.Slice(N*A, 24*D+96) + 2*membudget.Floats(H*N) + membudget.Floats(4*D*D)
	b = membudget.Add(b, membudget.Mul(membudget.Floats((H+1)*N), 5))
	switch a.Memory {
	case Pooled:
		b = membudget.Add(b, membudget.Floats(N*A*D)+membudget.Mul(membudget.Floats(pk+D+N*D), int64(counter.DefaultBLTBuffers)+12))
	case Stats:
		b = membudget.Add(b, membudget.Floats(H*(D*D+D+N*D)))
	case Tree:
		b = membudget.Add(b, membudget.Floats(H*(D*D+D+N*D)))
		L := int64(counter.Levels(max(K, 1)))
		b = membudget.Add(b, membudget.Mul(membudget.Floats(H*(pk+D)), 2*L+4))
		b = membudget.Add(b, membudget.Floats(3*H*D*D))
	}
	b = membudget.Mul(b, int64(1+a.Probes))
	b = membudget.Add(b, membudget.Floats(int64(K)))
	if a.Work == Refit {
		b = membudget.Add(b, membudget.AppendGrown(int64(K), 32))
	}
	return b
}

// checkAgent refuses building cell's agent on env at planning (prepare builds one to compute
// its constants) when it would exceed the budget.
func checkAgent(env *model.MDP, cfg *Config, c Cell) error {
	return engine.CheckPlanning(membudget.Terms{{What: fmt.Sprintf("agent %s on %s (N=%d, A=%d, d=%d, H=%d)", c.Agent, c.Env, env.N, env.A, env.D, env.H),
		Bytes: agentBytes(env, cfg.Episodes, c.Agent), Lower: lowerEnv + "; " + lowerEpisodes}})
}

// memoryEstimate bounds a linear MDP suite: per unit its agent (agentBytes) and its result
// (checkpoints, at most 200 update episodes) with their encoding; the collection holds every
// unit's result. The environments are the plan's (measured when the run is checked).
func (p *suitePlan) memoryEstimate() engine.MemoryEstimate {
	var unit, pts int64
	for _, b := range p.blocks {
		for _, cr := range b.tmpl.Cells {
			env := b.envs[cr.Cell.Env]
			if env == nil {
				continue
			}
			unit = max(unit, agentBytes(env, b.cfg.Episodes, cr.Cell.Agent))
		}
		pts = max(pts, int64(len(b.tmpl.Checkpoints))+200)
	}
	var e engine.MemoryEstimate
	e.Fixed = membudget.Terms{{What: "environments", Lower: lowerEnv}}
	result, collect := engine.CheckpointTerms("result and its encoding", "results", pts, len(p.units), len(p.blocks), lowerSeeds)
	e.Unit = membudget.Terms{{What: "agent tables and per-episode records", Bytes: unit, Lower: lowerEnv + "; " + lowerEpisodes}, result}
	e.Collect = collect
	return e
}

// MemoryEstimate implements engine.MemoryEstimator.
func (p *suitePlan) MemoryEstimate() engine.MemoryEstimate { return p.memoryEstimate() }
