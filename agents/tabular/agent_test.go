package tabular

import (
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	model "github.com/dprl/dprl/model/tabular"
	"github.com/dprl/dprl/privacy/noise"
	"github.com/dprl/dprl/rng"
)

func riverswim(t testing.TB) *model.MDP {
	m, err := model.RiverSwim(20)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func seededStreams(seed uint64) Streams {
	root := rng.NewSeed(seed)
	return Streams{Tie: root.Child("tie").Rand(), Noise: func(name string) noise.Source {
		return noise.NewSeeded(root.Child("noise").Child(name).Rand())
	}}
}

func privacyConfig(m Model, eps float64, cal Calibration, mode EMode) PrivacyConfig {
	return PrivacyConfig{Model: m, Epsilon: eps, Calibration: cal, Beta: 0.1, EMode: mode, EScale: 1}
}

// runAgent runs ag for K episodes on m with users drawn from users(k) and returns the
// per-episode exact regrets and the policies (copies).
func runAgent(t testing.TB, m *model.MDP, ag *Agent, K int, users func(k int) *rand.Rand) ([]float64, []*model.Policy) {
	return runEpisodes(t, m, K, users, ag.Server.Policy, func(traj *model.Trajectory) error {
		return ag.Server.Receive(ag.Client.Encode(traj))
	})
}

// runEpisodes runs K episodes on m: user k (drawn from users(k)) follows policy() and her
// trajectory goes back through send (not the last user's). It returns the per-episode exact
// regrets and copies of the policies.
func runEpisodes(t testing.TB, m *model.MDP, K int, users func(k int) *rand.Rand, policy func() (*model.Policy, error), send func(*model.Trajectory) error) ([]float64, []*model.Policy) {
	reg := model.NewRegret(m)
	traj := model.NewTrajectory(m.H)
	regrets := make([]float64, K)
	pols := make([]*model.Policy, K)
	for k := 0; k < K; k++ {
		pol, err := policy()
		if err != nil {
			t.Fatal(err)
		}
		regrets[k] = reg.Of(pol)
		pols[k] = clonePolicy(pol)
		if k == K-1 {
			break
		}
		m.Rollout(pol, users(k), traj)
		if err := send(traj); err != nil {
			t.Fatal(err)
		}
	}
	return regrets, pols
}

func usersOf(seed uint64) func(k int) *rand.Rand {
	u := rng.NewSeed(seed).Child("users")
	return func(k int) *rand.Rand { return u.Index(uint64(k)).Rand() }
}

func newAgent(t testing.TB, m *model.MDP, K int, alg string, priv PrivacyConfig, bonus BonusConfig, seed uint64) *Agent {
	ag, err := New(m.S, m.A, m.H, K, Config{Algorithm: alg, Privacy: priv, Bonus: bonus}, seededStreams(seed))
	if err != nil {
		t.Fatal(err)
	}
	return ag
}

func sum(x []float64) float64 {
	s := 0.0
	for _, v := range x {
		s += v
	}
	return s
}

// TestLearnsRiverSwim: with the practical preset, UCBVI and DP-UCBVI (JDP and LDP at ε = 1 under
// the Unit calibration, and JDP at a large ε under the Strict calibration) reach clearly
// sublinear regret: the mean regret per episode over the last quarter is below 20% of that over
// the first quarter and far below the no-learning 3.35.
func TestLearnsRiverSwim(t *testing.T) {
	m := riverswim(t)
	const K = 4000
	cases := []struct {
		name string
		alg  string
		priv PrivacyConfig
		tail float64 // bound on the mean regret per episode over the last quarter
	}{
		{"ucbvi", "dp-ucbvi", privacyConfig(NonPrivate, 0, 0, EPractical), 0.05},
		{"ucbvi-hoeffding", "private-ucbvi", privacyConfig(NonPrivate, 0, 0, EPractical), 0.1},
		{"dp-ucbvi-jdp-unit-eps10", "dp-ucbvi", privacyConfig(JDP, 10, Unit, EPractical), 0.3},
		{"dp-ucbvi-jdp-strict-eps1e5", "dp-ucbvi", privacyConfig(JDP, 1e5, Strict, EPractical), 0.3},
		{"dp-ucbvi-ldp-unit-eps1000", "dp-ucbvi", privacyConfig(LDP, 1000, Unit, EPractical), 0.3},
		{"private-ucbvi-jdp-unit-eps10", "private-ucbvi", privacyConfig(JDP, 10, Unit, EPractical), 0.5},
		{"private-ucbvi-ldp-unit-eps1000", "private-ucbvi", privacyConfig(LDP, 1000, Unit, EPractical), 0.5},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			bonus := PracticalBonus()
			if c.alg == "private-ucbvi" {
				bonus = HoeffdingPracticalBonus()
			}
			ag := newAgent(t, m, K, c.alg, c.priv, bonus, 1)
			r, _ := runAgent(t, m, ag, K, usersOf(1))
			first, last := sum(r[:K/4])/(K/4), sum(r[3*K/4:])/(K/4)
			t.Logf("mean regret/episode: first quarter %.4f, last quarter %.4f, total %.1f", first, last, sum(r))
			if last > c.tail || last > 0.2*first {
				t.Errorf("not learning: last-quarter regret/episode %.4f (first %.4f), want < %.2f and < 20%% of first", last, first, c.tail)
			}
		})
	}
}

// TestTheoryPresetNoLearning: with the paper's constants the bonus exceeds H everywhere, so
// Q̃ ≡ H, the policy is pure random tie-breaking and the expected regret per episode is exactly
// that of the uniformly random policy, 3.353475 (tabular spec §2.6, §7.2). Checked for UCBVI and
// both privatizers: all Q̃ = H at the end, and the mean regret within 5 standard errors.
func TestTheoryPresetNoLearning(t *testing.T) {
	m := riverswim(t)
	const K = 3000
	reg := model.NewRegret(m)
	unif := &model.Policy{Prob: make([][]float64, m.H)}
	for h := range unif.Prob {
		unif.Prob[h] = slices.Repeat([]float64{0.5}, m.S*m.A)
	}
	want := reg.Of(unif)
	if math.Abs(want-3.353475) > 1e-6 {
		t.Fatalf("uniform policy regret %.7f", want)
	}
	for _, priv := range []PrivacyConfig{
		privacyConfig(NonPrivate, 0, 0, ETheory),
		privacyConfig(JDP, 1, Paper, ETheory),
		privacyConfig(LDP, 1, Paper, ETheory),
	} {
		ag := newAgent(t, m, K, "dp-ucbvi", priv, TheoryBonus(), 2)
		r, _ := runAgent(t, m, ag, K, usersOf(2))
		mean := sum(r) / K
		v := 0.0
		for _, x := range r {
			v += (x - mean) * (x - mean)
		}
		se := math.Sqrt(v/(K-1)) / math.Sqrt(K)
		if math.Abs(mean-want) > 5*se {
			t.Errorf("%s: mean regret %.4f, want %.6f ± %.4f (no learning)", priv.Model, mean, want, 5*se)
		}
		// The first steps are saturated: Q̃_h ≡ H for h ≤ H/2 (the last steps are not, because
		// Ṽ_{H+1} = 0 and term4 = 0 at h = H, which changes nothing visible in the regret).
		q := ag.Server.(interface{ plannerOf() Planner }).plannerOf().(*DPUCBVI).q
		for i, x := range q[:m.H/2*m.S*m.A] {
			if x != float64(m.H) {
				t.Fatalf("%s: Q̃[%d] = %g, want H (bonus ≥ H with theory constants)", priv.Model, i, x)
			}
		}
	}
}

func (c *curatorServer) plannerOf() Planner { return c.planner }
func (l *ldpServer) plannerOf() Planner     { return l.planner }

// replayCurator is a trusted curator that returns recorded releases: Release returns rec[k],
// and it ignores the trajectories it ingests.
type replayCurator[R any] struct {
	rec []R
	k   int
}

func (r *replayCurator[R]) Ingest(*model.Trajectory) error { return nil }
func (r *replayCurator[R]) Release() R                     { return r.rec[r.k] }

// checkReplay is the second run of a replay test: srv, a fresh server built as the recorded
// one, gets a curator that replays rec (rec[k]: the release policy k was computed from); the
// users users(k) play, except user j who is replaced by another, and every policy must be
// pols[k]. what names the release in the failure message.
func checkReplay[R any, P releasePlanner[R]](t *testing.T, name, what string, m *model.MDP, srv *trustedServer[R, P], rec []R, pols []*model.Policy, users func(k int) *rand.Rand, j int) {
	t.Helper()
	rp := &replayCurator[R]{rec: rec}
	srv.cur = rp
	other := usersOf(999)
	traj := model.NewTrajectory(m.H)
	for k := range pols {
		rp.k = k
		pol, _ := srv.Policy()
		if !policyEqual(pol, pols[k]) {
			t.Fatalf("%s: policy %d differs under replay: the planner reads something besides the %s", name, k, what)
		}
		u := users(k)
		if k == j {
			u = other(k)
		}
		m.Rollout(pol, u, traj)
	}
}

// TestBillboardReplay (privacy spec §5.6, tabular spec §8.4.6): run a JDP agent on users U and
// record every release; re-run on U' (user j replaced) with a server whose curator replays the
// recorded releases. Every policy — hence every action sent to every user k ≠ j — must be
// identical: the only path from user data to policies is the billboard.
func TestBillboardReplay(t *testing.T) {
	m := riverswim(t)
	const K, j = 400, 57
	for _, alg := range []string{"dp-ucbvi", "private-ucbvi"} {
		priv := privacyConfig(JDP, 10, Unit, EPractical)
		bonus := PracticalBonus()
		if alg == "private-ucbvi" {
			bonus = HoeffdingPracticalBonus()
		}
		ag := newAgent(t, m, K, alg, priv, bonus, 3)
		var rec []*Billboard
		rec = append(rec, ag.Server.Billboard().Clone())
		reg := model.NewRegret(m)
		traj := model.NewTrajectory(m.H)
		var pols []*model.Policy
		users := usersOf(3)
		for k := 0; k < K; k++ {
			pol, _ := ag.Server.Policy()
			pols = append(pols, clonePolicy(pol))
			_ = reg
			m.Rollout(pol, users(k), traj)
			if k < K-1 {
				if err := ag.Server.Receive(ag.Client.Encode(traj)); err != nil {
					t.Fatal(err)
				}
				rec = append(rec, ag.Server.Billboard().Clone())
			}
		}
		// Second run: user j replaced, releases replayed.
		ag2 := newAgent(t, m, K, alg, priv, bonus, 3)
		checkReplay(t, alg, "billboard", m, &ag2.Server.(*curatorServer).trustedServer, rec, pols, users, j)
	}
}

// TestCausality: with identical seeds, changing user j leaves the policies of users 1..j+1
// identical (no look-ahead) and, for the JDP releases, the billboards before user j's data.
func TestCausality(t *testing.T) {
	m := riverswim(t)
	const K, j = 300, 100
	for _, priv := range []PrivacyConfig{privacyConfig(JDP, 10, Unit, EPractical), privacyConfig(LDP, 10, Unit, EPractical)} {
		a := newAgent(t, m, K, "dp-ucbvi", priv, PracticalBonus(), 4)
		b := newAgent(t, m, K, "dp-ucbvi", priv, PracticalBonus(), 4)
		base := usersOf(4)
		alt := usersOf(5)
		_, pa := runAgent(t, m, a, K, base)
		_, pb := runAgent(t, m, b, K, func(k int) *rand.Rand {
			if k == j {
				return alt(k)
			}
			return base(k)
		})
		for k := 0; k <= j; k++ {
			if !policyEqual(pa[k], pb[k]) {
				t.Fatalf("%s: policy %d changed when user %d changed", priv.Model, k, j)
			}
		}
	}
}

// checkNoRawData fails if a field of one of types (recursively) can hold a raw trajectory or a
// noise source — a model.Trajectory, a noise.Source, or an interface other than planner (it
// could carry raw data) — or if one of their methods accepts a trajectory. A rand.Rand is
// allowed: a planner's own tie/posterior stream, independent of the data.
func checkNoRawData(t *testing.T, planner reflect.Type, types ...reflect.Type) {
	t.Helper()
	traj := reflect.TypeOf(model.Trajectory{})
	src := reflect.TypeOf((*noise.Source)(nil)).Elem()
	var visit func(reflect.Type, string, map[reflect.Type]bool)
	visit = func(ty reflect.Type, path string, seen map[reflect.Type]bool) {
		if seen[ty] {
			return
		}
		seen[ty] = true
		if ty == traj || ty == src {
			t.Fatalf("%s has type %s", path, ty)
		}
		if ty == reflect.TypeOf(rand.Rand{}) {
			return // the planner's own tie/posterior stream: independent of the data
		}
		switch ty.Kind() {
		case reflect.Pointer, reflect.Slice, reflect.Array:
			visit(ty.Elem(), path, seen)
		case reflect.Struct:
			for i := 0; i < ty.NumField(); i++ {
				f := ty.Field(i)
				if f.Type.Kind() == reflect.Interface && f.Type != planner {
					t.Fatalf("%s.%s is an interface (%s): could carry raw data", path, f.Name, f.Type)
				}
				visit(f.Type, path+"."+f.Name, seen)
			}
		}
	}
	for _, ty := range types {
		visit(ty, ty.String(), map[reflect.Type]bool{})
		for i := 0; i < ty.NumMethod(); i++ {
			mt := ty.Method(i).Type
			for a := 0; a < mt.NumIn(); a++ {
				if strings.Contains(mt.In(a).String(), "Trajectory") {
					t.Fatalf("%s.%s accepts %s", ty, ty.Method(i).Name, mt.In(a))
				}
			}
		}
	}
}

// TestLDPServerCannotSeeTrajectories: no field of the LDP server types (recursively) and no
// method parameter has a type that can hold a raw trajectory (or a noise source), and the
// server rejects raw trajectories at run time.
func TestLDPServerCannotSeeTrajectories(t *testing.T) {
	checkNoRawData(t, reflect.TypeOf((*Planner)(nil)).Elem(), reflect.TypeOf(&LocalServer{}), reflect.TypeOf(&ldpServer{}))
	m := riverswim(t)
	ag := newAgent(t, m, 10, "dp-ucbvi", privacyConfig(LDP, 1, Strict, EPractical), PracticalBonus(), 1)
	if err := ag.Server.Receive(RawTrajectory{T: model.NewTrajectory(m.H)}); err == nil {
		t.Fatal("LDP server accepted a raw trajectory")
	}
}

// TestLDPReportDense: every report entry is noised (no entry is exactly 0 or 1 over a run),
// catching "noise only on visited entries" bugs (spec §4.5), and the noise has variance 2b².
func TestLDPReportDense(t *testing.T) {
	m := riverswim(t)
	const eps = 1.0
	b := 3 * float64(m.H) / eps
	z := NewRandomizer(m.S, m.A, m.H, b, noise.NewSeeded(rand.New(rand.NewPCG(1, 2))))
	pol := model.NewDeterministic(m.S, m.H)
	traj := model.NewTrajectory(m.H)
	users := usersOf(6)
	var s2 float64
	var n int
	for k := 0; k < 200; k++ {
		m.Rollout(pol, users(k), traj)
		rep, err := z.Randomize(traj)
		if err != nil {
			t.Fatal(err)
		}
		vis, tr, rw := rep.Values()
		clean := make([]float64, len(vis))
		for h := 0; h < m.H; h++ {
			clean[(h*m.S+traj.S[h])*m.A+traj.A[h]] = 1
		}
		for i, v := range vis {
			d := v - clean[i]
			s2 += d * d
			n++
		}
		for _, x := range [][]float64{vis, tr, rw} {
			for _, v := range x {
				if v == 0 || v == 1 {
					t.Fatal("un-noised report entry")
				}
			}
		}
	}
	v := s2 / float64(n)
	want := 2 * b * b
	// Var of the sample variance of Laplace: (μ4 − σ⁴)/n with μ4 = 24b⁴ ⇒ sd = b²·sqrt(20/n).
	if tol := 5 * b * b * math.Sqrt(20/float64(n)); math.Abs(v-want) > tol {
		t.Fatalf("report noise variance %.1f, want %.1f ± %.1f", v, want, tol)
	}
}

// TestAccountant checks the privacy reports against the spec's numbers (§7.5, §8).
func TestAccountant(t *testing.T) {
	const H, K = 20, 50000
	L := 16.0
	cases := []struct {
		priv            PrivacyConfig
		b, zero, replOK float64
		private         bool
	}{
		{privacyConfig(JDP, 1, Paper, ETheory), 3 * H * L, 1, 0, false},
		{privacyConfig(JDP, 1, Strict, ETheory), 6 * H * L, 0.5, 0, true},
		{privacyConfig(JDP, 1, Unit, ETheory), 1, 3 * H * L, 0, false},
		{privacyConfig(LDP, 2, Paper, ETheory), 3 * H / 2.0, 2, 0, false},
		{privacyConfig(LDP, 2, Strict, ETheory), 6 * H / 2.0, 1, 0, true},
		{privacyConfig(LDP, 2, Unit, ETheory), 0.5, 3 * H * 2, 0, false},
	}
	for _, c := range cases {
		b, rep, err := c.priv.scales(6, 2, H, K, false)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(b-c.b) > 1e-9*c.b || math.Abs(rep.EpsilonZeroOut-c.zero) > 1e-9*c.zero ||
			math.Abs(rep.EpsilonReplaceOne-2*c.zero) > 1e-9*c.zero || rep.PrivateAtNominal != c.private {
			t.Errorf("%s %s ε=%g: b=%g report %+v", c.priv.Model, c.priv.Calibration, c.priv.Epsilon, b, rep)
		}
		if !c.private && !strings.Contains(rep.String(), "NOT") {
			t.Errorf("report of a non-private-at-nominal setting does not say so: %s", rep)
		}
	}
}

// TestEGolden: E_theory on RiverSwim, K = 50 000, β = 0.1 (tabular spec §3.4, §4.4).
func TestEGolden(t *testing.T) {
	const S, A, H, K = 6, 2, 20, 50000
	jdp := privacyConfig(JDP, 1, Paper, ETheory)
	b, _ := jdp.scale(H, K, false)
	if e := jdp.eBound(b, 16, S, A, H, K); math.Abs(e-244096) > 1 {
		t.Errorf("central E_theory(ε=1) = %.1f, want 244 096", e)
	}
	jdp.EMode = EPractical
	if e := jdp.eBound(b, 16, S, A, H, K); math.Abs(e-5430.6) > 0.1 {
		t.Errorf("central E_practical(ε=1) = %.2f, want 5430.6", e)
	}
	ldp := privacyConfig(LDP, 1, Paper, ETheory)
	bl, _ := ldp.scale(H, K, false)
	if e := ldp.eBound(bl, K, S, A, H, K); math.Abs(e-719587) > 1 {
		t.Errorf("local E_theory(ε=1) = %.1f, want 719 587", e)
	}
}

// TestPaperUnitEquivalence: only the node scale matters, so Paper at ε_P and Unit at
// ε_U = ε_P/(3HL) produce identical runs (spec §7.5). ε_P = 960 on RiverSwim (3·20·16) gives
// b = 1 exactly in both.
func TestPaperUnitEquivalence(t *testing.T) {
	m := riverswim(t)
	const K = 40000 // L = bits.Len(39999) = 16
	short := 300
	a := newAgent(t, m, K, "dp-ucbvi", privacyConfig(JDP, 960, Paper, EPractical), PracticalBonus(), 7)
	b := newAgent(t, m, K, "dp-ucbvi", privacyConfig(JDP, 1, Unit, EPractical), PracticalBonus(), 7)
	ra, _ := runAgent(t, m, a, short, usersOf(7))
	rb, _ := runAgent(t, m, b, short, usersOf(7))
	if !slices.Equal(ra, rb) {
		t.Fatal("Paper(ε=960) and Unit(ε=1) differ")
	}
}

// playReleases plays K users (usersOf(seed)) through the agent on m. Before user k plays,
// check sees the release she is given (with its count error E); after her episode, observe
// (if not nil) sees her trajectory, which (but the last user's) the server receives.
func playReleases(t *testing.T, ag *Agent, m *model.MDP, K int, seed uint64, check func(k int, E float64), observe func(traj *model.Trajectory)) {
	t.Helper()
	users := usersOf(seed)
	traj := model.NewTrajectory(m.H)
	for k := 0; k < K; k++ {
		pol, err := ag.Server.Policy()
		if err != nil {
			t.Fatal(err)
		}
		check(k, ag.Server.Billboard().E)
		m.Rollout(pol, users(k), traj)
		if observe != nil {
			observe(traj)
		}
		if k < K-1 {
			if err := ag.Server.Receive(ag.Client.Encode(traj)); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestPostProcessingInvariants checks spec §3.7 items 1–2 on every release of a JDP run:
// Ñ(s,a,s') > 0, P̃ sums to 1, x within the LP's window.
func TestPostProcessingInvariants(t *testing.T) {
	m := riverswim(t)
	const K = 300
	ag := newAgent(t, m, K, "dp-ucbvi", privacyConfig(JDP, 1, Strict, ETheory), PracticalBonus(), 8)
	p := ag.Server.(*curatorServer).planner.(*DPUCBVI)
	playReleases(t, ag, m, K, 8, func(k int, E float64) {
		for i := range p.nsa {
			s := 0.0
			for _, x := range p.nt[i*m.S : (i+1)*m.S] {
				if !(x >= E/(2*float64(m.S))*(1-1e-12)) {
					t.Fatalf("Ñ(s,a,s') = %g below the shift E/2S = %g", x, E/12)
				}
				s += x
			}
			if math.Abs(s-p.nsa[i]) > 1e-9*math.Max(1, s) {
				t.Fatalf("Ñ(s,a) = %g != Σ Ñ(s,a,·) = %g", p.nsa[i], s)
			}
		}
	}, nil)
}

func TestBadConfig(t *testing.T) {
	m := riverswim(t)
	cases := []struct {
		cfg  Config
		want string
	}{
		{Config{Algorithm: "nope", Privacy: privacyConfig(NonPrivate, 0, 0, ETheory), Bonus: PracticalBonus()}, "algorithm"},
		{Config{Algorithm: "dp-ucbvi", Privacy: privacyConfig(JDP, -1, Strict, ETheory), Bonus: PracticalBonus()}, "epsilon"},
		{Config{Algorithm: "dp-ucbvi", Privacy: privacyConfig(JDP, math.Inf(1), Strict, ETheory), Bonus: PracticalBonus()}, "epsilon"},
		{Config{Algorithm: "dp-ucbvi", Privacy: PrivacyConfig{Model: JDP, Epsilon: 1, Beta: 1, EScale: 1}, Bonus: PracticalBonus()}, "beta"},
		{Config{Algorithm: "dp-ucbvi", Privacy: privacyConfig(JDP, 1, Calibration(7), ETheory), Bonus: PracticalBonus()}, "calibration"},
		{Config{Algorithm: "dp-ucbvi", Privacy: privacyConfig(JDP, 1, Strict, ETheory), Bonus: BonusConfig{Scale: -1, C3Formula: C3Const}}, "scale"},
	}
	for _, c := range cases {
		_, err := New(m.S, m.A, m.H, 10, c.cfg, seededStreams(1))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("config %+v: error %v, want mention of %q", c.cfg, err, c.want)
		}
	}
	if _, err := New(m.S, m.A, 0, 10, cases[0].cfg, seededStreams(1)); err == nil {
		t.Error("H = 0 accepted")
	}
}

func clonePolicy(p *model.Policy) *model.Policy {
	c := &model.Policy{Act: make([][]int, len(p.Act))}
	for h := range p.Act {
		c.Act[h] = append([]int(nil), p.Act[h]...)
	}
	return c
}

func policyEqual(a, b *model.Policy) bool {
	for h := range a.Act {
		if !slices.Equal(a.Act[h], b.Act[h]) {
			return false
		}
	}
	return true
}

// TestSecureDefault: without explicit noise streams a private agent uses the secure source.
func TestSecureDefault(t *testing.T) {
	m := riverswim(t)
	for _, priv := range []PrivacyConfig{privacyConfig(JDP, 1, Strict, EPractical), privacyConfig(LDP, 1, Strict, EPractical)} {
		ag, err := New(m.S, m.A, m.H, 50, Config{Algorithm: "dp-ucbvi", Privacy: priv, Bonus: PracticalBonus()},
			Streams{Tie: rand.New(rand.NewPCG(1, 1))})
		if err != nil {
			t.Fatal(err)
		}
		if !ag.Privacy.Secure {
			t.Fatalf("%s: default noise is not the secure source", priv.Model)
		}
		runAgent(t, m, ag, 50, usersOf(1))
	}
}

// TestNeverUnderestimates (tabular spec §3.7 item 4, Lemma 5.4): with the theory E, the
// post-processed counts satisfy N ≤ Ñ(s,a) ≤ N + E for every (h,s,a) and episode, for the
// central and the local privatizer (fails with probability ≤ β/3 = 0.033 for a random seed;
// fixed seeds here).
func TestNeverUnderestimates(t *testing.T) {
	m := riverswim(t)
	const K = 400
	for _, priv := range []PrivacyConfig{privacyConfig(JDP, 1, Strict, ETheory), privacyConfig(LDP, 1, Strict, ETheory)} {
		ag := newAgent(t, m, K, "dp-ucbvi", priv, PracticalBonus(), 9)
		p := ag.Server.(interface{ plannerOf() Planner }).plannerOf().(*DPUCBVI)
		trueN := make([]float64, m.H*m.S*m.A)
		playReleases(t, ag, m, K, 9, func(k int, E float64) {
			for i, n := range trueN {
				if p.nsa[i] < n-1e-9 || p.nsa[i] > n+E+1e-9 {
					t.Fatalf("%s episode %d pair %d: Ñ = %g outside [N, N+E] = [%g, %g]", priv.Model, k, i, p.nsa[i], n, n+E)
				}
			}
		}, func(traj *model.Trajectory) {
			for h := 0; h < m.H; h++ {
				trueN[(h*m.S+traj.S[h])*m.A+traj.A[h]]++
			}
		})
	}
}
