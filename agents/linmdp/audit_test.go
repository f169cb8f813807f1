package linmdp

import (
	"reflect"
	"strings"
	"testing"

	"github.com/dprl/dprl/agents/internal/agenttest"
	"github.com/dprl/dprl/internal/longtest"
	"github.com/dprl/dprl/rng"
)

// TestAuditTargetsDeterministic: every target's Run is deterministic in the seed and returns a
// fixed-length output whatever the side and seed; names are unique and the claims are ≈ 2.
func TestAuditTargetsDeterministic(t *testing.T) {
	ts := AuditTargets()
	if len(ts) != 21 {
		t.Fatalf("%d targets, want 21", len(ts))
	}
	names := map[string]bool{}
	for _, tg := range ts {
		if names[tg.Name] || !strings.HasPrefix(tg.Name, "linear-mdp/") || tg.Family != "linear-mdp" {
			t.Errorf("bad or duplicate name %q", tg.Name)
		}
		names[tg.Name] = true
		if tg.Claim.Epsilon < 2 || tg.Claim.Epsilon > 2.2 || tg.Claim.Delta != 1e-5 {
			t.Errorf("%s: claim %+v", tg.Name, tg.Claim)
		}
		n := -1
		for _, side := range []int{0, 1} {
			for _, s := range []uint64{1, 2, 3} {
				a, err := tg.Run(side, rng.NewSeed(s))
				if err != nil {
					t.Fatalf("%s: %v", tg.Name, err)
				}
				b, _ := tg.Run(side, rng.NewSeed(s))
				if !reflect.DeepEqual(a, b) {
					t.Errorf("%s: not deterministic in the seed", tg.Name)
				}
				if n >= 0 && len(a) != n {
					t.Errorf("%s: output length %d, want %d", tg.Name, len(a), n)
				}
				n = len(a)
			}
		}
	}
}

// TestPracticalAuditTargets audits the practical targets at a fixed seed: the correct agents
// must pass, the broken variants (σ/4, noise redrawn per release, reward clipping skipped,
// planner reading the exact statistics) must be flagged.
func TestPracticalAuditTargets(t *testing.T) {
	longtest.Skip(t, "audits every practical target at 10⁴ runs per side")
	agenttest.Audit(t, AuditTargets(), "/practical-")
}
