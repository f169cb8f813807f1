package lq

import (
	"math"
	"testing"

	"github.com/dprl/dprl/model/lq"
	"github.com/dprl/dprl/privacy/accounting"
	"github.com/dprl/dprl/privacy/noise"
	"github.com/dprl/dprl/rng"
)

// TestLedgerSecure: a curator (as NewOFUSession builds it) whose counters draw from a hardened
// noise.Secure source rounds every tree node's exact sum to the grid γᵢ =
// noise.GaussianGranularity(σᵢ) of its noise (counter.Tree), so its ledger entries carry the
// rounding: μ = √(m(Δ₁ + √(p(p+1)/2)·γ₁)²/σ₁² + m(Δ₂ + √(p·n)·γ₂)²/σ₂²), recomputed here from
// the public parameters, strictly above the seeded curator's μ (whose constants, those of
// ComputeConstants, are unchanged); a source Secure for B_2 only rounds B_2's entry only; and
// the default calibrations stay private at the nominal ε.
func TestLedgerSecure(t *testing.T) {
	sys := lq.LQE1()
	pub := PublicOf(sys)
	p, n := float64(pub.N+pub.D), float64(pub.N)
	sd := rng.NewSeed(9)
	seeded := func(l string) noise.Source { return noise.NewSeeded(sd.Child(l).Rand()) }
	secure := func(l string) noise.Source {
		var key [32]byte
		copy(key[:], l)
		return noise.NewSecureFromKey(key)
	}
	for _, c := range []struct {
		name       string
		eps        float64
		K          int
		nb         accounting.Neighbouring
		paper      bool
		src1, src2 func(string) noise.Source
	}{
		{"default", 1, 1000, accounting.ReplaceOne, false, secure, secure},
		{"zero-out eps 10", 10, 10000, accounting.ZeroOut, false, secure, secure},
		{"paper calibration", 10, 10000, accounting.ReplaceOne, true, secure, secure},
		{"B2 only", 1, 1000, accounting.ReplaceOne, false, seeded, secure},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := DefaultConfig(c.eps, c.K)
			cfg.Neighbouring, cfg.PaperCalibration = c.nb, c.paper
			st := RunStreams{B1: c.src1("B1"), B2: c.src2("B2"), Optimiser: sd.Child("opt")}
			ss, err := NewOFUSession(sys, cfg, st)
			if err != nil {
				t.Fatal(err)
			}
			base, err := ComputeConstants(pub, cfg)
			if err != nil {
				t.Fatal(err)
			}
			sq, err := NewOFUSession(sys, cfg, RunStreams{B1: seeded("B1"), B2: seeded("B2"), Optimiser: sd.Child("opt")})
			if err != nil {
				t.Fatal(err)
			}
			k, ks := ss.Constants, sq.Constants
			if ks.Ledger.Secure || ks.Epsilon != base.Epsilon || ks.Ledger.Mu != base.Ledger.Mu || ks.Guarantee != base.Guarantee {
				t.Errorf("seeded session's constants differ from ComputeConstants': ε %v vs %v", ks.Epsilon, base.Epsilon)
			}
			s1 := c.src1("B1").Secure()
			if !k.Ledger.Secure || k.Ledger.Entries[0].Secure != s1 || !k.Ledger.Entries[1].Secure {
				t.Fatalf("secure session's entries: secure %v, %v (want %v, true)", k.Ledger.Entries[0].Secure, k.Ledger.Entries[1].Secure, s1)
			}
			m := float64(k.M)
			g1 := 0.0
			if s1 {
				g1 = math.Sqrt(p*(p+1)/2) * noise.GaussianGranularity(k.Sigma1)
			}
			g2 := math.Sqrt(p*n) * noise.GaussianGranularity(k.Sigma2)
			d1, d2 := (k.Delta1+g1)/k.Sigma1, (k.Delta2+g2)/k.Sigma2
			mu := math.Sqrt(m*d1*d1 + m*d2*d2)
			dp, err := accounting.GDP{Mu: mu}.ToApproxDP(cfg.Delta)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("seeded μ = %.17g ε = %.17g; secure μ = %.17g ε = %.17g (nominal %g)", ks.Ledger.Mu, ks.Epsilon, k.Ledger.Mu, k.Epsilon, c.eps)
			if math.Abs(k.Ledger.Mu-mu) > 1e-13*mu || math.Abs(k.Epsilon-dp.Epsilon) > 1e-10*dp.Epsilon || k.Epsilon != k.Ledger.Epsilon {
				t.Errorf("secure ledger μ = %.17g, ε = %.17g; want μ = %.17g, ε = %.17g", k.Ledger.Mu, k.Epsilon, mu, dp.Epsilon)
			}
			if !(k.Ledger.Mu > ks.Ledger.Mu) || !(k.Epsilon > ks.Epsilon) {
				t.Errorf("secure μ %v ε %v not above the seeded μ %v ε %v", k.Ledger.Mu, k.Epsilon, ks.Ledger.Mu, ks.Epsilon)
			}
			if !k.Ledger.PrivateAtNominal || ss.Curator.Constants().Ledger.Mu != k.Ledger.Mu {
				t.Errorf("secure session: private at nominal %v; curator's μ %v", k.Ledger.PrivateAtNominal, ss.Curator.Constants().Ledger.Mu)
			}
		})
	}
}
