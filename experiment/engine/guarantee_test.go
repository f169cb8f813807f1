package engine_test

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"

	linmdpagents "github.com/dprl/dprl/agents/linmdp"
	linmixagents "github.com/dprl/dprl/agents/linmix"
	lqagents "github.com/dprl/dprl/agents/lq"
	tabularagents "github.com/dprl/dprl/agents/tabular"
	"github.com/dprl/dprl/experiment/engine"
	"github.com/dprl/dprl/experiment/families"
	"github.com/dprl/dprl/experiment/rundir"
	lqmodel "github.com/dprl/dprl/model/lq"
	"github.com/dprl/dprl/privacy/ledger"
)

// TestPrivateAtReports: the predicate reads each kind of privacy report's own verdict: private
// at (ε, δ) only when the certified ε (and δ) are at most the requested ones, a non-private
// model is ErrNonPrivate, and an unknown report gives no guarantee.
func TestPrivateAtReports(t *testing.T) {
	jdp := ledger.Report{Model: ledger.JDP, Nominal: 1, Delta: 1e-5, Epsilon: 1, PrivateAtNominal: true}
	over := jdp
	over.Epsilon, over.PrivateAtNominal = 1.01, false
	pure := ledger.Report{Model: ledger.JDP, Nominal: 1, Guarantee: "pure-dp", PureEpsilon: 1, Epsilon: 1, PrivateAtNominal: true}
	tab := tabularagents.PrivacyReport{Model: "jdp", Nominal: 1, EpsilonReplaceOne: 1, PrivateAtNominal: true, Ledger: pure}
	purePaper := pure
	purePaper.PureEpsilon, purePaper.Epsilon, purePaper.PrivateAtNominal = 2, 2, false
	tabPaper := tabularagents.PrivacyReport{Model: "jdp", Nominal: 1, EpsilonReplaceOne: 2, PrivateAtNominal: false, Ledger: purePaper}
	lq, err := lqagents.ComputeConstants(lqagents.PublicOf(lqmodel.LQE1()), lqagents.DefaultConfig(1, 100))
	if err != nil {
		t.Fatal(err)
	}
	// A report whose noise is a quarter of the calibrated one (ε ≈ 2.3 at nominal 1).
	lqOver := lq
	if lqOver.Ledger, err = lq.Ledger.WithNoiseDivided(4); err != nil {
		t.Fatal(err)
	}
	under := jdp
	under.Epsilon = 0.7
	ngo := linmdpagents.Info{Private: true, Epsilon: 1, Delta: 1e-5, EffectiveEp: 0.7, Ledger: under}
	printed := ngo
	printed.EffectiveEp, printed.Ledger = over.Epsilon, over
	half := jdp
	half.Nominal, half.Epsilon = 0.5, 0.5
	mix := linmixagents.Constants{NoiseKind: "gaussian", Covered: true, EffectiveEpsilon: 0.5, Ledger: half}
	zhouRep := over
	zhouRep.Epsilon = 1.2
	zhou := linmixagents.Constants{NoiseKind: "gaussian", Covered: false, EffectiveEpsilon: 1.2, EpsilonZeroOut: 0.14, EpsilonReplaceOne: 1.2, Ledger: zhouRep}
	uncovered := mix
	uncovered.Covered, uncovered.Ledger = false, over
	for _, c := range []struct {
		name       string
		report     any
		eps, delta float64
		ok         bool
		nonPrivate bool
	}{
		{"ledger jdp", jdp, 1, 1e-5, true, false},
		{"ledger jdp, pointer", &jdp, 1, 1e-5, true, false},
		{"ledger jdp at a larger ε", jdp, 2, 1e-5, true, false},
		{"ledger jdp at a smaller ε", jdp, 0.99, 1e-5, false, false},
		{"ledger jdp at a smaller δ", jdp, 1, 1e-6, false, false},
		{"ledger over its nominal ε", over, 1, 1e-5, false, false},
		{"ledger ldp", ledger.Report{Model: ledger.LDP, Delta: 1e-5, Epsilon: 0.5, PrivateAtNominal: true}, 1, 1e-5, true, false},
		{"ledger none", ledger.Report{Model: ledger.None, PrivateAtNominal: true}, 1, 1e-5, false, true},
		{"ledger noise-off twin", ledger.Report{Model: ledger.NoiseOff, Delta: 1e-5, Epsilon: 0.5, PrivateAtNominal: true}, 1, 1e-5, false, true},
		{"nil ledger report", (*ledger.Report)(nil), 1, 1e-5, false, false},
		{"tabular exact", tab, 1, 1e-5, true, false},
		{"tabular exact, any δ (pure)", tab, 1, 1e-12, true, false},
		{"tabular paper calibration", tabPaper, 1, 1e-5, false, false},
		{"tabular non-private", tabularagents.PrivacyReport{Model: "none", PrivateAtNominal: true, Ledger: ledger.Report{Model: ledger.None, PrivateAtNominal: true}}, 1, 1e-5, false, true},
		{"lq exact", lq, 1, 1e-5, true, false},
		{"lq over its nominal ε", lqOver, 1, 1e-5, false, false},
		{"lq δ above", lq, 1, 1e-6, false, false},
		{"lq non-private", lqagents.Constants{Private: false}, 1, 1e-5, false, true},
		{"linmdp ngo", ngo, 1, 1e-5, true, false},
		{"linmdp printed", printed, 1, 1e-5, false, false},
		{"linmdp noise off", linmdpagents.Info{NoiseOff: true}, 1, 1e-5, false, true},
		{"linmdp non-private", linmdpagents.Info{}, 1, 1e-5, false, true},
		{"linmdp without its ledger report", linmdpagents.Info{Private: true, EffectiveEp: 0.5}, 1, 1e-5, false, false},
		{"lq without its ledger report", lqagents.Constants{Private: true, Epsilon: 0.5}, 1, 1e-5, false, false},
		{"linmix covered", mix, 0.5, 1e-5, true, false},
		{"linmix not covered", uncovered, 1, 1e-5, false, false},
		{"linmix replace-one above", zhou, 1, 1e-5, false, false},
		{"linmix none", linmixagents.Constants{NoiseKind: "none", Covered: true}, 1, 1e-5, false, true},
		{"linmix without its ledger report", linmixagents.Constants{NoiseKind: "gaussian", Covered: true, EffectiveEpsilon: 0.5}, 1, 1e-5, false, false},
		{"unknown report", struct{ Private bool }{true}, 1, 1e-5, false, false},
		{"no report", nil, 1, 1e-5, false, false},
		{"ε = 0", jdp, 0, 1e-5, false, false},
		{"ε = +Inf", jdp, math.Inf(1), 1e-5, false, false},
		{"δ = 1", jdp, 1, 1, false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := engine.Served{Privacy: c.report}
			err := s.PrivateAt(c.eps, c.delta)
			if (err == nil) != c.ok {
				t.Errorf("PrivateAt(%g, %g) = %v, want private %v", c.eps, c.delta, err, c.ok)
			}
			if errors.Is(err, engine.ErrNonPrivate) != c.nonPrivate {
				t.Errorf("PrivateAt(%g, %g) = %v, want ErrNonPrivate %v", c.eps, c.delta, err, c.nonPrivate)
			}
			// A known report claims privacy unless it is non-private; an unknown one never.
			_, unknown := c.report.(struct{ Private bool })
			unknown = unknown || c.report == nil || c.report == any((*ledger.Report)(nil)) ||
				strings.HasSuffix(c.name, "without its ledger report")
			if want := !c.nonPrivate && !unknown; s.ClaimsPrivacy() != want {
				t.Errorf("ClaimsPrivacy() = %v, want %v", s.ClaimsPrivacy(), want)
			}
			// The one report type (engine.Guarantee: what manifests and the service print)
			// gives the family's own report's verdict.
			g, gerr := engine.Guarantee(c.report)
			switch {
			case gerr == nil:
				ge := engine.Served{Privacy: g}.PrivateAt(c.eps, c.delta)
				if (ge == nil) != c.ok || errors.Is(ge, engine.ErrNonPrivate) != c.nonPrivate {
					t.Errorf("Guarantee = %+v: PrivateAt = %v, want private %v, non-private %v", g, ge, c.ok, c.nonPrivate)
				}
			case !unknown && c.eps > 0 && !math.IsInf(c.eps, 0) && c.delta < 1:
				t.Errorf("Guarantee: %v", gerr)
			}
		})
	}
}

// TestPrivateAtServedAgents: the predicate on agents as the families build them (what `dprl
// serve` holds): the non-private ones and the calibrations that are not private at their
// nominal ε are refused; the private ones are accepted at their ε.
func TestPrivateAtServedAgents(t *testing.T) {
	reg := families.New()
	envs := map[string]string{"tabular": "riverswim", "lq": "lq-e1", "linmix": "two-state-hard", "linmdp": "riverswim"}
	for _, c := range []struct {
		family, agent, calibration string
		eps                        float64
		ok                         bool
	}{
		{"tabular", "ucbvi", "", 1, false},
		{"tabular", "practical-ucbvi", "", 1, false},
		{"tabular", "practical-psrl", "", 1, false},
		{"tabular", "practical-jdp", "", 1, true},
		{"tabular", "practical-ldp", "", 0.5, true},
		{"tabular", "dp-ucbvi-ldp", "", 1, true},
		{"linmdp", "lsvi-ucb", "", 1, false},
		{"linmdp", "rare-switch-reg", "", 1, false},
		{"linmdp", "practical-lsvi-noiseoff", "", 1, false},
		{"linmdp", "ngo-printed", "", 1, false},
		{"linmdp", "ngo", "", 1, true},
		{"linmdp", "luyo-zcdp", "", 1, true},
		{"linmdp", "practical-lsvi", "", 1, true},
		{"linmix", "ucrl-vtr/none", "", 1, false},
		{"linmix", "practical-vtr/none", "", 1, false},
		{"linmix", "ucrl-vtr/jdp", "", 1, true}, // outside Luyo's range ε < 1, but the ledger certifies ε ≈ 0.002
		{"linmix", "ucrl-vtr/jdp", "", 0.5, true},
		{"linmix", "ucrl-vtr/jdp", "zcdp", 1, true},
		{"linmix", "linopt-vi/jdp", "", 1, true},
		{"linmix", "practical-vtr/ldp", "", 1, true},
		{"lq", "ofu-rl", "", 1, false},
		{"lq", "practical-ofu-rl-noise-off", "", 1, false},
		{"lq", "private-ofu-rl", "", 1, true},
		{"lq", "private-ofu-rl", "paper", 1, true}, // the ledger's μ-GDP: ε ≈ 0.5
		{"lq", "practical-ofu-rl", "", 1, true},
	} {
		t.Run(c.family+"/"+c.agent+"/"+c.calibration, func(t *testing.T) {
			s := engine.RunSpec{Family: c.family, Name: "served", Agents: []string{c.agent}, Runs: engine.Runs{Episodes: 100, Seeds: []uint64{1}},
				Env: engine.EnvSpec{Name: envs[c.family]}, Privacy: engine.PrivacySpec{Epsilons: []float64{c.eps}, Delta: 1e-5, Calibration: c.calibration}}
			if err := s.Validate(); err != nil {
				t.Fatal(err)
			}
			sv, err := engine.CheckServed(reg, &s)
			if err != nil {
				t.Fatal(err)
			}
			served, err := sv.Session(&s, engine.Streams{Seed: 1})
			if err != nil {
				t.Fatal(err)
			}
			if err := served.PrivateAt(c.eps, 1e-5); (err == nil) != c.ok {
				t.Errorf("PrivateAt(%g, 1e-5) = %v, want private %v (statement %q)", c.eps, err, c.ok, served.Statement)
			}
		})
	}
}

// TestNominalPrivacy: a curve's record states (ε, δ) only for a private curve, δ only when
// positive.
func TestNominalPrivacy(t *testing.T) {
	for _, c := range []struct {
		private          bool
		eps, delta       float64
		wantEps, wantDel string
	}{
		{true, 1, 1e-5, "1", "1e-05"},
		{true, 0.5, 0, "0.5", "null"},
		{true, 2, -1, "2", "null"},
		{false, 1, 1e-5, "null", "null"},
	} {
		e, d := engine.NominalPrivacy(c.private, c.eps, c.delta)
		be, bd := numberText(e), numberText(d)
		if be != c.wantEps || bd != c.wantDel {
			t.Errorf("NominalPrivacy(%v, %v, %v) = %s, %s; want %s, %s", c.private, c.eps, c.delta, be, bd, c.wantEps, c.wantDel)
		}
	}
}

// numberText is n as a record states it: "null" when undefined, else its value.
func numberText(n rundir.Number) string {
	if !n.Defined() {
		return "null"
	}
	return strconv.FormatFloat(float64(n), 'g', -1, 64)
}
