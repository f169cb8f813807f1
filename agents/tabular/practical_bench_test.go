package tabular

import (
	"fmt"
	"testing"

	model "github.com/dprl/dprl/model/tabular"
)

// BenchmarkPracticalEpisode measures whole practical-jdp / practical-ldp runs on RiverSwim
// H = 20, single-threaded (release, planning when the release changes, exact regret of every
// new policy, rollout, privatization), at K = 10⁴ and 10⁵: episodes/s must not fall with K
// (the counter's state and per-step work do not grow with t; memory O(buffers·dim)).
func BenchmarkPracticalEpisode(b *testing.B) {
	m := riverswim(b)
	for _, name := range []string{"practical-jdp", "practical-ldp"} {
		for _, K := range []int{10_000, 100_000} {
			b.Run(fmt.Sprintf("%s/K=%d", name, K), func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					practicalRun(b, m, K, name)
				}
				b.ReportMetric(float64(b.N*K)/b.Elapsed().Seconds(), "episodes/s")
			})
		}
	}
}

// practicalRun plays one whole run of K users with the named practical agent at ε = 1, with the
// exact regret of every new policy, as the experiment runners do (the benchmarks' one loop).
func practicalRun(b *testing.B, m *model.MDP, K int, name string) {
	ag := newPracticalAgent(b, m, K, name, 1, 1)
	reg := model.NewRegret(m)
	traj := model.NewTrajectory(m.H)
	users := usersOf(1)
	var last *model.Policy
	for k := 0; k < K; k++ {
		pol, err := ag.Server.Policy()
		if err != nil {
			b.Fatal(err)
		}
		if last == nil || !policyEqual(pol, last) {
			_ = reg.Of(pol)
			last = clonePolicy(pol)
		}
		if k == K-1 {
			break
		}
		m.Rollout(pol, users(k), traj)
		msg, err := ag.Client.Encode(traj)
		if err != nil {
			b.Fatal(err)
		}
		if err := ag.Server.Receive(msg); err != nil {
			b.Fatal(err)
		}
	}
}
