package tabular

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"strconv"
	"testing"

	"github.com/dprl/dprl/agents/protocol"
	model "github.com/dprl/dprl/model/tabular"
	"github.com/dprl/dprl/model/tabular/gymenvs"
	"github.com/dprl/dprl/rng"
)

// BenchmarkPracticalJDPTaxi runs whole practical-jdp runs on Taxi-v3 at H = 200, ε = 1,
// δ = 10⁻⁵ (model/tabular/gymenvs: S = 500, A = 6, 2 976 sparse transitions, terminal states,
// public reward table), single-threaded, through the runners' episode loop (protocol.Run on
// the agent's Session: publication, exact regret of every new policy, rollout, curator,
// counter, planning at every release), setup (loading the model, calibration, counter,
// planner) included, and reports episodes/s over the whole run (and per CPU second: the
// development machine is shared). K is 10⁴ by default; DPRL_TAXI_EPISODES sets another
// (scripts/bench-taxi.sh times the 10⁶-episode run of the CLI with its peak memory).
//
//	go test ./agents/tabular -run '^$' -bench '^BenchmarkPracticalJDPTaxi$' -benchtime 1x -cpuprofile /tmp/taxi.prof
func BenchmarkPracticalJDPTaxi(b *testing.B) {
	K := 10_000
	if v := os.Getenv("DPRL_TAXI_EPISODES"); v != "" {
		k, err := strconv.Atoi(v)
		if err != nil || k < 2 {
			b.Fatalf("DPRL_TAXI_EPISODES: want an integer >= 2, got %q", v)
		}
		K = k
	}
	b.Run(fmt.Sprintf("K=%d", K), func(b *testing.B) {
		var ag *PracticalAgent
		cpu := cpuSeconds()
		for b.Loop() {
			_, ag = taxiRun(b, K, 1)
		}
		b.ReportMetric(float64(b.N*K)/b.Elapsed().Seconds(), "episodes/s")
		b.ReportMetric(float64(b.N*K)/(cpuSeconds()-cpu), "episodes/cpu-s")
		// The sparse planner's kept entries at the last release (of S·A·S = 1.5·10⁶).
		if u, ok := ag.Server.(*practicalCuratorServer).planner.(*noiseUCB); ok {
			b.ReportMetric(float64(len(u.rows.next)), "kept-entries")
		}
	})
}

// taxiRun loads Taxi and plays K users with practical-jdp (seed seed) as the runners do; it
// returns the cumulative exact regret and the agent.
func taxiRun(b testing.TB, K int, seed uint64) (float64, *PracticalAgent) {
	m, err := gymenvs.Load("taxi")
	if err != nil {
		b.Fatal(err)
	}
	cfg, err := DefaultPracticalConfig("practical-jdp", 1, 1e-5)
	if err != nil {
		b.Fatal(err)
	}
	cfg.Privacy.Pool = m.Homogeneous()
	cfg.Terminal, cfg.TerminalReward = m.Terminal, m.TerminalReward
	cum := 0.0
	ag := playPracticalJDP(b, m, K, seed, cfg, func(_ int, r float64) { cum += r })
	return cum, ag
}

// playPracticalJDP plays K users of m with practical-jdp of configuration cfg (seed seed) as
// the runners do, calling each with every episode's exact regret, and returns the agent.
func playPracticalJDP(b testing.TB, m *model.MDP, K int, seed uint64, cfg PracticalConfig, each func(k int, r float64)) *PracticalAgent {
	ag, err := NewPractical(m.S, m.A, m.H, K, cfg, practicalStreams(seed))
	if err != nil {
		b.Fatal(err)
	}
	sess, _, err := ag.Session("practical-jdp", m, K)
	if err != nil {
		b.Fatal(err)
	}
	users := rng.NewSeed(seed).Child("users")
	if err := protocol.Run(context.Background(), sess, protocol.Options{Episodes: K,
		Users: func(k int) *rand.Rand { return users.Index(uint64(k)).Rand() },
		Each:  each}); err != nil {
		b.Fatal(err)
	}
	return ag
}

// BenchmarkPlanTaxi measures one plan of practical-jdp's effective planner on Taxi from a
// release of the size and sparsity of a real one (taxiRelease: 1.5·10⁶ counts, noise on every
// coordinate), on the sparse path (the default at S = 500) and the dense one (what every
// release cost before), in wall and CPU milliseconds per plan.
//
//	go test ./agents/tabular -run '^$' -bench '^BenchmarkPlanTaxi$' -benchtime 20x
func BenchmarkPlanTaxi(b *testing.B) {
	m, err := gymenvs.Load("taxi")
	if err != nil {
		b.Fatal(err)
	}
	rel := taxiRelease(m, 600, 7)
	bonus, err := PracticalNoiseBonus().resolve(m.S, m.A, m.H, 1_000_000, PracticalPrivacy{Pool: true}, 0.1)
	if err != nil {
		b.Fatal(err)
	}
	term, err := newTerminal("taxi", m.S, m.Terminal, m.TerminalReward)
	if err != nil {
		b.Fatal(err)
	}
	for _, path := range []struct {
		name string
		p    planPath
	}{{"sparse", pathSparse}, {"dense", pathDense}} {
		b.Run(path.name, func(b *testing.B) {
			p := effectivePlanner(m.S, m.A, m.H, true, term, bonus, rand.New(rand.NewPCG(1, 2)))
			p.path = path.p
			pol := model.NewDeterministic(m.S, m.H)
			runtime.GC()
			cpu := cpuSeconds()
			for b.Loop() {
				p.version = -1
				if err := p.Plan(rel, pol); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(b.Elapsed().Seconds()*1e3/float64(b.N), "ms/plan")
			b.ReportMetric((cpuSeconds()-cpu)*1e3/float64(b.N), "cpu-ms/plan")
			b.ReportMetric(float64(len(p.rows.next)), "kept-entries")
		})
	}
}

// taxiRelease returns a pooled release of the model m (homogeneous, sparse) shaped like
// practical-jdp's after ≈ 10⁵ users: every non-terminal (s,a) seen n ∈ [0, 2·10⁴) times, its
// counts n·P(·|s,a) and rewards n·R(s,a), plus N(0, std²) noise on every coordinate
// (RStd = 2·std, the reward weight 0.5).
func taxiRelease(m *model.MDP, std float64, seed uint64) *Release {
	r := rand.New(rand.NewPCG(seed, 26))
	rel := emptyRelease(m.S, m.A, m.H, true)
	rel.Users, rel.Std, rel.RStd = 100_000, std, 2*std
	for s := range m.S {
		for a := range m.A {
			i := s*m.A + a
			n := 0.0
			if !m.IsTerminal(s) {
				n = float64(r.IntN(20_000))
				next, prob := m.Row(0, s, a)
				for k, j := range next {
					rel.NT[i*m.S+int(j)] = n * prob[k]
				}
			}
			rel.R[i] = n*m.Reward(0, s, a) + rel.RStd*r.NormFloat64()
			for j := range m.S {
				rel.NT[i*m.S+j] += std * r.NormFloat64()
			}
		}
	}
	return &rel
}
