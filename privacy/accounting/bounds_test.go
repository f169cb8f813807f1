package accounting

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

func TestBoundsKnown(t *testing.T) {
	l := math.Log(2 / 0.01)
	tests := []struct {
		name string
		got  func() (float64, error)
		want float64
	}{
		{"union c=1", func() (float64, error) { return LaplaceSumUnionBound(2, 1, 0.01) }, 2 * math.Log(100)},
		{"union c=8", func() (float64, error) { return LaplaceSumUnionBound(0.5, 8, 0.01) }, 8 * 0.5 * math.Log(800)},
		{"chan small c", func() (float64, error) { return LaplaceSumChanBound(1, 2, 0.01) }, math.Sqrt(l) * math.Sqrt(8*l)},
		{"chan large c", func() (float64, error) { return LaplaceSumChanBound(3, 100, 0.01) }, 2 * math.Sqrt2 * 3 * math.Sqrt(100*l)},
		{"gauss scalar", func() (float64, error) { return GaussScalarBound(2, 5, 0.01) }, 2 * math.Sqrt(10*l)},
		{"gauss vec", func() (float64, error) { return GaussVecNormBound(2, 4, 9, 0.05) },
			2 * 2 * (3 + math.Sqrt(2*math.Log(20)))},
		{"sym op norm", func() (float64, error) { return SymGaussOpNormBound(0.5, 9, 16, 0.01) },
			0.5 * 3 * (16 + math.Sqrt(8*l))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.got()
			if err != nil {
				t.Fatal(err)
			}
			if relErr(got, tt.want) > 1e-14 {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
		})
	}
}

// The Chan et al. bound beats the union bound once c ≫ ln(2/β) (spec §3.4).
func TestChanTighterForLargeC(t *testing.T) {
	for _, c := range []int{16, 64, 1024} {
		u, _ := LaplaceSumUnionBound(1, c, 0.01)
		ch, _ := LaplaceSumChanBound(1, c, 0.01)
		if !(ch < u) {
			t.Errorf("c=%d: Chan %v not below union %v", c, ch, u)
		}
	}
}

// Empirical coverage at a fixed seed: the fraction of sums of c i.i.d. Laplace(b) draws whose
// absolute value exceeds the bound at β = 0.01 is at most 2β over 10^5 draws.
func TestLaplaceBoundsCoverage(t *testing.T) {
	const (
		n    = 100000
		beta = 0.01
		b    = 1.7
	)
	for _, c := range []int{1, 2, 5, 12, 20} {
		union, err := LaplaceSumUnionBound(b, c, beta)
		if err != nil {
			t.Fatal(err)
		}
		chan_, err := LaplaceSumChanBound(b, c, beta)
		if err != nil {
			t.Fatal(err)
		}
		r := rand.New(rand.NewPCG(20240601, uint64(c)))
		var overUnion, overChan int
		for range n {
			var s float64
			for range c {
				s += b * (r.ExpFloat64() - r.ExpFloat64())
			}
			if math.Abs(s) > union {
				overUnion++
			}
			if math.Abs(s) > chan_ {
				overChan++
			}
		}
		fu, fc := float64(overUnion)/n, float64(overChan)/n
		t.Logf("c=%2d union %.4g: exceed %.5f; Chan %.4g: exceed %.5f", c, union, fu, chan_, fc)
		if fu > 2*beta {
			t.Errorf("c=%d: union bound exceeded in %.5f of draws > 2β", c, fu)
		}
		if fc > 2*beta {
			t.Errorf("c=%d: Chan bound exceeded in %.5f of draws > 2β", c, fc)
		}
	}
}

// Same check for the Gaussian bounds (scalar, vector norm, Mirror symmetric operator norm).
func TestGaussBoundsCoverage(t *testing.T) {
	const (
		beta  = 0.01
		sigma = 0.8
	)
	tests := []struct {
		name   string
		n      int
		c, dim int
		bound  func(c, dim int) (float64, error)
		draw   func(r *rand.Rand, c, dim int) float64
	}{
		{"scalar", 100000, 6, 1,
			func(c, _ int) (float64, error) { return GaussScalarBound(sigma, c, beta) },
			func(r *rand.Rand, c, _ int) float64 {
				var s float64
				for range c {
					s += sigma * r.NormFloat64()
				}
				return math.Abs(s)
			}},
		{"vector", 100000, 4, 10,
			func(c, dim int) (float64, error) { return GaussVecNormBound(sigma, c, dim, beta) },
			func(r *rand.Rand, c, dim int) float64 {
				var ss float64
				for range dim {
					var s float64
					for range c {
						s += sigma * r.NormFloat64()
					}
					ss += s * s
				}
				return math.Sqrt(ss)
			}},
		{"sym mirror", 20000, 3, 5,
			func(c, dim int) (float64, error) { return SymGaussOpNormBound(sigma, c, dim, beta) },
			func(r *rand.Rand, c, dim int) float64 {
				m := mat.NewSymDense(dim, nil)
				for i := range dim {
					for j := i; j < dim; j++ {
						var s float64
						for range c {
							s += sigma * r.NormFloat64()
						}
						m.SetSym(i, j, s)
					}
				}
				var eig mat.EigenSym
				if !eig.Factorize(m, false) {
					return math.Inf(1)
				}
				vals := eig.Values(nil)
				return math.Max(math.Abs(vals[0]), math.Abs(vals[len(vals)-1]))
			}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bound, err := tt.bound(tt.c, tt.dim)
			if err != nil {
				t.Fatal(err)
			}
			r := rand.New(rand.NewPCG(7, uint64(i)))
			over := 0
			for range tt.n {
				if tt.draw(r, tt.c, tt.dim) > bound {
					over++
				}
			}
			f := float64(over) / float64(tt.n)
			t.Logf("bound %.4g exceeded in %.5f of %d draws", bound, f, tt.n)
			if f > 2*beta {
				t.Errorf("bound exceeded in %.5f of draws > 2β", f)
			}
		})
	}
}
