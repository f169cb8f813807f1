package lq

import (
	"fmt"

	"github.com/dprl/dprl/experiment/engine"
	"github.com/dprl/dprl/internal/membudget"
	model "github.com/dprl/dprl/model/lq"
	"github.com/dprl/dprl/privacy/counter"
	"github.com/dprl/dprl/privacy/noise"
)

// Parameters to lower named by the LQ estimates.
const (
	lowerEpisodes = "episodes (--episodes)"
	lowerSeeds    = "seeds (--seeds)"
	lowerSystem   = "the system's horizon or dimensions (env.file)"
)

// riccatiBytes is the size of a system's per-step Riccati tables, (H+2)·(2n²+nd) values
// (model/lq.MaxEntries bounds it), which the system keeps at Θ* and every planning step and
// regret evaluation of an agent rebuilds for its own Θ (about 5–8 copies measured; 9 counted).
func riccatiBytes(sys *model.System) int64 {
	return membudget.Floats(int64(sys.H+2) * int64(2*sys.N*sys.N+sys.N*sys.D))
}

// lqCounterBytes bounds the continual counters of one LQ agent for K episodes: the paper's
// two binary-mechanism trees over the packed Gram (p(p+1)/2) and the cross term (p·n), 2L+1
// vectors each; a practical agent's counter over both (BLT: 5 buffers and 8 vectors; a tree
// 2L+8; the exact square-root factorisation keeps every draw, capacity × dim).
func lqCounterBytes(sys *model.System, K int, kind string, capacity int) int64 {
	p := sys.N + sys.D
	dim := int64(noise.PackedLen(p) + p*sys.N)
	fd := membudget.Floats(dim)
	switch kind {
	case "sqrt":
		return membudget.AppendGrown(membudget.Mul(dim, int64(capacity)), 8) + 4*fd + 2*membudget.Floats(int64(capacity))
	case "blt":
		return membudget.Mul(fd, int64(counter.DefaultBLTBuffers)+8)
	}
	L := int64(counter.Levels(max(capacity, 1)))
	if kind == "paper" {
		L = int64(counter.Levels(max(K-1, 1)))
	}
	return membudget.Mul(fd, 2*L+8)
}

// estimate is the estimate of an LQ plan with units (curve, seed) of at most K episodes:
// fixed, the system's tables and the zero line; per unit, the agent's Riccati copies and
// counters, and its per-episode regret, realised cost and cumulative regret (3 K values) and
// their encoding; the collection holds every unit's cumulative regret, the bands and axes of
// every curve, and reads one curve's CSV back for regret_long.csv.
func estimate(sys *model.System, K, curves, seeds int, counters int64) engine.MemoryEstimate {
	k := int64(K)
	curve := membudget.Floats(k)
	units := int64(curves) * int64(seeds)
	var e engine.MemoryEstimate
	e.Fixed = membudget.Terms{{What: "system tables", Bytes: riccatiBytes(sys), Lower: lowerSystem},
		{What: "zero line", Bytes: curve, Lower: lowerEpisodes}}
	e.Unit = membudget.Terms{{What: "agent tables", Bytes: membudget.Add(membudget.Mul(riccatiBytes(sys), 9), counters), Lower: lowerSystem},
		{What: fmt.Sprintf("per-episode records of K = %d episodes and their encoding", K), Bytes: membudget.Add(3*curve, engine.EncodeBytes(k)), Lower: lowerEpisodes}}
	readBack := membudget.Add(membudget.Mul(curve, int64(seeds)+5)/4*5, curve)
	e.Collect = membudget.Terms{
		{What: fmt.Sprintf("regret curves of %d units", units), Bytes: membudget.Mul(units, curve), Lower: lowerEpisodes + "; " + lowerSeeds},
		{What: "bands and axes", Bytes: membudget.Mul(curve, 4*int64(curves)+5), Lower: lowerEpisodes},
		{What: "reading a unit or a curve's CSV back", Bytes: max(readBack, engine.EncodeBytes(k)), Lower: lowerEpisodes}}
	return e
}

// memoryEstimate bounds the paper's LQ plan.
func (p *plan) memoryEstimate() engine.MemoryEstimate {
	return estimate(p.sys, p.K, len(p.specs), len(p.seeds), 2*lqCounterBytes(p.sys, p.K, "paper", 0))
}

// MemoryEstimate implements engine.MemoryEstimator.
func (p *plan) MemoryEstimate() engine.MemoryEstimate { return p.memoryEstimate() }

// memoryEstimate bounds the practical LQ plan (its largest K; the paper's agents' counters
// and the practical agents' counter, whichever is larger).
func (p *practicalPlan) memoryEstimate() engine.MemoryEstimate {
	K := 0
	var cnt int64
	for _, s := range p.specs {
		K = max(K, s.K)
		if row(s.agent).Paper {
			cnt = max(cnt, 2*lqCounterBytes(p.sys, s.K, "paper", 0))
		} else {
			ac := p.cfg.agent(s.eps, s.K)
			kind := ac.Counter
			if kind == "" {
				kind = "blt"
			}
			cnt = max(cnt, lqCounterBytes(p.sys, s.K, kind, max(counter.Schedule{Every: max(ac.BatchEvery, 1)}.Batches(s.K-1), 1)))
		}
	}
	return estimate(p.sys, K, len(p.specs), len(p.seeds), cnt)
}

// MemoryEstimate implements engine.MemoryEstimator.
func (p *practicalPlan) MemoryEstimate() engine.MemoryEstimate { return p.memoryEstimate() }

// checkLeast refuses, at planning, a plan that even one worker could not run and collect
// within the budget (the zero line of K values included), before the zero line is computed.
func checkLeast(e engine.MemoryEstimate, units, K int) error {
	zero := membudget.Term{What: fmt.Sprintf("zero line of K = %d episodes", K), Bytes: membudget.Floats(int64(K)), Lower: lowerEpisodes}
	e.Unit = append(append(membudget.Terms(nil), e.Unit...), zero)
	e.Collect = append(append(membudget.Terms(nil), e.Collect...), zero)
	return membudget.Check("planning this run (1 worker)", e.Run(units, 1, true))
}
