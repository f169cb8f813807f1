package tabular

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/dprl/dprl/agents/internal/agenttest"
	model "github.com/dprl/dprl/model/tabular"
	"github.com/dprl/dprl/model/tabular/gymenvs"
)

// Tests of the public transition support (PracticalPrivacy.PublicSupport, support.go).

// bruteSupport is the support of a 3-state, 2-action model used by the brute-force tests:
// row s·A+a lists the next states of (s, a).
var bruteSupport = [][]int{{0, 1}, {2}, {0, 2}, {1}, {0, 1, 2}, {2}}

// inSupport reports whether every transition of tr is in rows.
func inSupport(tr *model.Trajectory, A int, rows [][]int) bool {
	for h := range tr.A {
		if !slices.Contains(rows[tr.S[h]*A+tr.A[h]], tr.S[h+1]) {
			return false
		}
	}
	return true
}

// TestPublicSupportContributionBrute: over every episode of a small model whose transitions
// stay in the public support (pooled and per step, public and private rewards, caps and
// budgets), the contribution with the support has G·entries transition coordinates (plus the
// reward block), and scattered into the dense layout it is exactly the contribution without
// the support: a user's kept counts are unchanged, so every replace-one distance, the worst
// one and Δ₂ are unchanged too (the brute-force worst distance is within PracticalSensitivity,
// which does not depend on the support). An episode that leaves the support is refused and
// leaves the vector untouched.
func TestPublicSupportContributionBrute(t *testing.T) {
	const S, A = 3, 2
	term := terminal{}
	sup, err := newSupport("agent", S, A, true, bruteSupport, term)
	if err != nil {
		t.Fatal(err)
	}
	if sup.entries() != 10 {
		t.Fatalf("entries %d, want 10", sup.entries())
	}
	for _, H := range []int{2, 3} {
		for _, pool := range []bool{true, false} {
			for _, public := range []bool{false, true} {
				for _, B := range []int{0, 3} {
					p := PracticalPrivacy{Model: JDP, Epsilon: 1, Delta: 1e-5, Pool: pool, VisitCap: 2, NormBudget: B, BatchEvery: 1,
						RewardWeight: 0.5, PublicRewards: public}
					name := fmt.Sprintf("H=%d pool=%v public=%v B=%d", H, pool, public, B)
					dense := newContribution(S, A, H, p, nil)
					ps := p
					ps.PublicSupport = true
					enc := newContribution(S, A, H, ps, sup)
					g := 1
					if !pool {
						g = H
					}
					want := g * sup.entries()
					if !public {
						want += g * S * A
					}
					if enc.dim() != want {
						t.Fatalf("%s: dim %d, want %d", name, enc.dim(), want)
					}
					var xs, ds [][]float64
					outside := 0
					allTrajectories(S, A, H, []float64{0, 1}, func(tr *model.Trajectory) {
						x := make([]float64, enc.dim())
						if !inSupport(tr, A, bruteSupport) {
							outside++
							if err := enc.add(tr, x); err == nil || !strings.Contains(err.Error(), "outside the public support") {
								t.Fatalf("%s: episode %v leaves the support: error %v", name, tr.S, err)
							}
							for _, v := range x {
								if v != 0 {
									t.Fatalf("%s: a refused episode wrote %v", name, x)
								}
							}
							return
						}
						if err := enc.add(tr, x); err != nil {
							t.Fatal(err)
						}
						d := make([]float64, dense.dim())
						if err := dense.add(tr, d); err != nil {
							t.Fatal(err)
						}
						nt := enc.ntDim()
						back := make([]float64, dense.ntDim())
						sup.scatter(back, x[:nt], false)
						if !slices.Equal(back, d[:dense.ntDim()]) || !slices.Equal(x[nt:], d[dense.ntDim():]) {
							t.Fatalf("%s: episode %v: with support %v, without %v", name, tr.S, x, d)
						}
						xs, ds = append(xs, x), append(ds, d)
					})
					if outside == 0 || len(xs) == 0 {
						t.Fatalf("%s: %d episodes in the support, %d outside", name, len(xs), outside)
					}
					worst, worstDense := agenttest.MaxPairDistance(xs, nil), agenttest.MaxPairDistance(ds, nil)
					delta := PracticalSensitivity(S, A, H, ps)
					if delta != PracticalSensitivity(S, A, H, p) {
						t.Errorf("%s: Δ₂ with the support %v, without %v", name, delta, PracticalSensitivity(S, A, H, p))
					}
					if worst != worstDense || worst > delta*(1+1e-12) {
						t.Errorf("%s: worst distance %v with the support, %v without, Δ₂ = %v", name, worst, worstDense, delta)
					}
				}
			}
		}
	}
}

// supportConfig returns publicConfig with the model's public support, as the runners build it.
func supportConfig(t testing.TB, name string, m *model.MDP) PracticalConfig {
	cfg := publicConfig(t, name, m)
	if m.PublicSupport {
		cfg.Privacy.PublicSupport, cfg.Support = true, SupportOf(m)
	}
	return cfg
}

// frozenLake loads the embedded FrozenLake 4×4 (public rewards and support) at horizon H.
func frozenLake(t testing.TB) *model.MDP {
	t.Helper()
	m, err := gymenvs.Load("frozenlake4x4")
	if err != nil {
		t.Fatal(err)
	}
	if !m.PublicSupport {
		t.Fatal("frozenlake4x4 does not declare its support public")
	}
	return m
}

// TestPublicSupportReleases: every practical agent given FrozenLake 4×4's public support
// releases transition counts only inside it (NT exactly 0 elsewhere, at every release), its
// LDP users report G·entries transition coordinates, and inside the support the private
// releases are the exact counts plus noise of the stated std (the mean square of release −
// exact count over the support's coordinates is within a factor 2 of Std², the exact count
// being the sum of the users' contributions; the noise-off twin releases the exact counts). The report states the public support, its dimension is the
// support's and Δ₂ is the one without the support.
func TestPublicSupportReleases(t *testing.T) {
	m := frozenLake(t)
	rows := SupportOf(m)
	const K = 120
	for _, name := range []string{"practical-jdp", "practical-ldp", "practical-ucbvi", "practical-psrl-jdp"} {
		cfg := supportConfig(t, name, m)
		ag, err := NewPractical(m.S, m.A, m.H, K, cfg, practicalStreams(3))
		if err != nil {
			t.Fatal(err)
		}
		entries := ag.sup.entries()
		enc := newContribution(m.S, m.A, m.H, cfg.Privacy, ag.sup) // the users' exact contributions
		enc.term = ag.term
		var users [][]float64
		u := rand.New(rand.NewPCG(5, 9))
		tr := model.NewTrajectory(m.H)
		for k := 1; k < K; k++ {
			pol, err := ag.Server.Policy()
			if err != nil {
				t.Fatal(err)
			}
			m.Rollout(pol, u, tr)
			msg, err := ag.Client.Encode(tr)
			if err != nil {
				t.Fatal(err)
			}
			if g, ok := msg.(*GaussianReport); ok && len(g.Values()) != entries {
				t.Fatalf("%s: report of %d numbers, want the support's %d", name, len(g.Values()), entries)
			}
			if err := ag.Server.Receive(msg); err != nil {
				t.Fatal(err)
			}
			x := make([]float64, enc.dim())
			if err := enc.add(tr, x); err != nil {
				t.Fatal(err)
			}
			users = append(users, x)
			rel := ag.Server.Release()
			for c := 0; c < m.S*m.A; c++ {
				for s2 := 0; s2 < m.S; s2++ {
					in := !m.IsTerminal(c/m.A) && slices.Contains(rows[c], s2)
					if v := rel.NT[c*m.S+s2]; !in && v != 0 {
						t.Fatalf("%s, user %d: N̂(%d,%d,%d) = %v outside the public support", name, k, c/m.A, c%m.A, s2, v)
					}
				}
			}
		}
		rel := ag.Server.Release()
		sum := make([]float64, entries)
		for _, x := range users[:rel.Users] { // the users the release holds (batches)
			for i := range sum {
				sum[i] += x[i]
			}
		}
		exact := make([]float64, m.S*m.A*m.S)
		ag.sup.scatter(exact, sum, false)
		ms, n := 0.0, 0
		for c := 0; c < m.S*m.A; c++ {
			if m.IsTerminal(c / m.A) {
				continue
			}
			for _, s2 := range rows[c] {
				d := rel.NT[c*m.S+s2] - exact[c*m.S+s2]
				ms += d * d
				n++
			}
		}
		ms /= float64(n)
		if n != entries {
			t.Fatalf("%s: %d support coordinates, agent's %d", name, n, entries)
		}
		r := ag.Privacy
		if !strings.Contains(r.Public, PublicSupportStructure) || !strings.Contains(r.String(), PublicSupportStructure) {
			t.Errorf("%s: report %q does not state the public support", name, r.String())
		}
		if name == "practical-ucbvi" {
			if ms != 0 {
				t.Errorf("%s: the twin's release differs from the exact counts by %v per coordinate", name, ms)
			}
			continue
		}
		if sd := rel.Std; !(ms > sd*sd/2 && ms < 2*sd*sd) {
			t.Errorf("%s: mean square of release − count %v, stated noise variance %v", name, ms, sd*sd)
		}
		e := r.Entries[0]
		free := publicConfig(t, name, m)
		if e.Dim != entries || e.Inputs["public_support"] != 1 || e.Sensitivity != PracticalSensitivity(m.S, m.A, m.H, free.Privacy) {
			t.Errorf("%s: dim %d (support %d), inputs %v, Δ₂ %v (without the support %v)", name, e.Dim, entries, e.Inputs,
				e.Sensitivity, PracticalSensitivity(m.S, m.A, m.H, free.Privacy))
		}
	}
}

// supportRelease returns a noisy pooled release of an (S, A, H) model with the public support
// sup: a few large counts and N(0, std²) noise on the support's coordinates only, 0 elsewhere.
func supportRelease(r *rand.Rand, S, A, H int, sup *supportSet, std float64) *Release {
	rel := emptyRelease(S, A, H, true)
	rel.support = sup
	rel.Users, rel.Std, rel.RStd = 1+r.IntN(1000), std, 2*std
	for c := range rel.R {
		row := rel.NT[c*S : (c+1)*S]
		tot := 0.0
		for _, j := range sup.row(c) {
			if r.IntN(3) > 0 {
				row[j] = float64(r.IntN(3000))
			}
			row[j] += std * r.NormFloat64()
			tot += row[j]
		}
		rel.R[c] = 0.6*max(tot, 0) + std*r.NormFloat64()
	}
	return &rel
}

// randomSupport returns a random support of an (S, A) model (1–4 next states per (s, a)).
func randomSupport(t testing.TB, r *rand.Rand, S, A int, term terminal) ([][]int, *supportSet) {
	t.Helper()
	rows := make([][]int, S*A)
	for c := range rows {
		for range 1 + r.IntN(4) {
			if s2 := r.IntN(S); !slices.Contains(rows[c], s2) {
				rows[c] = append(rows[c], s2)
			}
		}
		slices.Sort(rows[c])
	}
	sup, err := newSupport("agent", S, A, true, rows, term)
	if err != nil {
		t.Fatal(err)
	}
	return rows, sup
}

// TestPublicSupportPlanners: with a public support, the effective estimator's P̃ (dense) is 0
// exactly outside the support and a probability vector on it; the sparse rows list only the
// support; dense and sparse backward inductions agree (V_0 and Q_0 within 10⁻⁹); the plugin
// P̂ and PSRL's sampled P are 0 outside the support too; and a planner refuses a release whose
// support is not its own.
func TestPublicSupportPlanners(t *testing.T) {
	r := rand.New(rand.NewPCG(26, 27))
	for _, tc := range []struct {
		S, A, H int
		std     float64
	}{{30, 4, 20, 40}, {100, 3, 12, 5}, {30, 4, 20, 0}} {
		set := make([]bool, tc.S)
		set[0] = true
		term := terminal{set: set}
		rows, sup := randomSupport(t, r, tc.S, tc.A, term)
		rel := supportRelease(r, tc.S, tc.A, tc.H, sup, tc.std)
		b, err := PracticalNoiseBonus().resolve(tc.S, tc.A, tc.H, 1000, PracticalPrivacy{Pool: true}, 0.1)
		if err != nil {
			t.Fatal(err)
		}
		plan := func(path planPath) (*noiseUCB, []float64, []float64) {
			u := newNoiseUCB(tc.S, tc.A, tc.H, true, term, nil, sup, b, rand.New(rand.NewPCG(1, 1)))
			_, v, q := planStep0(t, u, rel, path)
			return u, v, q
		}
		uD, vD, qD := plan(pathDense)
		uS, vS, qS := plan(pathSparse)
		for c := 0; c < tc.S*tc.A; c++ {
			if term.is(c / tc.A) {
				continue
			}
			pr := uD.p[c*tc.S : (c+1)*tc.S]
			tot := 0.0
			for s2, x := range pr {
				if in := slices.Contains(rows[c], s2); !in && x != 0 || in && !(x > 0) {
					t.Fatalf("S=%d: P̃(%d|cell %d) = %v (in the support: %v)", tc.S, s2, c, x, in)
				}
				tot += x
			}
			if math.Abs(tot-1) > 1e-12 {
				t.Fatalf("S=%d: P̃ of cell %d sums to %v", tc.S, c, tot)
			}
			lo, hi := uS.rows.start[c], uS.rows.start[c+1]
			next := uS.rows.next[lo:hi]
			if uS.rows.base[c] != 0 || len(next) != len(rows[c]) {
				t.Fatalf("S=%d: sparse row %d: base %v, next %v; want 0 and the support %v", tc.S, c, uS.rows.base[c], next, rows[c])
			}
			for k, j := range next {
				if math.Abs(uS.rows.w[lo+int32(k)]-pr[j]) > 1e-12 {
					t.Fatalf("S=%d: sparse P̃(%d|cell %d) = %v, dense %v", tc.S, j, c, uS.rows.w[lo+int32(k)], pr[j])
				}
			}
		}
		checkSameValues(t, tc.S, vD, vS, qD, qS)
		pl := newNoiseUCB(tc.S, tc.A, tc.H, true, term, nil, sup, PluginNoiseBonus(), rand.New(rand.NewPCG(1, 1)))
		ps := newNoisePSRL(tc.S, tc.A, tc.H, true, term, nil, sup, rand.New(rand.NewPCG(2, 2)), rand.New(rand.NewPCG(1, 1)))
		for _, p := range []ReleasePlanner{pl, ps} {
			if err := p.Plan(rel, model.NewDeterministic(tc.S, tc.H)); err != nil {
				t.Fatal(err)
			}
		}
		for c := 0; c < tc.S*tc.A; c++ {
			if term.is(c / tc.A) {
				continue
			}
			for s2 := 0; s2 < tc.S; s2++ {
				if slices.Contains(rows[c], s2) {
					continue
				}
				if x, y := pl.p[c*tc.S+s2], ps.p[c*tc.S+s2]; x != 0 || y != 0 {
					t.Fatalf("S=%d: outside the support plugin P̂ = %v, PSRL P = %v", tc.S, x, y)
				}
			}
		}
		other := *rel
		other.support = nil
		if err := newNoiseUCB(tc.S, tc.A, tc.H, true, term, nil, sup, b, rand.New(rand.NewPCG(1, 1))).Plan(&other, model.NewDeterministic(tc.S, tc.H)); err == nil {
			t.Error("a planner with a public support accepted a release without it")
		}
	}
}

// TestSupportChecks: the support given to an agent is checked (one row per (s, a), next states
// in range and increasing, non-empty for a non-terminal state; given only with public support,
// required with it); SupportOf is the union of the steps' supports; a session refuses an
// environment that does not declare its support public or whose support differs; and an agent
// without public support states nothing about it.
func TestSupportChecks(t *testing.T) {
	term := terminal{set: []bool{false, false, true}}
	for _, c := range []struct {
		rows [][]int
		want string
	}{
		{[][]int{{0}, {1}}, "one row per (s, a)"},
		{[][]int{{0}, {1}, {3}, {0}, {}, {}}, "next state must be in [0, 2]"},
		{[][]int{{1, 0}, {1}, {2}, {0}, {}, {}}, "increasing"},
		{[][]int{{0}, {}, {2}, {0}, {}, {}}, "at least one next state"},
		{[][]int{{0, 1, 2, 0}, {1}, {2}, {0}, {}, {}}, "at most S"},
	} {
		if _, err := newSupport("agent", 3, 2, true, c.rows, term); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("rows %v: error %v, want %q", c.rows, err, c.want)
		}
	}
	if _, err := newSupport("agent", 3, 2, false, [][]int{{0}}, term); err == nil || !strings.Contains(err.Error(), "public_support is false") {
		t.Errorf("rows without public support: %v", err)
	}
	sup, err := newSupport("agent", 3, 2, true, [][]int{{0}, {1, 2}, {2}, {0}, {}, {}}, term)
	if err != nil {
		t.Fatal(err)
	}
	if sup.entries() != 5 || sup.size(4) != 0 || !sup.in(1, 2) || sup.in(1, 0) {
		t.Errorf("support %+v", sup)
	}
	m := frozenLake(t)
	cfg := supportConfig(t, "practical-jdp", m)
	cfg.Support = nil
	if _, err := NewPractical(m.S, m.A, m.H, 100, cfg, practicalStreams(1)); err == nil || !strings.Contains(err.Error(), "agent.support") {
		t.Errorf("public support without the rows: %v", err)
	}
	if _, err := NewPracticalCentral(m.S, m.A, m.H, 100, supportConfig(t, "practical-jdp", m).Privacy, nil); err == nil {
		t.Error("NewPracticalCentral accepted a public support it is not given")
	}
	ag, err := NewPractical(m.S, m.A, m.H, 100, supportConfig(t, "practical-jdp", m), practicalStreams(1))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := ag.Session("practical-jdp", m, 100); err != nil {
		t.Fatal(err)
	}
	blind := *m
	blind.PublicSupport = false
	if _, _, err := ag.Session("practical-jdp", &blind, 100); err == nil {
		t.Error("a session with a public support accepted an environment that does not declare it")
	}
	// An environment whose support differs: FrozenLake 4×4 without slipping to the left.
	other, err := model.Parse(mustMarshal(t, m), "json")
	if err != nil {
		t.Fatal(err)
	}
	if err := ag.sup.same(other); err != nil {
		t.Fatal(err)
	}
	sp := other.Sparse[0]
	sp.Prob[0] += sp.Prob[1]
	sp.Next = slices.Delete(slices.Clone(sp.Next), 1, 2)
	sp.Prob = slices.Delete(sp.Prob, 1, 2)
	for i := 1; i < len(sp.Off); i++ {
		sp.Off[i]--
	}
	if err := ag.sup.same(other); err == nil {
		t.Error("the agent accepted an environment with another support")
	}
	// SupportOf: the union of the steps' supports, increasing.
	steps := []*model.SparseTable{
		{Off: []int32{0, 1, 2, 3, 4, 5, 6}, Next: []int32{2, 0, 1, 1, 2, 2}, Prob: []float64{1, 1, 1, 1, 1, 1}},
		{Off: []int32{0, 1, 2, 3, 4, 5, 6}, Next: []int32{0, 0, 1, 1, 2, 2}, Prob: []float64{1, 1, 1, 1, 1, 1}},
	}
	inh := &model.MDP{S: 3, A: 2, H: 2, Sparse: steps}
	if got := SupportOf(inh); fmt.Sprint(got) != "[[0 2] [0] [1] [1] [2] [2]]" {
		t.Errorf("SupportOf = %v", got)
	}
}

func mustMarshal(t testing.TB, m *model.MDP) []byte {
	t.Helper()
	b, err := model.Marshal(m, "json")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// planStep0 plans rel with u on the given path and returns the policy and copies of the values
// V_0 and of the Q values of step 0.
func planStep0(t *testing.T, u *noiseUCB, rel *Release, path planPath) (*model.Policy, []float64, []float64) {
	t.Helper()
	u.path = path
	pol := model.NewDeterministic(rel.S, rel.H)
	if err := u.Plan(rel, pol); err != nil {
		t.Fatal(err)
	}
	// run swaps its two value buffers after every step: V_0 is in the second half after an
	// odd number of steps.
	v := u.v[:rel.S]
	if rel.H%2 == 1 {
		v = u.v[rel.S:]
	}
	return pol, slices.Clone(v), slices.Clone(u.q)
}

// checkSameValues fails unless the values V_0 and the Q values of step 0 planned on the dense
// and on the sparse path agree within 10⁻⁹ (relative).
func checkSameValues(t *testing.T, S int, vD, vS, qD, qS []float64) {
	t.Helper()
	for s := range vD {
		if math.Abs(vD[s]-vS[s]) > 1e-9*(1+math.Abs(vD[s])) {
			t.Fatalf("S=%d: V_0(%d) dense %v, sparse %v", S, s, vD[s], vS[s])
		}
	}
	for i := range qD {
		if math.Abs(qD[i]-qS[i]) > 1e-9*(1+math.Abs(qD[i])) {
			t.Fatalf("S=%d: Q_0 cell %d dense %v, sparse %v", S, i, qD[i], qS[i])
		}
	}
}
