package counter_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/dprl/dprl/privacy/counter"
	"github.com/dprl/dprl/privacy/noise"
)

// BenchmarkGaussianInsertPrefix measures Insert + Prefix at Dim = 1920 (RiverSwim's pooled
// statistics) after `at` earlier insertions, for every Gaussian counter: the cost per step of
// the tree, Honaker and BLT must not grow with t (the naive square root grows linearly and is
// measured only at small t). Run: go test ./privacy/counter -run '^$' -bench GaussianInsertPrefix
func BenchmarkGaussianInsertPrefix(b *testing.B) {
	const dim = 1920
	blt, err := counter.FitSqrtBLT(1<<16, counter.DefaultBLTBuffers)
	if err != nil {
		b.Fatal(err)
	}
	kinds := []struct {
		name  string
		maxAt int
		build func(cfg counter.GaussianConfig, src noise.Source) (counter.GaussianCounter, error)
	}{
		{"tree", 1 << 15, func(cfg counter.GaussianConfig, src noise.Source) (counter.GaussianCounter, error) {
			return counter.NewGaussianTree(cfg, src)
		}},
		{"honaker", 1 << 15, func(cfg counter.GaussianConfig, src noise.Source) (counter.GaussianCounter, error) {
			return counter.NewHonakerTree(cfg, src)
		}},
		{"blt5", 1 << 15, func(cfg counter.GaussianConfig, src noise.Source) (counter.GaussianCounter, error) {
			return counter.NewBLT(cfg, blt, src)
		}},
		{"sqrt-naive", 1 << 8, func(cfg counter.GaussianConfig, src noise.Source) (counter.GaussianCounter, error) {
			return counter.NewSqrtFactorization(cfg, src)
		}},
	}
	x := make([]float64, dim)
	for i := range x {
		x[i] = float64(i % 3)
	}
	for _, k := range kinds {
		for _, at := range []int{0, 1 << 8, 1 << 15} {
			if at > k.maxAt {
				continue
			}
			b.Run(fmt.Sprintf("%s/t=%d", k.name, at), func(b *testing.B) {
				src := noise.NewSeeded(rand.New(rand.NewPCG(1, 2)))
				c, err := k.build(counter.GaussianConfig{Dim: dim, Capacity: at + b.N, Sigma: 1}, src)
				if err != nil {
					b.Fatal(err)
				}
				for range at {
					if err := c.Insert(x); err != nil {
						b.Fatal(err)
					}
				}
				b.ResetTimer()
				sink := 0.0
				for range b.N {
					if err := c.Insert(x); err != nil {
						b.Fatal(err)
					}
					sink += c.Prefix()[0]
				}
				b.StopTimer()
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "inserts/s")
				_ = sink
			})
		}
	}
}

// BenchmarkBLTInsertTaxi measures one BLT Insert + Prefix (5 buffers, seeded noise) at the
// dimension of practical-jdp's pooled release on Taxi-v3, S·A·(S+1) = 1 503 000: the draws
// (one Gaussian per coordinate) and the buffers' update, once per release (≈ 5 000 releases
// at K = 10⁶; at most 5 008 iterations). Run:
//
//	go test ./privacy/counter -run '^$' -bench BLTInsertTaxi -benchtime 20x
func BenchmarkBLTInsertTaxi(b *testing.B) {
	const dim = 500 * 6 * 501
	p, err := counter.FitSqrtBLT(5008, counter.DefaultBLTBuffers)
	if err != nil {
		b.Fatal(err)
	}
	x := make([]float64, dim)
	for i := range x {
		x[i] = float64(i % 3)
	}
	src := noise.NewSeeded(rand.New(rand.NewPCG(1, 2)))
	c, err := counter.NewBLT(counter.GaussianConfig{Dim: dim, Capacity: 5008, Sigma: 1}, p, src)
	if err != nil {
		b.Fatal(err)
	}
	sink := 0.0
	for b.Loop() {
		if err := c.Insert(x); err != nil {
			b.Fatal(err)
		}
		sink += c.Prefix()[0]
	}
	b.ReportMetric(b.Elapsed().Seconds()*1e3/float64(b.N), "ms/insert")
	_ = sink
}
