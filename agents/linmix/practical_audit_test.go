package linmix

import (
	"context"
	"strings"
	"testing"

	"github.com/dprl/dprl/internal/longtest"
	"github.com/dprl/dprl/privacy/audit"
	"github.com/dprl/dprl/rng"
)

// TestPracticalAuditTargets audits every practical target at a fixed seed: the correct agents
// must pass and every broken variant (σ/4, noise redrawn per release, guard skipped, planner
// reading exact statistics) must be flagged.
func TestPracticalAuditTargets(t *testing.T) {
	longtest.Skip(t, "audits every practical target at 10⁴ runs per side")
	for _, tg := range AuditTargets() {
		if !strings.Contains(tg.Name, "/practical-") {
			continue
		}
		t.Run(tg.Name, func(t *testing.T) {
			r, err := audit.Audit(context.Background(), tg, audit.Options{Runs: 10000, Seed: rng.NewSeed(11)})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("ε_LB = %.3f (claim %.3f, δ %g): %s", r.EpsilonLB, tg.Claim.Epsilon, tg.Claim.Delta, r.Verdict())
			if r.Violation != tg.Broken {
				t.Errorf("ε_LB = %.3f vs claim %.3f: %s (event %s)", r.EpsilonLB, tg.Claim.Epsilon, r.Verdict(), r.Event)
			}
		})
	}
}
