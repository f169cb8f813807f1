package privacytest

import (
	"context"
	"testing"

	"github.com/dprl/dprl/privacy/audit"
	"github.com/dprl/dprl/rng"
)

// AuditTargets audits every target that keep accepts (nil: all) at a fixed seed with runs per
// side: correct targets must pass and broken variants must be flagged. Each target is a subtest
// named after it.
func AuditTargets(t *testing.T, ts []audit.Target, runs int, seed uint64, keep func(audit.Target) bool) {
	t.Helper()
	for _, tg := range ts {
		if keep != nil && !keep(tg) {
			continue
		}
		t.Run(tg.Name, func(t *testing.T) {
			r, err := audit.Audit(context.Background(), tg, audit.Options{Runs: runs, Seed: rng.NewSeed(seed)})
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

// AuditDeterministic checks what the auditor requires of every target: its output is a pure
// function of (side, seed), of a fixed, non-zero length whatever the side.
func AuditDeterministic(t *testing.T, ts []audit.Target) {
	t.Helper()
	for _, tg := range ts {
		a, err := tg.Run(1, rng.NewSeed(5))
		if err != nil {
			t.Fatalf("%s: %v", tg.Name, err)
		}
		b, _ := tg.Run(1, rng.NewSeed(5))
		c, _ := tg.Run(0, rng.NewSeed(6))
		if len(a) != len(c) || len(a) == 0 {
			t.Errorf("%s: output length %d on side 1, %d on side 0", tg.Name, len(a), len(c))
		}
		for i := range a {
			if i >= len(b) || a[i] != b[i] {
				t.Errorf("%s: output not deterministic in the seed", tg.Name)
				break
			}
		}
	}
}
