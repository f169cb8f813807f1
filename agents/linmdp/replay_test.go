package linmdp

import (
	"github.com/dprl/dprl/internal/smallmat"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	model "github.com/dprl/dprl/model/linmdp"
	"github.com/dprl/dprl/rng"
)

// TestBillboardReplay checks the trust boundary of Ngo's agent: every policy it hands out is a
// function of the released statistics only. The released matrices Λ̃_h (after every episode)
// and the released ỹ (at every update) are recorded; a replayer that sees nothing else (no
// trajectories, no exact Gram matrix) re-derives the update schedule (log-det test on the
// releases) and the policies, and must reproduce the agent's action tables at every episode.
// The raw-planner broken variant must fail the replay (asserted).
func TestBillboardReplay(t *testing.T) {
	env := e2small(t)
	const K = 800
	for _, raw := range []bool{false, true} {
		sd := rng.NewSeed(4)
		cfg := NgoConfig{Common: Common{K: K, CBeta: 1e-3, Seed: &sd}, Epsilon: 1e3, Delta: 1e-5, CShift: 0.1}
		cfg.broken.record = true
		cfg.broken.rawPlanner = raw
		a, err := NewNgo(env, cfg)
		if err != nil {
			t.Fatal(err)
		}
		d, H := env.D, env.H
		r := rng.NewSeed(4).Child("env").Rand()
		var rels [][][]float64 // [k][h] released Λ̃ after episode k
		var acts [][][]int     // [k] policy used in episode k
		for k := 1; k <= K; k++ {
			a.BeginEpisode(k)
			acts = append(acts, copyPolicy(a.Policy()))
			playEpisode(t, a, env, r)
			rk := make([][]float64, H)
			for h := range rk {
				rk[h] = append([]float64(nil), a.rel[h]...)
			}
			rels = append(rels, rk)
		}
		if len(a.updates) == 0 {
			t.Fatal("no update happened: the replay would be vacuous")
		}
		// Replayer: public constants (shift, β, C, cap) + releases only.
		pl := newPlanner(env, a.beta, cfg.Tie, nil)
		chol := make([]float64, d*d)
		ref := make([]float64, H)
		for h := H - 1; h >= 0; h-- {
			for i := range chol {
				chol[i] = 0
			}
			for i := 0; i < d; i++ {
				chol[i*d+i] = math.Sqrt(a.shift)
			}
			pl.planStep(h, Release{Chol: chol})
			ref[h] = float64(d) * math.Log(a.shift)
		}
		cur := make([]float64, H)
		for h := range cur {
			cur[h] = ref[h]
		}
		yi, nUp := 0, 0
		mismatch := false
		for k := 1; k <= K; k++ {
			if nUp < a.umax {
				trig := false
				for h := 0; h < H; h++ {
					trig = trig || cur[h]-ref[h] >= a.lnC
				}
				if trig {
					for h := H - 1; h >= 0; h-- {
						m := rels[k-2][h]
						smallmat.Cholesky(m, d, chol)
						ref[h] = smallmat.LogDet(chol, d)
						pl.planStep(h, Release{Chol: append([]float64(nil), chol...), Y: a.ylog[yi]})
						yi++
					}
					nUp++
				}
			}
			if !reflect.DeepEqual(pl.act, acts[k-1]) {
				mismatch = true
				break
			}
			if nUp < a.umax {
				for h := 0; h < H; h++ {
					smallmat.Cholesky(rels[k-1][h], d, chol)
					cur[h] = smallmat.LogDet(chol, d)
				}
			}
		}
		if mismatch != raw {
			t.Errorf("rawPlanner=%v: replay mismatch = %v (want %v)", raw, mismatch, raw)
		}
	}
}

// playEpisode plays one episode of env with a's actions, the environment's responses drawn
// from r: every step is observed (failing t on an error), then the episode ends.
func playEpisode(t testing.TB, a Agent, env *model.MDP, r *rand.Rand) {
	t.Helper()
	s := env.InitialState(r)
	for h := 0; h < env.H; h++ {
		act := a.Act(h, s)
		s2 := env.Step(h, s, act, r)
		if err := a.Observe(h, s, act, env.Reward(h, s, act), s2); err != nil {
			t.Fatal(err)
		}
		s = s2
	}
	a.EndEpisode()
}

// copyPolicy returns a copy of the policy pol[h][s].
func copyPolicy(pol [][]int) [][]int {
	c := make([][]int, len(pol))
	for h, row := range pol {
		c[h] = append([]int(nil), row...)
	}
	return c
}
