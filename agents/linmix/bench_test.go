package linmix

import (
	"fmt"
	"math/rand/v2"
	"testing"

	model "github.com/dprl/dprl/model/linmix"
	"github.com/dprl/dprl/rng"
)

func benchEnv(b *testing.B, K int) *model.MDP {
	m, err := model.HardToLearn(5, 6, K, rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		b.Fatal(err)
	}
	return m
}

var benchAgents = []Config{
	{Algorithm: UCRLVTR},
	{Algorithm: UCRLVTR, Mode: JDP, Epsilon: 0.5},
	{Algorithm: UCRLVTR, Mode: LDP, Epsilon: 0.5},
	{Algorithm: UCRLVTR, Mode: JDP, Epsilon: 0.5, Calibration: Laplace},
	{Algorithm: UCRLVTR, Mode: LDP, Epsilon: 0.5, Calibration: Laplace},
	{Algorithm: UCRLVTRPlus},
	{Algorithm: UCRLVTRPlus, Mode: JDP, Epsilon: 0.5},
	{Algorithm: UCRLVTRPlus, Mode: LDP, Epsilon: 0.5},
	{Algorithm: LinOptVI},
	{Algorithm: LinOptVI, Mode: JDP, Epsilon: 0.5},
	{Algorithm: LinOptVI, Mode: LDP, Epsilon: 0.5},
	{Algorithm: LinOptPO},
	{Algorithm: LinOptPO, Mode: JDP, Epsilon: 0.5},
	{Algorithm: LinOptPO, Mode: LDP, Epsilon: 0.5},
}

// BenchmarkEpisode measures one full episode (release, user-side planning, exact regret,
// rollout, leaves, privatisation) on HardToLearn with d = 5, H = 6 (S = 8, A = 16), seeded
// noise, and reports episodes/s. The floor: private UCRL-VTR (LDP) ≥ 10 000 episodes/s.
//
//	go test -run NONE -bench BenchmarkEpisode -cpu 1 ./agents/linmix/
func BenchmarkEpisode(b *testing.B) {
	for _, c := range benchAgents {
		b.Run(c.Name(), func(b *testing.B) {
			const K = 1 << 20
			cfg := c
			cfg.Episodes = K
			a, err := NewSeeded(benchEnv(b, K), cfg, rng.NewSeed(1))
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if a.publisher().k == K {
					b.StopTimer()
					a, _ = NewSeeded(benchEnv(b, K), cfg, rng.NewSeed(uint64(i)))
					b.StartTimer()
				}
				if _, err := a.Episode(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "episodes/s")
		})
	}
}

// BenchmarkRunLength runs whole K-episode runs of private UCRL-VTR (LDP and JDP) at
// K = 10⁴ and 10⁵; the ratio of the two times shows that the per-episode cost does not grow
// with k.
//
//	go test -run NONE -bench BenchmarkRunLength -benchtime 1x -cpu 1 ./agents/linmix/
func BenchmarkRunLength(b *testing.B) {
	for _, mode := range []Mode{LDP, JDP} {
		for _, K := range []int{10000, 100000} {
			b.Run(fmt.Sprintf("%s/K=%d", mode, K), func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					a, err := NewSeeded(benchEnv(b, K), Config{Algorithm: UCRLVTR, Mode: mode, Epsilon: 0.5, Episodes: K}, rng.NewSeed(uint64(i)))
					if err != nil {
						b.Fatal(err)
					}
					if _, err := a.Run(); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(K)*float64(b.N)/b.Elapsed().Seconds(), "episodes/s")
			})
		}
	}
}

// BenchmarkPracticalEpisode measures one episode of dprl's practical private UCRL-VTR on the
// same HardToLearn instance as BenchmarkEpisode, seeded noise; compare with
// ucrl-vtr/{jdp,ldp} there. "every-episode" releases after every user (M = 1: the most
// expensive schedule); "M500" is the reproduction's setting (practical-linear-mixture.yaml:
// releases after users 1, 2, 4, … then every 500, trace budget 0.6), the one issue 13's speed
// goal is measured at.
//
//	go test -run NONE -bench BenchmarkPracticalEpisode -cpu 1 ./agents/linmix/
func BenchmarkPracticalEpisode(b *testing.B) {
	var cfgs []PracticalConfig
	for _, m := range []int{1, 500} {
		for _, mode := range []Mode{None, JDP, LDP} {
			p := PracticalPrivacy{Mode: mode, Epsilon: 0.5}
			if m > 1 {
				p.BatchEvery, p.Budget = m, 0.6
			}
			cfgs = append(cfgs, PracticalConfig{Privacy: p, Episodes: 1 << 16})
		}
	}
	for _, cfg := range cfgs {
		label := "every-episode/" + cfg.Name()
		if cfg.Privacy.BatchEvery > 1 {
			label = fmt.Sprintf("M%d/%s", cfg.Privacy.BatchEvery, cfg.Name())
		}
		b.Run(label, func(b *testing.B) {
			a, err := NewPracticalSeeded(benchEnv(b, cfg.Episodes), cfg, rng.NewSeed(1))
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if a.publisher().k == cfg.Episodes {
					b.StopTimer()
					a, _ = NewPracticalSeeded(benchEnv(b, cfg.Episodes), cfg, rng.NewSeed(uint64(i)))
					b.StartTimer()
				}
				if _, err := a.Episode(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "episodes/s")
		})
	}
}
