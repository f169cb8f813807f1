package linmix

import (
	"fmt"
	"math/bits"

	"github.com/dprl/dprl/experiment/engine"
	"github.com/dprl/dprl/internal/membudget"
	model "github.com/dprl/dprl/model/linmix"
	"github.com/dprl/dprl/privacy/counter"
	"github.com/dprl/dprl/privacy/noise"
)

// Parameters to lower named by the linear mixture estimates.
const (
	lowerEnv      = "the environment's size: env.params states, actions, dim, horizon (--env-param)"
	lowerEpisodes = "episodes (--episodes)"
	lowerSeeds    = "seeds (--seeds)"
)

// envDims are the dimensions of a linear mixture MDP: S, A, H, d, the reward dimension d2,
// the ψ rows, and the dense base kernels a base mixture builds first (d·S·A·S).
type envDims struct{ S, A, H, d, d2, nPsi, base int64 }

// dims returns the dimensions of the built-in environment e (model/linmix's constructors),
// false for a file (its dimensions are the file's).
func (e EnvConfig) dims() (envDims, bool) {
	H := int64(e.Horizon)
	switch e.Kind {
	case "two-state-hard", "hard-to-learn":
		if e.Dim < 1 || e.Dim > 62 {
			return envDims{}, false
		}
		S, A := int64(2), int64(1)<<(e.Dim-1)
		if e.Kind == "hard-to-learn" {
			S = H + 2
		}
		return envDims{S: S, A: A, H: H, d: int64(e.Dim), d2: 2, nPsi: 2 * S * A}, true
	case "riverswim":
		S, A := int64(e.riverSwimStates()), int64(2)
		return envDims{S: S, A: A, H: H, d: S * S * A, d2: S * A, nPsi: S * A * S}, true
	case "base-mixture":
		S, A, d := int64(e.States), int64(e.Actions), int64(e.Dim)
		return envDims{S: S, A: A, H: H, d: d, d2: S * A, nPsi: 3 * S * A, base: d * S * A * S}, true
	}
	return envDims{}, false
}

// fileDims returns the dimensions of a built MDP.
func fileDims(m *model.MDP) envDims {
	return envDims{S: int64(m.NumStates()), A: int64(m.NumActions()), H: int64(m.Horizon()), d: int64(m.Dim()), d2: int64(m.RewardDim()), nPsi: int64(m.NumPsi())}
}

// bytes bounds building the MDP: its tables (ψ rows and their values, per-step probabilities
// and mean rewards, reward features, θ's, V*) held twice while New copies them out of the
// Spec (whose ψ rows and features are one slice each), plus a base mixture's dense kernels.
func (x envDims) bytes() int64 {
	sa := x.S * x.A
	p := sa*x.d2 + x.nPsi*x.d + x.H*x.nPsi + x.H*sa + (x.H+1)*x.S + x.H*(x.d+x.d2) + 3*x.nPsi + sa
	b := membudget.Mul(p, 16)
	b = membudget.Add(b, membudget.Mul(x.nPsi, 96)+membudget.Mul(sa, 48))
	return membudget.Add(b, membudget.Mul(x.base, 8))
}

// agentBytes bounds one agent of curve cv on an environment of dimensions x for K episodes:
// the planner's per-step tables (Q, logits, policy: H·S·A each, and V), and per step and
// regression (one of dimension d; a second of d, or of d2 for LinOpt) the Gram, target and
// released statistics and the noise trees (bits.Len(K)+1 levels, or a counter.Tree's 2L+1 with
// the Secure source); the practical agent's counter (BLT) over all steps. The layout is the
// agent's row (Agent.Memory).
func agentBytes(x envDims, K int, cv *Curve) int64 {
	sa := x.S * x.A
	b := membudget.Mul(membudget.Floats(x.H*sa), 4) + membudget.Floats((x.H+1)*x.S)*3 + membudget.Slice(x.H*x.S, 8)
	levels := int64(bits.Len(uint(max(K, 1)))+1) + 2*int64(counter.Levels(max(K, 1))) + 1
	perReg := func(d int64) int64 {
		pk := int64(noise.PackedLen(int(min(d, 1<<20))))
		return membudget.Add(membudget.Floats(2*d*d+3*d+pk), membudget.Mul(membudget.Floats(pk+d), levels))
	}
	d2 := x.d
	a := row(cv.Algorithm)
	if a.Memory == RewardRegression {
		d2 = max(x.d, x.d2)
	}
	b = membudget.Add(b, membudget.Mul(membudget.Add(perReg(x.d), perReg(d2)), x.H))
	if a.Memory == Pooled {
		pk := int64(noise.PackedLen(int(min(x.d, 1<<20))))
		b = membudget.Add(b, membudget.Mul(membudget.Floats(x.H*(pk+x.d)), int64(counter.DefaultBLTBuffers)+10))
	}
	return b
}

// memoryEstimate bounds a linear mixture plan: per unit, the environment it builds from its
// seed, its agent and its checkpoints; the collection holds every unit's checkpoints.
func (p *plan) memoryEstimate() engine.MemoryEstimate {
	var unit, env int64
	for _, cv := range p.curves {
		x, ok := p.cfg.Envs[cv.Env].dims()
		if !ok {
			x = p.fileDims[cv.Env]
		}
		env = max(env, x.bytes())
		unit = max(unit, agentBytes(x, p.cfg.Episodes, cv))
	}
	pts := int64(len(p.checkpoints))
	var e engine.MemoryEstimate
	cps, collect := engine.CheckpointTerms("checkpoints and their encoding", "checkpoints", pts, len(p.units), len(p.curves), lowerSeeds)
	e.Unit = membudget.Terms{{What: "environment", Bytes: env, Lower: lowerEnv}, {What: "agent tables", Bytes: unit, Lower: lowerEnv}, cps}
	e.Collect = collect
	return e
}

// MemoryEstimate implements engine.MemoryEstimator.
func (p *plan) MemoryEstimate() engine.MemoryEstimate { return p.memoryEstimate() }

// checkEnv refuses building environment e whose estimate exceeds the budget (before it is
// built; a file's size is bounded by its loader).
func (e EnvConfig) checkEnv(field string) error {
	x, ok := e.dims()
	if !ok {
		return nil
	}
	err := engine.CheckPlanning(membudget.Terms{{What: fmt.Sprintf("building %s (S=%d, A=%d, H=%d, d=%d, reward dim %d, %d ψ rows)", e.Kind, x.S, x.A, x.H, x.d, x.d2, x.nPsi), Bytes: x.bytes(), Lower: lowerEnv}})
	if err != nil {
		return fmt.Errorf("%s: %w", field, err)
	}
	return nil
}
