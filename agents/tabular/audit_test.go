package tabular

import (
	"testing"

	"github.com/dprl/dprl/agents/internal/agenttest"
	"github.com/dprl/dprl/internal/longtest"
	"github.com/dprl/dprl/internal/privacytest"
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
	agenttest.Canary(t, AuditTargets(), "tabular/dp-ucbvi-jdp", "tabular/dp-ucbvi-jdp/raw-planner")
}
