package tabular

import (
	"fmt"
	"testing"

	model "github.com/dprl/dprl/model/tabular"
)

// benchAgents are the configurations whose throughput the README reports.
var benchAgents = []struct {
	name string
	alg  string
	priv PrivacyConfig
}{
	{"ucbvi", "dp-ucbvi", privacyConfig(NonPrivate, 0, 0, EPractical)},
	{"dp-ucbvi-jdp", "dp-ucbvi", privacyConfig(JDP, 1, Paper, EPractical)},
	{"dp-ucbvi-ldp", "dp-ucbvi", privacyConfig(LDP, 1, Paper, EPractical)},
	{"private-ucbvi-jdp", "private-ucbvi", privacyConfig(JDP, 1, Paper, EPractical)},
	{"private-ucbvi-ldp", "private-ucbvi", privacyConfig(LDP, 1, Paper, EPractical)},
}

// BenchmarkEpisode measures one full episode (release, post-processing, planning, exact regret,
// rollout, privatization) on RiverSwim, H = 20, single-threaded, and reports episodes/s.
func BenchmarkEpisode(b *testing.B) {
	m := riverswim(b)
	for _, c := range benchAgents {
		b.Run(c.name, func(b *testing.B) {
			bonus := PracticalBonus()
			if c.alg == "private-ucbvi" {
				bonus = HoeffdingPracticalBonus()
			}
			K := max(b.N+1, 2)
			ag := newAgent(b, m, K, c.alg, c.priv, bonus, 1)
			reg := model.NewRegret(m)
			traj := model.NewTrajectory(m.H)
			users := usersOf(1)
			b.ResetTimer()
			for k := 0; k < b.N; k++ {
				pol, err := ag.Server.Policy()
				if err != nil {
					b.Fatal(err)
				}
				_ = reg.Of(pol)
				m.Rollout(pol, users(k), traj)
				if err := ag.Server.Receive(ag.Client.Encode(traj)); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "episodes/s")
		})
	}
}

// BenchmarkRunLength runs whole runs of K = 10^4 and 10^5 episodes: the per-episode cost must
// not grow with k (the ratio of the two times should be ≈ 10).
func BenchmarkRunLength(b *testing.B) {
	m := riverswim(b)
	for _, c := range benchAgents[:3] {
		for _, K := range []int{10_000, 100_000} {
			b.Run(fmt.Sprintf("%s/K=%d", c.name, K), func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					ag := newAgent(b, m, K, c.alg, c.priv, PracticalBonus(), 1)
					runAgentQuiet(b, m, ag, K)
				}
				b.ReportMetric(float64(b.N*K)/b.Elapsed().Seconds(), "episodes/s")
			})
		}
	}
}

func runAgentQuiet(b *testing.B, m *model.MDP, ag *Agent, K int) {
	reg := model.NewRegret(m)
	traj := model.NewTrajectory(m.H)
	users := usersOf(1)
	for k := 0; k < K; k++ {
		pol, err := ag.Server.Policy()
		if err != nil {
			b.Fatal(err)
		}
		_ = reg.Of(pol)
		if k == K-1 {
			break
		}
		m.Rollout(pol, users(k), traj)
		if err := ag.Server.Receive(ag.Client.Encode(traj)); err != nil {
			b.Fatal(err)
		}
	}
}
