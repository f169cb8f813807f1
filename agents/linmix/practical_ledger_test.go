package linmix

import (
	"fmt"
	"testing"

	"github.com/dprl/dprl/agents/internal/agenttest"
	"github.com/dprl/dprl/privacy/ledger"
	"github.com/dprl/dprl/privacy/noise"
	"github.com/dprl/dprl/rng"
)

// TestPracticalReportPinned: the ledger reports exactly what the agent's own accountant
// reported before the ledger (issue 17 item 3), to the last bit: σ, μ and ε of seeded (and
// Secure LDP and tree) calibrations recorded from the pre-ledger code, so reproductions are
// byte-identical.
func TestPracticalReportPinned(t *testing.T) {
	m := practicalEnv(t)
	for _, c := range []struct {
		mode              Mode
		counter           string
		eps               float64
		M                 int
		secure            bool
		sigma, mu, epsOut uint64
	}{
		{JDP, "blt", 1, 1, false, 0x404cf173a8a47725, 0x3fd127bfe5f64f07, 0x3fefffffffffffda},
		{JDP, "honaker", 5, 50, true, 0x40300dba9fe2e7c6, 0x3ff1f09b444351c3, 0x4014000000000000},
		{LDP, "blt", 1, 50, false, 0x4040c9b009646abe, 0x3fd127bfe5f64f07, 0x3fefffffffffffda},
		{LDP, "blt", 1, 50, true, 0x4040c9b00e802963, 0x3fd127bfe5f64f07, 0x3fefffffffffffda},
	} {
		cfg := PracticalConfig{Episodes: 400, Privacy: PracticalPrivacy{Mode: c.mode, Epsilon: c.eps, Delta: 1e-5, Counter: c.counter, BatchEvery: c.M}}
		var src noise.Source = noise.NewSeeded(rng.NewSeed(1).Child("practical-noise").Rand())
		if c.secure {
			src = noise.NewSecureFromKey([32]byte{1})
		}
		a, err := buildPractical(m, cfg, rng.NewSeed(1), src)
		if err != nil {
			t.Fatal(err)
		}
		agenttest.CheckPinned(t, fmt.Sprintf("%+v", c), a.Guarantee(), c.sigma, c.mu, c.epsOut)
	}
}

// TestPracticalReleaseSlack: practical-vtr/jdp accounts for the Secure source's grid rounding
// of a factorisation counter's noise prediction (agenttest.CheckReleaseSlacks).
func TestPracticalReleaseSlack(t *testing.T) {
	m := practicalEnv(t)
	agenttest.CheckReleaseSlacks(t, func(kind string, batched bool) (ledger.Report, error) {
		M := 1 // batched: a release every 20 users
		if batched {
			M = 20
		}
		cfg := PracticalConfig{Episodes: 200, Privacy: PracticalPrivacy{Mode: JDP, Epsilon: 1, Counter: kind, BatchEvery: M}}
		a, err := buildPractical(m, cfg, rng.NewSeed(1), noise.NewSecureFromKey([32]byte{17, 3}))
		if err != nil {
			return ledger.Report{}, err
		}
		return a.Guarantee(), nil
	})
}
