package lq

import (
	"testing"

	"github.com/dprl/dprl/agents/internal/agenttest"
	"github.com/dprl/dprl/internal/longtest"
	"github.com/dprl/dprl/rng"
)

// TestPracticalAuditTargets audits every practical target at a fixed seed: the correct agent
// must pass, the broken variants (σ/4, noise redrawn per release, boundary skipped, raw
// statistics released) must be flagged.
func TestPracticalAuditTargets(t *testing.T) {
	longtest.Skip(t, "audits every practical target at 10⁴ runs per side")
	agenttest.Audit(t, PracticalAuditTargets(), "")
}

// TestPracticalAuditDeterministic: outputs are pure functions of (side, seed) of fixed length,
// side 2 is rejected, and the targets are part of the family's AuditTargets.
func TestPracticalAuditDeterministic(t *testing.T) {
	all := map[string]bool{}
	for _, tg := range AuditTargets() {
		all[tg.Name] = true
	}
	broken := 0
	for _, tg := range PracticalAuditTargets() {
		if !all[tg.Name] || tg.Family != "lq" {
			t.Errorf("%s missing from AuditTargets or wrong family", tg.Name)
		}
		if tg.Broken {
			broken++
		}
		a, err := tg.Run(1, rng.NewSeed(5))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := tg.Run(1, rng.NewSeed(5))
		c, _ := tg.Run(0, rng.NewSeed(6))
		if len(a) != len(c) || len(a) == 0 {
			t.Errorf("%s: output length depends on the side", tg.Name)
		}
		if !equalSlices(a, b) {
			t.Errorf("%s: output not deterministic in the seed", tg.Name)
		}
		if _, err := tg.Run(2, rng.NewSeed(0)); err == nil {
			t.Errorf("%s: side 2 accepted", tg.Name)
		}
	}
	if broken != 4 {
		t.Errorf("%d broken practical variants, want 4", broken)
	}
}
