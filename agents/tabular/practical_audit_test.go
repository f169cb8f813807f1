package tabular

import (
	"testing"

	"github.com/dprl/dprl/internal/longtest"
	"github.com/dprl/dprl/internal/privacytest"
	"github.com/dprl/dprl/privacy/audit"
	"github.com/dprl/dprl/rng"
)

// TestPracticalAuditTargets audits every practical agent and broken variant at a fixed seed:
// correct agents must pass, broken variants (σ/4, noise redrawn per release, rewards not
// clipped, planner reading exact counts) must be flagged.
func TestPracticalAuditTargets(t *testing.T) {
	longtest.Skip(t, "audits every practical target at 10⁴ runs per side")
	privacytest.AuditTargets(t, PracticalAuditTargets(), 10000, 11, nil)
}

// TestPracticalAuditDeterministic: outputs are pure functions of (side, seed) of fixed length.
func TestPracticalAuditDeterministic(t *testing.T) {
	privacytest.AuditDeterministic(t, PracticalAuditTargets())
}

// TestPracticalCanary: the one-run canary audit flags the raw-planner curator and does not
// refute the correct practical-jdp agent.
func TestPracticalCanary(t *testing.T) {
	for _, tg := range PracticalAuditTargets() {
		if tg.Name != "tabular/practical-jdp" && tg.Name != "tabular/practical-jdp/raw-planner" {
			continue
		}
		r, err := audit.CanaryAudit(tg, audit.CanaryOptions{Seed: rng.NewSeed(2)})
		if err != nil {
			t.Fatal(err)
		}
		if r.Violation != tg.Broken {
			t.Errorf("%s: canary ε_LB = %.3f (%d/%d correct), want violation = %v", tg.Name, r.EpsilonLB, r.Correct, r.Guesses, tg.Broken)
		}
	}
}
