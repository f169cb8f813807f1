package linmix

import (
	"math"
	"testing"

	"github.com/dprl/dprl/privacy/accounting"
	"github.com/dprl/dprl/privacy/counter"
	"github.com/dprl/dprl/privacy/ledger"
	"github.com/dprl/dprl/privacy/noise"
	"github.com/dprl/dprl/rng"
)

// TestPracticalReleaseSlack: practical-vtr/jdp with the Secure source on a real-valued
// factorisation counter (blt, sqrt) accounts for the grid rounding of the counter's noise
// prediction: the ledger entry carries counter.SecureReleaseSlack of the counter's rounding
// gain, capacity and dimension, the report's μ is the Gaussian mechanism's μ plus that slack,
// and the total still meets the nominal (1, 1e-5). A tree has no slack. Dropping the slack
// from the registration, the calibration or the report fails this test.
func TestPracticalReleaseSlack(t *testing.T) {
	m := practicalEnv(t)
	target, err := accounting.GDPFor(accounting.ApproxDP{Epsilon: 1, Delta: 1e-5})
	if err != nil {
		t.Fatal(err)
	}
	for _, kind := range []string{"blt", "sqrt", "tree"} {
		for _, M := range []int{1, 20} {
			cfg := PracticalConfig{Episodes: 200, Privacy: PracticalPrivacy{Mode: JDP, Epsilon: 1, Counter: kind, BatchEvery: M}}
			a, err := buildPractical(m, cfg, rng.NewSeed(1), noise.NewSecureFromKey([32]byte{17, 3}))
			if err != nil {
				t.Fatal(err)
			}
			r := a.Guarantee()
			e, ok := r.Entry(ledger.EntryCounter)
			if !ok || !e.Secure {
				t.Fatalf("%s: no Secure counter entry in %+v", kind, r)
			}
			k, _ := counter.NewRegistry().Lookup(kind)
			c, _ := k.Build(counter.GaussianConfig{Dim: 1, Capacity: e.Releases}, nil)
			want := counter.SecureReleaseSlack(c.(interface{ RoundingGain() float64 }).RoundingGain(), e.Releases, e.Dim)
			if (kind == "tree") != (want == 0) || math.Abs(e.ReleaseSlack-want) > 1e-12*want {
				t.Errorf("%s M=%d: slack %g, want %g", kind, M, e.ReleaseSlack, want)
			}
			gauss := e.RoundedSensitivity * e.Factor / e.Sigma
			if math.Abs(r.Mu-(gauss+e.ReleaseSlack)) > 1e-12*r.Mu {
				t.Errorf("%s M=%d: reported μ %.12g, want Δ·factor/σ + slack = %.12g", kind, M, r.Mu, gauss+e.ReleaseSlack)
			}
			if r.Mu > target.Mu*(1+1e-12) || !r.PrivateAtNominal {
				t.Errorf("%s M=%d: μ %.12g exceeds the nominal %.12g (private %v)", kind, M, r.Mu, target.Mu, r.PrivateAtNominal)
			}
		}
	}
}
