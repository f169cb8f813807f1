package tabular

import (
	"testing"

	"github.com/dprl/dprl/internal/longtest"
	"github.com/dprl/dprl/internal/privacytest"
	"github.com/dprl/dprl/privacy/audit"
	"github.com/dprl/dprl/rng"
)

// TestAuditTargets audits every tabular private agent and broken variant at a fixed seed with
// CI-sized runs: correct agents must pass, broken variants (noise/4, noise scale read from the
// data, planner reading exact counts) must be flagged.
func TestAuditTargets(t *testing.T) {
	longtest.Skip(t, "audits of the papers' tabular agents at 10⁴ runs per side, ≈ 1 CPU minute")
	privacytest.AuditTargets(t, AuditTargets(), 10000, 11, nil)
}

// TestAuditTargetsDeterministic: a target's output is a pure function of (side, seed) with a
// fixed length, as the auditor requires.
func TestAuditTargetsDeterministic(t *testing.T) {
	privacytest.AuditDeterministic(t, AuditTargets())
}

// TestCanaryRawPlannerFlagged: the one-run canary audit catches a curator that releases exact
// counts, and does not refute the correct JDP agent.
func TestCanaryRawPlannerFlagged(t *testing.T) {
	for _, tg := range AuditTargets() {
		if tg.Name != "tabular/dp-ucbvi-jdp" && tg.Name != "tabular/dp-ucbvi-jdp/raw-planner" {
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
