package practical

import (
	"fmt"
	"unsafe"

	agents "github.com/dprl/dprl/agents/tabular"
	"github.com/dprl/dprl/experiment/engine"
	"github.com/dprl/dprl/internal/membudget"
	model "github.com/dprl/dprl/model/tabular"
	"github.com/dprl/dprl/privacy/counter"
)

// Parameters to lower named by the tabular estimates (the flags of `dprl run` and the
// configuration fields).
const (
	LowerEnv      = "the environment's size: states, actions, horizon (--states, --actions, --horizon; env.params)"
	LowerEpisodes = "episodes (--episodes)"
	LowerSeeds    = "seeds (--seeds)"
)

// MDPBytes returns the bytes of m's tables (an array shared by several steps counted once):
// the dense transitions P (when the model keeps them), the compressed rows (Sparse: offsets,
// next states and probabilities of each distinct step's table), the rewards and Init.
func MDPBytes(m *model.MDP) int64 {
	seen := map[*float64]bool{}
	var b int64
	for _, tables := range [][][]float64{m.P, m.R} {
		for _, t := range tables {
			if len(t) == 0 || seen[&t[0]] {
				continue
			}
			seen[&t[0]] = true
			b += membudget.Floats(int64(len(t)))
		}
	}
	for h, t := range m.Sparse {
		if h > 0 && t == m.Sparse[h-1] {
			continue
		}
		b += membudget.Slice(int64(len(t.Off)+len(t.Next)), 4) + membudget.Floats(int64(len(t.Prob)))
	}
	return b + membudget.Floats(int64(len(m.Init))) + membudget.Slice(int64(len(m.Terminal)), 1)
}

// smallTables bounds what every tabular unit keeps besides its agent's tables: the policy
// and the previous one (H·S ints each), the regret evaluator's values ((H+1)·S), the
// trajectory and the planners' per-state scratch.
func smallTables(S, A, H int) int64 {
	hs := int64(H+1) * int64(S)
	return membudget.Slice(hs, int64(unsafe.Sizeof(int(0))))*2 + membudget.Floats(hs)*2 + membudget.Floats(int64(S)*int64(A))*2 + 64<<10
}

// PaperAgentBytes bounds the state of one of the papers' tabular agents (agents.New with the
// given algorithm and privacy model) for K episodes: with n = H·S·A and T = n·S, the planner
// (dp-ucbvi: its count copies, T + 2n; private-ucbvi: its Q-table, n), the statistics
// (non-private: a billboard, T + 2n; JDP: the billboard, the insertion vectors and three
// binary-mechanism trees of 2L+1 vectors each, L = ⌈log₂ K⌉, so (2L+3)·(T+2n); LDP: the
// server's billboard and the user's report, 2·(T+2n)).
func PaperAgentBytes(S, A, H, K int, algorithm string, privacy agents.Model) int64 {
	n := int64(H) * int64(S) * int64(A)
	T := n * int64(S)
	stats := membudget.Floats(T) + 2*membudget.Floats(n)
	var b int64
	switch algorithm {
	case "private-ucbvi":
		b = membudget.Floats(n)
	default: // dp-ucbvi
		b = stats
	}
	switch privacy {
	case agents.JDP:
		L := int64(0)
		if K > 1 {
			L = int64(counter.Levels(K - 1))
		}
		b = membudget.Add(b, membudget.Mul(stats, 2*L+3))
	case agents.LDP:
		b = membudget.Add(b, 2*stats)
	default:
		b = membudget.Add(b, stats)
	}
	return membudget.Add(b, smallTables(S, A, H))
}

// PracticalAgentBytes bounds the state of one of dprl's practical tabular agents
// (agents.NewPractical with cfg) for K episodes, at construction and while it runs: the
// planner's tables (g·S·A·(S+2)), the release, the user's contribution vector and
// the continual counter (default BLT: 5 buffers and 8 more vectors of the contribution's
// dimension D = g·S·A·(S+1), g = 1 pooled, H per step; a bound with public rewards, whose
// D is g·S·A·S), and the copy of a public reward table.
func PracticalAgentBytes(S, A, H, K int, cfg agents.PracticalConfig) int64 {
	p := cfg.Privacy
	g := int64(H)
	if p.Pool {
		g = 1
	}
	sa := int64(S) * int64(A)
	D := g * sa * int64(S+1)
	fD := membudget.Floats(D)
	n := g * sa
	planner := membudget.Floats(n*int64(S)) + 2*membudget.Floats(n) // ucb: Ñ, P̂, r̂; psrl: P, r (per cell of the release)
	release := membudget.Floats(g*sa*int64(S)) + membudget.Floats(g*sa)
	var stats int64
	switch p.Model {
	case agents.LDP:
		// The user's report, the server's sum, and the vector each episode's message is
		// encoded into (a new one per episode: one in flight, one being reclaimed).
		stats = 4*fD + release
	case agents.JDP:
		capacity := max(counter.Schedule{Every: p.BatchEvery}.Batches(K-1), 1)
		var cnt int64
		switch p.Counter {
		case "tree", "honaker":
			L := int64(counter.Levels(capacity))
			cnt = membudget.Mul(fD, 2*L+8)
		case "sqrt":
			cnt = membudget.AppendGrown(membudget.Mul(D, int64(capacity)), 8) + 4*fD + 2*membudget.Floats(int64(capacity))
		default: // blt
			cnt = membudget.Mul(fD, int64(counter.DefaultBLTBuffers)+8)
		}
		// The batch vector, the release and the counter (its noise-free twin, built first to
		// read the sensitivity factor, is garbage by then).
		stats = fD + release + cnt
	default:
		stats = fD + release
	}
	if p.PublicRewards { // the agent's copy of the public reward table (shared steps once)
		stats = membudget.Add(stats, publicRewardBytes(cfg))
	}
	if p.PublicSupport { // the support's rows (SupportOf) and the agent's index of it
		stats = membudget.Add(stats, publicSupportBytes(S, A, cfg.Support))
	}
	return membudget.Add(membudget.Add(planner, stats), smallTables(S, A, H))
}

// publicRewardBytes returns the bytes of a practical agent's copy of the public reward
// function of cfg: each distinct step array of Rewards once, and EntryReward.
func publicRewardBytes(cfg agents.PracticalConfig) int64 {
	b := membudget.Floats(int64(len(cfg.EntryReward))) + membudget.Slice(int64(len(cfg.Rewards)), 24)
	for h, r := range cfg.Rewards {
		if h > 0 && len(r) > 0 && len(cfg.Rewards[h-1]) == len(r) && &r[0] == &cfg.Rewards[h-1][0] {
			continue
		}
		b = membudget.Add(b, membudget.Floats(int64(len(r))))
	}
	return b
}

// publicSupportBytes returns the bytes of a public support: the rows given (SupportOf) and
// the agent's copy (offsets, next states and the S·A·S index; support.go). The contribution
// and the counter, smaller with a support, are bounded by the dense layout above.
func publicSupportBytes(S, A int, rows [][]int) int64 {
	var n int64
	for _, r := range rows {
		n += int64(len(r))
	}
	sa := int64(S) * int64(A)
	return membudget.Add(membudget.Slice(sa, 24)+8*n, 4*(sa+1)+4*n+membudget.Mul(4*sa, int64(S)))
}

// memoryEstimate bounds a practical-suite plan: the environments of every curve (fixed),
// the largest unit's agent and records, and the collection of every unit's checkpoints.
func (p *plan) memoryEstimate() engine.MemoryEstimate {
	var e engine.MemoryEstimate
	var envBytes int64
	seen := map[*model.MDP]bool{}
	var unit int64
	for ci, cv := range p.curves {
		m := p.envs[ci]
		if !seen[m] {
			seen[m] = true
			envBytes = membudget.Add(envBytes, MDPBytes(m))
		}
		unit = max(unit, curveAgentBytes(m, cv, p.cfg.Delta))
	}
	e.Fixed = membudget.Terms{{What: fmt.Sprintf("environments of %d curves", len(p.curves)), Bytes: envBytes, Lower: LowerEnv}}
	e.Unit = membudget.Terms{{What: "agent tables", Bytes: unit, Lower: LowerEnv},
		{What: "checkpoints and their encoding", Bytes: engine.EncodeBytes(Points) + membudget.Floats(Points), Lower: ""}}
	units := int64(len(p.units))
	e.Collect = membudget.Terms{{What: fmt.Sprintf("checkpoints of %d units", units), Bytes: membudget.Mul(units, membudget.Floats(Points)+engine.EncodeBytes(Points)/8+1<<10), Lower: LowerSeeds},
		{What: "figures and CSVs", Bytes: membudget.Mul(int64(len(p.curves)), 16*membudget.Floats(Points)) + 8<<20}}
	return e
}

// curveAgentBytes bounds the agent of curve cv on m (either kind of agent).
func curveAgentBytes(m *model.MDP, cv *Curve, delta float64) int64 {
	if _, err := agents.LookupPractical(cv.Agent); err == nil {
		cfg, err := agents.DefaultPracticalConfig(cv.Agent, cv.Epsilon, delta)
		if err != nil {
			return 0
		}
		cfg.Privacy.Pool = m.Homogeneous()
		if m.PublicRewards {
			cfg.Privacy.PublicRewards, cfg.Rewards, cfg.EntryReward = true, m.R, m.EntryReward
		}
		if m.PublicSupport {
			cfg.Privacy.PublicSupport, cfg.Support = true, agents.SupportOf(m)
		}
		return PracticalAgentBytes(m.S, m.A, m.H, cv.Episodes, cfg)
	}
	info, err := agents.Lookup(cv.Agent)
	if err != nil {
		return 0
	}
	return PaperAgentBytes(m.S, m.A, m.H, cv.Episodes, info.Algorithm, info.Model)
}

// MemoryEstimate implements engine.MemoryEstimator.
func (p *plan) MemoryEstimate() engine.MemoryEstimate { return p.memoryEstimate() }

// checkEnvs refuses a plan whose environments built so far exceed the budget (planning
// builds no agent: the units are checked by the engine before they run).
func (p *plan) checkEnvs() error {
	var b int64
	seen := map[*model.MDP]bool{}
	for _, m := range p.envs {
		if !seen[m] {
			seen[m] = true
			b = membudget.Add(b, MDPBytes(m))
		}
	}
	return membudget.Check("planning this run", membudget.Phases(membudget.Terms{{What: fmt.Sprintf("environments of %d curves", len(p.envs)), Bytes: b, Lower: LowerEnv}}, 0, nil, nil))
}
