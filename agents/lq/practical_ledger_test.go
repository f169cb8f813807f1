package lq

import (
	"fmt"
	"testing"

	"github.com/dprl/dprl/agents/internal/agenttest"
	model "github.com/dprl/dprl/model/lq"
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
