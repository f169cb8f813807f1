package tabular

import (
	"math"
	"testing"

	"github.com/dprl/dprl/privacy/accounting"
	"github.com/dprl/dprl/privacy/ledger"
)

// TestPapersGuaranteeFromLedger: the papers' agents' ε is the privacy ledger's composition of
// their three Laplace releases (pure ε-DP, replace-one), equal to the closed form 6HL/b·(1 + γ),
// for every model, calibration and noise source; and the ledger refuses the guarantee of the
// same mechanisms with half the noise (a deliberately broken variant).
func TestPapersGuaranteeFromLedger(t *testing.T) {
	const S, A, H, K = 6, 2, 20, 1000
	for _, c := range []struct {
		model  Model
		cal    Calibration
		secure bool
	}{{JDP, Strict, false}, {JDP, Strict, true}, {JDP, Paper, false}, {JDP, Unit, false}, {LDP, Strict, false}, {LDP, Strict, true}, {LDP, Paper, false}} {
		priv := privacyConfig(c.model, 0.5, c.cal, ETheory)
		b, rep, err := priv.scales(S, A, H, K, c.secure)
		if err != nil {
			t.Fatal(err)
		}
		g := rep.Ledger
		L := 1.0
		if c.model == JDP {
			L = float64(rep.Levels)
		}
		want := 6 * H * L / b * (1 + rep.GridStep)
		name := c.model.String() + "/" + c.cal.String()
		switch {
		case g.Guarantee != accounting.KindPureDP || g.Model != c.model.String() || g.Neighbouring != accounting.ReplaceOne || len(g.Entries) != 3:
			t.Errorf("%s: ledger report %+v", name, g)
		case math.Abs(g.PureEpsilon-want) > 1e-12*want || g.Epsilon != g.PureEpsilon || rep.EpsilonReplaceOne != g.Epsilon:
			t.Errorf("%s: ledger ε %g (report %g), closed form %g", name, g.Epsilon, rep.EpsilonReplaceOne, want)
		case g.PrivateAtNominal != (c.cal == Strict) || rep.PrivateAtNominal != g.PrivateAtNominal:
			t.Errorf("%s: private at nominal %v (report %v)", name, g.PrivateAtNominal, rep.PrivateAtNominal)
		case g.Secure != c.secure:
			t.Errorf("%s: secure %v", name, g.Secure)
		}
		if c.cal != Strict {
			continue
		}
		broken, err := g.WithNoiseDivided(2)
		if err != nil {
			t.Fatal(err)
		}
		if broken.PrivateAtNominal || !(broken.Epsilon > 1.9*g.Epsilon) {
			t.Errorf("%s: half the noise still certified: %+v", name, broken)
		}
	}
	_, rep, err := privacyConfig(NonPrivate, 0, Strict, ETheory).scales(S, A, H, K, false)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Ledger.Model != ledger.None || rep.Ledger.Private() || !rep.Ledger.PrivateAtNominal {
		t.Errorf("non-private ledger report %+v", rep.Ledger)
	}
}
