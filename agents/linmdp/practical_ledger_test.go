package linmdp

import (
	"fmt"
	"testing"

	"github.com/dprl/dprl/agents/internal/agenttest"
	"github.com/dprl/dprl/privacy/ledger"
	"github.com/dprl/dprl/rng"
)

// TestPracticalReportPinned: the ledger reports exactly what the agent's own accountant
// reported before the ledger (issue 17 item 3), to the last bit: σ, μ and ε of seeded (and
// Secure tree) calibrations recorded from the pre-ledger code, so reproductions are
// byte-identical.
func TestPracticalReportPinned(t *testing.T) {
	env := practicalSmall(t)
	for _, c := range []struct {
		counter           string
		batched, steps    bool
		mode              PracticalMode
		eps, ts           float64
		secure            bool
		sigma, mu, epsOut uint64
	}{
		{"blt", false, false, PracticalPrivate, 1, 0, false, 0x4057438d83000d6c, 0x3fd127bfe5f64f07, 0x3fefffffffffffda},
		{"honaker", true, true, PracticalNoiseOff, 5, 0.5, false, 0x40228981997e1122, 0x3ff1f09b444351c3, 0x4014000000000000},
		{"tree", false, false, PracticalPrivate, 1, 2, true, 0x405d13d05d756c3d, 0x3fd127bfe5f64f07, 0x3fefffffffffffda},
	} {
		sd := rng.NewSeed(1)
		cfg := PracticalConfig{Common: Common{K: 300}, Epsilon: c.eps, Delta: 1e-5, Counter: c.counter, Batched: c.batched, Batches: 10,
			Mode: c.mode, TargetScale: c.ts, StepDependent: c.steps}
		if !c.secure {
			cfg.Seed = &sd
		}
		a, err := NewPractical(env, cfg)
		if err != nil {
			t.Fatal(err)
		}
		agenttest.CheckPinned(t, fmt.Sprintf("%+v", c), a.Report(), c.sigma, c.mu, c.epsOut)
	}
}

// TestPracticalReleaseSlack: the practical agents account for the Secure source's grid
// rounding of a factorisation counter's noise prediction (agenttest.CheckReleaseSlacks).
func TestPracticalReleaseSlack(t *testing.T) {
	env := practicalSmall(t)
	agenttest.CheckReleaseSlacks(t, func(kind string, batched bool) (ledger.Report, error) {
		a, err := NewPractical(env, PracticalConfig{Common: Common{K: 300}, Epsilon: 1, Delta: 1e-5, Counter: kind, Batched: batched, Batches: 10})
		if err != nil {
			return ledger.Report{}, err
		}
		return a.Report(), nil
	})
}
