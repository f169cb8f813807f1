package tabular

import (
	"math"
	"math/rand/v2"
	"testing"

	model "github.com/dprl/dprl/model/tabular"
)

// TestPlannersNeverPanic (issue 25 item 2): every tabular planner returns an error, never
// panics, on released statistics with a NaN or an infinity, and never panics on huge finite
// ones (1e308: sums and products overflow inside the planner, and the tie-break then has no
// action to choose from — on the old code `invalid argument to IntN`).
func TestPlannersNeverPanic(t *testing.T) {
	const S, A, H, K = 3, 2, 4, 100
	type plan func(v float64, where int) error
	practical := func(preset string, psrl bool) plan {
		return func(v float64, where int) error {
			b, _ := NoiseBonusPreset(preset)
			b, err := b.resolve(S, A, H, K, PracticalPrivacy{Pool: true}, 0.1)
			if err != nil {
				t.Fatal(err)
			}
			r := &Release{S: S, A: A, H: H, Pooled: true, Users: 5, Std: 2, RStd: 3,
				NT: make([]float64, S*A*S), R: make([]float64, S*A)}
			for i := range r.NT {
				r.NT[i] = float64(i % 3)
			}
			poison(v, where, [][][]float64{{r.NT}, {r.R}}, func(v float64) { r.Std, r.RStd = v, v })
			tie := rand.New(rand.NewPCG(1, 2))
			pol := model.NewDeterministic(S, H)
			if psrl {
				return newNoisePSRL(S, A, H, true, terminal{}, nil, nil, rand.New(rand.NewPCG(3, 4)), tie).Plan(r, pol)
			}
			return newNoiseUCB(S, A, H, true, terminal{}, nil, nil, b, tie).Plan(r, pol)
		}
	}
	papers := func(dp bool) plan {
		return func(v float64, where int) error {
			bonus, err := PracticalBonus().Resolve(S, A, H, K, 0.1)
			if err != nil {
				t.Fatal(err)
			}
			b := newBillboard(S, A, H)
			b.E = 5
			poison(v, where, [][][]float64{{b.NT}, {b.R, b.N}}, func(v float64) { b.E = v })
			tie := rand.New(rand.NewPCG(1, 2))
			pol := model.NewDeterministic(S, H)
			if dp {
				return NewDPUCBVI(S, A, H, bonus, tie).Plan(b, pol)
			}
			return NewPrivateUCBVI(S, A, H, bonus, tie).Plan(b, pol)
		}
	}
	for name, p := range map[string]plan{"ucb-practical": practical("practical", false), "ucb-plugin": practical("plugin", false),
		"psrl": practical("", true), "dp-ucbvi": papers(true), "private-ucbvi": papers(false)} {
		for _, v := range []float64{math.NaN(), math.Inf(1), math.Inf(-1), 1e308, -1e308, math.MaxFloat64} {
			for where := range 3 {
				func() {
					defer func() {
						if r := recover(); r != nil {
							t.Errorf("%s: %g at %d: panic: %v", name, v, where, r)
						}
					}()
					err := p(v, where)
					if (math.IsNaN(v) || math.IsInf(v, 0)) && err == nil {
						t.Errorf("%s: %g at %d: planned on a non-finite release", name, v, where)
					}
				}()
			}
		}
	}
}

// poison writes v into part where of a release: every entry of the slices parts[where], or the
// release's scalars (set) when where is past the parts.
func poison(v float64, where int, parts [][][]float64, set func(v float64)) {
	if where >= len(parts) {
		set(v)
		return
	}
	for _, xs := range parts[where] {
		for i := range xs {
			xs[i] = v
		}
	}
}
