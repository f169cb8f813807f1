package counter

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/dprl/dprl/privacy/noise"
)

// referenceStep is BLT.step's arithmetic without the grid as it was written before the fused
// pass (one loop per buffer; u is a Dim-long scratch): the reference TestBLTFusedStep
// compares with.
func referenceStep(c *BLT, xr, u []float64) {
	b := c.dec.next()
	c.cumNow += b * b
	c.draw(u)
	c.advance(u)
	for k, v := range xr {
		c.noise[k] += u[k]
		c.sum[k] += v
		c.prefix[k] = c.sum[k] + c.noise[k]
	}
}

// TestBLTFusedStep: the fused insertion releases bit for bit the prefixes of the
// loop-per-buffer reference, and leaves the same state (buffers, noise, sums), with the same
// seeded draws, for 1 to 5 buffers, with and without per-coordinate scales, over 300
// insertions of random elements (dimension 1 037, not a multiple of the block).
func TestBLTFusedStep(t *testing.T) {
	const dim, T = 1037, 300
	for _, d := range []int{1, 2, 5} {
		for _, scaled := range []bool{false, true} {
			p, err := FitSqrtBLT(T, d)
			if err != nil {
				t.Fatal(err)
			}
			cfg := GaussianConfig{Dim: dim, Capacity: T, Sigma: 3}
			if scaled {
				cfg.CoordScale = make([]float64, dim)
				for k := range cfg.CoordScale {
					cfg.CoordScale[k] = 1 + float64(k%4)
				}
			}
			a, err := NewBLT(cfg, p, noise.NewSeeded(rand.New(rand.NewPCG(8, uint64(d)))))
			if err != nil {
				t.Fatal(err)
			}
			ref, err := NewBLT(cfg, p, noise.NewSeeded(rand.New(rand.NewPCG(8, uint64(d)))))
			if err != nil {
				t.Fatal(err)
			}
			r := rand.New(rand.NewPCG(9, 9))
			x, scratch := make([]float64, dim), make([]float64, dim)
			for step := range T {
				for k := range x {
					x[k] = math.Floor(10 * r.Float64())
				}
				if err := a.Insert(x); err != nil {
					t.Fatal(err)
				}
				xr, err := ref.element(x)
				if err != nil {
					t.Fatal(err)
				}
				ref.t++
				referenceStep(ref, xr, scratch)
				for k := range dim {
					if math.Float64bits(a.Prefix()[k]) != math.Float64bits(ref.Prefix()[k]) {
						t.Fatalf("d=%d scaled=%v insertion %d coordinate %d: fused %v, reference %v", d, scaled, step, k, a.Prefix()[k], ref.Prefix()[k])
					}
				}
			}
			for i := range a.s {
				for k := range dim {
					if math.Float64bits(a.s[i][k]) != math.Float64bits(ref.s[i][k]) || a.noise[k] != ref.noise[k] || a.sum[k] != ref.sum[k] {
						t.Fatalf("d=%d scaled=%v: state differs at buffer %d coordinate %d", d, scaled, i, k)
					}
				}
			}
			if a.PrefixStd() != ref.PrefixStd() {
				t.Fatalf("d=%d: prefix std %v, reference %v", d, a.PrefixStd(), ref.PrefixStd())
			}
		}
	}
}

// BenchmarkBLTStepForms compares the fused insertion with the loop-per-buffer reference at
// Taxi's dimension (5 buffers), and measures the draws alone (one Gaussian per coordinate,
// part of both). On the shared 2-core development machine (load 6–9), CPU time per insertion
// (perf stat task-clock of 31 minus 1 iterations, two repetitions): fused 34 ms, reference
// 41–48 ms, draws alone 12–13 ms; wall-clock figures there were unusable.
func BenchmarkBLTStepForms(b *testing.B) {
	const dim = 500 * 6 * 501
	p, err := FitSqrtBLT(5008, DefaultBLTBuffers)
	if err != nil {
		b.Fatal(err)
	}
	x, u := make([]float64, dim), make([]float64, dim)
	for _, form := range []string{"fused", "reference", "draw"} {
		b.Run(form, func(b *testing.B) {
			c, err := NewBLT(GaussianConfig{Dim: dim, Capacity: 5008, Sigma: 1}, p, noise.NewSeeded(rand.New(rand.NewPCG(1, 2))))
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				c.t++
				switch form {
				case "fused":
					c.step(x)
				case "draw":
					c.draw(u)
				default:
					referenceStep(c, x, u)
				}
			}
		})
	}
}
