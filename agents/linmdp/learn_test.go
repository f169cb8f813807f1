package linmdp

import (
	"context"
	"fmt"
	"testing"

	model "github.com/dprl/dprl/model/linmdp"
	"github.com/dprl/dprl/rng"
)

func mean(x []float64) float64 {
	s := 0.0
	for _, v := range x {
		s += v
	}
	return s / float64(len(x))
}

func runAgent(t testing.TB, env *model.MDP, ag Agent, K int, seed uint64) Trace {
	t.Helper()
	tr, err := Run(context.Background(), env, ag, K, rng.NewSeed(seed).Child("env").Rand())
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// TestNoiseOffTwinsLearn is spec §9.2 test 6: on E2 (m=3, M=10, H=12) with c_beta = 0.2 and
// K = 3000 the non-private agents must cut the mean per-episode regret of the last quarter to
// ≤ 0.6 × that of the first quarter (prototype: 0.31–0.41). Checked by hand that it fails when
// the bonus is removed (c_beta = 1e−9: all 9 subtests fail; the greedy agent stays at the lure).
func TestNoiseOffTwinsLearn(t *testing.T) {
	env := e2small(t)
	const K = 3000
	for _, seed := range []uint64{0, 1, 2} {
		sd := rng.NewSeed(seed).Child("agent")
		com := Common{K: K, CBeta: 0.2, Seed: &sd}
		mk := map[string]func() (Agent, error){
			"rare-switch": func() (Agent, error) { return NewNgo(env, NgoConfig{Common: com, NoiseOff: true}) },
			"lsvi-ucb":    func() (Agent, error) { return NewLSVIUCB(env, com) },
			"batch-twin": func() (Agent, error) {
				return NewLuyo(env, LuyoConfig{Common: com, NoiseOff: true, Batches: 30})
			},
		}
		for name, f := range mk {
			t.Run(fmt.Sprintf("%s/seed%d", name, seed), func(t *testing.T) {
				ag, err := f()
				if err != nil {
					t.Fatal(err)
				}
				tr := runAgent(t, env, ag, K, seed)
				first, last := mean(tr.Regret[:K/4]), mean(tr.Regret[3*K/4:])
				t.Logf("first %.3f last %.3f ratio %.3f updates %d", first, last, last/first, len(tr.Updates))
				if last > 0.6*first {
					t.Errorf("last-quarter regret %.3f > 0.6 × first-quarter %.3f", last, first)
				}
			})
		}
	}
}
