package linmix

import (
	"strings"
	"testing"

	"github.com/dprl/dprl/internal/longtest"
	"github.com/dprl/dprl/internal/privacytest"
	"github.com/dprl/dprl/privacy/audit"
)

// TestPracticalAuditTargets audits every practical target at a fixed seed: the correct agents
// must pass and every broken variant (σ/4, noise redrawn per release, guard skipped, planner
// reading exact statistics) must be flagged.
func TestPracticalAuditTargets(t *testing.T) {
	longtest.Skip(t, "audits every practical target at 10⁴ runs per side")
	privacytest.AuditTargets(t, AuditTargets(), 10000, 11, func(tg audit.Target) bool { return strings.Contains(tg.Name, "/practical-") })
}
