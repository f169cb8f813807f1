package tabular

import (
	"fmt"

	"github.com/dprl/dprl/experiment/engine"
	"github.com/dprl/dprl/experiment/tabular/practical"
	"github.com/dprl/dprl/internal/membudget"
)

// memoryEstimate bounds the memory of a tabular plan (issue 18 #3) from its configuration and
// environment, before any agent is built: the environment (fixed); the largest unit's agent
// (practical.PaperAgentBytes), its cumulative-regret curve of K values and the curve's
// encoding into the unit file; and the collection, which holds every unit's curve, the
// curves' bands (mean, lower, upper, sd), the episode axes, and then reads each curve's CSV
// back (its seed, mean and band columns, grown by append) for regret_long.csv.
func (p *plan) memoryEstimate() engine.MemoryEstimate {
	cfg, m := p.cfg, p.m
	K := int64(cfg.Episodes)
	var agent int64
	for _, cv := range cfg.Curves {
		ac, err := cfg.agentConfig(cv)
		if err != nil {
			continue // newPlan reports it
		}
		agent = max(agent, practical.PaperAgentBytes(m.S, m.A, m.H, cfg.Episodes, ac.Algorithm, ac.Privacy.Model))
	}
	curve := membudget.Floats(K)
	units := int64(len(cfg.Curves)) * int64(len(cfg.Seeds))
	seeds := int64(len(cfg.Seeds))
	var e engine.MemoryEstimate
	e.Fixed = membudget.Terms{{What: "environment", Bytes: practical.MDPBytes(m), Lower: practical.LowerEnv}}
	e.Unit = membudget.Terms{{What: "agent tables", Bytes: agent, Lower: practical.LowerEnv},
		{What: fmt.Sprintf("regret curve of K = %d episodes and its encoding", K), Bytes: membudget.Add(curve, engine.EncodeBytes(K)), Lower: practical.LowerEpisodes}}
	// ReadCurveCSV appends to every column row by row: each ends at most 1.25× its length,
	// and one array at a time is being copied into a larger one.
	readBack := membudget.Add(membudget.Mul(curve, seeds+5)/4*5, curve)
	e.Collect = membudget.Terms{
		{What: fmt.Sprintf("regret curves of %d units", units), Bytes: membudget.Mul(units, curve), Lower: practical.LowerEpisodes + "; " + practical.LowerSeeds},
		{What: "bands and axes", Bytes: membudget.Mul(curve, 4*int64(len(cfg.Curves))+5), Lower: practical.LowerEpisodes},
		{What: "reading a unit or a curve's CSV back", Bytes: max(readBack, engine.EncodeBytes(K)), Lower: practical.LowerEpisodes}}
	return e
}

// MemoryEstimate implements engine.MemoryEstimator.
func (p *plan) MemoryEstimate() engine.MemoryEstimate { return p.mem }
