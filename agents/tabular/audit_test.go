package tabular

import (
	"context"
	"testing"

	"github.com/dprl/dprl/internal/longtest"
	"github.com/dprl/dprl/privacy/audit"
	"github.com/dprl/dprl/rng"
)

// TestAuditTargets audits every tabular private agent and broken variant at a fixed seed with
// CI-sized runs: correct agents must pass, broken variants (noise/4, noise scale read from the
// data, planner reading exact counts) must be flagged.
func TestAuditTargets(t *testing.T) {
	longtest.Skip(t, "audits of the papers' tabular agents at 10⁴ runs per side, ≈ 1 CPU minute")
	for _, tg := range AuditTargets() {
		t.Run(tg.Name, func(t *testing.T) {
			r, err := audit.Audit(context.Background(), tg, audit.Options{Runs: 10000, Seed: rng.NewSeed(11)})
			if err != nil {
				t.Fatal(err)
			}
			if r.Violation != tg.Broken {
				t.Errorf("ε_LB = %.3f vs claim %g: %s (event %s)", r.EpsilonLB, tg.Claim.Epsilon, r.Verdict(), r.Event)
			}
		})
	}
}

// TestAuditTargetsDeterministic: a target's output is a pure function of (side, seed) with a
// fixed length, as the auditor requires.
func TestAuditTargetsDeterministic(t *testing.T) {
	for _, tg := range AuditTargets() {
		a, err := tg.Run(1, rng.NewSeed(5))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := tg.Run(1, rng.NewSeed(5))
		c, _ := tg.Run(0, rng.NewSeed(6))
		if len(a) != len(c) {
			t.Errorf("%s: output length depends on the side: %d vs %d", tg.Name, len(a), len(c))
		}
		for i := range a {
			if a[i] != b[i] {
				t.Errorf("%s: output not deterministic in the seed", tg.Name)
				break
			}
		}
	}
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
