package lq

import (
	"fmt"
	"math"
	"testing"

	"github.com/dprl/dprl/agents/internal/agenttest"
	model "github.com/dprl/dprl/model/lq"
	"github.com/dprl/dprl/privacy/accounting"
	"github.com/dprl/dprl/privacy/counter"
	"github.com/dprl/dprl/privacy/ledger"
	"github.com/dprl/dprl/privacy/noise"
	"github.com/dprl/dprl/rng"
)

// TestPracticalReportPinned: the ledger reports exactly what the agent's own accountant
// reported before the ledger (issue 17 item 3), to the last bit: σ, μ and ε of seeded (and
// Secure tree) calibrations recorded from the pre-ledger code, so reproductions are
// byte-identical.
func TestPracticalReportPinned(t *testing.T) {
	pub := PublicOf(model.LQE1())
	for _, c := range []struct {
		eps               float64
		counter           string
		K                 int
		secure            bool
		sigma, mu, epsOut uint64
	}{
		{1, "blt", 20000, false, 0x4036951bca71bf5c, 0x3fd127bfe5f64f07, 0x3fefffffffffffda},
		{10, "tree", 2000, false, 0x400ffe2cd652bcc6, 0x400000e9a2296872, 0x4024000000000000},
		{10, "tree", 2000, true, 0x400ffe2cd80e0b2b, 0x400000e9a2296872, 0x4024000000000000},
	} {
		cfg := DefaultPracticalConfig(c.eps, c.K)
		cfg.Counter = c.counter
		var src noise.Source = noise.NewSeeded(rng.NewSeed(1).Rand())
		if c.secure {
			src = noise.NewSecureFromKey([32]byte{3})
		}
		cur, err := NewPracticalCurator(pub, cfg, src)
		if err != nil {
			t.Fatal(err)
		}
		agenttest.CheckPinned(t, fmt.Sprintf("%+v", c), cur.Report(), c.sigma, c.mu, c.epsOut)
	}
}

// TestPracticalReleaseSlack: practical-ofu-rl with the Secure source on a real-valued
// factorisation counter (blt, sqrt) accounts for the grid rounding of the counter's noise
// prediction: the ledger entry carries counter.SecureReleaseSlack of the counter's rounding
// gain, capacity and dimension, the report's μ is the Gaussian mechanism's μ plus that slack,
// and the total still meets the nominal (ε, 1e-5). A tree has no slack. Dropping the slack
// from the registration, the calibration or the report fails this test.
func TestPracticalReleaseSlack(t *testing.T) {
	checkSecureReports(t, []float64{1, 5}, []string{"blt", "sqrt", "tree"}, 20000, 17, func(eps float64, kind string, r ledger.Report, target accounting.GDP) {
		e, ok := r.Entry(ledger.EntryCounter)
		if !ok || !e.Secure {
			t.Fatalf("%s: no Secure counter entry in %+v", kind, r)
		}
		var gain float64
		if kind == "blt" {
			p, err := counter.FitSqrtBLT(e.Releases, counter.DefaultBLTBuffers)
			if err != nil {
				t.Fatal(err)
			}
			gain = p.RoundingGain(e.Releases)
		} else {
			k, _ := counter.NewRegistry().Lookup(kind)
			c, _ := k.Build(counter.GaussianConfig{Dim: 1, Capacity: e.Releases}, nil)
			gain = c.(interface{ RoundingGain() float64 }).RoundingGain()
		}
		want := counter.SecureReleaseSlack(gain, e.Releases, e.Dim)
		if (kind == "tree") != (want == 0) || math.Abs(e.ReleaseSlack-want) > 1e-12*want {
			t.Errorf("ε=%g %s: slack %g, want %g", eps, kind, e.ReleaseSlack, want)
		}
		gauss := e.RoundedSensitivity * e.Factor / e.Sigma
		if math.Abs(r.Mu-(gauss+e.ReleaseSlack)) > 1e-12*r.Mu {
			t.Errorf("ε=%g %s: reported μ %.12g, want Δ·factor/σ + slack = %.12g", eps, kind, r.Mu, gauss+e.ReleaseSlack)
		}
		if r.Mu > target.Mu*(1+1e-12) || !r.PrivateAtNominal {
			t.Errorf("ε=%g %s: μ %.12g exceeds the nominal %.12g (private %v)", eps, kind, r.Mu, target.Mu, r.PrivateAtNominal)
		}
	})
}

// checkSecureReports builds, for every ε in epss and counter in counters, the practical
// curator for K episodes on LQ-E1 with the Secure source (key {key, byte(ε)}), and calls check
// with its report and the μ-GDP target of (ε, 1e-5).
func checkSecureReports(t *testing.T, epss []float64, counters []string, K int, key byte, check func(eps float64, kind string, r ledger.Report, target accounting.GDP)) {
	t.Helper()
	pub := PublicOf(model.LQE1())
	for _, eps := range epss {
		target, err := accounting.GDPFor(accounting.ApproxDP{Epsilon: eps, Delta: 1e-5})
		if err != nil {
			t.Fatal(err)
		}
		for _, kind := range counters {
			cfg := DefaultPracticalConfig(eps, K)
			cfg.Counter = kind
			cur, err := NewPracticalCurator(pub, cfg, noise.NewSecureFromKey([32]byte{key, byte(eps)}))
			if err != nil {
				t.Fatal(err)
			}
			check(eps, kind, cur.Report(), target)
		}
	}
}
