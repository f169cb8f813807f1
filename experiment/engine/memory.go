package engine

import (
	"runtime"

	"github.com/dprl/dprl/internal/membudget"
)

// MemoryEstimate is a plan's upper bound of its big allocations (issue 18 #3), computed from
// its configuration before anything big is allocated. Every term names the parameter that
// shrinks it.
type MemoryEstimate struct {
	// Fixed is held for the whole run: the plan's environments and tables.
	Fixed membudget.Terms
	// Unit is the peak of the largest unit while it runs: its agent's state, its records and
	// the encoding of its result. Several units run at once (the launcher's workers).
	Unit membudget.Terms
	// Collect is the peak of collecting every unit's result into the outputs (curves held in
	// memory, bands, CSVs, figures).
	Collect membudget.Terms
}

// MemoryEstimator is a Plan that estimates its memory (found by type assertion). The engine
// refuses to launch or collect a plan whose estimate exceeds the budget (membudget.Current);
// a plan that does not estimate is not checked.
type MemoryEstimator interface {
	MemoryEstimate() MemoryEstimate
}

// Planning returns the estimate of planning: the fixed terms and one unit's agent, which
// planners build once to validate each cell. Families check it before they build anything.
func (e MemoryEstimate) Planning() membudget.Estimate {
	return membudget.Phases(e.Fixed, 1, e.Unit, nil)
}

// CheckPlanning refuses (a *membudget.Error) a plan whose planning would exceed the budget.
func (e MemoryEstimate) CheckPlanning() error {
	return membudget.Check("planning this run", e.Planning())
}

// Run returns the estimate of running n units on workers workers (0 = GOMAXPROCS), then
// collecting when collect is set.
func (e MemoryEstimate) Run(n, workers int, collect bool) membudget.Estimate {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	var col membudget.Terms
	if collect {
		col = append(membudget.Terms{}, e.Collect...)
	}
	return membudget.Phases(e.Fixed, int64(min(n, workers)), e.Unit, col)
}

// checkMemory refuses (a *membudget.Error) running the n units of p on workers workers (and
// collecting them when collect is set) when p's estimate exceeds the budget.
func checkMemory(p *Planned, n, workers int, collect bool) error {
	me, ok := p.Plan.(MemoryEstimator)
	if !ok {
		return nil
	}
	return membudget.Check("this run", me.MemoryEstimate().Run(n, workers, collect))
}
