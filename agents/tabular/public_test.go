package tabular

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	model "github.com/dprl/dprl/model/tabular"
)

// Tests of the norm budget (PracticalPrivacy.NormBudget) and of public rewards
// (PracticalPrivacy.PublicRewards, public.go).

// lake is a small FrozenLake-like model with public rewards: state 0 (start), 1 (ice), 2 (the
// goal: terminal, entry reward 1), 3 (a hole: terminal). Action 0 at 0 moves to 1 w.p. 0.9
// (else into the hole); action 1 at 0 stays and pays 0.05. At 1, action 0 reaches the goal
// w.p. 0.7 (else the hole), action 1 w.p. 0.4 (else stays, paying 0). The only rewards are
// the entry reward of the goal and the small reward of staying at 0: a planner that ignored
// the entry reward would stay at 0.
func lake(t testing.TB, H int) *model.MDP {
	t.Helper()
	const S, A = 4, 2
	p := make([]float64, S*A*S)
	set := func(s, a int, probs map[int]float64) {
		for s2, x := range probs {
			p[(s*A+a)*S+s2] = x
		}
	}
	set(0, 0, map[int]float64{1: 0.9, 3: 0.1})
	set(0, 1, map[int]float64{0: 1})
	set(1, 0, map[int]float64{2: 0.7, 3: 0.3})
	set(1, 1, map[int]float64{2: 0.4, 1: 0.6})
	for _, s := range []int{2, 3} { // never used: entering them ends the episode
		set(s, 0, map[int]float64{s: 1})
		set(s, 1, map[int]float64{s: 1})
	}
	r := make([]float64, S*A)
	r[0*A+1] = 0.05
	m, err := model.NewHomogeneous("lake", S, A, H, p, r, []float64{1, 0, 0, 0}, model.Deterministic)
	if err != nil {
		t.Fatal(err)
	}
	m.Terminal = []bool{false, false, true, true}
	m.EntryReward = []float64{0, 0, 1, 0}
	m.PublicRewards = true
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	return m
}

// publicConfig returns the default configuration of the practical agent name with the public
// structure of m (terminal states and, when m declares it, the public reward table), as the
// runners build it.
func publicConfig(t testing.TB, name string, m *model.MDP) PracticalConfig {
	t.Helper()
	cfg, err := DefaultPracticalConfig(name, 1, 1e-5)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Privacy.Pool = m.Homogeneous()
	cfg.Terminal, cfg.TerminalReward = m.Terminal, m.TerminalReward
	if m.PublicRewards {
		cfg.Privacy.PublicRewards, cfg.Rewards, cfg.EntryReward = true, m.R, m.EntryReward
	}
	return cfg
}

// TestContributionNormBudget: a visit is kept only while its pair is under the cap and the
// kept Σ c² stays within the budget after counting it — within B/2 for a repeat visit when
// the budget binds (B < M₂) — exactly there, and never later for the same pair;
// step-dependent, the budget keeps the first B steps.
func TestContributionNormBudget(t *testing.T) {
	for _, c := range []struct {
		name      string
		S, A, H   int
		pool      bool
		cap, B    int
		states    []int
		actions   []int
		wantCount map[[3]int]float64 // (g, s, a) → kept visits
	}{
		// B = 10 < M₂ = 41: repeats may use Σc² ≤ 5. (0,0) ×4: kept twice (Σ = 4; a third
		// would make 9 > 5); then six new pairs, first visits up to B: Σ = 5, …, 10; a repeat of
		// (0,1) would exceed the repeats' half.
		{"binds-at-10", 4, 2, 11, true, 4, 10, []int{0, 0, 0, 0, 0, 1, 1, 2, 2, 3, 0, 0}, []int{0, 0, 0, 0, 1, 0, 1, 0, 1, 0, 1},
			map[[3]int]float64{{0, 0, 0}: 2, {0, 0, 1}: 1, {0, 1, 0}: 1, {0, 1, 1}: 1, {0, 2, 0}: 1, {0, 2, 1}: 1, {0, 3, 0}: 1}},
		// The default budget does not bind (M₂ = 18 ≤ 80): only the cap (3) stops (0,0) and (1,0).
		{"cap-only", 2, 2, 8, true, 3, 0, []int{0, 0, 0, 0, 0, 1, 1, 1, 1}, []int{0, 0, 0, 0, 0, 0, 0, 0},
			map[[3]int]float64{{0, 0, 0}: 3, {0, 1, 0}: 3}},
		// B = M₂ = 32: the budget cannot bind and repeats may use all of it.
		{"budget-equals-M2", 2, 1, 8, true, 4, 32, []int{0, 0, 0, 0, 1, 1, 1, 1, 0}, make([]int, 8),
			map[[3]int]float64{{0, 0, 0}: 4, {0, 1, 0}: 4}},
		// A pair dropped once stays dropped while later first visits are kept (B = 6 < M₂ = 20,
		// repeats Σc² ≤ 3): (0,0) → 1, its repeat would make 4 > 3; (0,1) → 2; (0,0) again
		// 5 > 3; (1,1) → 3; its repeat 6 > 3.
		{"dropped-stays-dropped", 2, 2, 6, true, 4, 6, []int{0, 0, 0, 0, 1, 1, 0}, []int{0, 0, 1, 0, 1, 1},
			map[[3]int]float64{{0, 0, 0}: 1, {0, 0, 1}: 1, {0, 1, 1}: 1}},
		// Default budget (80) with m = 4 at H = 20: never binds (Σc² ≤ 4·20).
		{"default-H20", 2, 1, 20, true, 4, 0, []int{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
			make([]int, 20), map[[3]int]float64{{0, 0, 0}: 4}},
		// Step-dependent: each step is a cell of its own; B = 3 keeps h = 0, 1, 2 only.
		{"step-dependent", 2, 1, 5, false, 0, 3, []int{0, 1, 0, 1, 0, 1}, make([]int, 5),
			map[[3]int]float64{{0, 0, 0}: 1, {1, 1, 0}: 1, {2, 0, 0}: 1}},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := PracticalPrivacy{Pool: c.pool, VisitCap: c.cap, NormBudget: c.B, RewardWeight: 1}
			enc := newContribution(c.S, c.A, c.H, p, nil)
			tr := &model.Trajectory{S: c.states, A: c.actions, R: make([]float64, c.H)}
			for h := range tr.R {
				tr.R[h] = 1
			}
			x := make([]float64, enc.dim())
			if err := enc.add(tr, x); err != nil {
				t.Fatal(err)
			}
			S, A := c.S, c.A
			nt := len(x) / (S + 1) * S
			got := map[[3]int]float64{}
			for i := 0; i < nt/S; i++ {
				n := sum(x[i*S : (i+1)*S])
				if n != 0 {
					got[[3]int{i / (S * A), i / A % S, i % A}] = n
				}
				if x[nt+i] != n { // reward 1 per kept visit: the reward block follows the counts
					t.Errorf("cell %d: reward sum %g, kept visits %g", i, x[nt+i], n)
				}
			}
			if !reflect.DeepEqual(got, c.wantCount) {
				t.Errorf("kept visits %v, want %v", got, c.wantCount)
			}
		})
	}
}

// TestNormBudgetRandomEpisodes: on random and adversarial episodes a user's kept Σ c² never
// exceeds B, and the default budget changes nothing where M₂ ≤ 80 (RiverSwim's shape at
// H = 20, m = 4): the vector is the one without a budget, bit for bit.
func TestNormBudgetRandomEpisodes(t *testing.T) {
	r := rand.New(rand.NewPCG(26, 3))
	for _, c := range []struct {
		S, A, H, cap, B int
		pool            bool
	}{{6, 2, 20, 4, 0, true}, {3, 2, 60, 4, 17, true}, {4, 4, 200, 4, 0, true}, {2, 2, 100, 0, 50, true}, {3, 2, 90, 0, 0, false}} {
		p := PracticalPrivacy{Pool: c.pool, VisitCap: c.cap, NormBudget: c.B, RewardWeight: 0.5}
		free := p
		free.NormBudget = c.H * c.H // ≥ M₂: never binds
		enc, encFree := newContribution(c.S, c.A, c.H, p, nil), newContribution(c.S, c.A, c.H, free, nil)
		binds := float64(p.normBudget()) < maxKeptSquares(c.S, c.A, c.H, p)
		x, y := make([]float64, enc.dim()), make([]float64, enc.dim())
		for i := 0; i < 3000; i++ {
			tr := model.NewTrajectory(c.H)
			k := 1 + r.IntN(c.S*c.A)
			for h := 0; h < c.H; h++ {
				cell := r.IntN(k)
				tr.S[h], tr.A[h], tr.R[h] = cell/c.A, cell%c.A, r.Float64()
			}
			tr.S[c.H] = r.IntN(c.S)
			clear(x)
			clear(y)
			if err := enc.add(tr, x); err != nil {
				t.Fatal(err)
			}
			if err := encFree.add(tr, y); err != nil {
				t.Fatal(err)
			}
			sq := 0.0
			nt := len(x) / (c.S + 1) * c.S
			for j := 0; j < nt/c.S; j++ {
				n := sum(x[j*c.S : (j+1)*c.S])
				sq += n * n
			}
			if sq > float64(p.normBudget()) {
				t.Fatalf("%+v: kept Σc² = %g > B = %d", c, sq, p.normBudget())
			}
			if !binds && !reflect.DeepEqual(x, y) {
				t.Fatalf("%+v: a budget that cannot bind (M₂ ≤ B) changed the contribution", c)
			}
		}
	}
}

// TestPracticalSensitivityBudgetBrute enumerates every episode of small MDPs under norm budgets
// that bind, with and without public rewards: the worst replace-one distance never exceeds
// Δ₂, is at least that of two users in disjoint cells with the largest Σ c² the contribution
// keeps, and equals Δ₂ when they reach min(M₂, B). A budget not enforced by the
// contribution, a sensitivity that ignores it, or a reward block kept under public rewards
// fails here.
func TestPracticalSensitivityBudgetBrute(t *testing.T) {
	type shape struct{ S, A, H int }
	for _, sh := range []shape{{2, 2, 3}, {2, 3, 3}, {2, 2, 4}, {1, 2, 4}, {2, 1, 4}, {2, 3, 2}} {
		for _, pool := range []bool{true, false} {
			if !pool && sh.H > 3 {
				continue
			}
			for _, vc := range []int{0, 2} {
				for _, B := range []int{1, 2, 3, 5, 6, 9} {
					for _, public := range []bool{false, true} {
						p := PracticalPrivacy{Model: JDP, Epsilon: 1, Delta: 1e-5, Pool: pool, VisitCap: vc, NormBudget: B, BatchEvery: 1,
							RewardWeight: 0.5, PublicRewards: public}
						enc := newContribution(sh.S, sh.A, sh.H, p, nil)
						brute, _ := bruteSensitivity(t, enc, sh.S, sh.A, sh.H, []float64{0, 1})
						delta := PracticalSensitivity(sh.S, sh.A, sh.H, p)
						name := fmt.Sprintf("S=%d A=%d H=%d pool=%v cap=%d B=%d public=%v", sh.S, sh.A, sh.H, pool, vc, B, public)
						if brute > delta*(1+1e-12) {
							t.Errorf("%s: worst replace-one distance %v exceeds Δ₂ = %v", name, brute, delta)
						}
						if sh.S < 2 {
							continue // no two episodes in disjoint cells
						}
						// Two users in disjoint cells — one stays in state 0, the other (its
						// mirror) in state 1, with rewards 1 — are at distance √(k·M₂(B)),
						// k = 2(1+w²) (2 without a reward block), M₂(B) the largest kept Σ c²
						// of an episode that stays in one state (by the encoder itself): a lower
						// bound of the worst case, and Δ₂ itself when M₂(B) = min(M₂, B).
						limit := min(maxKeptSquares(sh.S, sh.A, sh.H, p), float64(B))
						reach := oneStateSquares(enc, sh.A, sh.H)
						if reach > limit {
							t.Errorf("%s: an episode keeps Σ c² = %v > min(M₂, B) = %v", name, reach, limit)
						}
						k := 2 * (1 + 0.25)
						if public {
							k = 2
						}
						if want := math.Sqrt(k * reach); brute < want*(1-1e-12) {
							t.Errorf("%s: worst distance %v below two disjoint users' %v (M₂(B) = %v)", name, brute, want, reach)
						}
						if reach == limit && math.Abs(brute-delta) > 1e-12*delta {
							t.Errorf("%s: Δ₂ = %v is not attained (brute force %v) although users in disjoint cells reach Σ c² = min(M₂, B) = %v", name, delta, brute, limit)
						}
					}
				}
			}
		}
	}
}

// oneStateSquares returns the largest Σ_(cells) c² of the kept counts over the episodes of
// horizon H that stay in state 0 (every action sequence), computed by the encoder enc.
func oneStateSquares(enc *contribution, A, H int) float64 {
	tr := model.NewTrajectory(H)
	for h := range tr.R {
		tr.R[h] = 1
	}
	best := 0.0
	acts := make([]int, H)
	for {
		copy(tr.A, acts)
		x := make([]float64, enc.dim())
		if err := enc.add(tr, x); err != nil {
			panic(err)
		}
		S := enc.S
		nt := len(x)
		if !enc.public {
			nt = len(x) / (S + 1) * S
		}
		sq := 0.0
		for i := 0; i < nt/S; i++ {
			n := sum(x[i*S : (i+1)*S])
			sq += n * n
		}
		best = max(best, sq)
		h := 0
		for ; h < H; h++ {
			if acts[h]++; acts[h] < A {
				break
			}
			acts[h] = 0
		}
		if h == H {
			return best
		}
	}
}

// TestPublicRewardsContribution: with public rewards the contribution is the transition block
// only (G·S·A·S), its largest entry the cap, and the rewards a user reports are never read:
// garbage rewards (out of range, huge, NaN) give the same vector as the true ones.
func TestPublicRewardsContribution(t *testing.T) {
	for _, pool := range []bool{true, false} {
		p := PracticalPrivacy{Pool: pool, VisitCap: 2, RewardWeight: 0.5, PublicRewards: true}
		enc := newContribution(3, 2, 4, p, nil)
		g := 1
		if !pool {
			g = 4
		}
		if enc.dim() != g*3*2*3 {
			t.Fatalf("pool=%v: dim %d, want G·S·A·S = %d", pool, enc.dim(), g*3*2*3)
		}
		if want := float64(p.capOf(4)); pool && enc.maxEntry() != want || !pool && enc.maxEntry() != 1 {
			t.Errorf("pool=%v: largest entry %g", pool, enc.maxEntry())
		}
		tr := &model.Trajectory{S: []int{0, 1, 1, 2, 0}, A: []int{1, 0, 0, 1}, R: []float64{0.2, 0.4, 0, 1}}
		bad := tr.Clone()
		bad.R = []float64{7, -3, math.NaN(), math.Inf(1)}
		x, y := make([]float64, enc.dim()), make([]float64, enc.dim())
		if err := enc.add(tr, x); err != nil {
			t.Fatal(err)
		}
		if err := enc.add(bad, y); err != nil {
			t.Fatalf("pool=%v: rewards refused although they are never read: %v", pool, err)
		}
		if !reflect.DeepEqual(x, y) || sum(x) != 4 {
			t.Errorf("pool=%v: contribution %v with true rewards, %v with garbage", pool, x, y)
		}
	}
}

// TestPublicRewardsIgnoreReportedRewards: every practical agent and twin given public rewards
// releases exactly the same statistics, and publishes exactly the same policies, whether the
// users report their true rewards or garbage (valid numbers, out of range): rewards are not
// read; and its release has no reward block.
func TestPublicRewardsIgnoreReportedRewards(t *testing.T) {
	const H, K = 6, 60
	m := lake(t, H)
	for _, name := range []string{"practical-jdp", "practical-ldp", "practical-psrl-jdp", "practical-ucbvi", "practical-psrl"} {
		run := func(garbage bool) ([]*Release, []*model.Policy) {
			cfg := publicConfig(t, name, m)
			cfg.Privacy.BatchEvery = 1
			ag, err := NewPractical(m.S, m.A, H, K, cfg, practicalStreams(7))
			if err != nil {
				t.Fatal(err)
			}
			g := rand.New(rand.NewPCG(1, 1))
			users := rand.New(rand.NewPCG(2, 2))
			var rels []*Release
			var pols []*model.Policy
			tr := model.NewTrajectory(H)
			for k := 1; k < K; k++ {
				pol, err := ag.Server.Policy()
				if err != nil {
					t.Fatal(err)
				}
				pols = append(pols, clonePolicy(pol))
				m.Rollout(pol, users, tr)
				if garbage {
					for h := range tr.R {
						tr.R[h] = 10 * (g.Float64() - 0.5)
					}
				}
				msg, err := ag.Client.Encode(tr)
				if err != nil {
					t.Fatal(err)
				}
				if err := ag.Server.Receive(msg); err != nil {
					t.Fatal(err)
				}
				rels = append(rels, ag.Server.Release().Clone())
			}
			return rels, pols
		}
		r1, p1 := run(false)
		r2, p2 := run(true)
		if !reflect.DeepEqual(r1, r2) || !reflect.DeepEqual(p1, p2) {
			t.Errorf("%s: garbage rewards changed the releases or the policies", name)
		}
		if last := r1[len(r1)-1]; !last.PublicRewards || len(last.R) != 0 || len(last.NT) != m.S*m.A*m.S {
			t.Errorf("%s: release %+v, want no reward block", name, last)
		}
	}
}

// TestPlannersUsePublicRewards: given the exact transition counts of the lake (every row
// N·P, noise 0) and its public reward table — the goal pays only on entry, staying at the
// start pays 0.05 per step — every practical planner finds an optimal policy: Q_h(s,a) =
// R_h(s,a) + Σ P̃(s'|s,a)·(E(s') + V_{h+1}(s')) with the terminal states valued exactly. A
// planner that dropped the entry rewards would stay at the start (regret > 0.3).
func TestPlannersUsePublicRewards(t *testing.T) {
	const H = 8
	m := lake(t, H)
	cfg := publicConfig(t, "practical-ucbvi", m)
	pub, err := newRewardTable("agent", m.S, m.A, H, true, cfg.Rewards, cfg.EntryReward)
	if err != nil {
		t.Fatal(err)
	}
	term, err := newTerminal("agent.terminal", m.S, m.Terminal, m.TerminalReward)
	if err != nil {
		t.Fatal(err)
	}
	rel := newRelease(m.S, m.A, H, PracticalPrivacy{Pool: true, PublicRewards: true}, nil)
	rel.Users = 1
	for s := 0; s < m.S; s++ {
		for a := 0; a < m.A; a++ {
			next, prob := m.Row(0, s, a)
			for j, s2 := range next {
				rel.NT[(s*m.A+a)*m.S+int(s2)] = 1e6 * prob[j]
			}
		}
	}
	exact := PluginNoiseBonus()
	exact.Scale, exact.Z, exact.ZCount, exact.Iota = 0, 0, 0, 1 // Q = R + P̂·(E + V) exactly
	practical, err := PracticalNoiseBonus().resolve(m.S, m.A, H, 1000, PracticalPrivacy{Pool: true}, 0.1)
	if err != nil {
		t.Fatal(err)
	}
	tie := func() *rand.Rand { return rand.New(rand.NewPCG(4, 4)) }
	reg := model.NewRegret(m)
	for _, c := range []struct {
		name    string
		planner ReleasePlanner
		tol     float64
	}{
		{"plugin-exact", newNoiseUCB(m.S, m.A, H, true, term, pub, nil, exact, tie()), 1e-12},
		{"effective", newNoiseUCB(m.S, m.A, H, true, term, pub, nil, practical, tie()), 1e-12},
		{"psrl", newNoisePSRL(m.S, m.A, H, true, term, pub, nil, rand.New(rand.NewPCG(5, 5)), tie()), 1e-12},
	} {
		pol := model.NewDeterministic(m.S, H)
		if err := c.planner.Plan(&rel, pol); err != nil {
			t.Fatal(err)
		}
		if r := reg.Of(pol); r > c.tol {
			t.Errorf("%s: regret %g of the planned policy (actions %v), want an optimal policy (V* = %g)", c.name, r, pol.Act, reg.OptimalValue())
		}
	}
	// The control: the same release planned as if the rewards were unknown (R estimated from an
	// all-zero reward block) is not optimal, so the test above depends on the public table.
	blind := rel
	blind.PublicRewards, blind.R = false, make([]float64, m.S*m.A)
	pol := model.NewDeterministic(m.S, H)
	if err := newNoiseUCB(m.S, m.A, H, true, term, nil, nil, exact, tie()).Plan(&blind, pol); err != nil {
		t.Fatal(err)
	}
	if r := reg.Of(pol); r < 0.3 {
		t.Errorf("control: a planner without the public rewards has regret %g, want > 0.3", r)
	}
	// A release whose layout disagrees with the planner's is refused.
	if err := newNoiseUCB(m.S, m.A, H, true, term, pub, nil, exact, tie()).Plan(&blind, pol); err == nil {
		t.Error("a planner with public rewards accepted a release with a reward block")
	}
}

// TestPublicRewardsReport: an agent given public rewards states them in its privacy report
// (Public, the summary line, the inputs) with Δ₂ = √(2·min(M₂, B)); the norm budget is echoed
// where it binds; without either the report is the earlier one (no new input, no public line).
func TestPublicRewardsReport(t *testing.T) {
	m := lake(t, 200)
	for _, name := range []string{"practical-jdp", "practical-ldp", "practical-psrl-jdp", "practical-ucbvi"} {
		cfg := publicConfig(t, name, m)
		ag, err := NewPractical(m.S, m.A, m.H, 1000, cfg, practicalStreams(1))
		if err != nil {
			t.Fatal(err)
		}
		r := ag.Privacy
		if r.Public != PublicRewardsStructure || !strings.HasSuffix(r.String(), "; "+PublicRewardsStructure) {
			t.Errorf("%s: report %q does not state the public reward table", name, r.String())
		}
		if len(r.Entries) == 0 {
			continue // the noise-off twin registers no mechanism
		}
		e := r.Entries[0]
		// M₂ with m = 4 on 8 cells at H = 200 is 8·16 = 128 > B = 80.
		if want := math.Sqrt(2 * 80); e.Sensitivity != want || e.Dim != m.S*m.A*m.S {
			t.Errorf("%s: Δ₂ = %v, dim %d; want √160 = %v, S·A·S = %d", name, e.Sensitivity, e.Dim, want, m.S*m.A*m.S)
		}
		if e.Inputs["public_rewards"] != 1 || e.Inputs["norm_budget"] != 80 {
			t.Errorf("%s: inputs %v, want public_rewards 1 and norm_budget 80", name, e.Inputs)
		}
	}
	rs, err := model.RiverSwim(20)
	if err != nil {
		t.Fatal(err)
	}
	ag, err := NewPractical(rs.S, rs.A, rs.H, 1000, publicConfig(t, "practical-jdp", rs), practicalStreams(1))
	if err != nil {
		t.Fatal(err)
	}
	if r := ag.Privacy; r.Public != "" || strings.Contains(r.String(), "PUBLIC") || len(r.Entries[0].Inputs) != 4 {
		t.Errorf("RiverSwim: report %q, inputs %v: want the earlier report", r.String(), r.Entries[0].Inputs)
	}
}

// TestRewardTableChecks: the public reward table given to an agent is checked (shape, range,
// given only with public rewards, required with them) and copied with the model's sharing of
// steps, and a session refuses an environment whose rewards are not that public table.
func TestRewardTableChecks(t *testing.T) {
	const S, A, H = 2, 2, 3
	row := []float64{0, 0.5, 1, 0.25}
	shared := [][]float64{row, row, row}
	tab, err := newRewardTable("agent", S, A, H, true, shared, []float64{0, 1})
	if err != nil {
		t.Fatal(err)
	}
	if &tab.r[0][0] != &tab.r[2][0] || &tab.r[0][0] == &row[0] {
		t.Error("the copy does not share steps as the model does, or is not a copy")
	}
	if tab, err := newRewardTable("agent", S, A, H, false, nil, nil); tab != nil || err != nil {
		t.Errorf("private rewards: %v, %v", tab, err)
	}
	for _, c := range []struct {
		name   string
		public bool
		r      [][]float64
		e      []float64
		field  string
	}{
		{"given-without-public", false, shared, nil, "agent.rewards:"},
		{"entry-without-public", false, nil, []float64{0, 1}, "agent.rewards:"},
		{"missing", true, nil, nil, "agent.rewards:"},
		{"steps", true, shared[:2], nil, "agent.rewards:"},
		{"row-length", true, [][]float64{row, row, row[:3]}, nil, "agent.rewards[2]:"},
		{"range", true, [][]float64{row, {0, 0, 1.5, 0}, row}, nil, "agent.rewards[1][1][0]:"},
		{"nan", true, [][]float64{row, row, {0, math.NaN(), 0, 0}}, nil, "agent.rewards[2][0][1]:"},
		{"entry-length", true, shared, []float64{0}, "agent.entry_reward:"},
		{"entry-range", true, shared, []float64{0, -0.1}, "agent.entry_reward[1]:"},
	} {
		if _, err := newRewardTable("agent", S, A, H, c.public, c.r, c.e); err == nil || !strings.HasPrefix(err.Error(), c.field) {
			t.Errorf("%s: got %v, want an error naming %s", c.name, err, c.field)
		}
	}
	cfg, err := DefaultPracticalConfig("practical-jdp", 1, 1e-5)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Privacy.PublicRewards = true
	if _, err := NewPractical(S, A, H, 10, cfg, practicalStreams(1)); err == nil || !strings.Contains(err.Error(), "agent.rewards") {
		t.Errorf("public rewards without a table: %v", err)
	}
	// A session refuses an environment whose rewards are not the agent's public table.
	lk := lake(t, 5)
	ag, err := NewPractical(lk.S, lk.A, lk.H, 10, publicConfig(t, "practical-jdp", lk), practicalStreams(1))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := ag.Session("practical-jdp", lk, 10); err != nil {
		t.Fatal(err)
	}
	other := lake(t, 5)
	other.EntryReward = []float64{0, 0, 0.5, 0}
	private := lake(t, 5)
	private.PublicRewards = false
	for _, c := range []struct {
		m     *model.MDP
		field string
	}{{other, "agent.entry_reward:"}, {private, "agent.rewards:"}} {
		if err := c.m.Validate(); err != nil {
			t.Fatal(err)
		}
		if _, _, err := ag.Session("practical-jdp", c.m, 10); err == nil || !strings.HasPrefix(err.Error(), c.field) {
			t.Errorf("session on another environment: %v, want an error naming %s", err, c.field)
		}
	}
	cfg.Privacy.PublicRewards, cfg.Privacy.NormBudget = false, -1
	if _, err := NewPractical(S, A, H, 10, cfg, practicalStreams(1)); err == nil || !strings.Contains(err.Error(), "privacy.norm_budget") {
		t.Errorf("negative norm budget: %v", err)
	}
}
