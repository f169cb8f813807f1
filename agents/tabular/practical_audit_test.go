package tabular

import (
	"testing"

	"github.com/dprl/dprl/agents/internal/agenttest"
	"github.com/dprl/dprl/internal/longtest"
	"github.com/dprl/dprl/internal/privacytest"
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
	agenttest.Canary(t, PracticalAuditTargets(), "tabular/practical-jdp", "tabular/practical-jdp/raw-planner")
}
