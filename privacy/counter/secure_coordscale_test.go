package counter_test

import (
	"math"
	"testing"

	"github.com/dprl/dprl/privacy/counter"
	"github.com/dprl/dprl/privacy/noise"
)

// TestSecureCoordScaleHidesResidue: with per-coordinate scales and the Secure source, a
// coordinate whose std is larger than the smallest one must not release the element's residue
// modulo its own coarser grid. Elements 0 and γ (γ the grid the data are rounded to) are fed to
// counters with scales (1, √2); over 200 keys the parity of release/γ must be a fair coin for
// both elements. When that coordinate drew on its own grid 2γ, the parity equalled the data's in
// 200 of 200 keys (an unbounded privacy loss).
func TestSecureCoordScaleHidesResidue(t *testing.T) {
	const keys = 200
	for _, kind := range []string{"tree", "honaker", "sqrt", "blt"} {
		cfg := counter.GaussianConfig{Dim: 2, Capacity: 4, Sigma: 0.75, CoordScale: []float64{1, math.Sqrt2}}
		g := noise.GaussianGranularity(cfg.Sigma)
		for _, x := range []float64{0, g} {
			odd := 0
			for key := range keys {
				src := noise.NewSecureFromKey([32]byte{7, byte(key), byte(key >> 8)})
				var c counter.GaussianCounter
				var err error
				switch kind {
				case "tree":
					c, err = counter.NewGaussianTree(cfg, src)
				case "honaker":
					c, err = counter.NewHonakerTree(cfg, src)
				case "sqrt":
					c, err = counter.NewSqrtFactorization(cfg, src)
				case "blt":
					c, err = counter.NewSqrtBLT(cfg, 0, src)
				}
				if err != nil {
					t.Fatal(err)
				}
				if err := c.Insert([]float64{x, x}); err != nil {
					t.Fatal(err)
				}
				if int64(math.Round(c.Prefix()[1]/g))%2 != 0 {
					odd++
				}
			}
			if odd < keys*3/10 || odd > keys*7/10 {
				t.Errorf("%s, element %v: release/γ odd in %d of %d keys; the parity must not follow the data", kind, x, odd, keys)
			}
		}
	}
}
