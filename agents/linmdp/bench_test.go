package linmdp

import (
	"context"
	"fmt"
	"testing"

	model "github.com/dprl/dprl/model/linmdp"
	"github.com/dprl/dprl/rng"
)

// benchAgents builds every agent of the family for a benchmark at K episodes (ε = 1,
// δ = 1e−5, theory β, [S] and App. E.1 calibrations).
func benchAgents(env *model.MDP, K int) map[string]func() (Agent, error) {
	sd := rng.NewSeed(1)
	c := Common{K: K, Seed: &sd}
	return map[string]func() (Agent, error){
		"lsvi-ucb":     func() (Agent, error) { return NewLSVIUCB(env, c) },
		"ngo-private":  func() (Agent, error) { return NewNgo(env, NgoConfig{Common: c, Epsilon: 1, Delta: 1e-5}) },
		"rare-switch":  func() (Agent, error) { return NewNgo(env, NgoConfig{Common: c, NoiseOff: true}) },
		"luyo-batched": func() (Agent, error) { return NewLuyo(env, LuyoConfig{Common: c, Epsilon: 1, Delta: 1e-5}) },
		"batch-twin":   func() (Agent, error) { return NewLuyo(env, LuyoConfig{Common: c, NoiseOff: true, Epsilon: 1}) },
		"luyo-nonbatched": func() (Agent, error) {
			return NewLuyo(env, LuyoConfig{Common: c, Epsilon: 1, Delta: 1e-5, NonBatched: true})
		},
	}
}

func benchEnvs(b *testing.B) map[string]*model.MDP {
	e2, err := model.LatentRiver(5, 10, 0.1, 0.9, 0.05, 15)
	if err != nil {
		b.Fatal(err)
	}
	ts, err := model.TwoState100(1, 15)
	if err != nil {
		b.Fatal(err)
	}
	return map[string]*model.MDP{"E2": e2, "TwoState100": ts}
}

func benchRun(b *testing.B, env *model.MDP, mk func() (Agent, error), K int) {
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		ag, err := mk()
		if err != nil {
			b.Fatal(err)
		}
		if _, err := Run(context.Background(), env, ag, K, rng.NewSeed(uint64(i)).Rand()); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(K)*float64(b.N)/b.Elapsed().Seconds(), "episodes/s")
}

// BenchmarkAgents runs every agent for K = 10⁴ episodes (H = 15) on E2 (m = 5) and
// TwoState-100 and reports episodes/s (including exact regret evaluation):
//
//	go test -run XXX -bench Agents -benchtime 1x -cpu 1 ./agents/linmdp
func BenchmarkAgents(b *testing.B) {
	const K = 10000
	for _, en := range []string{"E2", "TwoState100"} {
		env := benchEnvs(b)[en]
		for _, an := range []string{"lsvi-ucb", "ngo-private", "rare-switch", "luyo-batched", "batch-twin", "luyo-nonbatched"} {
			b.Run(en+"/"+an, func(b *testing.B) { benchRun(b, env, benchAgents(env, K)[an], K) })
		}
	}
}

// BenchmarkGrowth measures how the run time of the low-switching agents grows from K = 10⁴
// to 10⁵ (ratio ≈ 10 means linear in K; LSVI-UCB refits every episode, also linear thanks to
// the aggregated path, but with a much larger constant):
//
//	go test -run XXX -bench Growth -benchtime 1x -cpu 1 ./agents/linmdp
func BenchmarkGrowth(b *testing.B) {
	for _, en := range []string{"E2", "TwoState100"} {
		env := benchEnvs(b)[en]
		for _, an := range []string{"ngo-private", "rare-switch", "luyo-batched"} {
			for _, K := range []int{10000, 100000} {
				b.Run(fmt.Sprintf("%s/%s/K=%d", en, an, K), func(b *testing.B) { benchRun(b, env, benchAgents(env, K)[an], K) })
			}
		}
	}
}

// BenchmarkPracticalAgents runs dprl's practical agents (ε = 1, δ = 1e−5, BLT counter,
// release after every user for practical-lsvi) for K = 10⁴ and 10⁵ episodes (H = 15) on E2
// (m = 5) and TwoState-100 beside Ngo's agent, and reports episodes/s (including exact regret
// evaluation); the K = 10⁵ / 10⁴ time ratio shows the cost is flat in K:
//
//	go test -run XXX -bench PracticalAgents -benchtime 1x -cpu 1 ./agents/linmdp
func BenchmarkPracticalAgents(b *testing.B) {
	for _, en := range []string{"E2", "TwoState100"} {
		env := benchEnvs(b)[en]
		for _, an := range []string{"practical-lsvi", "practical-lsvi-batched", "practical-rare-switch", "ngo-private"} {
			for _, K := range []int{10000, 100000} {
				mk := func() (Agent, error) {
					sd := rng.NewSeed(1)
					c := PracticalConfig{Common: Common{K: K, Seed: &sd}, Epsilon: 1, Delta: 1e-5}
					switch an {
					case "practical-lsvi-batched":
						c.Batched = true
					case "practical-rare-switch":
						c.Mode = PracticalNonPrivate
					case "ngo-private":
						return benchAgents(env, K)[an]()
					}
					return NewPractical(env, c)
				}
				b.Run(fmt.Sprintf("%s/%s/K=%d", en, an, K), func(b *testing.B) { benchRun(b, env, mk, K) })
			}
		}
	}
}
