package tabular

import (
	"fmt"
	"testing"

	"github.com/dprl/dprl/agents/internal/agenttest"
	"github.com/dprl/dprl/privacy/noise"
)

// TestPracticalReportPinned: the ledger reports exactly what the agents' own accountants
// reported before the ledger (issue 17 item 3), to the last bit: σ, μ and ε of seeded (and
// Secure tree) calibrations recorded from the pre-ledger code, so reproductions are
// byte-identical.
func TestPracticalReportPinned(t *testing.T) {
	for _, c := range []struct {
		name, counter     string
		eps               float64
		K                 int
		secure            bool
		sigma, mu, epsOut uint64
	}{
		{"practical-jdp", "", 1, 50000, false, 0x4056314d9c2897b2, 0x3fd127bfe5f64f07, 0x3fefffffffffffda},
		{"practical-jdp", "", 1, 50000, true, 0x4056315388a25f23, 0x3fd127bfe5f64f07, 0x3fefffffffffffda},
		{"practical-ldp", "", 1, 50000, false, 0x404a612a2419a000, 0x3fd127bfe5f64f07, 0x3fefffffffffffda},
		{"practical-psrl-jdp", "tree", 0.1, 2000, false, 0x408e6317e16715de, 0x3fa0a6906fec6048, 0x3fb99999999998f0},
	} {
		cfg, err := DefaultPracticalConfig(c.name, c.eps, 1e-5)
		if err != nil {
			t.Fatal(err)
		}
		if c.counter != "" {
			cfg.Privacy.Counter = c.counter
		}
		st := practicalStreams(1)
		if c.secure {
			st.Noise = noise.NewSecureFromKey([32]byte{1})
		}
		ag, err := NewPractical(6, 2, 20, c.K, cfg, st)
		if err != nil {
			t.Fatal(err)
		}
		label := fmt.Sprintf("%s/%s ε=%g K=%d secure=%v", c.name, c.counter, c.eps, c.K, c.secure)
		agenttest.CheckPinned(t, label, ag.Privacy, c.sigma, c.mu, c.epsOut)
	}
}
