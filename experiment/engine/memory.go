package engine

import (
	"runtime"

	"github.com/dprl/dprl/internal/membudget"
)

// MemoryEstimate is a plan's upper bound of its big allocations (issue 18 #3), computed from
// its configuration before anything big is allocated. Every term names the parameter that
// shrinks it.
type MemoryEstimate struct {
	// Fixed is held for the whole run: the plan's environments and tables. They are allocated
	// when the plan is made, so the checks measure them (the live heap) instead; the terms
	// name the parameter that shrinks them.
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

// fixedNow is the fixed part of an estimate made now: the live heap (measured after a garbage
// collection: the configuration, the plan and its environments, all already allocated), named
// after the plan's own fixed terms.
func fixedNow(fixed membudget.Terms) membudget.Terms {
	lower := ""
	if len(fixed) > 0 {
		lower = fixed[0].Lower
	}
	return membudget.Terms{{What: "allocated so far (configuration, plan, environments)", Bytes: membudget.LiveHeap(), Lower: lower}}
}

// CheckPlanning refuses (a *membudget.Error) building what the terms count (an environment,
// an agent built to validate a cell) on top of what is allocated so far.
func CheckPlanning(terms membudget.Terms) error {
	return membudget.Check("planning this run", membudget.Phases(fixedNow(nil), 1, terms, nil))
}

// Run returns the estimate of running n units on workers workers (0 = GOMAXPROCS), then
// collecting when collect is set, on top of what is allocated now (which holds Fixed).
func (e MemoryEstimate) Run(n, workers int, collect bool) membudget.Estimate {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	var col membudget.Terms
	if collect {
		col = append(membudget.Terms{}, e.Collect...)
	}
	return membudget.Phases(fixedNow(e.Fixed), int64(min(n, workers)), e.Unit, col)
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

// EncodeBytes bounds encoding a unit's result that holds n float64 values into its unit file
// (gob: at most 9 bytes a value, into the encoder's own buffer and then the unit file's, each
// grown by append) and decoding it back (the file read whole, the decoder's copy).
func EncodeBytes(n int64) int64 {
	enc := membudget.Mul(n, 9) + 4<<10
	return membudget.AppendGrown(enc, 1) + 2*enc
}
