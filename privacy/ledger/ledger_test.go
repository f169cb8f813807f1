package ledger

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/dprl/dprl/privacy/accounting"
	"github.com/dprl/dprl/privacy/counter"
	"github.com/dprl/dprl/privacy/noise"
)

var target = accounting.ApproxDP{Epsilon: 1, Delta: 1e-5}

func mustLedger(t *testing.T, cfg Config) *Ledger {
	t.Helper()
	l, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func gauss(name string, sens, factor, sigma float64) Entry {
	return Entry{Name: name, Mechanism: GaussianCounter, Counter: "tree", Sensitivity: sens, Factor: factor, Sigma: sigma, Releases: 8, Dim: 3}
}

// TestComposeGDP: μ-GDP entries compose to √Σμᵢ² (hand-computed), the slack adds to its
// entry's μ, and ε is accounting's exact conversion of that μ.
func TestComposeGDP(t *testing.T) {
	l := mustLedger(t, Config{Model: JDP, Target: target})
	for _, e := range []Entry{gauss("a", 3, 2, 10), gauss("b", 1, 1, 0.25), {Name: "c", Mechanism: Gaussian, Sensitivity: 2, Sigma: 8, Dim: 1, ReleaseSlack: 0.125}} {
		if err := l.Register(e); err != nil {
			t.Fatal(err)
		}
	}
	r, err := l.Compose()
	if err != nil {
		t.Fatal(err)
	}
	// μ_a = 3·2/10 = 0.6, μ_b = 4, μ_c = 2/8 + 0.125 = 0.375.
	want := math.Sqrt(0.6*0.6 + 16 + 0.375*0.375)
	if r.Guarantee != accounting.KindGDP || math.Abs(r.Mu-want) > 1e-15*want {
		t.Fatalf("μ = %v (%s), want %v", r.Mu, r.Guarantee, want)
	}
	a, _ := accounting.GDP{Mu: r.Mu}.ToApproxDP(1e-5)
	if r.Epsilon != a.Epsilon || r.PrivateAtNominal {
		t.Errorf("ε = %v, want accounting's %v; private %v", r.Epsilon, a.Epsilon, r.PrivateAtNominal)
	}
	if e, _ := r.Entry("c"); e.ReleaseStd != 8 || e.RoundedSensitivity != 2 {
		t.Errorf("one-shot Gaussian: release std %v, rounded Δ %v", e.ReleaseStd, e.RoundedSensitivity)
	}
	if !strings.Contains(r.String(), "NOT (1, 1e-05)-private") {
		t.Errorf("String does not flag the shortfall: %s", r)
	}
	// One entry: the ledger's μ is Δ·factor/σ bit for bit (what the agents reported before it).
	for _, x := range []float64{0.1, 1, 3.3, 17, 1e-3} {
		one := mustLedger(t, Config{Model: JDP, Target: target})
		if err := one.Register(gauss("x", x, 3.7, 9.1)); err != nil {
			t.Fatal(err)
		}
		r, err := one.Compose()
		g, _ := accounting.GaussianGDP(x*3.7, 9.1)
		if err != nil || r.Mu != g.Mu {
			t.Errorf("single entry: μ = %v, want %v (%v)", r.Mu, g.Mu, err)
		}
	}
}

// TestComposePureAndZCDP: pure entries add their ε; a mix composes in zCDP with ρ = Σρᵢ
// (μ-GDP → μ²/2, ε → ε²/2) and converts with accounting's ZCDP.ToApproxDP.
func TestComposePureAndZCDP(t *testing.T) {
	lap := func(name string, sens, factor, b float64) Entry {
		return Entry{Name: name, Mechanism: Laplace, Sensitivity: sens, Factor: factor, Scale: b, Releases: 4, Dim: 2}
	}
	l := mustLedger(t, Config{Model: LDP, Target: target})
	_ = l.Register(lap("a", 2, 3, 12)) // ε = 0.5
	_ = l.Register(lap("b", 1, 1, 4))  // ε = 0.25
	r, err := l.Compose()
	if err != nil || r.Guarantee != accounting.KindPureDP || r.PureEpsilon != 0.75 || r.Epsilon != 0.75 || !r.PrivateAtNominal {
		t.Fatalf("pure: %+v (%v)", r, err)
	}
	l = mustLedger(t, Config{Model: JDP, Target: target})
	_ = l.Register(lap("a", 2, 3, 12))                                                                       // ε = 0.5 → ρ = 0.125
	_ = l.Register(gauss("g", 1, 1, 2))                                                                      // μ = 0.5 → ρ = 0.125
	_ = l.Register(Entry{Name: "z", Mechanism: GaussianZCDP, Sensitivity: 1, Sigma: 4, Releases: 1, Dim: 1}) // ρ = 1/32
	r, err = l.Compose()
	if err != nil {
		t.Fatal(err)
	}
	want := 0.125 + 0.125 + 1.0/32
	a, _ := accounting.ZCDP{Rho: want}.ToApproxDP(1e-5)
	if r.Guarantee != accounting.KindZCDP || math.Abs(r.Rho-want) > 1e-15 || r.Epsilon != a.Epsilon {
		t.Errorf("mix: ρ = %v (%s), ε = %v, want ρ = %v, ε = %v", r.Rho, r.Guarantee, r.Epsilon, want, a.Epsilon)
	}
	if !strings.Contains(r.String(), "-zCDP = [a: Δ₁=2, b=12") {
		t.Errorf("String: %s", r)
	}
}

// smallest steps down from x while ok holds and returns the last float that meets it and the
// number of steps taken (at most 8).
func smallest(x float64, ok func(float64) bool) (float64, int) {
	n := 0
	for ; n < 8; n++ {
		d := math.Nextafter(x, 0)
		if !ok(d) {
			break
		}
		x = d
	}
	return x, n
}

// TestCalibrationRoundTrip: the calibrated σ meets the target μ in float64 for seeded and
// Secure entries with and without a release slack, and the smallest float below it that still
// meets the target is at most 2 floats away: σ is the smallest float at or above the rounded
// quotient Δ·factor/(μ − slack) where the search starts (when that quotient rounds up, the
// float just below can meet the target too — accounting.GDP.GaussianSigma and
// counter.CalibrateSigma did the same, and reproductions keep their σ bit for bit). Seeded σ
// equals accounting's GaussianSigma and counter.CalibrateSigma bit for bit.
func TestCalibrationRoundTrip(t *testing.T) {
	mus := []float64{0.032521, 0.268051, 1.121242, 2.000446}
	sens := []float64{1, math.Sqrt(120), 40, 2 * math.Sqrt(20*4), 0.7}
	factors := []float64{1, 2.1, 4.472135954999579}
	minimal := 0
	for _, mu := range mus {
		for _, s := range sens {
			for _, f := range factors {
				for _, secure := range []bool{false, true} {
					for _, slack := range []float64{0, 1.1e-6} {
						e := Entry{Name: "c", Mechanism: GaussianCounter, Sensitivity: s, Factor: f, Releases: 256, Dim: 84, Secure: secure, ReleaseSlack: slack}
						sigma, err := GaussianSigma(mu, e)
						if err != nil {
							t.Fatal(err)
						}
						ok := func(sg float64) bool { return e.rounded(sg)*f/sg <= mu-slack }
						if !ok(sigma) || e.rounded(sigma)*f/sigma+slack > mu*(1+1e-15) {
							t.Errorf("μ=%v Δ=%v f=%v secure=%v slack=%v: σ=%v gives μ %v > target", mu, s, f, secure, slack, sigma, e.rounded(sigma)*f/sigma+slack)
						}
						low, steps := smallest(sigma, ok)
						if steps > 2 {
							t.Errorf("μ=%v Δ=%v f=%v secure=%v slack=%v: σ=%v, but %v (%d floats down) also meets the target", mu, s, f, secure, slack, sigma, low, steps)
						}
						if steps == 0 {
							minimal++
						} else if start := e.Sensitivity * f / (mu - slack); !secure && sigma != start {
							t.Errorf("μ=%v Δ=%v f=%v slack=%v: σ=%v is neither the smallest (%v) nor the starting quotient %v", mu, s, f, slack, sigma, low, start)
						}
						if secure && !(e.rounded(sigma) >= s+math.Sqrt(84)*noise.GaussianGranularity(sigma)) {
							t.Errorf("secure: rounded Δ %v lacks √dim·γ", e.rounded(sigma))
						}
						if !secure && slack == 0 {
							want, _ := accounting.GDP{Mu: mu}.GaussianSigma(s * f)
							want2, _ := counter.CalibrateSigma(mu, s, f, 84, 1, false)
							if sigma != want || sigma != want2 {
								t.Errorf("seeded σ %v, want accounting's %v and counter's %v", sigma, want, want2)
							}
						}
					}
				}
			}
		}
	}
	if minimal == 0 {
		t.Error("no calibration is the smallest float meeting its target")
	}
}

// TestLedgerCalibrate: Calibrate takes μ = GDPFor(target) (μ/√n for n Gaussian entries), the
// report of the calibrated entries meets the target, and a Secure factorisation counter's
// release slack is aimed below and added back.
func TestLedgerCalibrate(t *testing.T) {
	mu, _ := accounting.GDPFor(target)
	l := mustLedger(t, Config{Model: JDP, Target: target})
	e := Entry{Name: EntryCounter, Mechanism: GaussianCounter, Counter: "blt", Sensitivity: 40, Factor: 2.2, Releases: 256, Dim: 84, Secure: true, ReleaseSlack: 1e-3}
	if err := l.Register(e); err != nil {
		t.Fatal(err)
	}
	sigma, err := l.Calibrate(EntryCounter)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := GaussianSigma(mu.Mu, e)
	if sigma != want {
		t.Errorf("σ %v, want %v", sigma, want)
	}
	r, err := l.Compose()
	if err != nil {
		t.Fatal(err)
	}
	got := r.Entries[0]
	if r.Mu > mu.Mu || !r.PrivateAtNominal || r.Mu != got.RoundedSensitivity*got.Factor/got.Sigma+1e-3 || !r.Secure {
		t.Errorf("report %+v, target μ %v", r, mu.Mu)
	}
	if r.Mu < mu.Mu*(1-1e-9) {
		t.Errorf("μ %v well below the target %v: the calibration is not tight", r.Mu, mu.Mu)
	}
	// Dropping the slack from the entry lowers σ.
	e.ReleaseSlack = 0
	if s0, _ := GaussianSigma(mu.Mu, e); !(s0 < sigma) {
		t.Errorf("σ without slack %v, with %v", s0, sigma)
	}
	// Two Gaussian entries share the budget.
	l = mustLedger(t, Config{Model: JDP, Target: target})
	_ = l.Register(gauss("a", 1, 1, 0))
	_ = l.Register(gauss("b", 3, 2, 0))
	for _, n := range []string{"a", "b"} {
		if _, err := l.Calibrate(n); err != nil {
			t.Fatal(err)
		}
	}
	if r, err := l.Compose(); err != nil || r.Mu > mu.Mu*(1+1e-12) || r.Mu < mu.Mu*(1-1e-9) || !r.PrivateAtNominal {
		t.Errorf("two entries: μ %v, target %v (%v)", r.Mu, mu.Mu, err)
	}
	// A Laplace and a Gaussian entry split the zCDP budget.
	l = mustLedger(t, Config{Model: JDP, Target: target})
	_ = l.Register(Entry{Name: "l", Mechanism: Laplace, Sensitivity: 3, Releases: 1, Dim: 3, Secure: true})
	_ = l.Register(gauss("g", 1, 1, 0))
	for _, n := range []string{"l", "g"} {
		if _, err := l.Calibrate(n); err != nil {
			t.Fatal(err)
		}
	}
	z, _ := accounting.ZCDPFor(target)
	if r, err := l.Compose(); err != nil || r.Rho > z.Rho || !r.PrivateAtNominal {
		t.Errorf("mixed: ρ %v, target %v (%v)", r.Rho, z.Rho, err)
	}
	// Laplace alone: b = Δ₁·factor/ε with the Secure grid.
	e = Entry{Name: "l", Mechanism: Laplace, Sensitivity: 3, Factor: 2, Releases: 1, Dim: 3, Secure: true}
	b, err := LaplaceScale(0.5, e)
	okB := func(b float64) bool { return e.rounded(b)*2/b <= 0.5 }
	if _, steps := smallest(b, okB); err != nil || !okB(b) || steps > 2 || !(e.rounded(b) >= 3+3*noise.LaplaceGranularity(b)) {
		t.Errorf("Laplace scale %v (%v)", b, err)
	}
}

// TestNoiseDivided: dividing the noise multiplies a seeded single entry's μ by the divisor.
func TestNoiseDivided(t *testing.T) {
	l := mustLedger(t, Config{Model: JDP, Target: target})
	_ = l.Register(gauss("c", 1, 1, 0))
	if _, err := l.Calibrate("c"); err != nil {
		t.Fatal(err)
	}
	r, _ := l.Compose()
	b, err := r.WithNoiseDivided(4)
	if err != nil || math.Abs(b.Mu-4*r.Mu) > 1e-12 || b.PrivateAtNominal || !r.PrivateAtNominal || r.Entries[0].Sigma != 4*b.Entries[0].Sigma {
		t.Errorf("σ/4: μ %v → %v, private %v → %v (%v)", r.Mu, b.Mu, r.PrivateAtNominal, b.PrivateAtNominal, err)
	}
}

// TestCounterParams: the factor is the counter's, and the release slack is
// counter.SecureReleaseSlack of its rounding gain (0 for the trees and for seeded sources).
func TestCounterParams(t *testing.T) {
	reg := counter.NewRegistry()
	for _, name := range reg.Names() {
		k, _ := reg.Lookup(name)
		want, _ := k.Factor(5, 200)
		f, s, err := CounterParams(k.Build, 5, 200, true)
		if err != nil || f != want {
			t.Fatalf("%s: factor %v want %v (%v)", name, f, want, err)
		}
		c, _ := k.Build(counter.GaussianConfig{Dim: 5, Capacity: 200}, nil)
		g := c.(interface{ RoundingGain() float64 }).RoundingGain()
		if ws := counter.SecureReleaseSlack(g, 200, 5); s != ws || (name == "tree" || name == "honaker") != (s == 0) {
			t.Errorf("%s: slack %v, want %v", name, s, ws)
		}
		if _, s, _ := CounterParams(k.Build, 5, 200, false); s != 0 {
			t.Errorf("%s: seeded slack %v", name, s)
		}
	}
}

// TestReportJSON: the encoding is stable (same bytes twice, fixed field names) and decodes to
// the same report.
func TestReportJSON(t *testing.T) {
	l := mustLedger(t, Config{Model: JDP, Target: target, Assumption: "homogeneous"})
	e := gauss(EntryCounter, 2, 3, 0)
	e.Inputs = map[string]float64{"z": 1, "a": 2, "m": 3}
	e.Secure, e.ReleaseSlack = true, 1e-6
	_ = l.Register(e)
	if _, err := l.Calibrate(EntryCounter); err != nil {
		t.Fatal(err)
	}
	_ = l.SetReleaseStd(EntryCounter, 1.5)
	r, err := l.Compose()
	if err != nil {
		t.Fatal(err)
	}
	b1, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	b2, _ := json.Marshal(r)
	if string(b1) != string(b2) {
		t.Fatal("encoding not stable")
	}
	for _, k := range []string{`"model":"jdp"`, `"neighbouring":"replace-one"`, `"nominal_epsilon":1`, `"delta":0.00001`, `"guarantee":"gdp"`,
		`"mu":`, `"epsilon":`, `"private_at_nominal":true`, `"secure_noise":true`, `"assumption":"homogeneous"`,
		`"sensitivity":2`, `"sensitivity_with_rounding":`, `"sensitivity_factor":3`, `"sigma":`, `"releases":8`, `"release_std":1.5`,
		`"release_slack_mu":0.000001`, `"inputs":{"a":2,"m":3,"z":1}`, `"norm":"l2"`, `"mechanism":"gaussian-counter"`} {
		if !strings.Contains(string(b1), k) {
			t.Errorf("JSON lacks %s: %s", k, b1)
		}
	}
	var back Report
	if err := json.Unmarshal(b1, &back); err != nil {
		t.Fatal(err)
	}
	b3, _ := json.Marshal(back)
	if string(b3) != string(b1) {
		t.Errorf("round trip:\n%s\n%s", b1, b3)
	}
	s := r.String()
	for _, k := range []string{"jdp (ε=", "δ=1e-05", "replace-one", "-GDP", "Δ₂=", "σ=", "counter tree (factor 3, 8 releases, release slack 1e-06)"} {
		if !strings.Contains(s, k) {
			t.Errorf("String lacks %q: %s", k, s)
		}
	}
}

// TestLedgerErrors: invalid entries and misuse are rejected with the field named; non-private
// and noise-off ledgers claim nothing.
func TestLedgerErrors(t *testing.T) {
	if _, err := New(Config{Model: "jdp"}); err == nil {
		t.Error("private ledger without a target accepted")
	}
	if _, err := New(Config{Model: "x", Target: target}); err == nil {
		t.Error("unknown model accepted")
	}
	l := mustLedger(t, Config{Model: JDP, Target: target})
	for _, c := range []struct {
		e    Entry
		want string
	}{
		{Entry{Mechanism: Gaussian, Sensitivity: 1, Dim: 1}, "needs a name"},
		{Entry{Name: "a", Mechanism: "x", Sensitivity: 1, Dim: 1}, "mechanism"},
		{Entry{Name: "a", Mechanism: Gaussian, Norm: L1, Sensitivity: 1, Dim: 1}, "norm"},
		{Entry{Name: "a", Mechanism: Gaussian, Sensitivity: 0, Dim: 1}, "sensitivity"},
		{Entry{Name: "a", Mechanism: Gaussian, Sensitivity: 1, Dim: 0}, "dim"},
		{Entry{Name: "a", Mechanism: Gaussian, Sensitivity: 1, Dim: 1, Factor: math.NaN()}, "sensitivity_factor"},
		{Entry{Name: "a", Mechanism: Laplace, Sensitivity: 1, Dim: 1, ReleaseSlack: 1}, "release_slack_mu"},
		{Entry{Name: "a", Mechanism: Gaussian, Sensitivity: 1, Dim: 1, Neighbouring: accounting.ZeroOut}, "neighbouring"},
	} {
		if err := l.Register(c.e); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: err %v, want %q", c.e, err, c.want)
		}
	}
	_ = l.Register(gauss("a", 1, 1, 0))
	if err := l.Register(gauss("a", 1, 1, 0)); err == nil {
		t.Error("duplicate accepted")
	}
	if _, err := l.Compose(); err == nil || !strings.Contains(err.Error(), "no noise") {
		t.Errorf("uncalibrated entry composed: %v", err)
	}
	if _, err := GaussianSigma(0.1, Entry{Name: "a", Mechanism: Gaussian, Sensitivity: 1, Dim: 1, ReleaseSlack: 0.2}); err == nil {
		t.Error("slack above μ accepted")
	}
	if _, err := mustLedger(t, Config{Model: JDP, Target: target}).Compose(); err == nil {
		t.Error("empty private report accepted")
	}
	none := mustLedger(t, Config{Model: None, Assumption: "A"})
	r, err := none.Compose()
	if err != nil || !r.PrivateAtNominal || r.Private() || r.String() != "non-private (exact statistics); A" {
		t.Errorf("none: %q %+v %v", r, r, err)
	}
}

// TestReportPublic: the public structure an agent uses (Config.Public) is in the report, its
// JSON and its one-line summary, private or not; without it nothing changes.
func TestReportPublic(t *testing.T) {
	for _, model := range []string{JDP, LDP, None} {
		var lines [2]string
		for i, pub := range []string{"", "PUBLIC: the reward table"} {
			l := mustLedger(t, Config{Model: model, Target: target, Assumption: "A", Public: pub})
			if model != None {
				_ = l.Register(gauss(EntryCounter, 2, 3, 0))
				if _, err := l.Calibrate(EntryCounter); err != nil {
					t.Fatal(err)
				}
			}
			r, err := l.Compose()
			if err != nil {
				t.Fatal(err)
			}
			b, _ := json.Marshal(r)
			if r.Public != pub || strings.Contains(string(b), `"public"`) != (pub != "") {
				t.Errorf("%s %q: report %+v, JSON %s", model, pub, r, b)
			}
			lines[i] = r.String()
		}
		if want := lines[0] + "; PUBLIC: the reward table"; lines[1] != want {
			t.Errorf("%s: summary %q, want %q", model, lines[1], want)
		}
	}
}

// TestPureTarget: δ = 0 is a pure ε-DP target: Laplace entries calibrate and compose at it,
// a Gaussian entry cannot (no finite σ gives δ = 0), and a non-positive ε is refused.
func TestPureTarget(t *testing.T) {
	l := mustLedger(t, Config{Model: JDP, Target: accounting.ApproxDP{Epsilon: 2}})
	if err := l.Register(Entry{Name: "a", Mechanism: Laplace, Sensitivity: 1, Dim: 3}); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Calibrate("a"); err != nil {
		t.Fatal(err)
	}
	r, err := l.Compose()
	if err != nil {
		t.Fatal(err)
	}
	if r.Guarantee != accounting.KindPureDP || math.Abs(r.Epsilon-2) > 1e-12 || !r.PrivateAtNominal || r.Delta != 0 {
		t.Errorf("pure report %+v", r)
	}
	g := mustLedger(t, Config{Model: JDP, Target: accounting.ApproxDP{Epsilon: 2}})
	if err := g.Register(Entry{Name: "g", Mechanism: Gaussian, Sensitivity: 1, Dim: 3}); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Calibrate("g"); err == nil {
		t.Error("a Gaussian entry calibrated at δ = 0")
	}
	if _, err := New(Config{Model: JDP, Target: accounting.ApproxDP{Epsilon: 0}}); err == nil {
		t.Error("ε = 0 accepted")
	}
}
