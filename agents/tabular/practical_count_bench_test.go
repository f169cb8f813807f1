package tabular

import (
	"fmt"
	"os"
	"strconv"
	"testing"

	"github.com/dprl/dprl/model/tabular/gymenvs"
)

// BenchmarkPracticalJDPDeciles plays one practical-jdp run (ε = 1, δ = 10⁻⁵, seed 1) on an
// embedded benchmark environment with the benchmarks' wiring (pooled, terminal states, the
// public reward table and, where the environment has one, the public support) and reports the
// regret per episode of every tenth of the users (decile-1 … decile-10) and n_e's summary at
// the last release (pairs with n_e > 1). DPRL_PS_ENV names the environment (default
// taxi-private-support), DPRL_PS_EPISODES sets K (default 2·10⁴), DPRL_PS_COUNT the bonus's
// count ("sum", "kept"; default the rule), DPRL_PS_AGENT the agent (practical-jdp, the
// default, or practical-ldp). docs/benchmarks.md quotes it:
//
//	DPRL_PS_EPISODES=200000 go test ./agents/tabular -run '^$' -bench '^BenchmarkPracticalJDPDeciles$' -benchtime 1x
func BenchmarkPracticalJDPDeciles(b *testing.B) {
	K, env := 20_000, "taxi-private-support"
	if v := os.Getenv("DPRL_PS_EPISODES"); v != "" {
		k, err := strconv.Atoi(v)
		if err != nil || k < 10 {
			b.Fatalf("DPRL_PS_EPISODES: want an integer >= 10, got %q", v)
		}
		K = k
	}
	if v := os.Getenv("DPRL_PS_ENV"); v != "" {
		env = v
	}
	m, err := gymenvs.Load(env)
	if err != nil {
		b.Fatal(err)
	}
	name := "practical-jdp"
	if v := os.Getenv("DPRL_PS_AGENT"); v != "" {
		name = v
	}
	cfg := publicConfig(b, name, m)
	if m.PublicSupport {
		cfg.Privacy.PublicSupport, cfg.Support = true, SupportOf(m)
	}
	cfg.Bonus.Count = os.Getenv("DPRL_PS_COUNT")
	for b.Loop() {
		dec := make([]float64, 10)
		ag := playPracticalJDP(b, m, K, 1, cfg, func(k int, r float64) { dec[(k-1)*10/K] += r })
		var planner ReleasePlanner
		switch s := ag.Server.(type) {
		case *practicalCuratorServer:
			planner = s.planner
		case *practicalLDPServer:
			planner = s.planner
		}
		for i, d := range dec {
			b.ReportMetric(d/float64(K/10), fmt.Sprintf("decile-%02d", i+1))
		}
		known := 0
		if u, ok := planner.(*noiseUCB); ok {
			for i, e := range u.nt {
				if e > 1 && !m.IsTerminal(i/m.A) {
					known++
				}
			}
		}
		b.ReportMetric(float64(known), "pairs-ne>1")
	}
}
