package report

import "fmt"

// NoLearningLabel is the legend of the no-learning reference line of a regret figure: the
// cumulative regret of the uniformly random policy (perEpisode per episode), which is what an
// agent that never learns (initial Q̃ ≡ H, random ties) incurs.
func NoLearningLabel(perEpisode float64) string {
	return fmt.Sprintf("no learning (uniform policy, %.4g/episode)", perEpisode)
}

// NoLearningCurve is the no-learning reference line of a regret figure: perEpisode·k at every
// episode k of x, labelled by NoLearningLabel and drawn as a reference.
func NoLearningCurve(x []float64, perEpisode float64) Curve {
	ref := make([]float64, len(x))
	for i, k := range x {
		ref[i] = perEpisode * k
	}
	return Curve{Label: NoLearningLabel(perEpisode), X: x, Band: Band{Mean: ref}, Style: StyleReference}
}

// SeedColumns returns the run columns of a curve's CSV (WriteCurveCSV) for n seeds: run i is
// named seed_<seed> and holds cum, both of run(i).
func SeedColumns(n int, run func(i int) (seed uint64, cum []float64)) (names []string, runs [][]float64) {
	names, runs = make([]string, n), make([][]float64, n)
	for i := range n {
		seed, cum := run(i)
		names[i], runs[i] = fmt.Sprintf("seed_%d", seed), cum
	}
	return names, runs
}

// EpisodeAxis returns the x values of a regret figure at the given episodes.
func EpisodeAxis(episodes []int) []float64 {
	x := make([]float64, len(episodes))
	for i, k := range episodes {
		x[i] = float64(k)
	}
	return x
}
