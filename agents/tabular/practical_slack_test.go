package tabular

import (
	"math"
	"testing"

	"github.com/dprl/dprl/privacy/accounting"
	"github.com/dprl/dprl/privacy/counter"
)

// TestPracticalReleaseSlack: practical-jdp with the Secure source (the deployment default) on a
// real-valued factorisation counter accounts for the grid rounding of the counter's noise
// prediction (counter.SecureReleaseSlack): the report carries the slack, its μ is the Gaussian
// mechanism's μ plus the slack, and that total still meets the nominal (1, 1e-5). A tree counter
// has no slack. Dropping the slack from the calibration or from the report fails this test.
func TestPracticalReleaseSlack(t *testing.T) {
	target, err := accounting.GDPFor(accounting.ApproxDP{Epsilon: 1, Delta: 1e-5})
	if err != nil {
		t.Fatal(err)
	}
	for _, kind := range []string{"blt", "sqrt", "tree"} {
		cfg, _ := DefaultPracticalConfig("practical-jdp", 1, 1e-5)
		cfg.Privacy.Counter = kind
		st := practicalStreams(1)
		st.Noise = nil // the Secure source
		ag, err := NewPractical(6, 2, 20, 2000, cfg, st)
		if err != nil {
			t.Fatal(err)
		}
		r := ag.Privacy
		e := r.Entries[0]
		gauss := e.RoundedSensitivity * e.Factor / e.Sigma
		want := counter.SecureReleaseSlack(map[string]float64{"blt": 1, "sqrt": 1, "tree": 0}[kind], e.Releases, e.Dim)
		switch {
		case kind == "tree" && e.ReleaseSlack != 0:
			t.Errorf("tree: slack %g, want 0", e.ReleaseSlack)
		case kind != "tree" && !(e.ReleaseSlack > 0 && e.ReleaseSlack <= 2*want):
			t.Errorf("%s: slack %g, want in (0, %g]", kind, e.ReleaseSlack, 2*want)
		}
		if math.Abs(r.Mu-(gauss+e.ReleaseSlack)) > 1e-12*r.Mu {
			t.Errorf("%s: reported μ %.12g, want Δ·factor/σ + slack = %.12g", kind, r.Mu, gauss+e.ReleaseSlack)
		}
		if r.Mu > target.Mu*(1+1e-12) || !r.PrivateAtNominal {
			t.Errorf("%s: μ %.12g exceeds the nominal %.12g (private %v)", kind, r.Mu, target.Mu, r.PrivateAtNominal)
		}
	}
}
