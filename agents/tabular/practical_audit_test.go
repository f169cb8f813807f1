package tabular

import (
	"context"
	"testing"

	"github.com/dprl/dprl/internal/longtest"
	"github.com/dprl/dprl/privacy/audit"
	"github.com/dprl/dprl/rng"
)

// TestPracticalAuditTargets audits every practical agent and broken variant at a fixed seed:
// correct agents must pass, broken variants (σ/4, noise redrawn per release, rewards not
// clipped, planner reading exact counts) must be flagged.
func TestPracticalAuditTargets(t *testing.T) {
	longtest.Skip(t, "audits every practical target at 10⁴ runs per side")
	for _, tg := range PracticalAuditTargets() {
		t.Run(tg.Name, func(t *testing.T) {
			r, err := audit.Audit(context.Background(), tg, audit.Options{Runs: 10000, Seed: rng.NewSeed(11)})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("ε_LB = %.3f (claim %g, δ %g): %s", r.EpsilonLB, tg.Claim.Epsilon, tg.Claim.Delta, r.Verdict())
			if r.Violation != tg.Broken {
				t.Errorf("ε_LB = %.3f vs claim %g: %s (event %s)", r.EpsilonLB, tg.Claim.Epsilon, r.Verdict(), r.Event)
			}
		})
	}
}

// TestPracticalAuditDeterministic: outputs are pure functions of (side, seed) of fixed length.
func TestPracticalAuditDeterministic(t *testing.T) {
	for _, tg := range PracticalAuditTargets() {
		a, err := tg.Run(1, rng.NewSeed(5))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := tg.Run(1, rng.NewSeed(5))
		c, _ := tg.Run(0, rng.NewSeed(6))
		if len(a) != len(c) {
			t.Errorf("%s: output length depends on the side", tg.Name)
		}
		for i := range a {
			if a[i] != b[i] {
				t.Errorf("%s: output not deterministic in the seed", tg.Name)
				break
			}
		}
	}
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
