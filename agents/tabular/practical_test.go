package tabular

import (
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	model "github.com/dprl/dprl/model/tabular"
	"github.com/dprl/dprl/privacy/noise"
	"github.com/dprl/dprl/rng"
)

func practicalStreams(seed uint64) PracticalStreams {
	root := rng.NewSeed(seed)
	return PracticalStreams{Tie: root.Child("tie").Rand(), Posterior: root.Child("post").Rand(),
		Noise: noise.NewSeeded(root.Child("noise").Rand())}
}

func newPracticalAgent(t testing.TB, m *model.MDP, K int, name string, eps float64, seed uint64) *PracticalAgent {
	cfg, err := DefaultPracticalConfig(name, eps, 1e-5)
	if err != nil {
		t.Fatal(err)
	}
	ag, err := NewPractical(m.S, m.A, m.H, K, cfg, practicalStreams(seed))
	if err != nil {
		t.Fatal(err)
	}
	return ag
}

// runPractical runs ag for K episodes and returns per-episode exact regrets and policy copies.
func runPractical(t testing.TB, m *model.MDP, ag *PracticalAgent, K int, users func(k int) *rand.Rand) ([]float64, []*model.Policy) {
	return runEpisodes(t, m, K, users, ag.Server.Policy, func(traj *model.Trajectory) error {
		msg, err := ag.Client.Encode(traj)
		if err != nil {
			return err
		}
		return ag.Server.Receive(msg)
	})
}

// TestPracticalSensitivity: the ℓ2 distance between the contributions of any two episodes never
// exceeds PracticalSensitivity (random and adversarial episodes), and the bound is attained —
// so a formula that is too small (e.g. √2·H pooled, or ignoring the cap's remainder) fails.
func TestPracticalSensitivity(t *testing.T) {
	cases := []struct {
		S, A, H, cap int
		pool         bool
		w            float64
	}{{3, 2, 5, 0, true, 0}, {3, 2, 5, 2, true, 0}, {2, 2, 7, 3, true, 0}, {2, 1, 9, 1, true, 0}, {3, 2, 4, 0, false, 0}, {6, 2, 20, 4, true, 0},
		{3, 2, 5, 0, true, 0.5}, {2, 2, 7, 3, true, 0.3}, {3, 2, 4, 0, false, 0.5}}
	for _, c := range cases {
		p := PracticalPrivacy{Model: JDP, Epsilon: 1, Delta: 1e-5, Pool: c.pool, VisitCap: c.cap, BatchEvery: 1, RewardWeight: c.w}
		d := PracticalSensitivity(c.S, c.A, c.H, p)
		enc := newContribution(c.S, c.A, c.H, p, nil)
		r := rand.New(rand.NewPCG(1, uint64(c.H)))
		random := func() *model.Trajectory {
			tr := model.NewTrajectory(c.H)
			// Adversarial half: stay in few cells with reward 1.
			k := 1 + r.IntN(c.S*c.A)
			for h := 0; h < c.H; h++ {
				cell := r.IntN(k)
				tr.S[h], tr.A[h], tr.R[h] = cell/c.A, cell%c.A, float64(r.IntN(2))
				if r.IntN(2) == 0 {
					tr.R[h] = 1
				}
			}
			tr.S[c.H] = r.IntN(c.S)
			for h := 0; h < c.H; h++ { // next state = a fixed function of the cell: concentrate
				if r.IntN(3) > 0 {
					tr.S[h+1] = tr.S[h]
				}
			}
			return tr
		}
		best := 0.0
		x, y := make([]float64, enc.dim()), make([]float64, enc.dim())
		for i := 0; i < 20000; i++ {
			clear(x)
			clear(y)
			a, b := random(), random()
			if err := enc.add(a, x); err != nil {
				t.Fatal(err)
			}
			if err := enc.add(b, y); err != nil {
				t.Fatal(err)
			}
			s := 0.0
			for j := range x {
				s += (x[j] - y[j]) * (x[j] - y[j])
			}
			best = math.Max(best, math.Sqrt(s))
		}
		if best > d*(1+1e-12) {
			t.Errorf("%+v: observed ‖x−x′‖ = %g > Δ₂ = %g", c, best, d)
		}
		if c.cap == 0 && best < d*(1-1e-12) {
			t.Errorf("%+v: bound %g not attained (best %g): the search or the formula is off", c, d, best)
		}
		if best < 0.75*d {
			t.Errorf("%+v: bound %g far from the largest observed distance %g", c, d, best)
		}
	}
	// Golden values: RiverSwim H=20 pooled without cap 2H = 40 (with a budget B ≥ M₂ = 400;
	// the default B = 80 gives 2√80), cap 4 → 2√80, cap 1 → 2√12; reward weight 0.5 with cap
	// 4 → √(2·1.25·80) = √200, with public rewards √(2·80); FrozenLake 8×8 at H = 200 with the
	// defaults: M₂ = 800, B = 80, √200 = 14.1 (44.7 without the budget), public √160.
	for _, g := range []struct {
		S, A, H, cap, budget int
		w                    float64
		public               bool
		want                 float64
	}{{6, 2, 20, 0, 400, 0, false, 40}, {6, 2, 20, 0, 0, 0, false, 2 * math.Sqrt(80)}, {6, 2, 20, 4, 0, 0, false, 2 * math.Sqrt(80)},
		{6, 2, 20, 1, 0, 0, false, 2 * math.Sqrt(12)}, {6, 2, 20, 4, 0, 1, false, 2 * math.Sqrt(80)}, {6, 2, 20, 4, 0, 0.5, false, math.Sqrt(200)},
		{6, 2, 20, 4, 0, 0.5, true, math.Sqrt(160)}, {6, 2, 20, 4, 79, 0.5, false, math.Sqrt(2 * 1.25 * 79)},
		{64, 4, 200, 4, 0, 0.5, false, math.Sqrt(200)}, {64, 4, 200, 4, 1000, 0.5, false, math.Sqrt(2 * 1.25 * 800)},
		{64, 4, 200, 4, 0, 0.5, true, math.Sqrt(160)}} {
		p := PracticalPrivacy{Pool: true, VisitCap: g.cap, NormBudget: g.budget, RewardWeight: g.w, PublicRewards: g.public}
		if got := PracticalSensitivity(g.S, g.A, g.H, p); math.Abs(got-g.want) > 1e-12 {
			t.Errorf("%+v: Δ₂ = %g, want %g", g, got, g.want)
		}
	}
}

// TestContribution: rewards are clipped, only the first m visits of each (s,a) are kept, and
// invalid states/actions are rejected with an error naming the field.
func TestContribution(t *testing.T) {
	p := PracticalPrivacy{Pool: true, VisitCap: 2, BatchEvery: 1}
	enc := newContribution(2, 2, 4, p, nil)
	tr := &model.Trajectory{S: []int{0, 0, 0, 1, 1}, A: []int{1, 1, 1, 0}, R: []float64{5, -3, 1, 0.5}}
	x := make([]float64, enc.dim())
	if err := enc.add(tr, x); err != nil {
		t.Fatal(err)
	}
	// (0,1) visited 3 times, kept 2: N(0,1,0) = 2 (h=0, 1) — the third visit (h=2, to s'=1) is
	// dropped. (1,0) kept once, to s'=1.
	nt := x[:8]
	r := x[8:]
	want := []float64{0, 0, 2, 0, 0, 1, 0, 0}
	for i := range want {
		if nt[i] != want[i] {
			t.Fatalf("NT = %v, want %v", nt, want)
		}
	}
	if r[1] != 1 || r[2] != 0.5 { // 5 clipped to 1, −3 clipped to 0
		t.Fatalf("R = %v, want [0 1 0.5 0]", r)
	}
	bad := tr.Clone()
	bad.S[2] = 7
	if err := enc.add(bad, x); err == nil || !strings.Contains(err.Error(), "trajectory.S[2]") {
		t.Fatalf("bad state: err = %v", err)
	}
	bad = tr.Clone()
	bad.A[3] = -1
	if err := enc.add(bad, x); err == nil || !strings.Contains(err.Error(), "trajectory.A[3]") {
		t.Fatalf("bad action: err = %v", err)
	}
}

// TestPracticalAccountant: σ is fixed from public parameters as Δ₂·factor/μ with μ the exact
// GDP of (ε, δ) (golden μ(1, 1e-5) = 0.268051), the claimed ε is ≤ the nominal one, and a
// quarter of the noise would not be (ε, δ)-private.
func TestPracticalAccountant(t *testing.T) {
	for _, name := range []string{"practical-jdp", "practical-ldp", "practical-psrl-jdp"} {
		cfg, err := DefaultPracticalConfig(name, 1, 1e-5)
		if err != nil {
			t.Fatal(err)
		}
		ag, err := NewPractical(6, 2, 20, 50000, cfg, practicalStreams(1))
		if err != nil {
			t.Fatal(err)
		}
		r := ag.Privacy
		if math.Abs(r.Mu-0.268051) > 1e-6 || !r.PrivateAtNominal || r.Epsilon > 1 || r.Epsilon < 0.999 {
			t.Errorf("%s: μ = %g, ε = %g, private %v", name, r.Mu, r.Epsilon, r.PrivateAtNominal)
		}
		e := r.Entries[0]
		if want := e.Sensitivity * e.Factor / 0.268051; math.Abs(e.Sigma/want-1) > 1e-5 {
			t.Errorf("%s: σ = %g, want Δ₂·factor/μ = %g", name, e.Sigma, want)
		}
		if r.Assumption != HomogeneityAssumption {
			t.Errorf("%s: pooled agent does not state its assumption", name)
		}
		broken, err := r.WithNoiseDivided(4)
		if err != nil || broken.PrivateAtNominal {
			t.Errorf("%s: σ/4 still claimed private (ε = %g)", name, broken.Epsilon)
		}
	}
}

// TestPracticalSecureDefault: without a noise source the agents use the Secure source and the
// grid rounding enters the sensitivity.
func TestPracticalSecureDefault(t *testing.T) {
	for _, name := range []string{"practical-jdp", "practical-ldp"} {
		cfg, _ := DefaultPracticalConfig(name, 1, 1e-5)
		st := practicalStreams(1)
		st.Noise = nil
		ag, err := NewPractical(6, 2, 20, 1000, cfg, st)
		if err != nil {
			t.Fatal(err)
		}
		r := ag.Privacy
		e := r.Entries[0]
		if !r.Secure || !(e.RoundedSensitivity > e.Sensitivity) || !r.PrivateAtNominal {
			t.Errorf("%s: secure %v, Δ₂ %g → %g, private %v", name, r.Secure, e.Sensitivity, e.RoundedSensitivity, r.PrivateAtNominal)
		}
	}
}

// TestPracticalLearns: the noise-off twins learn RiverSwim fast, and the private agents learn
// at ε = 10 within 6000 episodes (last-quarter regret per episode well below the no-learning
// 3.35).
func TestPracticalLearns(t *testing.T) {
	if testing.Short() {
		t.Skip("runs 6000-episode agents")
	}
	m := riverswim(t)
	cases := []struct {
		name string
		eps  float64
		K    int
		tail float64
	}{{"practical-ucbvi", 0, 2000, 0.01}, {"practical-psrl", 0, 2000, 0.05}, {"practical-jdp", 10, 6000, 0.1}, {"practical-psrl-jdp", 10, 6000, 0.1}}
	for _, c := range cases {
		ag := newPracticalAgent(t, m, c.K, c.name, c.eps, 1)
		r, _ := runPractical(t, m, ag, c.K, usersOf(1))
		last := sum(r[3*c.K/4:]) / float64(c.K/4)
		t.Logf("%s: total %.0f, last quarter %.4f/episode", c.name, sum(r), last)
		if last > c.tail {
			t.Errorf("%s: last-quarter regret %.4f/episode, want < %g", c.name, last, c.tail)
		}
	}
}

// TestPracticalReplay (billboard replay): re-running a JDP agent with one user replaced but
// the recorded releases replayed gives identical policies for every user: the only path from
// user data to policies is the Release.
func TestPracticalReplay(t *testing.T) {
	m := riverswim(t)
	const K, j = 600, 57
	for _, name := range []string{"practical-jdp", "practical-psrl-jdp"} {
		ag := newPracticalAgent(t, m, K, name, 10, 3)
		var rec []*Release
		traj := model.NewTrajectory(m.H)
		var pols []*model.Policy
		users := usersOf(3)
		for k := 0; k < K; k++ {
			rec = append(rec, ag.Server.Release().Clone())
			pol, _ := ag.Server.Policy()
			pols = append(pols, clonePolicy(pol))
			m.Rollout(pol, users(k), traj)
			if k < K-1 {
				msg, _ := ag.Client.Encode(traj)
				if err := ag.Server.Receive(msg); err != nil {
					t.Fatal(err)
				}
			}
		}
		ag2 := newPracticalAgent(t, m, K, name, 10, 3)
		checkReplay(t, name, "release", m, &ag2.Server.(*practicalCuratorServer).trustedServer, rec, pols, users, j)
	}
}

// TestPracticalLDPServerTypes: no field of the practical LDP server types (recursively) can hold
// a raw trajectory or a noise source, no method accepts a trajectory, and the server rejects raw
// trajectories at run time. The planners' inputs are releases only.
func TestPracticalLDPServerTypes(t *testing.T) {
	planner := reflect.TypeOf((*ReleasePlanner)(nil)).Elem()
	checkNoRawData(t, planner, reflect.TypeOf(&PracticalLocalServer{}), reflect.TypeOf(&practicalLDPServer{}),
		reflect.TypeOf(&noiseUCB{}), reflect.TypeOf(&noisePSRL{}))
	// The planner interface takes only a *Release.
	pm := planner.Method(0).Type
	if pm.NumIn() != 2 || pm.In(0) != reflect.TypeOf(&Release{}) {
		t.Fatalf("ReleasePlanner.Plan has inputs %v", pm)
	}
	m := riverswim(t)
	ag := newPracticalAgent(t, m, 10, "practical-ldp", 1, 1)
	if err := ag.Server.Receive(RawTrajectory{T: model.NewTrajectory(m.H)}); err == nil {
		t.Fatal("LDP server accepted a raw trajectory")
	}
}

// TestPracticalNoiseStd: the noise of the released statistics has the standard deviation the
// release reports (LDP: σ_L·√users; JDP: the counter's; rewards: that over the reward weight w,
// after the release divides the reward block by w), every coordinate is noised, and its mean
// is 0. Tolerances: 5 standard errors of the sample variance of a Gaussian (n = runs ×
// coordinates independent draws), so σ/4 or 2σ fail.
func TestPracticalNoiseStd(t *testing.T) {
	m := riverswim(t)
	for _, name := range []string{"practical-ldp", "practical-jdp"} {
		const runs = 40
		K := 40
		var s1, s2, r2 float64
		var n, rn int
		var std float64
		for run := 0; run < runs; run++ {
			ag := newPracticalAgent(t, m, K, name, 1, uint64(100+run))
			exact := newPracticalAgent(t, m, K, strings.Replace(strings.Replace(name, "-ldp", "-ucbvi", 1), "-jdp", "-ucbvi", 1), 0, 1)
			users := usersOf(7)
			traj := model.NewTrajectory(m.H)
			pol := model.NewDeterministic(m.S, m.H)
			for k := 0; k < K-1; k++ {
				m.Rollout(pol, users(k), traj)
				msg, _ := ag.Client.Encode(traj)
				if err := ag.Server.Receive(msg); err != nil {
					t.Fatal(err)
				}
				msg, _ = exact.Client.Encode(traj)
				_ = exact.Server.Receive(msg)
			}
			a, b := ag.Server.Release(), exact.Server.Release()
			if a.Users != b.Users || a.Users == 0 {
				t.Fatalf("users %d vs %d", a.Users, b.Users)
			}
			std = a.Std
			for i, v := range a.NT {
				d := v - b.NT[i]
				if d == 0 {
					t.Fatal("un-noised coordinate")
				}
				s1 += d
				s2 += d * d
				n++
			}
			if math.Abs(a.RStd*DefaultRewardWeight-a.Std) > 1e-9*a.Std {
				t.Fatalf("%s: reward noise std %g, want Std/w = %g", name, a.RStd, a.Std/DefaultRewardWeight)
			}
			for i, v := range a.R { // standardised reward noise
				d := (v - b.R[i]) / a.RStd
				r2 += d * d
				rn++
			}
		}
		if vr := r2 / float64(rn); math.Abs(vr-1) > 5*math.Sqrt(2/float64(rn)) {
			t.Errorf("%s: standardised reward noise variance %.3g, want 1 (tol %.3g)", name, vr, 5*math.Sqrt(2/float64(rn)))
		}
		mean, v := s1/float64(n), s2/float64(n)
		if tol := 5 * std * std * math.Sqrt(2/float64(n)); math.Abs(v-std*std) > tol {
			t.Errorf("%s: noise variance %.4g, reported %.4g (tol %.3g)", name, v, std*std, tol)
		}
		if math.Abs(mean) > 5*std/math.Sqrt(float64(n)) {
			t.Errorf("%s: noise mean %.4g", name, mean)
		}
	}
}

// TestPracticalBadConfig: bad settings are rejected with errors naming the field.
func TestPracticalBadConfig(t *testing.T) {
	base, _ := DefaultPracticalConfig("practical-jdp", 1, 1e-5)
	for _, c := range []struct {
		field string
		mod   func(*PracticalConfig)
	}{
		{"privacy.epsilon", func(c *PracticalConfig) { c.Privacy.Epsilon = 0 }},
		{"privacy.delta", func(c *PracticalConfig) { c.Privacy.Delta = 1 }},
		{"privacy.visit_cap", func(c *PracticalConfig) { c.Privacy.VisitCap = -1 }},
		{"privacy.batch_every", func(c *PracticalConfig) { c.Privacy.BatchEvery = 0 }},
		{"privacy.reward_weight", func(c *PracticalConfig) { c.Privacy.RewardWeight = 1.5 }},
		{"privacy.reward_weight", func(c *PracticalConfig) { c.Privacy.RewardWeight = -0.1 }},
		{"privacy.counter", func(c *PracticalConfig) { c.Privacy.Counter = "nope" }},
		{"agent.planner", func(c *PracticalConfig) { c.Planner = "x" }},
		{"bonus.z", func(c *PracticalConfig) { c.Bonus.Z = -1 }},
		{"beta", func(c *PracticalConfig) { c.Beta = 2 }},
	} {
		cfg := base
		c.mod(&cfg)
		_, err := NewPractical(6, 2, 20, 100, cfg, practicalStreams(1))
		if err == nil || !strings.Contains(err.Error(), c.field) {
			t.Errorf("%s: err = %v", c.field, err)
		}
	}
	if _, err := DefaultPracticalConfig("nope", 1, 1e-5); err == nil {
		t.Error("unknown agent accepted")
	}
}

// TestEffectiveEstimates: golden values of the effective estimator (n_e = n₊²/(n₊ + S·σ²),
// soft-thresholded P̂ and r̂, shrinkage towards the optimistic prior), exact counts reduce to
// the empirical estimates, and a negative count carries no weight.
func TestEffectiveEstimates(t *testing.T) {
	r := &Release{S: 2, A: 1, H: 1, Pooled: true, Std: 10, RStd: 20,
		NT: []float64{300, 100, -50, 20}, R: []float64{220, 40}}
	ne, p, rr := make([]float64, 2), make([]float64, 4), make([]float64, 2)
	effectiveEstimates(r, 0.1, 0.3, 2, false, ne, p, rr)
	// Cell 0: n = 400, n_e = 400²/(400 + 2·100) · 360/400 = 240 (kept (280, 80), 360 of the
	// 400 above the threshold) → P̂ = (0.777…, 0.222…); r̂ = (220 − 2·RStd)/400 = 0.45.
	e := 400.0 * 400 / 600 * 360 / 400
	wantP0 := (e*280/360 + 0.05) / (e + 0.1)
	wantR := (e*0.45 + 0.3) / (e + 0.3)
	if math.Abs(ne[0]-e) > 1e-9 || math.Abs(p[0]-wantP0) > 1e-12 || math.Abs(p[0]+p[1]-1) > 1e-12 || math.Abs(rr[0]-wantR) > 1e-12 {
		t.Errorf("cell 0: n_e %g (want %g), P %v (want %g), r %g (want %g)", ne[0], e, p[:2], wantP0, rr[0], wantR)
	}
	// Cell 1: n = −30 → n_e = 0: the prior alone (uniform P, r = 1). A row with nothing above
	// the threshold also has n_e = 0, whatever its sum.
	if ne[1] != 0 || p[2] != 0.5 || p[3] != 0.5 || rr[1] != 1 {
		t.Errorf("cell 1: n_e %g, P %v, r %g", ne[1], p[2:], rr[1])
	}
	flat := &Release{S: 2, A: 1, H: 1, Pooled: true, Std: 10, RStd: 10, NT: []float64{19, 19, 0, 0}, R: []float64{0, 0}}
	effectiveEstimates(flat, 0.1, 0.3, 2, false, ne, p, rr)
	if ne[0] != 0 {
		t.Errorf("row below the threshold: n_e = %g, want 0", ne[0])
	}
	// Exact counts (σ = 0, τ irrelevant): n_e = n and P̂ is the empirical frequency.
	x := &Release{S: 2, A: 1, H: 1, Pooled: true, NT: []float64{30, 10, 0, 0}, R: []float64{20, 0}}
	effectiveEstimates(x, 0.1, 0.3, 2, false, ne, p, rr)
	if ne[0] != 40 || math.Abs(p[0]-(40*0.75+0.05)/40.1) > 1e-12 {
		t.Errorf("exact: n_e %g, P %v", ne[0], p[:2])
	}
}

// TestEffectiveDirected: when every count is below the noise, the practical planner does not
// act uniformly at random: at every step it picks the action with the least information, also
// at the last step where both actions are optimistic beyond H − h (the argmax is over the
// unclipped Q). The plugin planner saturates both actions at H − h and breaks the tie at
// random, so over 64 tie streams it picks both.
func TestEffectiveDirected(t *testing.T) {
	const S, A, H = 2, 2, 3
	r := &Release{S: S, A: A, H: H, Pooled: true, Users: 5, Std: 50, RStd: 100,
		NT: []float64{101, 0, 0, 0, 10, 5, 20, 0}, R: []float64{300, 0, 0, 1}}
	for _, preset := range []string{"practical", "plugin"} {
		b, _ := NoiseBonusPreset(preset)
		b, err := b.resolve(S, A, H, 100, PracticalPrivacy{Pool: true}, 0.1)
		if err != nil {
			t.Fatal(err)
		}
		picked := map[int]bool{}
		for seed := uint64(0); seed < 64; seed++ {
			u := newNoiseUCB(S, A, H, true, terminal{}, nil, nil, b, rand.New(rand.NewPCG(seed, 1)))
			pol := model.NewDeterministic(S, H)
			if err := u.Plan(r, pol); err != nil {
				t.Fatal(err)
			}
			for h := range H {
				picked[pol.Act[h][0]] = true
			}
		}
		if preset == "practical" && (len(picked) != 1 || !picked[1]) {
			t.Errorf("effective estimator: state 0 actions %v, want only 1 (the unexplored one)", picked)
		}
		if preset == "plugin" && len(picked) != 2 {
			t.Errorf("plugin estimator: state 0 actions %v, want a random tie", picked)
		}
	}
}
