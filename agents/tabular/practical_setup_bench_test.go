package tabular

import (
	"fmt"
	"testing"
)

// BenchmarkPracticalJDPSetup measures building a practical-jdp agent (RiverSwim H = 20, ε = 1:
// σ calibration, the BLT counter with its fit, the planner's buffers) at the reproduction's
// K = 5·10⁴ and the benchmarks' 3·10⁴ and 10⁵. The BLT fit depends only on the counter's
// capacity (the number of releases of the schedule: 156, 256 and 506 here) and is read from
// the committed table of privacy/counter (blt_table.go); a fresh fit took 0.1–0.6 s per call
// and practical-jdp made two (the sensitivity factor's probe and the counter). Goal ≤ 10 ms.
//
//	go test ./agents/tabular -run '^$' -bench '^BenchmarkPracticalJDPSetup$' -benchtime 20x
func BenchmarkPracticalJDPSetup(b *testing.B) {
	m := riverswim(b)
	for _, K := range []int{30_000, 50_000, 100_000} {
		b.Run(fmt.Sprintf("K=%d", K), func(b *testing.B) {
			for b.Loop() {
				_ = newPracticalAgent(b, m, K, "practical-jdp", 1, 1)
			}
			b.ReportMetric(b.Elapsed().Seconds()*1e3/float64(b.N), "ms/setup")
		})
	}
}

// BenchmarkPracticalJDPRun runs whole practical-jdp runs of K = 3·10⁴ episodes on RiverSwim
// H = 20 at ε = 1, single-threaded — setup included, then per episode: release, planning when
// the release changes, exact regret of every new policy, rollout, privatization — and reports
// episodes/s over the whole run (the figure compared with the public peer's JDP agent in
// docs/privacy.md; scripts/bench-practical-jdp.sh runs it).
//
//	go test ./agents/tabular -run '^$' -bench '^BenchmarkPracticalJDPRun$' -benchtime 5x
func BenchmarkPracticalJDPRun(b *testing.B) {
	m := riverswim(b)
	const K = 30_000
	for b.Loop() {
		practicalRun(b, m, K, "practical-jdp")
	}
	b.ReportMetric(float64(b.N*K)/b.Elapsed().Seconds(), "episodes/s")
}
