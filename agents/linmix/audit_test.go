package linmix

import (
	"testing"

	"github.com/dprl/dprl/agents/internal/agenttest"
	"github.com/dprl/dprl/internal/longtest"
	"github.com/dprl/dprl/rng"
)

// TestAuditTargets checks that every target's Run is deterministic in the seed, returns a
// fixed output length on both sides, and that its claim is finite and positive.
func TestAuditTargets(t *testing.T) {
	ts := AuditTargets()
	names := map[string]bool{}
	for _, tg := range ts {
		if names[tg.Name] {
			t.Fatalf("duplicate target %s", tg.Name)
		}
		names[tg.Name] = true
		if !(tg.Claim.Epsilon > 0) || tg.Claim.Epsilon > 50 {
			t.Errorf("%s: claim ε = %v", tg.Name, tg.Claim.Epsilon)
		}
		t.Logf("%s: claim %+v", tg.Name, tg.Claim)
		var n int
		for side := 0; side < 2; side++ {
			a, err := tg.Run(side, rng.NewSeed(7))
			if err != nil {
				t.Fatal(err)
			}
			b, _ := tg.Run(side, rng.NewSeed(7))
			c, _ := tg.Run(side, rng.NewSeed(8))
			if side == 0 {
				n = len(a)
			}
			if len(a) != n || len(c) != n || n == 0 {
				t.Fatalf("%s: output lengths %d, %d, %d", tg.Name, n, len(a), len(c))
			}
			same := true
			for i := range a {
				if a[i] != b[i] {
					t.Fatalf("%s: Run not deterministic in the seed", tg.Name)
				}
				same = same && a[i] == c[i]
			}
			if same && !tg.Broken {
				t.Fatalf("%s: output does not depend on the seed", tg.Name)
			}
		}
	}
}

// TestPracticalAuditTargets audits every practical target at a fixed seed: the correct agents
// must pass and every broken variant (σ/4, noise redrawn per release, guard skipped, planner
// reading exact statistics) must be flagged.
func TestPracticalAuditTargets(t *testing.T) {
	longtest.Skip(t, "audits every practical target at 10⁴ runs per side")
	agenttest.Audit(t, AuditTargets(), "/practical-")
}
