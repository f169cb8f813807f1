package linmix

import (
	"math"
	"math/bits"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/dprl/dprl/agents/internal/agenttest"
	model "github.com/dprl/dprl/model/linmix"
	"github.com/dprl/dprl/privacy/noise"
	"github.com/dprl/dprl/privacy/stattest"
	"github.com/dprl/dprl/rng"
)

func envA(t testing.TB) *model.MDP {
	m, err := model.TwoStateHard(5, 10, 0.1, 0.5, nil)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func runAll(t testing.TB, a *Agent) []float64 {
	r, err := a.Run()
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// construct returns the agent newSeeded(m, cfg, seed) when seeded holds and newSecure(m, cfg,
// seed) otherwise, failing t on an error.
func construct[C, A any](t testing.TB, seeded bool, newSeeded, newSecure func(*model.MDP, C, rng.Seed) (A, error), m *model.MDP, cfg C, seed rng.Seed) A {
	t.Helper()
	mk := newSecure
	if seeded {
		mk = newSeeded
	}
	a, err := mk(m, cfg, seed)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

var allAlgs = []Algorithm{UCRLVTR, UCRLVTRPlus, LinOptVI, LinOptPO}

// TestNoiseFreeEquivalence: every private mode with σ = 0 and shift 0 reproduces the
// non-private algorithm bit for bit (spec P1 / §10 test 4) — this also checks the index
// alignment of the JDP tree and the LDP sums against the exact statistics.
func TestNoiseFreeEquivalence(t *testing.T) {
	m := envA(t)
	for _, alg := range allAlgs {
		base := Config{Algorithm: alg, Episodes: 300, BetaMult: 0.01}
		base.knobs.betaFixed = 50
		np, err := NewSeeded(m, base, rng.NewSeed(3))
		if err != nil {
			t.Fatal(err)
		}
		want := runAll(t, np)
		for _, mode := range []Mode{JDP, LDP} {
			cfg := base
			cfg.Mode, cfg.Epsilon = mode, 0.5
			cfg.knobs.noiseOff = true
			a, err := NewSeeded(m, cfg, rng.NewSeed(3))
			if err != nil {
				t.Fatal(err)
			}
			got := runAll(t, a)
			for k := range want {
				if got[k] != want[k] {
					t.Fatalf("%s/%s: episode %d regret %v != non-private %v", alg, mode, k+1, got[k], want[k])
				}
			}
		}
	}
}

// TestTreeAlignment: the statistics released after episode k (used in episode k+1) contain
// episodes 1..k and exactly popcount(k) tree nodes; with σ = 0 they equal the exact sums.
func TestTreeAlignment(t *testing.T) {
	m := envA(t)
	cfg := Config{Algorithm: UCRLVTR, Mode: JDP, Episodes: 40, Epsilon: 0.5}
	cfg.knobs.noiseOff = true
	a, err := NewSeeded(m, cfg, rng.NewSeed(4))
	if err != nil {
		t.Fatal(err)
	}
	d := m.Dim()
	gram := make([][]float64, m.Horizon())
	for h := range gram {
		gram[h] = make([]float64, d*d)
	}
	for k := 1; k <= 40; k++ {
		if a.Billboard().Episode() != k {
			t.Fatalf("billboard for episode %d says %d", k, a.Billboard().Episode())
		}
		if _, err := a.Episode(); err != nil {
			t.Fatal(err)
		}
		for h := 0; h < m.Horizon(); h++ {
			x := a.lv.x[h][0]
			for i := 0; i < d; i++ {
				for j := 0; j < d; j++ {
					gram[h][i*d+j] += x[i] * x[j]
				}
			}
			lam := a.cur.lam[h]
			for i := 0; i < d; i++ {
				for j := 0; j < d; j++ {
					want := gram[h][i*d+j]
					if i == j {
						want += 100 // λ = H²
					}
					if math.Abs(lam[i*d+j]-want) > 1e-9*max(1, math.Abs(want)) {
						t.Fatalf("k=%d h=%d: released Λ[%d,%d] = %v, want λI + Σ_{j≤k} XXᵀ = %v", k, h, i, j, lam[i*d+j], want)
					}
				}
			}
			if got := a.cur.mt[h].nodesInPrefix(); got != bits.OnesCount(uint(k)) {
				t.Fatalf("k=%d: prefix uses %d nodes, want popcount = %d", k, got, bits.OnesCount(uint(k)))
			}
		}
	}
}

// TestNoiseTreeVariance: the prefix noise of the tree has per-entry variance popcount(k)·σ²
// (off-diagonal, SymAvg law) and 2·popcount(k)·σ² on the diagonal, and nodes are reused.
// Tolerance: 5 standard errors of a sample variance (√(2/n) relative). Checked by hand that
// redrawing the nodes at every release (the "redraw" variant) leaves the variance unchanged
// but breaks the reuse check below, and that halving σ fails the variance check.
func TestNoiseTreeVariance(t *testing.T) {
	const d, K, n = 2, 16, 20000
	sigma := 3.0
	scales := noise.SymScales(d, noise.SumSqrt2)
	var sum, sumD [K + 1]float64
	src := noise.NewSeeded(rand.New(rand.NewPCG(9, 9)))
	for rep := 0; rep < n; rep++ {
		tr, err := newNoiseTree(noise.PackedLen(d), K, noise.GaussianNoise(sigma), scales, src)
		if err != nil {
			t.Fatal(err)
		}
		var prev []float64
		for k := 1; k <= K; k++ {
			if err := tr.append(nil); err != nil {
				t.Fatal(err)
			}
			off := tr.sum[noise.PackedIndex(d, 0, 1)]
			sum[k] += off * off
			dg := tr.sum[0]
			sumD[k] += dg * dg
			if k == 3 && rep == 0 {
				prev = append([]float64(nil), tr.level[1]...)
			}
			if k == 3 && rep == 0 {
				// node (0,2] (level 1) is reused by prefix 3 = (0,2] + (2,3].
				got := tr.sum[0] - tr.level[0][0]
				if math.Abs(got-prev[0]) > 1e-12 {
					t.Fatalf("prefix 3 does not reuse node (0,2]")
				}
			}
		}
	}
	for k := 1; k <= K; k++ {
		want := float64(bits.OnesCount(uint(k))) * sigma * sigma
		got := sum[k] / n
		if math.Abs(got/want-1) > 5*math.Sqrt(2.0/n) {
			t.Errorf("k=%d: off-diagonal variance %v, want %v", k, got, want)
		}
		if g := sumD[k] / n; math.Abs(g/(2*want)-1) > 5*math.Sqrt(2.0/n) {
			t.Errorf("k=%d: diagonal variance %v, want %v", k, g, 2*want)
		}
	}
}

// TestSymmetricNoise: every released Gram matrix is exactly symmetric, in JDP and LDP.
func TestSymmetricNoise(t *testing.T) {
	m := envA(t)
	for _, mode := range []Mode{JDP, LDP} {
		a, err := NewSeeded(m, Config{Algorithm: UCRLVTR, Mode: mode, Episodes: 20, Epsilon: 0.5}, rng.NewSeed(5))
		if err != nil {
			t.Fatal(err)
		}
		runAll(t, a)
		bb := a.Billboard()
		d := m.Dim()
		for h := 0; h < m.Horizon(); h++ {
			L, _ := bb.factor(h, 0)
			// Λ = L Lᵀ is symmetric by construction; check that L is lower triangular with a
			// positive diagonal (a valid Cholesky factor of a symmetric matrix).
			for i := 0; i < d; i++ {
				if !(L[i*d+i] > 0) {
					t.Fatalf("%s: non-positive factor diagonal", mode)
				}
				for j := i + 1; j < d; j++ {
					if L[i*d+j] != 0 {
						t.Fatalf("%s: factor not lower triangular", mode)
					}
				}
			}
		}
		if mode == JDP {
			for i, lam := range a.cur.lam {
				for p := 0; p < d; p++ {
					for q := 0; q < d; q++ {
						if lam[p*d+q] != lam[q*d+p] {
							t.Fatalf("released Λ %d not symmetric at (%d,%d)", i, p, q)
						}
					}
				}
			}
		}
	}
}

// TestPDMaintenance: with the shift switched off (c_shift = 1e-12) the noisy Gram matrices are
// indefinite; the eigenvalue clamp restores Λ ⪰ floor·I, is counted, and does not change
// the noise stream (post-processing: the tree noise is identical to the shifted run's).
func TestPDMaintenance(t *testing.T) {
	m := envA(t)
	mk := func(shift float64) *Agent {
		a, err := NewSeeded(m, Config{Algorithm: UCRLVTR, Mode: JDP, Episodes: 30, Epsilon: 0.5, ShiftMult: shift}, rng.NewSeed(6))
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	a0, a1 := mk(1e-12), mk(1) // ShiftMult 0 means "default 1"; 1e-12 switches the shift off
	runAll(t, a0)
	runAll(t, a1)
	if a0.Diagnostics().PDFallbacks == 0 {
		t.Fatal("no PD fallback without the shift: the test does not exercise the clamp")
	}
	if a1.Diagnostics().PDFallbacks != 0 {
		t.Errorf("%d PD fallbacks with the theory shift", a1.Diagnostics().PDFallbacks)
	}
	d := m.Dim()
	floor := 100.0
	for h := 0; h < m.Horizon(); h++ {
		L, _ := a0.Billboard().factor(h, 0)
		// smallest eigenvalue of L Lᵀ ≥ floor·(1 − 1e-6): check xᵀΛx ≥ floor‖x‖² on random x.
		r := rand.New(rand.NewPCG(1, uint64(h)))
		x := make([]float64, d)
		for trial := 0; trial < 200; trial++ {
			for i := range x {
				x[i] = r.NormFloat64()
			}
			q := 0.0 // xᵀ L Lᵀ x = ‖Lᵀx‖²
			for j := 0; j < d; j++ {
				s := 0.0
				for i := j; i < d; i++ {
					s += L[i*d+j] * x[i]
				}
				q += s * s
			}
			if q < floor*dot(x, x)*(1-1e-6) {
				t.Fatalf("h=%d: xᵀΛx = %v < floor·‖x‖² = %v", h, q, floor*dot(x, x))
			}
		}
		for i := range a0.cur.mt[h].sum {
			if a0.cur.mt[h].sum[i] != a1.cur.mt[h].sum[i] {
				t.Fatal("the PD fallback changed the tree noise")
			}
		}
	}
}

// TestLDPServerCannotSeeData walks the LDP server's and report's types by reflection: they hold
// no environment, trajectory, leaves, policy or planner, and the report's fields are
// unexported (only the user-side Randomizer can build one).
func TestLDPServerCannotSeeData(t *testing.T) {
	forbidden := []reflect.Type{reflect.TypeOf(model.MDP{}), reflect.TypeOf(trajectory{}), reflect.TypeOf(Leaves{}), reflect.TypeOf(planner{}), reflect.TypeOf(model.Policy{})}
	agenttest.WalkTypes(func(ty reflect.Type, path string) {
		for _, f := range forbidden {
			if ty == f {
				t.Fatalf("%s holds a %v", path, f)
			}
		}
	}, LocalServer{}, Report{})
	rt := reflect.TypeOf(Report{})
	for i := 0; i < rt.NumField(); i++ {
		if rt.Field(i).IsExported() {
			t.Fatalf("Report field %s is exported", rt.Field(i).Name)
		}
	}
	// The server's only input method takes a *Report.
	mt, ok := reflect.TypeOf(&LocalServer{}).MethodByName("Receive")
	if !ok || mt.Type.NumIn() != 2 || mt.Type.In(1) != reflect.TypeOf(&Report{}) {
		t.Fatal("LocalServer.Receive must take exactly a *Report")
	}
	if reflect.TypeOf(&LocalServer{}).NumMethod() != 1 {
		t.Fatalf("LocalServer has %d exported methods, want only Receive", reflect.TypeOf(&LocalServer{}).NumMethod())
	}
}

// TestBillboardReplay: the policies are a function of the released billboards (and the public
// tie stream) only. Replaying the billboards recorded in one run into a fresh planner gives
// bit-identical policies; and changing user k0's responses leaves every policy before k0+1
// unchanged.
func TestBillboardReplay(t *testing.T) {
	m := envA(t)
	other, _ := model.TwoStateHard(5, 10, 0.5, 1, []int{-1, 1, -1, 1}) // a very different user
	for _, mode := range []Mode{JDP, LDP} {
		for _, alg := range []Algorithm{UCRLVTR, LinOptPO} {
			cfg := Config{Algorithm: alg, Mode: mode, Episodes: 60, Epsilon: 5, BetaMult: 0.001, ShiftMult: 0.01}
			a, _ := NewSeeded(m, cfg, rng.NewSeed(8))
			var bbs []*Billboard
			var pols [][]int
			var probs [][]float64
			for k := 1; k <= 60; k++ {
				bbs = append(bbs, a.Billboard().Clone())
				env := m
				if k == 30 {
					env = other
				}
				if _, err := a.EpisodeIn(env); err != nil {
					t.Fatal(err)
				}
				pols = append(pols, append([]int(nil), a.Policy().Act...))
				probs = append(probs, append([]float64(nil), a.Policy().Prob...))
			}
			// Replay into a fresh planner with the same tie stream.
			c2 := cfg
			c2.Validate()
			b, _ := NewSeeded(m, c2, rng.NewSeed(8))
			for k := range bbs {
				b.pl.plan(bbs[k])
				if !reflect.DeepEqual(b.pl.pol.Act, pols[k]) || !reflect.DeepEqual(b.pl.pol.Prob, probs[k]) {
					t.Fatalf("%s/%s: replayed policy of episode %d differs", alg, mode, k+1)
				}
			}
			// Neighbouring run: without the changed user, policies 1..30 are identical.
			c, _ := NewSeeded(m, cfg, rng.NewSeed(8))
			for k := 1; k <= 60; k++ {
				if _, err := c.Episode(); err != nil {
					t.Fatal(err)
				}
				same := reflect.DeepEqual(c.Policy().Act, pols[k-1]) && reflect.DeepEqual(c.Policy().Prob, probs[k-1])
				if k <= 30 && !same {
					t.Fatalf("%s/%s: policy of episode %d ≤ k0 depends on user k0 = 30", alg, mode, k)
				}
			}
		}
	}
}

// TestLDPReleasePrivacy is a statistical privacy test of one release (the changed user's LDP
// report) on neighbouring inputs, for the zCDP-calibrated UCRL-VTR LDP agent (ε = 1,
// δ = 1e-5, valid for any ε): the event E = {projection of the report onto the mean
// difference > τ} is counted on 40 000 runs per side; the Clopper–Pearson lower bound on ε
// (99 %) must stay below the claim for the correct randomiser and exceed it with the noise
// divided by 4. Checked by hand: the broken variant is flagged, the correct one passes.
func TestLDPReleasePrivacy(t *testing.T) {
	m := envA(t)
	lb := func(div float64) (float64, float64) {
		cfg := Config{Algorithm: UCRLVTR, Mode: LDP, Calibration: ZCDP, Episodes: 10, Epsilon: 1, Delta: 1e-5}
		cfg.knobs.noiseDiv = div
		a, err := NewSeeded(m, cfg, rng.NewSeed(10))
		if err != nil {
			t.Fatal(err)
		}
		l0, l1 := newLeaves(m.Horizon(), a.specs), newLeaves(m.Horizon(), a.specs)
		extremeLeaves(l0, a.specs, 0)
		extremeLeaves(l1, a.specs, 1)
		// Noise-free means of both sides.
		spec0 := make([]regSpec, len(a.specs))
		copy(spec0, a.specs)
		for i := range spec0 {
			spec0[i].mat, spec0[i].vec = noise.Calibration{}, noise.Calibration{}
		}
		mu0 := (&Randomizer{specs: spec0}).Privatize(l0).Values()
		mu1 := (&Randomizer{specs: spec0}).Privatize(l1).Values()
		dir := make([]float64, len(mu0))
		for i := range dir {
			dir[i] = mu0[i] - mu1[i]
		}
		norm := math.Sqrt(dot(dir, dir))
		sigma := a.specs[0].mat.Scale
		tau := dot(mu1, dir)/norm + 2.5*sigma
		z := &Randomizer{specs: a.specs, src: noise.NewSeeded(rand.New(rand.NewPCG(11, 12)))}
		const n = 40000
		c0, c1 := 0, 0
		for i := 0; i < n; i++ {
			if dot(z.Privatize(l0).Values(), dir)/norm > tau {
				c0++
			}
			if dot(z.Privatize(l1).Values(), dir)/norm > tau {
				c1++
			}
		}
		return stattest.EpsilonLowerBound(c0, n, c1, n, 1e-5, 0.99), 1
	}
	good, claim := lb(0)
	if good > claim {
		t.Errorf("correct randomiser: ε lower bound %v exceeds the claim %v", good, claim)
	}
	bad, _ := lb(4)
	if bad <= claim {
		t.Errorf("noise/4 randomiser not flagged: ε lower bound %v ≤ claim %v", bad, claim)
	}
	t.Logf("ε lower bounds: correct %.3f, broken %.3f (claim %v)", good, bad, claim)
}

// TestLearnsNoiseOff: non-private UCRL-VTR and LinOpt-VI with c_β = 0.01 learn TwoStateHard:
// per-episode regret in the last 10 % of 3000 episodes is well below the no-learning 0.967.
// (With c_β = 1 the bonus saturates for all reachable K — spec P4.)
func TestLearnsNoiseOff(t *testing.T) {
	m := envA(t)
	for _, alg := range []Algorithm{UCRLVTR, LinOptVI} {
		a, err := NewSeeded(m, Config{Algorithm: alg, Episodes: 3000, BetaMult: 0.01}, rng.NewSeed(12))
		if err != nil {
			t.Fatal(err)
		}
		r := runAll(t, a)
		last := 0.0
		for _, v := range r[2700:] {
			last += v
		}
		last /= 300
		if last > 0.4 {
			t.Errorf("%s: last-10%% regret per episode %v, want < 0.4 (no learning: 0.967)", alg, last)
		}
	}
}

// TestOptimism: non-private UCRL-VTR with the theory width is optimistic:
// Q̃_{k,1}(x0,a) ≥ Q*_1(x0,a) for every a in ≥ 99 % of episodes (spec §10 test 5).
func TestOptimism(t *testing.T) {
	m := envA(t)
	a, err := NewSeeded(m, Config{Algorithm: UCRLVTR, Episodes: 400, BetaForm: Theorem7}, rng.NewSeed(13))
	if err != nil {
		t.Fatal(err)
	}
	bad := 0
	for k := 0; k < 400; k++ {
		if _, err := a.Episode(); err != nil {
			t.Fatal(err)
		}
		for act := 0; act < m.NumActions(); act++ {
			qstar := m.Reward(0, 0, act)
			for s2 := 0; s2 < 2; s2++ {
				qstar += m.Prob(0, 0, act, s2) * m.VStarAt(1, s2)
			}
			if a.pl.qAll[act] < qstar-1e-9 {
				bad++
				break
			}
		}
	}
	if bad > 4 {
		t.Fatalf("%d of 400 episodes not optimistic", bad)
	}
}

// TestDeterminism: the same seed gives bit-identical regrets; a different seed does not.
func TestDeterminism(t *testing.T) {
	m := envA(t)
	cfg := Config{Algorithm: UCRLVTR, Mode: LDP, Episodes: 50, Epsilon: 0.5}
	a, _ := NewSeeded(m, cfg, rng.NewSeed(20))
	b, _ := NewSeeded(m, cfg, rng.NewSeed(20))
	c, _ := NewSeeded(m, cfg, rng.NewSeed(21))
	ra, rb, rc := runAll(t, a), runAll(t, b), runAll(t, c)
	if !reflect.DeepEqual(ra, rb) {
		t.Fatal("same seed, different regrets")
	}
	if reflect.DeepEqual(ra, rc) {
		t.Fatal("different seeds, identical regrets")
	}
}

// TestSecureDefault: New (without explicit noise streams) uses the hardened source.
func TestSecureDefault(t *testing.T) {
	m := envA(t)
	a, err := New(m, Config{Algorithm: UCRLVTR, Mode: JDP, Episodes: 3, Epsilon: 0.5}, rng.NewSeed(1))
	if err != nil {
		t.Fatal(err)
	}
	if !a.cur.mt[0].src.Secure() {
		t.Fatal("default noise source is not noise.Secure")
	}
	runAll(t, a)
}

// refused is a configuration that a constructor must refuse with an error naming want.
type refused[C any] struct {
	cfg  C
	want string
}

// checkRefused builds every case's configuration with build and reports each one that is
// accepted, or refused with an error that does not contain its want.
func checkRefused[C any](t *testing.T, cases []refused[C], build func(C) error) {
	t.Helper()
	for _, c := range cases {
		if err := build(c.cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want it to name %q", c.cfg, err, c.want)
		}
	}
}

func TestBadConfig(t *testing.T) {
	m := envA(t)
	checkRefused(t, []refused[Config]{
		{Config{Episodes: 0}, "episodes"},
		{Config{Episodes: 10, Mode: JDP}, "epsilon"},
		{Config{Episodes: 10, Mode: JDP, Epsilon: -1}, "epsilon"},
		{Config{Episodes: 10, Mode: JDP, Epsilon: 1, Delta: 2}, "delta"},
		{Config{Episodes: 10, BetaMult: -1}, "beta multiplier"},
		{Config{Episodes: 10, ShiftMult: math.Inf(1)}, "shift multiplier"},
		{Config{Episodes: 10, P: 1}, "p:"},
		{Config{Episodes: 10, Algorithm: LinOptVI, Mode: JDP, Epsilon: 1, Calibration: Laplace}, "calibration"},
		{Config{Episodes: 10, Calibration: "foo"}, "calibration"},
		{Config{Episodes: 10, BetaForm: "x"}, "beta form"},
		{Config{Episodes: 10, Algorithm: 9}, "algorithm"},
		{Config{Episodes: 10, Mode: 7}, "mode"},
		{Config{Episodes: 10, Cw: -1}, "cw"},
	}, func(cfg Config) error {
		_, err := NewSeeded(m, cfg, rng.NewSeed(1))
		return err
	})
	a, _ := NewSeeded(m, Config{Episodes: 1}, rng.NewSeed(1))
	runAll(t, a)
	if _, err := a.Episode(); err == nil {
		t.Error("episode beyond K accepted")
	}
}
