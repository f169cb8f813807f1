package tabular

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	model "github.com/dprl/dprl/model/tabular"
)

// emptyRelease returns a zero release of an (S, A, H) model with the estimated-reward layout
// (NT and R blocks; pooled or per step).
func emptyRelease(S, A, H int, pooled bool) Release {
	g := H
	if pooled {
		g = 1
	}
	return Release{S: S, A: A, H: H, Pooled: pooled, NT: make([]float64, g*S*A*S), R: make([]float64, g*S*A)}
}

// effectivePlanner returns a practical UCB planner (estimated rewards) for these tests and
// benchmarks.
func effectivePlanner(S, A, H int, pooled bool, term terminal, b NoiseBonus, tie *rand.Rand) *noiseUCB {
	return newNoiseUCB(S, A, H, pooled, term, nil, nil, b, tie)
}

// releaseShape is the shape of a random release (randomRelease) a test case draws.
type releaseShape struct {
	S, A, H int
	pooled  bool
	std     float64
}

// draw returns randomRelease(r, …) of the shape.
func (c releaseShape) draw(r *rand.Rand) *Release {
	return randomRelease(r, c.S, c.A, c.H, c.pooled, c.std)
}

// randomRelease returns a release of an (S, A, H) model (pooled or per step) whose counts
// look like a noisy sparse release: a few large counts per row plus N(0, std²) noise on every
// coordinate (std = 0: exact counts), and negative or zero rows now and then.
func randomRelease(r *rand.Rand, S, A, H int, pooled bool, std float64) *Release {
	rel := emptyRelease(S, A, H, pooled)
	rel.Users, rel.Std, rel.RStd = 1+r.IntN(1000), std, 2*std
	for i := range rel.R {
		row := rel.NT[i*S : (i+1)*S]
		switch r.IntN(8) {
		case 0: // nothing but noise
		case 1: // a negative sum
			row[r.IntN(S)] = -5 * (std + 1)
		default:
			n := float64(r.IntN(5000))
			for range 1 + r.IntN(4) {
				row[r.IntN(S)] += n * r.Float64()
			}
		}
		tot := 0.0
		for j := range row {
			row[j] += std * r.NormFloat64()
			tot += row[j]
		}
		rel.R[i] = 0.6*max(tot, 0) + std*r.NormFloat64()
	}
	return &rel
}

// TestEffectiveSparseMatchesDense: the sparse form of the effective estimator
// (effectiveSparse, effectiveRows.moments) gives the dense form's n_e and r̃ bit for bit and
// its P̃·V and Var_P̃(V) within 10⁻⁹ (relative to 1 + |value|), on noisy and exact releases,
// pooled and per step, with and without the prior (α = 0: rows with n_e = 0 are uniform), for
// values of the size of H.
func TestEffectiveSparseMatchesDense(t *testing.T) {
	r := rand.New(rand.NewPCG(26, 5))
	for _, tc := range []struct {
		releaseShape
		alpha, alphaR float64
		kept          bool
	}{
		{releaseShape{2, 2, 3, true, 10}, 0.1, 0.3, false},
		{releaseShape{7, 3, 4, false, 3}, 0.1, 0.3, false},
		{releaseShape{50, 4, 20, true, 30}, 0.1, 0.3, false},
		{releaseShape{120, 3, 50, true, 50}, 0.1, 0.3, false},
		{releaseShape{120, 3, 50, true, 0}, 0.1, 0.3, false},
		{releaseShape{40, 2, 10, true, 20}, 0, 0, false},
		{releaseShape{40, 2, 10, true, 0}, 0, 0, false},
		{releaseShape{7, 3, 4, false, 3}, 0.1, 0.3, true},
		{releaseShape{120, 3, 50, true, 50}, 0.1, 0.3, true},
		{releaseShape{120, 3, 50, true, 0}, 0.1, 0.3, true},
		{releaseShape{40, 2, 10, true, 20}, 0, 0, true},
	} {
		t.Run(fmt.Sprintf("S=%d,A=%d,pooled=%v,std=%g,alpha=%g,kept=%v", tc.S, tc.A, tc.pooled, tc.std, tc.alpha, tc.kept), func(t *testing.T) {
			rel := tc.draw(r)
			cells := len(rel.R)
			ne, p, rr := make([]float64, cells), make([]float64, cells*tc.S), make([]float64, cells)
			effectiveEstimates(rel, tc.alpha, tc.alphaR, 2, tc.kept, ne, p, rr)
			ne2, rr2 := make([]float64, cells), make([]float64, cells)
			var rows effectiveRows
			effectiveSparse(rel, tc.alpha, tc.alphaR, 2, tc.kept, ne2, rr2, &rows)
			for i := range ne {
				if ne[i] != ne2[i] || rr[i] != rr2[i] {
					t.Fatalf("cell %d: dense n_e %v r %v, sparse %v %v", i, ne[i], rr[i], ne2[i], rr2[i])
				}
			}
			v := make([]float64, tc.S)
			for step := range 5 {
				for j := range v {
					v[j] = float64(tc.H) * r.Float64()
				}
				if step == 4 {
					clear(v) // V_H = 0
				}
				for i := range cells {
					m, vr, _ := moments(p[i*tc.S:(i+1)*tc.S], v)
					m2, vr2 := rows.moments(i, v, float64(step))
					if math.Abs(m-m2) > 1e-9*(1+math.Abs(m)) || math.Abs(vr-vr2) > 1e-9*(1+vr) || vr2 < 0 {
						t.Fatalf("step %d cell %d: dense (%v, %v), sparse (%v, %v)", step, i, m, vr, m2, vr2)
					}
				}
			}
		})
	}
}

// planValues plans rel with a fresh effective planner on the given path and returns the
// policy, the values V_0 and the Q values of step 0.
func planValues(t *testing.T, rel *Release, term terminal, path planPath, seed uint64) (*model.Policy, []float64, []float64) {
	t.Helper()
	b, err := PracticalNoiseBonus().resolve(rel.S, rel.A, rel.H, 1000, PracticalPrivacy{Pool: rel.Pooled}, 0.1)
	if err != nil {
		t.Fatal(err)
	}
	return planStep0(t, effectivePlanner(rel.S, rel.A, rel.H, rel.Pooled, term, b, rand.New(rand.NewPCG(seed, 1))), rel, path)
}

// TestEffectivePlanSparseMatchesDense: whole backward inductions from the dense and the sparse
// form of P̃ agree: V_0 and the Q values of step 0 within 10⁻⁹, and the same action wherever
// the best action of step 0 leads the second by more than 10⁻⁶ (on releases over 100 and 300
// states with terminal states, pooled and per step).
func TestEffectivePlanSparseMatchesDense(t *testing.T) {
	r := rand.New(rand.NewPCG(26, 6))
	for _, tc := range []releaseShape{{100, 4, 30, true, 40}, {100, 3, 7, false, 5}, {300, 6, 40, true, 200}, {100, 4, 30, true, 0}} {
		rel := tc.draw(r)
		set := make([]bool, tc.S)
		set[0], set[tc.S/2] = true, true
		term := terminal{set: set, reward: 0.25}
		polD, vD, qD := planValues(t, rel, term, pathDense, 3)
		polS, vS, qS := planValues(t, rel, term, pathSparse, 3)
		checkSameValues(t, tc.S, vD, vS, qD, qS)
		for s := range tc.S {
			q := qD[s*tc.A : (s+1)*tc.A]
			best, second := math.Inf(-1), math.Inf(-1)
			for _, x := range q {
				if x > best {
					best, second = x, best
				} else if x > second {
					second = x
				}
			}
			if best-second > 1e-6 && polD.Act[0][s] != polS.Act[0][s] {
				t.Fatalf("S=%d: state %d: dense action %d, sparse %d (Q %v)", tc.S, s, polD.Act[0][s], polS.Act[0][s], q)
			}
		}
	}
}

// TestEffectivePathSwitch: the effective planner keeps the dense arithmetic (the reproductions'
// exact numbers) up to denseEffectiveMaxStates states and plans from sparse rows above, and
// allocates the dense P̃ only on the dense path.
func TestEffectivePathSwitch(t *testing.T) {
	for _, tc := range []struct {
		S      int
		sparse bool
	}{{6, false}, {10, false}, {denseEffectiveMaxStates, false}, {denseEffectiveMaxStates + 1, true}, {500, true}} {
		r := rand.New(rand.NewPCG(uint64(tc.S), 7))
		rel := randomRelease(r, tc.S, 2, 3, true, 10)
		b, err := PracticalNoiseBonus().resolve(tc.S, 2, 3, 100, PracticalPrivacy{Pool: true}, 0.1)
		if err != nil {
			t.Fatal(err)
		}
		u := effectivePlanner(tc.S, 2, 3, true, terminal{}, b, rand.New(rand.NewPCG(1, 1)))
		if err := u.Plan(rel, model.NewDeterministic(tc.S, 3)); err != nil {
			t.Fatal(err)
		}
		if u.sparse() != tc.sparse || (u.p == nil) != tc.sparse || (len(u.rows.start) > 0) != tc.sparse {
			t.Errorf("S = %d: sparse %v (dense P̃ allocated %v, sparse rows %d), want sparse %v", tc.S, u.sparse(), u.p != nil, len(u.rows.start), tc.sparse)
		}
	}
}

// TestEffectivePlanSparseMatchesDensePublicRewards: the same agreement when the rewards are
// public (exact R and entry rewards, a release without a reward block).
func TestEffectivePlanSparseMatchesDensePublicRewards(t *testing.T) {
	r := rand.New(rand.NewPCG(27, 7))
	S, A, H := 100, 4, 30
	rel := randomRelease(r, S, A, H, true, 40)
	rel.R, rel.PublicRewards = nil, true
	set := make([]bool, S)
	set[0], set[S/2] = true, true
	term := terminal{set: set, reward: 0.25}
	rw := make([]float64, S*A)
	for i := range rw {
		rw[i] = 0.5 * r.Float64()
	}
	entry := make([]float64, S)
	entry[S/2] = 0.5
	steps := make([][]float64, H)
	for h := range steps {
		steps[h] = rw
	}
	tbl, err := newRewardTable("agent", S, A, H, true, steps, entry)
	if err != nil {
		t.Fatal(err)
	}
	b, err := PracticalNoiseBonus().resolve(S, A, H, 1000, PracticalPrivacy{Pool: true}, 0.1)
	if err != nil {
		t.Fatal(err)
	}
	var vs [2][]float64
	for k, path := range []planPath{pathDense, pathSparse} {
		_, vs[k], _ = planStep0(t, newNoiseUCB(S, A, H, true, term, tbl, nil, b, rand.New(rand.NewPCG(3, 1))), rel, path)
	}
	for s := range vs[0] {
		if math.Abs(vs[0][s]-vs[1][s]) > 1e-9*(1+math.Abs(vs[0][s])) {
			t.Fatalf("V_0(%d) dense %v, sparse %v", s, vs[0][s], vs[1][s])
		}
	}
}
