package linmdp

import (
	"strings"
	"testing"

	"github.com/dprl/dprl/internal/longtest"
	"github.com/dprl/dprl/internal/privacytest"
	"github.com/dprl/dprl/privacy/audit"
)

// TestPracticalAuditTargets audits the practical targets at a fixed seed: the correct agents
// must pass, the broken variants (σ/4, noise redrawn per release, reward clipping skipped,
// planner reading the exact statistics) must be flagged.
func TestPracticalAuditTargets(t *testing.T) {
	longtest.Skip(t, "audits every practical target at 10⁴ runs per side")
	privacytest.AuditTargets(t, AuditTargets(), 10000, 11, func(tg audit.Target) bool { return strings.Contains(tg.Name, "/practical-") })
}
