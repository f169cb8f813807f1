package linmdp

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/dprl/dprl/agents/internal/agenttest"
	model "github.com/dprl/dprl/model/linmdp"
	"github.com/dprl/dprl/rng"
)

// Brute-force checks of the practical linear-MDP agents' ℓ2 sensitivity (issue 18 (b)) and of
// the boundary checks its proof relies on (one observation per step and episode; no NaN
// feature skipping the projection onto the unit ball).

// bruteLinEnv returns a valid linear MDP with N states, A actions, d = 2 features and horizon
// H, whose public feature table is then replaced by phi (the practical agent reads only the
// table, H and the sizes; nothing here samples the environment).
func bruteLinEnv(t *testing.T, N, A, H int, phi [][][]float64) *model.MDP {
	t.Helper()
	const d = 2
	base := make([][][]float64, N)
	for s := range base {
		base[s] = make([][]float64, A)
		for a := range base[s] {
			base[s][a] = []float64{1, 0}
		}
	}
	mu := [][][]float64{make([][]float64, N)}
	for s := range mu[0] {
		mu[0][s] = []float64{1 / float64(N), 1 / float64(N)}
	}
	init := make([]float64, N)
	for s := range init {
		init[s] = 1 / float64(N)
	}
	env, err := model.New("brute", base, mu, [][]float64{{0.5, 0.5}}, init, H)
	if err != nil {
		t.Fatal(err)
	}
	if len(phi) != N || len(phi[0]) != A || len(phi[0][0]) != d {
		t.Fatalf("feature table has shape %d×%d×%d, want %d×%d×%d", len(phi), len(phi[0]), len(phi[0][0]), N, A, d)
	}
	env.Phi = phi
	return env
}

// tableOf returns the N×A table whose (s, a) entry is f[(s·A + a) mod len(f)].
func tableOf(N, A int, f [][]float64) [][][]float64 {
	phi := make([][][]float64, N)
	for s := range phi {
		phi[s] = make([][]float64, A)
		for a := range phi[s] {
			phi[s][a] = append([]float64(nil), f[(s*A+a)%len(f)]...)
		}
	}
	return phi
}

// TestPracticalSensitivityBrute enumerates EVERY episode (every state, action, next state and
// reward at every step) of small linear MDPs, encodes each with the curator's own boundary and
// computes the worst replace-one distance over all pairs of episodes. PracticalSensitivity
// (as reported by the agent, which derives the sign constant from the public table) must be ≥
// it for nonnegative, signed, zero, over-long (projected) and infinite (zeroed) features, on
// awkward shapes (H = 1, one state, one action), pooled and step-dependent, for target scales
// 1, 3 and 0.4; and equal to it on the nonnegative orthogonal table with ≥ 2 states and actions,
// where the extreme pair of the proof exists. The reported Δ₂ must also be the formula with the
// table's true sign (κ = 4 as soon as one public feature entry is negative).
func TestPracticalSensitivityBrute(t *testing.T) {
	inf := math.Inf(1)
	tables := []struct {
		name  string
		f     [][]float64
		tight bool
	}{
		{"orthogonal", [][]float64{{1, 0}, {0, 1}, {0.6, 0.8}, {0, 0}}, true},
		{"signed", [][]float64{{1, 0}, {-1, 0}, {0, -1}, {0.6, -0.8}}, false},
		{"over-long", [][]float64{{3, 4}, {-5, 0}, {0, 0}, {1e3, 1e3}}, false},
		{"infinite", [][]float64{{inf, 1}, {0, 1}, {0.5, 0.5}, {1, 0}}, false},
	}
	shapes := []struct{ N, A, H int }{{1, 1, 1}, {1, 1, 3}, {2, 1, 2}, {1, 2, 2}, {2, 2, 1}, {2, 2, 2}, {2, 2, 3}}
	for _, tb := range tables {
		for _, sh := range shapes {
			phi := tableOf(sh.N, sh.A, tb.f)
			nonneg := true // the sign of the entries this shape actually uses
			for _, row := range phi {
				for _, f := range row {
					for _, x := range f {
						nonneg = nonneg && !(x < 0)
					}
				}
			}
			env := bruteLinEnv(t, sh.N, sh.A, sh.H, phi)
			rewards := []float64{0, 1}
			if sh.H <= 2 {
				rewards = []float64{-1, 0, 1, 2, math.NaN()}
			}
			type step struct {
				s, a, s2 int
				r        float64
			}
			var steps []step
			for s := 0; s < sh.N; s++ {
				for a := 0; a < sh.A; a++ {
					for s2 := 0; s2 < sh.N; s2++ {
						for _, r := range rewards {
							steps = append(steps, step{s, a, s2, r})
						}
					}
				}
			}
			for _, steps1 := range []bool{false, true} {
				for _, ts := range []float64{1, 3, 0.4} {
					if ts != 1 && sh.H > 2 {
						continue // the scales are exercised on the shorter horizons (time)
					}
					sd := rng.NewSeed(1)
					a, err := NewPractical(env, PracticalConfig{Common: Common{K: 10, Seed: &sd}, Epsilon: 1, Delta: 1e-5, StepDependent: steps1, TargetScale: ts})
					if err != nil {
						t.Fatal(err)
					}
					lay := a.cur.lay
					name := fmt.Sprintf("%s N=%d A=%d H=%d steps=%v ts=%v", tb.name, sh.N, sh.A, sh.H, steps1, ts)
					if want := PracticalSensitivity(sh.H, !steps1, nonneg, lay.gramScale, lay.tgtScale); a.report.Entries[0].Sensitivity != want {
						t.Errorf("%s: reported Δ₂ = %v, want %v for a table with nonneg = %v", name, a.report.Entries[0].Sensitivity, want, nonneg)
					}
					var xs [][]float64
					idx := make([]int, sh.H)
					for {
						clear(a.cur.batch)
						for h, i := range idx {
							st := steps[i]
							a.cur.observe(h, st.s, st.a, st.r, st.s2)
						}
						xs = append(xs, append([]float64(nil), a.cur.batch...))
						h := 0
						for ; h < sh.H; h++ {
							idx[h]++
							if idx[h] < len(steps) {
								break
							}
							idx[h] = 0
						}
						if h == sh.H {
							break
						}
					}
					clear(a.cur.batch)
					brute := agenttest.MaxPairDistance(xs, nil)
					delta := a.report.Entries[0].Sensitivity
					if brute > delta*(1+1e-12) {
						t.Errorf("%s: worst replace-one distance %v over all %d episodes exceeds Δ₂ = %v", name, brute, len(xs), delta)
					}
					if tb.tight && sh.N >= 2 && sh.A >= 2 && brute < delta*(1-1e-12) {
						t.Errorf("%s: Δ₂ = %v not attained (brute force %v) although the extreme pair exists", name, delta, brute)
					}
				}
			}
		}
	}
}

// TestPracticalOneObservationPerStep: PracticalSensitivity counts one step per h and user, so
// the agent's boundary must reject a second observation of the same step in one episode
// (error naming the step; nothing recorded) and accept it again after EndEpisode. Before the
// check, a caller observing step 0 H times let one user contribute H·(steps) to a
// step-dependent group whose sensitivity assumes one.
func TestPracticalOneObservationPerStep(t *testing.T) {
	env := practicalSmall(t)
	for _, steps := range []bool{false, true} {
		sd := rng.NewSeed(1)
		a, err := NewPractical(env, PracticalConfig{Common: Common{K: 10, Seed: &sd}, Epsilon: 1, Delta: 1e-5, StepDependent: steps})
		if err != nil {
			t.Fatal(err)
		}
		if err := a.Observe(0, 0, 2, 1, 0); err != nil {
			t.Fatal(err)
		}
		before := append([]float64(nil), a.cur.batch...)
		err = a.Observe(0, 0, 2, 1, 0)
		if err == nil || !strings.Contains(err.Error(), "h = 0") {
			t.Fatalf("steps=%v: second observation of step 0 in one episode: err = %v, want an error naming the step", steps, err)
		}
		for i, v := range a.cur.batch {
			if v != before[i] {
				t.Fatalf("steps=%v: the rejected observation was recorded", steps)
			}
		}
		for h := 1; h < env.H; h++ {
			if err := a.Observe(h, 0, 2, 1, 0); err != nil {
				t.Fatalf("steps=%v: step %d: %v", steps, h, err)
			}
		}
		a.EndEpisode()
		if err := a.Observe(0, 0, 2, 1, 0); err != nil {
			t.Fatalf("steps=%v: step 0 of the next episode rejected: %v", steps, err)
		}
	}
}

// TestPracticalNaNFeatureRejected: a NaN entry of the public feature table made the norm NaN,
// so the projection onto the unit ball was skipped and the table's other entries entered
// unnormalised (φ = (NaN, 30, 40) gave ‖φ‖ = 50 > 1, beyond the sensitivity). NewPractical must
// reject it with an error naming the entry; an infinite entry zeroes its feature (covered by
// the sensitivity, checked by TestPracticalSensitivityBrute).
func TestPracticalNaNFeatureRejected(t *testing.T) {
	env := practicalSmall(t)
	f := make([]float64, env.D)
	f[0] = math.NaN()
	if env.D > 2 {
		f[1], f[2] = 30, 40
	}
	env.Phi[0][1] = f
	sd := rng.NewSeed(1)
	_, err := NewPractical(env, PracticalConfig{Common: Common{K: 10, Seed: &sd}, Epsilon: 1, Delta: 1e-5})
	if err == nil || !strings.Contains(err.Error(), "env.Phi[0][1][0]") {
		t.Fatalf("NaN feature: err = %v, want an error naming env.Phi[0][1][0]", err)
	}
	f[0] = math.Inf(1)
	a, err := NewPractical(env, PracticalConfig{Common: Common{K: 10, Seed: &sd}, Epsilon: 1, Delta: 1e-5})
	if err != nil {
		t.Fatal(err)
	}
	a.cur.observe(0, 0, 1, 1, 0)
	for i, v := range a.cur.batch {
		if v != 0 {
			t.Fatalf("an infinite feature entered the element (coordinate %d = %v), want the zero feature", i, v)
		}
	}
}
