// Package bounds defines, once, the bounds dprl puts on the quantities a user gives (flags,
// configuration files, the shared run schema, the agents' configurations): every layer checks
// against these constants, so a value accepted by one layer is not refused by the next with
// another limit. `dprl list` prints them (Limits).
//
// A family may be stricter where its model needs it (a minimum K for checkpoints, a smaller
// horizon); Limits names those exceptions.
package bounds

import (
	"fmt"
	"io"
	"math"
	"strings"
)

const (
	// EpsilonMin and EpsilonMax bound every nominal ε (flags, configurations, agents): below
	// 1e-9 the noise scales of some calibrations (∝ H·L/ε, their squares and the zCDP
	// conversions ρ ∝ ε²) overflow or underflow; above 1e9 the accounting does.
	EpsilonMin = 1e-9
	EpsilonMax = 1e9
	// EpsilonRange is [EpsilonMin, EpsilonMax] as errors and documentation write it.
	EpsilonRange = "[1e-9, 1e9]"

	// MaxEpisodes bounds K, the episodes (users) of one run, in every family and layer (flags,
	// configurations, the run schema, the agents): 10⁷ episodes is hours of compute for the
	// cheapest agent, and the LQ families keep every episode's regret in memory.
	MaxEpisodes = 10_000_000
	// MaxSeeds bounds the seeds of one run (every seed is a whole run; the list is allocated
	// before any of them starts).
	MaxSeeds = 1000
	// MaxStoredValues bounds the values a run keeps in memory until it writes its outputs:
	// curves·seeds·K per-episode cumulative regrets (tabular and LQ keep every episode), 2²⁹
	// float64 values = 4 GiB.
	MaxStoredValues = 1 << 29
	// MaxWorkers bounds --workers (goroutines running units in parallel).
	MaxWorkers = 1024
	// MaxMultiplier bounds the bonus / confidence-width multipliers, in (0, MaxMultiplier].
	MaxMultiplier = 1e6
	// MultiplierRange is (0, MaxMultiplier] as errors and documentation write it.
	MultiplierRange = "(0, 1e6]"
)

// Epsilon checks a nominal ε: within [EpsilonMin, EpsilonMax] (NaN and ±Inf are refused).
// The error names field.
func Epsilon(field string, eps float64) error {
	if !(eps >= EpsilonMin && eps <= EpsilonMax) {
		return fmt.Errorf("%s: must be in %s, got %g (a smaller ε would make the noise scales overflow)", field, EpsilonRange, eps)
	}
	return nil
}

// EpsilonOrInf is Epsilon, also accepting +Inf (where a family reads ε = ∞ as non-private).
func EpsilonOrInf(field string, eps float64) error {
	if math.IsInf(eps, 1) {
		return nil
	}
	return Epsilon(field, eps)
}

// Stored checks that a run keeping curves·seeds·episodes values stays within MaxStoredValues.
func Stored(curves, seeds, episodes int) error {
	n := uint64(max(curves, 0)) * uint64(max(seeds, 0)) * uint64(max(episodes, 0))
	if curves > 1<<20 || seeds > 1<<20 || n > MaxStoredValues {
		return fmt.Errorf("curves·seeds·episodes = %d·%d·%d regret values exceeds the limit 2^29 values (4 GiB); use fewer seeds or episodes", curves, seeds, episodes)
	}
	return nil
}

// Workers checks a worker count (--workers): 0 (all cores) to MaxWorkers.
func Workers(workers int) error {
	if workers < 0 || workers > MaxWorkers {
		return fmt.Errorf("--workers: must be in [0, %d] (0 = all cores), got %d", MaxWorkers, workers)
	}
	return nil
}

// WriteLimits writes the Limits section of `dprl list`.
func WriteLimits(w io.Writer) {
	fmt.Fprintln(w, "\n== Limits (every family, every layer: flags, configurations, agents) ==")
	for _, l := range Limits() {
		fmt.Fprintln(w, strings.TrimRight(fmt.Sprintf("  %-24s %-24s %s", l.Quantity, l.Bound, l.Note), " "))
	}
}

// Limit is one bound as `dprl list` prints it.
type Limit struct {
	Quantity, Bound, Note string
}

// Limits returns the bounds above, with the families whose bound differs and why.
func Limits() []Limit {
	return []Limit{
		{"ε (every private agent)", EpsilonRange, "below, noise scales overflow; above, the accounting does"},
		{"K (episodes)", fmt.Sprintf("≤ %d", MaxEpisodes), "at least 10 for linmdp, linmix and the practical tabular suite (checkpoints), 2 for the practical LQ suite"},
		{"seeds", fmt.Sprintf("≤ %d, distinct", MaxSeeds), ""},
		{"curves·seeds·K", "≤ 2^29", "values kept in memory (tabular and LQ keep every episode's regret)"},
		{"--workers", fmt.Sprintf("≤ %d (0 = all cores)", MaxWorkers), ""},
		{"multipliers", "in " + MultiplierRange, "bonus and confidence-width multipliers (never the noise)"},
	}
}

// Product multiplies non-negative dimensions, stopping as soon as the product exceeds limit
// (so it cannot overflow): it returns the product and true when it is at most limit, or a
// description ("more than limit", the product, or the negative dimension) and false — what a
// model's size check (CheckSize) says before it allocates the tables the product sizes.
func Product(limit uint64, factors ...int) (string, bool) {
	p := uint64(1)
	for _, f := range factors {
		if f < 0 {
			return fmt.Sprintf("a negative dimension %d", f), false
		}
		if f != 0 && p > limit/uint64(f) {
			return fmt.Sprintf("more than %d", limit), false
		}
		p *= uint64(f)
	}
	if p > limit {
		return fmt.Sprint(p), false
	}
	return fmt.Sprint(p), true
}
