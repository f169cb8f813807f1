package linmdp

import (
	"math"
	"math/rand/v2"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/dprl/dprl/internal/privacytest"
	model "github.com/dprl/dprl/model/linmdp"
	"github.com/dprl/dprl/privacy/accounting"
	"github.com/dprl/dprl/rng"
	"gonum.org/v1/gonum/mat"
)

// practicalSmall is the small E2 of the practical agents' tests.
func practicalSmall(t testing.TB) *model.MDP { return river(t, 4, 6) }

// userElement returns one user's element (practicalLayout, scaled) for the given episode.
func userElement(a *Practical, ep [][4]int, rew []float64) []float64 {
	clear(a.cur.batch)
	for h, st := range ep {
		a.cur.observe(h, st[0], st[1], rew[h], st[2])
	}
	return append([]float64(nil), a.cur.batch...)
}

// TestPracticalSensitivity checks PracticalSensitivity against the elements the curator
// actually builds: on random pairs of episodes (random states, actions, next states, rewards)
// ‖x − x′‖ never exceeds Δ₂, and the extreme pair of the proof (all H steps on one feature
// and one next state, reward 1, against the same on an orthogonal feature and another next
// state) attains it to 1e−12, for several scales and for pooled and step-dependent layouts.
// A packing without the √2 on off-diagonal entries, or a Δ₂ missing a block, fails one of the
// two checks.
func TestPracticalSensitivity(t *testing.T) {
	env := practicalSmall(t)
	H := env.H
	r := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct {
		steps  bool
		ts     float64
		attain bool
	}{{false, 1, true}, {false, 3, true}, {false, 0.4, true}, {true, 1, true}} {
		sd := rng.NewSeed(1)
		cfg := PracticalConfig{Common: Common{K: 10, Seed: &sd}, Epsilon: 1, Delta: 1e-5, StepDependent: tc.steps, TargetScale: tc.ts}
		a, err := NewPractical(env, cfg)
		if err != nil {
			t.Fatal(err)
		}
		delta := a.report.Entries[0].Sensitivity
		lay := a.cur.lay
		if want := PracticalSensitivity(H, !tc.steps, true, lay.gramScale, lay.tgtScale); delta != want {
			t.Fatalf("report Δ₂ %v, want %v", delta, want)
		}
		worst := 0.0
		for range 3000 {
			var ep [2][][4]int
			var rw [2][]float64
			for side := range 2 {
				for range H {
					ep[side] = append(ep[side], [4]int{r.IntN(env.N), r.IntN(env.A), r.IntN(env.N)})
					rw[side] = append(rw[side], r.Float64())
				}
			}
			// Concentrate visits sometimes (the worst case repeats one cell).
			if r.IntN(2) == 0 {
				for h := range ep[0] {
					ep[0][h] = ep[0][0]
					rw[0][h] = 1
				}
			}
			x := userElement(a, ep[0], rw[0])
			y := userElement(a, ep[1], rw[1])
			n := 0.0
			for i := range x {
				n += (x[i] - y[i]) * (x[i] - y[i])
			}
			worst = math.Max(worst, math.Sqrt(n))
		}
		if worst > delta*(1+1e-12) {
			t.Errorf("steps=%v ts=%v: ‖x−x′‖ = %v exceeds Δ₂ = %v", tc.steps, tc.ts, worst, delta)
		}
		// Extreme pair: state 0 action "stay" (φ = e_0) vs state in level 1 "stay" (φ = e_1).
		var e0, e1 [][4]int
		one := make([]float64, H)
		for h := range one {
			one[h] = 1
			e0 = append(e0, [4]int{0, 2, 0})
			e1 = append(e1, [4]int{env.N / 3, 2, 1})
		}
		x := userElement(a, e0, one)
		y := userElement(a, e1, one)
		n := 0.0
		for i := range x {
			n += (x[i] - y[i]) * (x[i] - y[i])
		}
		if got := math.Sqrt(n); math.Abs(got-delta) > 1e-12*delta {
			t.Errorf("steps=%v ts=%v: extreme pair at %v, want Δ₂ = %v", tc.steps, tc.ts, got, delta)
		}
	}
	// A feature with off-diagonal entries: the scaled packing is the Frobenius norm.
	phi := []float64{0.6, 0.8, 0}
	lay := practicalLayout{d: 3, n: 1, groups: 1, packed: 6, per: 6 + 3 + 3, gramScale: 1, tgtScale: 1}
	c := &practicalCurator{lay: lay, phi: [][][]float64{{phi}}, batch: make([]float64, lay.dim())}
	c.observe(0, 0, 0, 1, 0)
	n := 0.0
	for _, v := range c.batch[:6] {
		n += v * v
	}
	if math.Abs(n-1) > 1e-12 {
		t.Errorf("packed Gram of a unit feature has squared norm %v, want ‖φφᵀ‖_F² = 1", n)
	}
	if PracticalSensitivity(5, true, false, 1, 1) <= PracticalSensitivity(5, true, true, 1, 1) {
		t.Error("signed features must have a larger sensitivity than nonnegative ones")
	}
}

// TestGramNoiseBound checks the random-matrix bounds on seeded draws: the spectral norm of a
// symmetric matrix with diagonal std s and off-diagonal std s/√2 exceeds gramNoiseBound with
// frequency ≤ β (binomial tolerance of 4 standard deviations), and the bound is not vacuous
// (the empirical 1 − β quantile is at least half of it; ≈ 0.54 at d = 2, where the
// concentration term dominates, and above 0.7 at d = 20). The same for targetNoiseBound with the worst
// v (the top right singular vector of E_G, scaled). A bound without the concentration term
// (s·√(2d) alone) fails the first check (checked by hand: 1 060 of 4 000 draws exceed it at
// d = 20).
func TestGramNoiseBound(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	const n, beta, s = 4000, 0.05, 3.0
	for _, d := range []int{2, 5, 20} {
		bound := gramNoiseBound(s, d, beta)
		norms := make([]float64, n)
		for k := range norms {
			e := mat.NewSymDense(d, nil)
			for i := 0; i < d; i++ {
				for j := i; j < d; j++ {
					sd := s
					if j != i {
						sd /= math.Sqrt2
					}
					e.SetSym(i, j, sd*r.NormFloat64())
				}
			}
			var es mat.EigenSym
			es.Factorize(e, false)
			v := es.Values(nil)
			norms[k] = math.Max(-v[0], v[d-1])
		}
		checkTail(t, "gram", d, norms, bound, beta)
		// Target: ‖e_b + E_Gᵀ v‖ with ‖v‖ = 10, v along E_G's top right singular direction.
		N := 3 * d
		tb := targetNoiseBound(s, d, N, beta, 10)
		for k := range norms {
			eg := mat.NewDense(N, d, nil)
			for i := 0; i < N; i++ {
				for j := 0; j < d; j++ {
					eg.Set(i, j, s*r.NormFloat64())
				}
			}
			var sv mat.SVD
			sv.Factorize(eg, mat.SVDThin)
			var u mat.Dense
			sv.UTo(&u)
			y := make([]float64, d)
			for j := 0; j < d; j++ {
				y[j] = s * r.NormFloat64()
				for i := 0; i < N; i++ {
					y[j] += eg.At(i, j) * 10 * u.At(i, 0)
				}
			}
			norms[k] = math.Sqrt(dot(y, y))
		}
		checkTail(t, "target", d, norms, tb, beta)
	}
}

func dot(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

func checkTail(t *testing.T, what string, d int, norms []float64, bound, beta float64) {
	t.Helper()
	n := float64(len(norms))
	over := 0
	for _, v := range norms {
		if v > bound {
			over++
		}
	}
	if lim := beta*n + 4*math.Sqrt(beta*(1-beta)*n); float64(over) > lim {
		t.Errorf("%s d=%d: %d of %v draws exceed the bound %v (limit %v)", what, d, over, n, bound, lim)
	}
	sorted := append([]float64(nil), norms...)
	sort.Float64s(sorted)
	if q := sorted[int((1-beta)*n)]; q < 0.5*bound {
		t.Errorf("%s d=%d: 1−β quantile %v is below half the bound %v (vacuous bound)", what, d, q, bound)
	}
}

// TestPracticalAccountant: at (1, 1e−5) the report's μ is accounting.GDPFor's 0.268051 and its
// ε is ≤ 1 for every counter, layout and batch setting; σ = Δ₂·factor/μ; the noise-div-4
// variant reports its true ε > 1; the non-private twin reports no guarantee.
func TestPracticalAccountant(t *testing.T) {
	env := practicalSmall(t)
	mu, _ := accounting.GDPFor(accounting.ApproxDP{Epsilon: 1, Delta: 1e-5})
	for _, c := range LinPracticalCounters() {
		for _, batched := range []bool{false, true} {
			sd := rng.NewSeed(1)
			a, err := NewPractical(env, PracticalConfig{Common: Common{K: 300, Seed: &sd}, Epsilon: 1, Delta: 1e-5, Counter: c, Batched: batched, Batches: 10})
			if err != nil {
				t.Fatal(err)
			}
			r := a.Report()
			if !r.Private() || !r.PrivateAtNominal || r.Epsilon > 1 || math.Abs(r.Mu-mu.Mu) > 1e-9 {
				t.Errorf("%s batched=%v: report %+v", c, batched, r)
			}
			e := r.Entries[0]
			if math.Abs(e.Sigma-e.Sensitivity*e.Factor/mu.Mu) > 1e-9*e.Sigma {
				t.Errorf("%s: σ %v, want Δ₂·factor/μ = %v", c, e.Sigma, e.Sensitivity*e.Factor/mu.Mu)
			}
			if !strings.Contains(a.Info().Note, PracticalLabel) {
				t.Errorf("%s: Info note lacks the practical label", c)
			}
		}
	}
	sd := rng.NewSeed(1)
	cfg := PracticalConfig{Common: Common{K: 300, Seed: &sd}, Epsilon: 1, Delta: 1e-5}
	cfg.broken.noiseDiv = 4
	a, err := NewPractical(env, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if in := a.Info(); in.EffectiveEp <= 1 {
		t.Errorf("noise/4 variant reports effective ε %v, want > 1", in.EffectiveEp)
	}
	tw, err := NewPractical(env, PracticalConfig{Common: Common{K: 300}, Mode: PracticalNonPrivate})
	if err != nil {
		t.Fatal(err)
	}
	if tw.Report().Private() || tw.Info().Private {
		t.Error("non-private twin claims privacy")
	}
}

// TestPracticalNoiseStd: the released statistics minus the exact ones have, over releases and
// coordinates, the std the counter reports (StdAt) — within 5 % for 60 releases of 3 runs
// (≈ 3·10⁴ draws per release index pooled; relative std error < 1 %). Noise divided by 4 (the
// broken variant) fails.
func TestPracticalNoiseStd(t *testing.T) {
	env := practicalSmall(t)
	for _, div := range []float64{0, 4} {
		var ratio, n float64
		for seed := uint64(1); seed <= 3; seed++ {
			sd := rng.NewSeed(seed)
			cfg := PracticalConfig{Common: Common{K: 61, Seed: &sd}, Epsilon: 1, Delta: 1e-5}
			cfg.broken.noiseDiv = div
			a, err := NewPractical(env, cfg)
			if err != nil {
				t.Fatal(err)
			}
			tr := rng.NewSeed(seed).Child("env").Rand()
			for k := 1; k <= 61; k++ {
				playEpisode(t, a, env, tr)
				if k > 60 {
					continue
				}
				sdv := a.cur.cnt.StdAt(k) * div0(div)
				for i, v := range a.cur.rel.prefix {
					z := (v - a.cur.exact[i]) / sdv
					ratio += z * z
					n++
				}
			}
		}
		got := math.Sqrt(ratio / n)
		if ok := math.Abs(got-1) < 0.05; ok != (div == 0) {
			t.Errorf("noiseDiv=%v: empirical std / reported std = %v", div, got)
		}
	}
}

func div0(d float64) float64 {
	if d == 0 {
		return 1
	}
	return 1 / d
}

// TestPracticalLearns: on E2 (m = 3, M = 4, H = 6) the non-private twin and the private agent
// at ε = 10 (K = 6000) cut the last-decile regret to ≤ 0.5 × the first decile's, for seeds
// 1–2. Checked by hand to fail for the non-private twin with the bonus removed (c_β = 1e−9:
// it stays at the lure, first and last decile 1.84).
func TestPracticalLearns(t *testing.T) {
	env := practicalSmall(t)
	const K = 6000
	for _, mode := range []PracticalMode{PracticalNonPrivate, PracticalPrivate} {
		for seed := uint64(1); seed <= 2; seed++ {
			sd := rng.NewSeed(seed).Child("agent")
			a, err := NewPractical(env, PracticalConfig{Common: Common{K: K, Seed: &sd}, Epsilon: 10, Delta: 1e-5, Mode: mode})
			if err != nil {
				t.Fatal(err)
			}
			tr := runAgent(t, env, a, K, seed)
			f, l := mean(tr.Regret[:K/10]), mean(tr.Regret[K-K/10:])
			if !(l <= 0.5*f) {
				t.Errorf("mode %d seed %d: first decile %v, last decile %v", mode, seed, f, l)
			}
		}
	}
}

// TestPracticalReplay is the billboard test: a replayer that sees only the recorded releases
// (noisy prefixes) and the public constants re-derives the update schedule (log-det rule on
// the released Gram) and every policy; the raw-planner broken variant fails the replay.
func TestPracticalReplay(t *testing.T) {
	env := practicalSmall(t)
	const K = 400
	for _, raw := range []bool{false, true} {
		sd := rng.NewSeed(4)
		cfg := PracticalConfig{Common: Common{K: K, Seed: &sd}, Epsilon: 5, Delta: 1e-5}
		cfg.broken.record = true
		cfg.broken.rawPlanner = raw
		a, err := NewPractical(env, cfg)
		if err != nil {
			t.Fatal(err)
		}
		r := rng.NewSeed(4).Child("env").Rand()
		var acts [][][]int
		for k := 1; k <= K; k++ {
			acts = append(acts, copyPolicy(a.Policy()))
			playEpisode(t, a, env, r)
		}
		if len(a.updates) < 2 {
			t.Fatal("fewer than 2 updates: the replay would be vacuous")
		}
		// Replayer: a fresh agent of the same public configuration whose curator is replaced
		// by the recorded releases.
		sd2 := rng.NewSeed(99)
		rep, err := NewPractical(env, PracticalConfig{Common: Common{K: K, Seed: &sd2}, Epsilon: 5, Delta: 1e-5})
		if err != nil {
			t.Fatal(err)
		}
		mismatch := false
		for k := 1; k <= K; k++ {
			if !reflect.DeepEqual(rep.pl.act, acts[k-1]) {
				mismatch = true
				break
			}
			if k > len(a.cur.log) {
				break
			}
			rep.cur.users++
			rep.cur.released++
			rep.cur.rel.prefix = a.cur.log[k-1]
			rep.cur.rel.Std = rep.stdAt(k)
			rep.afterRelease(&rep.cur.rel)
		}
		if mismatch != raw {
			t.Errorf("rawPlanner=%v: replay mismatch = %v", raw, mismatch)
		}
	}
}

// TestPracticalTypes: the planner side cannot reach raw statistics. PracticalRelease holds
// only the released prefix, its layout and public numbers; the planner type reaches no
// curator or stats (afterRelease, which takes a *PracticalRelease, is checked by the replay).
func TestPracticalTypes(t *testing.T) {
	rt := reflect.TypeOf(PracticalRelease{})
	var names []string
	for i := 0; i < rt.NumField(); i++ {
		names = append(names, rt.Field(i).Name)
	}
	if got := strings.Join(names, ","); got != "Users,Std,prefix,lay" {
		t.Errorf("PracticalRelease fields %s", got)
	}
	bad := map[reflect.Type]bool{reflect.TypeOf(practicalCurator{}): true, reflect.TypeOf(stats{}): true}
	var visit func(ty reflect.Type, path string, seen map[reflect.Type]bool)
	visit = func(ty reflect.Type, path string, seen map[reflect.Type]bool) {
		if seen[ty] {
			return
		}
		seen[ty] = true
		if bad[ty] {
			t.Errorf("%s reaches %v", path, ty)
		}
		switch ty.Kind() {
		case reflect.Pointer, reflect.Slice, reflect.Array:
			visit(ty.Elem(), path+"/"+ty.String(), seen)
		case reflect.Struct:
			for i := 0; i < ty.NumField(); i++ {
				visit(ty.Field(i).Type, path+"."+ty.Field(i).Name, seen)
			}
		}
	}
	visit(reflect.TypeOf(planner{}), "planner", map[reflect.Type]bool{})
	visit(rt, "PracticalRelease", map[reflect.Type]bool{})
}

// TestPracticalBoundary: hostile rewards are clipped to [0, 1] at Observe (the statistic b
// moves by at most ‖φ‖ per step), invalid indices are rejected with an error naming the
// field, and the no-clip broken variant lets 1e9 through.
func TestPracticalBoundary(t *testing.T) {
	env := practicalSmall(t)
	for _, noClip := range []bool{false, true} {
		for _, r := range privacytest.Hostile {
			sd := rng.NewSeed(1)
			cfg := PracticalConfig{Common: Common{K: 10, Seed: &sd}, Epsilon: 1, Delta: 1e-5}
			cfg.broken.noClip = noClip
			a, err := NewPractical(env, cfg)
			if err != nil {
				t.Fatal(err)
			}
			a.cur.observe(0, 0, 2, r, 0)
			b := a.cur.batch[a.cur.lay.packed]
			ok := b >= 0 && b <= 1
			if !noClip && !ok {
				t.Errorf("reward %v entered as %v", r, b)
			}
			if noClip && r == 1e9 && ok {
				t.Error("no-clip variant clipped")
			}
		}
	}
	sd := rng.NewSeed(1)
	a, _ := NewPractical(env, PracticalConfig{Common: Common{K: 10, Seed: &sd}, Epsilon: 1, Delta: 1e-5})
	for _, c := range [][4]int{{-1, 0, 0, 0}, {0, env.N, 0, 0}, {0, 0, 3, 0}, {0, 0, 0, env.N}} {
		if err := a.Observe(c[0], c[1], c[2], 0, c[3]); err == nil {
			t.Errorf("Observe%v accepted", c)
		}
	}
	for _, v := range a.cur.batch {
		if v != 0 {
			t.Fatal("a rejected step was recorded")
		}
	}
}

// TestPracticalSecureDefault: without a seed the counter draws from noise.Secure, the report
// says so and Δ₂ includes the grid rounding; releases lie on the grid.
func TestPracticalSecureDefault(t *testing.T) {
	env := practicalSmall(t)
	a, err := NewPractical(env, PracticalConfig{Common: Common{K: 50}, Epsilon: 1, Delta: 1e-5})
	if err != nil {
		t.Fatal(err)
	}
	r := a.Report()
	if e := r.Entries[0]; !r.Secure || !(e.RoundedSensitivity > e.Sensitivity) || !r.PrivateAtNominal {
		t.Fatalf("report %+v", r)
	}
}

// TestPracticalDeterminism: the same seed gives the same regret trace.
func TestPracticalDeterminism(t *testing.T) {
	env := practicalSmall(t)
	var traces [2][]float64
	for i := range traces {
		sd := rng.NewSeed(7)
		a, err := NewPractical(env, PracticalConfig{Common: Common{K: 300, Seed: &sd}, Epsilon: 1, Delta: 1e-5})
		if err != nil {
			t.Fatal(err)
		}
		traces[i] = runAgent(t, env, a, 300, 7).Regret
	}
	if !reflect.DeepEqual(traces[0], traces[1]) {
		t.Error("same seed, different traces")
	}
}

// TestPracticalBadConfig: invalid settings give an error naming the field.
func TestPracticalBadConfig(t *testing.T) {
	env := practicalSmall(t)
	base := PracticalConfig{Common: Common{K: 10}, Epsilon: 1, Delta: 1e-5}
	for _, tc := range []struct {
		field string
		mod   func(*PracticalConfig)
	}{
		{"epsilon", func(c *PracticalConfig) { c.Epsilon = -1 }},
		{"delta", func(c *PracticalConfig) { c.Delta = 1 }},
		{"C", func(c *PracticalConfig) { c.C = 0.5 }},
		{"target_scale", func(c *PracticalConfig) { c.TargetScale = math.Inf(1) }},
		{"confidence", func(c *PracticalConfig) { c.Confidence = 2 }},
		{"counter", func(c *PracticalConfig) { c.Counter = "nope" }},
		{"batch_every", func(c *PracticalConfig) { c.BatchEvery = -1 }},
		{"mode", func(c *PracticalConfig) { c.Mode = 9 }},
		{"episodes K", func(c *PracticalConfig) { c.K = 0 }},
	} {
		c := base
		tc.mod(&c)
		if _, err := NewPractical(env, c); err == nil || !strings.Contains(err.Error(), tc.field) {
			t.Errorf("%s: error %v", tc.field, err)
		}
	}
}
