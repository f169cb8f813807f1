package linmix

import (
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/dprl/dprl/agents/protocol"
	model "github.com/dprl/dprl/model/linmix"
	"github.com/dprl/dprl/privacy/noise"
	"github.com/dprl/dprl/rng"
	"gonum.org/v1/gonum/mat"
)

// practicalEnv is the practical agents' test environment, the papers' agents' envA.
func practicalEnv(t testing.TB) *model.MDP { return envA(t) }

// weightedDiff returns the counter-norm distance of two contributions (Gram off-diagonals
// weighted by √2).
func weightedDiff(d int, a, b []float64) float64 {
	sc := practicalScales(d)
	s := 0.0
	for i := range a {
		v := (a[i] - b[i]) / sc[i]
		s += v * v
	}
	return math.Sqrt(s)
}

// TestPracticalSensitivity: random and adversarial leaf pairs never exceed Δ₂ after the guard
// and the trace cap; the aligned-versus-orthogonal pair attains the Gram part of the bound
// (so a bound with a smaller Gram term fails).
func TestPracticalSensitivity(t *testing.T) {
	const H, d = 6, 4
	r := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct{ B, budget float64 }{{1, 1}, {0.7, 1}, {0.7, 0.5}, {0.3, 0.2}} {
		T := tc.budget * float64(H-1) * tc.B * tc.B
		enc := practicalEncoder{d: d, B: tc.B, T: T}
		sens := PracticalSensitivity(H, tc.B, tc.budget)
		worst := 0.0
		for it := 0; it < 3000; it++ {
			var xs [2][]float64
			for side := range xs {
				lv := newPracticalLeaves(H, d)
				aligned := r.IntN(2) == 0
				for h := range lv.x {
					for j := range lv.x[h] {
						lv.x[h][j] = 3 * r.NormFloat64()
						if aligned {
							lv.x[h][j] = 0
						}
					}
					if aligned {
						lv.x[h][side] = 5 // projected to B
					}
					lv.y[h] = []float64{-1, 1, 0.5, -0.5, math.NaN(), r.NormFloat64()}[r.IntN(6)]
				}
				if it%97 == 0 {
					lv.x[0][0] = math.Inf(1)
				}
				xs[side] = make([]float64, enc.dim())
				enc.add(lv, xs[side])
			}
			worst = max(worst, weightedDiff(d, xs[0], xs[1]))
		}
		if worst > sens*(1+1e-12) {
			t.Errorf("B=%g budget=%g: observed distance %g > Δ₂ = %g", tc.B, tc.budget, worst, sens)
		}
		// Gram part attained: all steps aligned on e1 vs e2 (kept until the trace cap).
		if gram := math.Sqrt2 * math.Floor(T/(tc.B*tc.B)+1e-9) * tc.B * tc.B; worst < 0.99*gram {
			t.Errorf("B=%g budget=%g: worst %g below the attainable Gram distance %g", tc.B, tc.budget, worst, gram)
		}
	}
}

// TestPracticalFeatureBound: B₁ of TwoStateHard equals the hand-computed vertex maximum
// ‖c2·a‖ = c2·√(d−1) of the projected regressor (the first coordinate is pinned by
// Σ_{s′} P = 1) and never exceeds 1.
func TestPracticalFeatureBound(t *testing.T) {
	m := practicalEnv(t)
	c2 := 1 / math.Sqrt(8)
	want := c2 * 2
	if got := PracticalFeatureBound(m); math.Abs(got-want) > 1e-9 {
		t.Fatalf("B₁ = %.12g, want %.12g", got, want)
	}
}

// TestPracticalKnown: on TwoStateHard the constraint Σ_{s′} P(s′|s,a) = 1 pins w₀ = (√2, 0, …),
// leaves N = span(e₂..e_d), C_θ = ‖w − w₀‖ and Y = 1 − q; every leaf satisfies
// E[y | s, a] = ⟨X, w⟩/(2Y) exactly (checked against the true kernel for random values), and
// |y| ≤ ½ with equality attained.
func TestPracticalKnown(t *testing.T) {
	m := practicalEnv(t)
	kn := newPracticalKnown(m)
	d := m.Dim()
	if kn.dn != d-1 || math.Abs(kn.w0[0]-math.Sqrt2) > 1e-9 || math.Abs(kn.y-0.9) > 1e-9 {
		t.Fatalf("dn %d w0 %v Y %g", kn.dn, kn.w0, kn.y)
	}
	w := m.W(0)
	if got, want := kn.cTheta(m.Cw()), math.Sqrt(dot(w[1:], w[1:])); math.Abs(got-want) > 1e-9 {
		t.Errorf("C_θ = %g, want %g", got, want)
	}
	pl := newPracticalPlanner(m, &PracticalConfig{Episodes: 10}, m.Cw(), PracticalFeatureBound(m), rand.New(rand.NewPCG(1, 1)))
	r := rand.New(rand.NewPCG(5, 6))
	H := m.Horizon()
	lv := newPracticalLeaves(H, d)
	tr := trajectory{s: make([]int, H+1), a: make([]int, H)}
	worst := 0.0
	for it := 0; it < 200; it++ {
		pl.v[1][0], pl.v[1][1] = 5*r.Float64(), 5*r.Float64()
		s, a := r.IntN(2), r.IntN(m.NumActions())
		mean := 0.0
		for next := 0; next < 2; next++ {
			tr.s[0], tr.a[0], tr.s[1] = s, a, next
			pl.leaves(pl.v[1:], &tr, lv)
			mean += m.Prob(0, s, a, next) * lv.y[0]
			worst = max(worst, math.Abs(lv.y[0]))
		}
		if want := dot(lv.x[0], w) / (2 * kn.y); math.Abs(mean-want) > 1e-12 {
			t.Fatalf("E[y] = %g, ⟨X, w⟩/(2Y) = %g", mean, want)
		}
		if math.Abs(lv.x[0][0]) > 1e-12 {
			t.Fatalf("X = %v has a component along the known direction", lv.x[0])
		}
	}
	if worst > 0.5+1e-12 || worst < 0.5-1e-9 {
		t.Errorf("max |y| = %g, want ½", worst)
	}
}

// TestPracticalNoiseSpectralBound: the spectral bound b = s(2√d + √(2 ln(2/β_e))) on the released
// Gram noise holds with empirical failure rate ≤ β_e (binomial tolerance), on seeded draws of
// the randomiser's actual noise; a bound without the 2 in front of √d fails far more often,
// so the test has power.
func TestPracticalNoiseSpectralBound(t *testing.T) {
	const d, n = 5, 4000
	cfg := PracticalConfig{Confidence: 0.05}
	z := &PracticalRandomizer{enc: practicalEncoder{d: d, B: 1, T: 1}, sigma: 2, scales: practicalScales(d),
		src: noise.NewSeeded(rand.New(rand.NewPCG(3, 4)))}
	lam, _ := practicalWidth(&cfg, d, 3, 1, 0, z.sigma, 1, 1, 0.5)
	b := (lam - 1) / 2
	loose := z.sigma * (math.Sqrt(d) + math.Sqrt(2*math.Log(2/cfg.Confidence))) / 2
	lv := newPracticalLeaves(2, d)
	fail, failLoose := 0, 0
	for i := 0; i < n; i++ {
		rep := z.Privatize(lv)
		e := mat.NewSymDense(d, nil)
		for a := 0; a < d; a++ {
			for c := a; c < d; c++ {
				e.SetSym(a, c, rep.x[noise.PackedIndex(d, a, c)])
			}
		}
		var eig mat.EigenSym
		if !eig.Factorize(e, false) {
			t.Fatal("eigen")
		}
		v := eig.Values(nil)
		nrm := max(math.Abs(v[0]), math.Abs(v[d-1]))
		if nrm > b {
			fail++
		}
		if nrm > loose {
			failLoose++
		}
	}
	tol := cfg.Confidence + 3*math.Sqrt(cfg.Confidence*(1-cfg.Confidence)/n)
	if float64(fail)/n > tol {
		t.Errorf("‖E‖ > b in %d/%d draws, want ≤ %.3f", fail, n, tol)
	}
	if float64(failLoose)/n < 2*tol {
		t.Errorf("the loose bound fails only %d/%d times: the test has no power", failLoose, n)
	}
	t.Logf("failure rate %.4f (β_e %g); loose bound %.3f", float64(fail)/n, cfg.Confidence, float64(failLoose)/n)
}

// TestPracticalReleaseNoise: the JDP release minus the exact sums has the per-coordinate std
// the release reports (Std on the Gram diagonal and the target, Std/√2 off the diagonal).
func TestPracticalReleaseNoise(t *testing.T) {
	m := practicalEnv(t)
	const runs = 300
	d := m.Dim()
	np := noise.PackedLen(d)
	var ss []float64
	var std float64
	for s := 0; s < runs; s++ {
		a, err := NewPracticalSeeded(m, PracticalConfig{Privacy: PracticalPrivacy{Mode: JDP, Epsilon: 1, BatchEvery: 4}, Episodes: 40}, rng.NewSeed(uint64(s)))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := a.Run(); err != nil {
			t.Fatal(err)
		}
		rel := a.Release()
		if ss == nil {
			ss = make([]float64, np+d)
		}
		std = rel.Std
		sc := practicalScales(d)
		for i := range ss {
			var v float64
			if i < np {
				v = rel.Gram[i] - a.cur.exact[i]
			} else {
				v = rel.Target[i-np] - a.cur.exact[i]
			}
			ss[i] += (v / sc[i]) * (v / sc[i])
		}
	}
	// Each coordinate's normalised sum of squares is std²·χ²(runs): relative sd √(2/runs).
	for i, v := range ss {
		got := math.Sqrt(v / runs)
		if math.Abs(got/std-1) > 4*math.Sqrt(0.5/runs) {
			t.Errorf("coordinate %d: empirical std %.4g, reported %.4g", i, got, std)
		}
	}
}

// TestPracticalGuarantee: the accountant reports μ = GDPFor(1, 1e-5) = 0.268051 and ε ≤ 1 at the
// calibrated σ, for JDP (every counter) and LDP, seeded and Secure.
func TestPracticalGuarantee(t *testing.T) {
	m := practicalEnv(t)
	for _, mode := range []Mode{JDP, LDP} {
		for _, ctr := range []string{"blt", "tree", "honaker"} {
			if mode == LDP && ctr != "blt" {
				continue
			}
			for _, secure := range []bool{false, true} {
				cfg := PracticalConfig{Privacy: PracticalPrivacy{Mode: mode, Epsilon: 1, Counter: ctr, BatchEvery: 50}, Episodes: 1000}
				a := construct(t, !secure, NewPracticalSeeded, NewPractical, m, cfg, rng.NewSeed(1))
				g := a.Guarantee()
				if math.Abs(g.Mu-0.268051) > 1e-6 || g.Epsilon > 1+1e-9 || !g.PrivateAtNominal || g.Secure != secure {
					t.Errorf("%s/%s secure=%v: %+v", mode, ctr, secure, g)
				}
				if e := g.Entries[0]; secure && !(e.RoundedSensitivity > e.Sensitivity) {
					t.Errorf("%s secure: rounding not in the sensitivity (%g vs %g)", mode, e.RoundedSensitivity, e.Sensitivity)
				}
				if !strings.Contains(g.String(), "μ=0.268051") {
					t.Errorf("statement %q", g.String())
				}
			}
		}
	}
}

// TestPracticalLearnsNoiseOff: the noise-off twin learns TwoStateHard quickly (last-decile
// regret far below the uniform policy's 0.967 per episode).
func TestPracticalLearnsNoiseOff(t *testing.T) {
	a, err := NewPracticalSeeded(practicalEnv(t), PracticalConfig{Episodes: 2000, BetaMult: 0.01}, rng.NewSeed(1))
	if err != nil {
		t.Fatal(err)
	}
	r, err := a.Run()
	if err != nil {
		t.Fatal(err)
	}
	last := 0.0
	for _, v := range r[len(r)*9/10:] {
		last += v / float64(len(r)/10)
	}
	if last > 0.1 {
		t.Errorf("noise-off twin: last-decile regret %.3f per episode", last)
	}
}

// TestPracticalDeterministic: a seeded run is a pure function of the seed, and the noise
// changes with it.
func TestPracticalDeterministic(t *testing.T) {
	m := practicalEnv(t)
	run := func(s uint64) ([]float64, []float64) {
		a, err := NewPracticalSeeded(m, PracticalConfig{Privacy: PracticalPrivacy{Mode: JDP, Epsilon: 1}, Episodes: 200, BetaMult: 0.01}, rng.NewSeed(s))
		if err != nil {
			t.Fatal(err)
		}
		r, err := a.Run()
		if err != nil {
			t.Fatal(err)
		}
		return r, a.Release().Clone().Gram
	}
	r1, g1 := run(5)
	r2, g2 := run(5)
	_, g3 := run(6)
	if !reflect.DeepEqual(r1, r2) || !reflect.DeepEqual(g1, g2) {
		t.Fatal("not deterministic")
	}
	if reflect.DeepEqual(g1, g3) {
		t.Fatal("noise does not depend on the seed")
	}
}

// TestPracticalBillboardReplay: replaying the recorded releases into a fresh planner with the
// same tie stream reproduces every policy bit for bit (the planner reads nothing else), and a
// changed user k0 leaves the policies of users 1..k0 unchanged.
func TestPracticalBillboardReplay(t *testing.T) {
	m := practicalEnv(t)
	cfg := PracticalConfig{Privacy: PracticalPrivacy{Mode: JDP, Epsilon: 1, BatchEvery: 4}, Episodes: 120, BetaMult: 0.01}
	record := func(hostile int) ([]*PracticalRelease, [][]int, *PracticalAgent) {
		a, err := NewPracticalSeeded(m, cfg, rng.NewSeed(3))
		if err != nil {
			t.Fatal(err)
		}
		var rels []*PracticalRelease
		var pols [][]int
		for pub := a.publisher(); pub.k < cfg.Episodes; {
			rels = append(rels, a.Release().Clone())
			if pub.k+1 == hostile {
				// user k0 replaced by one with extreme leaves (sent through the contract)
				p, err := pub.Publish()
				if err != nil {
					t.Fatal(err)
				}
				pols = append(pols, append([]int(nil), p.Rule.Policy.Act...))
				rep := &protocol.Leaves{Header: a.trusted.Expect()}
				for h := 0; h < m.Horizon()-1; h++ {
					x := make([]float64, m.Dim())
					x[1] = 100
					rep.X, rep.Y = append(rep.X, [][]float64{x}), append(rep.Y, []float64{0.5})
				}
				if err := a.trusted.Receive(rep); err != nil {
					t.Fatal(err)
				}
				continue
			}
			if _, err := a.Episode(); err != nil {
				t.Fatal(err)
			}
			pols = append(pols, append([]int(nil), a.pl.pol.Act...))
		}
		return rels, pols, a
	}
	rels, pols, a := record(0)
	cp := a.cfg
	pl := newPracticalPlanner(m, &cp, m.Cw(), a.pub.B, rng.NewSeed(3).Child("ties").Rand())
	for k, rel := range rels {
		pl.plan(rel)
		if !reflect.DeepEqual(pl.pol.Act, pols[k]) {
			t.Fatalf("episode %d: replayed policy differs", k+1)
		}
	}
	const k0 = 50
	_, pols2, _ := record(k0)
	for k := 0; k < k0; k++ {
		if !reflect.DeepEqual(pols[k], pols2[k]) {
			t.Fatalf("policy of user %d changed by user %d", k+1, k0)
		}
	}
	diff := false
	for k := k0; k < len(pols); k++ {
		diff = diff || !reflect.DeepEqual(pols[k], pols2[k])
	}
	if !diff {
		t.Log("later policies unchanged (possible, not required)")
	}
}

// TestPracticalLDPServerCannotSeeData: the LDP server and the report hold no trajectory, leaf,
// model or noise stream (reflection over every field, recursively).
func TestPracticalLDPServerCannotSeeData(t *testing.T) {
	bad := []reflect.Type{reflect.TypeOf(trajectory{}), reflect.TypeOf(PracticalLeaves{}), reflect.TypeOf(model.MDP{}),
		reflect.TypeOf((*noise.Source)(nil)).Elem(), reflect.TypeOf(rand.Rand{}), reflect.TypeOf(practicalEncoder{})}
	var walk func(tp reflect.Type, path string, seen map[reflect.Type]bool)
	walk = func(tp reflect.Type, path string, seen map[reflect.Type]bool) {
		if seen[tp] {
			return
		}
		seen[tp] = true
		for _, b := range bad {
			if tp == b {
				t.Errorf("%s has type %v", path, tp)
			}
		}
		switch tp.Kind() {
		case reflect.Interface:
			t.Errorf("%s is an interface (could hold anything)", path)
		case reflect.Pointer, reflect.Slice, reflect.Array:
			walk(tp.Elem(), path+"[]", seen)
		case reflect.Struct:
			for i := 0; i < tp.NumField(); i++ {
				walk(tp.Field(i).Type, path+"."+tp.Field(i).Name, seen)
			}
		}
	}
	walk(reflect.TypeOf(PracticalLocalServer{}), "PracticalLocalServer", map[reflect.Type]bool{})
	walk(reflect.TypeOf(PracticalReport{}), "PracticalReport", map[reflect.Type]bool{})
	for i := 0; i < reflect.TypeOf(PracticalReport{}).NumField(); i++ {
		if reflect.TypeOf(PracticalReport{}).Field(i).IsExported() {
			t.Error("PracticalReport has an exported field")
		}
	}
}

// TestPracticalGuard: non-finite and oversized inputs are mapped into the sensitivity box.
func TestPracticalGuard(t *testing.T) {
	for _, tc := range []struct {
		x    []float64
		y    float64
		wx   []float64
		wy   float64
		name string
	}{
		{[]float64{3, 4}, 0.2, []float64{0.6, 0.8}, 0.2, "project"},
		{[]float64{math.NaN(), 1}, 0.2, []float64{0, 0}, 0.2, "nan x"},
		{[]float64{math.Inf(-1), 1}, 2, []float64{0, 0}, 0.5, "inf x, y>½"},
		{[]float64{1e200, 1e200}, math.NaN(), []float64{1 / math.Sqrt2, 1 / math.Sqrt2}, 0, "overflow, nan y"},
		{[]float64{0.1, 0}, -3, []float64{0.1, 0}, -0.5, "inside, y<−½"},
	} {
		y := practicalGuard(tc.x, tc.y, 1)
		for i := range tc.x {
			if math.Abs(tc.x[i]-tc.wx[i]) > 1e-12 {
				t.Errorf("%s: x = %v, want %v", tc.name, tc.x, tc.wx)
			}
		}
		if y != tc.wy {
			t.Errorf("%s: y = %v, want %v", tc.name, y, tc.wy)
		}
	}
}

// TestPracticalConfigErrors: every bad field is named.
func TestPracticalConfigErrors(t *testing.T) {
	m := practicalEnv(t)
	checkRefused(t, []refused[PracticalConfig]{
		{PracticalConfig{Episodes: 1}, "episodes"},
		{PracticalConfig{Episodes: 10, Privacy: PracticalPrivacy{Mode: JDP}}, "privacy.epsilon"},
		{PracticalConfig{Episodes: 10, Privacy: PracticalPrivacy{Mode: JDP, Epsilon: 1, Delta: 2}}, "privacy.delta"},
		{PracticalConfig{Episodes: 10, Privacy: PracticalPrivacy{Mode: JDP, Epsilon: 1, Counter: "x"}}, "privacy.counter"},
		{PracticalConfig{Episodes: 10, Privacy: PracticalPrivacy{Clip: 2}}, "privacy.clip"},
		{PracticalConfig{Episodes: 10, Privacy: PracticalPrivacy{Budget: -1}}, "privacy.budget"},
		{PracticalConfig{Episodes: 10, Privacy: PracticalPrivacy{BatchEvery: -1}}, "privacy.batch_every"},
		{PracticalConfig{Episodes: 10, Lambda0: -1}, "lambda0"},
		{PracticalConfig{Episodes: 10, Confidence: 1}, "confidence"},
		{PracticalConfig{Episodes: 10, BetaMult: math.Inf(1)}, "beta multiplier"},
		{PracticalConfig{Episodes: 10, Theory: true, BetaMult: 0.1}, "beta multiplier"},
		{PracticalConfig{Episodes: 10, Cw: -1}, "cw"},
	}, func(cfg PracticalConfig) error {
		_, err := NewPracticalSeeded(m, cfg, rng.NewSeed(1))
		return err
	})
}

// TestPracticalTheoryWider: the theory variant's union bound gives a wider λ_t and β_t than the
// practical confidence at the same noise.
func TestPracticalTheoryWider(t *testing.T) {
	p := PracticalConfig{Episodes: 1000}
	p.defaults()
	th := p
	th.Theory = true
	l1, b1 := practicalWidth(&p, 5, 10, 100, 500, 50, 1.4, 0.7, 0.5)
	l2, b2 := practicalWidth(&th, 5, 10, 100, 500, 50, 1.4, 0.7, 0.5)
	if !(l2 > l1 && b2 > b1) {
		t.Errorf("theory (%g, %g) not wider than practical (%g, %g)", l2, b2, l1, b1)
	}
}
