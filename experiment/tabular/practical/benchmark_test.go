package practical

import (
	"bytes"
	"strings"
	"testing"
)

// benchResult is a synthetic benchmark result: practical-jdp and its twin on frozenlake4x4
// for K episodes, one seed, with per-episode regret jdp (private) and twin along the curve.
func benchResult(K int, jdp, twin float64) *Result {
	curve := func(agent string, eps, perEpisode float64) *Curve {
		ks := Checkpoints(K)
		cum := make([]float64, len(ks))
		for i, k := range ks {
			cum[i] = perEpisode * float64(k)
		}
		return &Curve{Group: "frozenlake4x4", Label: agent, Agent: agent, Epsilon: eps, Episodes: K,
			Runs: []SeedRun{{Seed: 1, Cum: cum, Final: cum[len(cum)-1], LastDecile: perEpisode, EpisodesPerSecond: 1}}}
	}
	return &Result{Config: &Config{Episodes: K, Seeds: []uint64{1}, Delta: 1e-5},
		Curves:  []*Curve{curve("practical-jdp", 1, jdp), curve("practical-ucbvi", 0, twin)},
		Uniform: map[string]float64{"frozenlake4x4": 1},
		shapes:  map[string]shape{"frozenlake4x4": {S: 16, A: 4, H: 100, PublicSupport: true}}}
}

// TestBenchmarkGoalsVerdicts: the goals table states a goal as holding or failing only on data
// that measures it; a shortened run (K below the goal's K, or short of the window) says "not
// measured" instead of "does not hold".
func TestBenchmarkGoalsVerdicts(t *testing.T) {
	for _, c := range []struct {
		name      string
		K         int
		jdp, twin float64
		want      []string // verdicts in order: last decile, window, privacy cost
	}{
		{"full run, goals hold", GoalK, 0.05, 0.01, []string{"holds", "holds", "holds"}},
		{"full run, goals fail", GoalK, 0.6, 0.01, []string{"does not hold", "does not hold", "does not hold"}},
		{"shortened to the window", WindowTo, 0.6, 0.01, []string{"not measured", "does not hold", "not measured"}},
		{"shorter than the window", WindowFrom, 0.05, 0.01, []string{"not measured", "not measured", "not measured"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var b bytes.Buffer
			out, err := benchResult(c.K, c.jdp, c.twin).benchmarkSummary(&b)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(out, "## frozenlake4x4: S = 16, A = 4, H = 100, transition support public") {
				t.Errorf("the heading does not state the public support:\n%s", out)
			}
			_, goals, ok := strings.Cut(out, "## Goals of practical-jdp")
			if !ok {
				t.Fatalf("no goals table:\n%s", out)
			}
			var got []string
			for _, line := range strings.Split(goals, "\n") {
				cells := strings.Split(line, "|")
				if len(cells) < 6 || !strings.Contains(cells[1], "frozenlake4x4") {
					continue
				}
				v := strings.TrimSpace(cells[4])
				v, _, _ = strings.Cut(v, " (")
				got = append(got, v)
			}
			if strings.Join(got, ",") != strings.Join(c.want, ",") {
				t.Errorf("verdicts %q, want %q\n%s", got, c.want, goals)
			}
		})
	}
}
