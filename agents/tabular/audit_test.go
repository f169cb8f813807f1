package tabular

import (
	"testing"

	"github.com/dprl/dprl/agents/internal/agenttest"
	"github.com/dprl/dprl/internal/longtest"
	"github.com/dprl/dprl/internal/privacytest"
	"github.com/dprl/dprl/privacy/audit"
)

// TestAuditTargets audits every tabular private agent and broken variant at a fixed seed with
// CI-sized runs: correct agents must pass, broken variants (noise/4, noise scale read from the
// data, planner reading exact counts) must be flagged.
func TestAuditTargets(t *testing.T) {
	longtest.Skip(t, "audits of the papers' tabular agents at 10⁴ runs per side, ≈ 1 CPU minute")
	agenttest.Audit(t, AuditTargets(), "")
}

// TestPracticalAuditTargets audits every practical agent and broken variant at a fixed seed:
// correct agents must pass, broken variants (σ/4, noise redrawn per release, rewards not
// clipped, planner reading exact counts) must be flagged.
func TestPracticalAuditTargets(t *testing.T) {
	longtest.Skip(t, "audits every practical target at 10⁴ runs per side")
	agenttest.Audit(t, PracticalAuditTargets(), "")
}

// auditSets are the target sets of the papers' agents and of the practical agents, each with
// the correct JDP agent and its raw-planner variant (a curator whose planner reads exact
// counts).
var auditSets = []struct {
	name     string
	targets  func() []audit.Target
	jdp, raw string
}{
	{"papers", AuditTargets, "tabular/dp-ucbvi-jdp", "tabular/dp-ucbvi-jdp/raw-planner"},
	{"practical", PracticalAuditTargets, "tabular/practical-jdp", "tabular/practical-jdp/raw-planner"},
}

// TestAuditTargetsDeterministic: a target's output is a pure function of (side, seed) with a
// fixed length, as the auditor requires.
func TestAuditTargetsDeterministic(t *testing.T) {
	for _, set := range auditSets {
		t.Run(set.name, func(t *testing.T) { privacytest.AuditDeterministic(t, set.targets()) })
	}
}

// TestCanaryRawPlannerFlagged: the one-run canary audit catches a curator that releases exact
// counts, and does not refute the correct JDP agent.
func TestCanaryRawPlannerFlagged(t *testing.T) {
	for _, set := range auditSets {
		t.Run(set.name, func(t *testing.T) { agenttest.Canary(t, set.targets(), set.jdp, set.raw) })
	}
}
