package practical

import (
	"bytes"
	"fmt"
	"math"
	"slices"

	"github.com/dprl/dprl/report"
)

// Benchmark points: R(KEarly) is the figure at the field's usual budget, the window
// (WindowFrom, WindowTo] the early-learning goal, and the run's own K the long one.
const (
	KEarly     = 50000
	WindowFrom = 90000
	WindowTo   = 100000
)

// Benchmark goals (issue 26), shares of the uniform policy's per-episode regret and the
// privacy cost R_private(K)/R_twin(K).
const (
	GoalLastDecile = 0.10
	GoalWindow     = 0.50
	GoalCost       = 10
	// GoalK is the K the last-decile and privacy-cost goals are stated at: a shortened run
	// (--episodes below it) reports them as not measured rather than as failing.
	GoalK = 1000000
)

// goalVerdict states a goal on the measured data: "holds" or "does not hold", or "not
// measured" when measured is false (the run is shorter than the goal's K or does not reach
// its window) — a shortened run never claims a goal fails (or holds) on data it lacks.
func goalVerdict(measured, ok bool, why string) string {
	switch {
	case !measured:
		return "not measured (" + why + ")"
	case ok:
		return "holds"
	default:
		return "does not hold"
	}
}

// cumAt returns each seed's cumulative regret at episode k, or nil when k is not one of the
// curve's checkpoints (a curve shorter than k, or k off its grid).
func cumAt(cv *Curve, k int) []float64 {
	i := slices.Index(Checkpoints(cv.Episodes), k)
	if i < 0 {
		return nil
	}
	out := make([]float64, len(cv.Runs))
	for j, r := range cv.Runs {
		out[j] = r.Cum[i]
	}
	return out
}

func fmtCI(x []float64) string {
	if x == nil {
		return "—"
	}
	m, lo, hi := meanCI(x)
	if math.IsNaN(lo) {
		return fmt.Sprintf("%.0f", m)
	}
	return fmt.Sprintf("%.0f [%.0f, %.0f]", m, lo, hi)
}

func mean(x []float64) float64 {
	s := 0.0
	for _, v := range x {
		s += v
	}
	return s / float64(len(x))
}

// windowShare is the mean per-episode regret over users (WindowFrom, WindowTo] as a share of
// the uniform policy's, or NaN when the curve does not cover the window.
func windowShare(cv *Curve, uniform float64) float64 {
	a, b := cumAt(cv, WindowFrom), cumAt(cv, WindowTo)
	if a == nil || b == nil {
		return math.NaN()
	}
	return (mean(b) - mean(a)) / float64(WindowTo-WindowFrom) / uniform
}

func pct(x float64) string {
	if math.IsNaN(x) {
		return "—"
	}
	return fmt.Sprintf("%.1f %%", 100*x)
}

// ratio is the mean of x over the mean of y ("—" when either is missing).
func ratio(x, y []float64) string {
	if x == nil || y == nil || mean(y) <= 0 {
		return "—"
	}
	return fmt.Sprintf("%.1f×", mean(x)/mean(y))
}

// benchmarkSummary renders the benchmark table (Config.Summary "benchmarks"): per environment,
// every curve's R(KEarly) and R(K) with 95 % CIs over seeds, its per-episode regret over the
// window and the last decile as shares of the uniform policy's, the privacy cost against the
// twin practical-ucbvi at both points, episodes/s, and the JDP lower-bound term H·S·A/ε; then
// the goals of the private agent, each stated as holding or not on the measured data.
func (r *Result) benchmarkSummary(b *bytes.Buffer) (string, error) {
	c := r.Config
	fmt.Fprintf(b, "K = %d users per run (UCBVI: the K of its row), seeds %v, δ = %g, wall time %.0f s on %d workers. "+
		"practical-* are dprl's agents (practical-privacy spec: private exactly as the accountant states, no regret proof); "+
		"practical-ucbvi is practical-jdp's non-private twin (the same agent on exact counts); UCBVI is the papers' non-private baseline. "+
		"Every environment declares its terminal states and its reward table as public structure, and its heading says whether the support of its "+
		"transitions (the next states each (s, a) can reach, not their probabilities) is public too (the Gymnasium environment publishes its whole table P); "+
		"one set of constants for all environments.\n", c.Episodes, c.Seeds, c.Delta, r.Seconds, r.Workers)
	var goals [][]string
	for _, group := range r.groups() {
		u := r.Uniform[group]
		head := fmt.Sprintf("\n## %s (uniform policy: %.4f per episode)\n\n", group, u)
		if m, ok := r.shapes[group]; ok {
			support := "transition support private"
			if m.PublicSupport {
				support = "transition support public"
			}
			head = fmt.Sprintf("\n## %s: S = %d, A = %d, H = %d, %s (uniform policy: %.4f regret per episode; JDP lower-bound term H·S·A/ε = %d at ε = 1)\n\n",
				group, m.S, m.A, m.H, support, u, m.H*m.S*m.A)
		}
		b.WriteString(head)
		twin := r.find(group, "practical-ucbvi", 0)
		var rows [][]string
		for _, cv := range r.Curves {
			if cv.Group != group {
				continue
			}
			early, final := cumAt(cv, KEarly), cumAt(cv, cv.Episodes)
			cost := [2]string{"—", "—"}
			if cv.Agent == "practical-jdp" && twin != nil {
				cost = [2]string{ratio(early, cumAt(twin, KEarly)), ratio(final, cumAt(twin, cv.Episodes))}
			}
			last := meanOf(cv, tail) / u
			rows = append(rows, []string{cv.Label, fmt.Sprint(cv.Episodes), fmtCI(early), fmtCI(final),
				pct(windowShare(cv, u)), pct(last), cost[0], cost[1], fmt.Sprintf("%.0f", meanOf(cv, speed))})
			if cv.Agent == "practical-jdp" {
				w := windowShare(cv, u)
				short := fmt.Sprintf("K = %d < %d", cv.Episodes, GoalK)
				goals = append(goals,
					[]string{group, fmt.Sprintf("last decile ≤ %.0f %% of uniform at K = %d", 100*GoalLastDecile, GoalK), pct(last),
						goalVerdict(cv.Episodes >= GoalK, last <= GoalLastDecile, short)},
					[]string{group, fmt.Sprintf("users %d…%d ≤ %.0f %% of uniform", WindowFrom, WindowTo, 100*GoalWindow), pct(w),
						goalVerdict(!math.IsNaN(w), w <= GoalWindow, fmt.Sprintf("the run does not reach user %d", WindowTo))})
				if twin != nil {
					f, t := cumAt(cv, cv.Episodes), cumAt(twin, cv.Episodes)
					ok := f != nil && t != nil && mean(f) <= GoalCost*mean(t)
					goals = append(goals, []string{group, fmt.Sprintf("privacy cost R(K)/R_twin(K) ≤ %d at K = %d", GoalCost, GoalK), ratio(f, t),
						goalVerdict(cv.Episodes >= GoalK && f != nil && t != nil, ok, short)})
				}
			}
		}
		if err := report.WriteMarkdownTable(b, []string{"agent", "K", fmt.Sprintf("R(%d) [95%% CI]", KEarly), "R(K) [95% CI]",
			fmt.Sprintf("users %d…%d, %% of uniform", WindowFrom, WindowTo), "last decile, % of uniform",
			fmt.Sprintf("privacy cost at %d", KEarly), "privacy cost at K", "episodes/s"}, rows); err != nil {
			return "", err
		}
	}
	if len(goals) > 0 {
		fmt.Fprintf(b, "\n## Goals of practical-jdp (ε = 1, δ = %g)\n\n", c.Delta)
		if err := report.WriteMarkdownTable(b, []string{"environment", "goal", "measured", "verdict"}, goals); err != nil {
			return "", err
		}
	}
	return b.String(), nil
}
