package counter

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/dprl/dprl/privacy/noise"
)

// double-double helpers
func twoSum(a, b float64) (float64, float64) { s := a + b; bb := s - a; return s, (a - (s - bb)) + (b - bb) }
func twoProd(a, b float64) (float64, float64) { p := a * b; return p, math.FMA(a, b, -p) }

type dd struct{ hi, lo float64 }

func ddAdd(x, y dd) dd { s, e := twoSum(x.hi, y.hi); e += x.lo + y.lo; h, l := twoSum(s, e); return dd{h, l} }
func ddMulF(x dd, f float64) dd { p, e := twoProd(x.hi, f); e += x.lo * f; h, l := twoSum(p, e); return dd{h, l} }
func ddNeg(x dd) dd { return dd{-x.hi, -x.lo} }

func TestScratchEta(t *testing.T) {
	p, _ := FitSqrtBLT(199999, 5); _ = p
	for _, mode := range []string{"normal", "const+64", "spiky"} {
		for _, T := range []int{1000, 199999, 1000000} {
			sigma := 1.0
			g := noise.GaussianGranularity(sigma)
			r := rand.New(rand.NewPCG(1, 2))
			zs := make([]float64, T)
			for i := range zs {
				switch mode {
				case "normal":
					zs[i] = roundGrid(r.NormFloat64(), g)
				case "const+64":
					zs[i] = 64
				case "spiky":
					v := r.NormFloat64()
					if r.IntN(50) == 0 {
						v *= 1024
					}
					zs[i] = roundGrid(v, g)
				}
			}
			c, _ := NewBLT(GaussianConfig{Dim: 1, Capacity: T, Sigma: sigma}, p, &scriptSource{vals: zs})
			d := len(p.Theta)
			s := make([]dd, d)
			N := dd{}
			worst, maxN := 0.0, 0.0
			x := []float64{0}
			for i := range T {
				_ = c.Insert(x)
				// exact-ish P_t = N − θᵀs
				P := N
				for j := range d {
					P = ddAdd(P, ddNeg(ddMulF(s[j], p.Theta[j])))
				}
				worst = math.Max(worst, math.Abs(c.pred[0]-P.hi-P.lo))
				maxN = math.Max(maxN, math.Abs(P.hi))
				u := ddAdd(dd{zs[i], 0}, ddAdd(P, ddNeg(N)))
				for j := range d {
					s[j] = ddAdd(ddMulF(s[j], p.Omega[j]), u)
				}
				N = ddAdd(N, u)
			}
			t.Logf("%s T=%d: max |P|/σ = %.3g, η/γ = %.3g", mode, T, maxN, worst/g)
		}
	}
}
