package privacytest

import (
	"math"
	"testing"

	"github.com/dprl/dprl/privacy/counter"
	"github.com/dprl/dprl/privacy/ledger"
)

// CheckReleaseSlack checks a practical agent's report with the Secure source on a counter of
// the given kind: the ledger's counter entry carries counter.SecureReleaseSlack of the
// counter's rounding gain, capacity and dimension (0 for the trees), the report's μ is the
// Gaussian mechanism's μ plus that slack, and the total meets targetMu. label names the case in
// errors.
func CheckReleaseSlack(t *testing.T, r ledger.Report, kind string, targetMu float64, label string) {
	t.Helper()
	e, ok := r.Entry(ledger.EntryCounter)
	if !ok || !e.Secure {
		t.Fatalf("%s: no Secure counter entry in %+v", label, r)
	}
	k, err := counter.NewRegistry().Lookup(kind)
	if err != nil {
		t.Fatal(err)
	}
	c, err := k.Build(counter.GaussianConfig{Dim: 1, Capacity: e.Releases}, nil)
	if err != nil {
		t.Fatal(err)
	}
	g, ok := c.(interface{ RoundingGain() float64 })
	if !ok {
		t.Fatalf("%s: counter %s reports no rounding gain", label, kind)
	}
	want := counter.SecureReleaseSlack(g.RoundingGain(), e.Releases, e.Dim)
	if (kind == "tree") != (want == 0) || math.Abs(e.ReleaseSlack-want) > 1e-12*want {
		t.Errorf("%s: slack %g, want %g", label, e.ReleaseSlack, want)
	}
	gauss := e.RoundedSensitivity * e.Factor / e.Sigma
	if math.Abs(r.Mu-(gauss+e.ReleaseSlack)) > 1e-12*r.Mu {
		t.Errorf("%s: reported μ %.12g, want Δ·factor/σ + slack = %.12g", label, r.Mu, gauss+e.ReleaseSlack)
	}
	if r.Mu > targetMu*(1+1e-12) || !r.PrivateAtNominal {
		t.Errorf("%s: μ %.12g exceeds the nominal %.12g (private %v)", label, r.Mu, targetMu, r.PrivateAtNominal)
	}
}
