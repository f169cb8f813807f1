// Package report turns experiment results — per-episode cumulative regret
// curves, one per seed, for several configurations — into summary statistics,
// CSV files, plots and Markdown tables.
//
// All files are written atomically through internal/atomicfile, so an
// interrupted run never leaves a truncated CSV or image behind.
package report
