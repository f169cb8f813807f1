package practical

import (
	"strings"
	"testing"

	agents "github.com/dprl/dprl/agents/tabular"
	"github.com/dprl/dprl/experiment/engine"
	"github.com/dprl/dprl/model/tabular/gymenvs"
)

// TestBuildUsesPublicRewards: the runner (and the served builders, which go through build)
// gives a practical agent the environment's public reward table when its model declares one —
// the report then states it and Δ₂ has no reward block — and nothing when it does not; the
// papers' agents are unaffected.
func TestBuildUsesPublicRewards(t *testing.T) {
	m, err := gymenvs.Load("frozenlake4x4")
	if err != nil {
		t.Fatal(err)
	}
	if !m.PublicRewards {
		t.Fatal("the embedded FrozenLake 4x4 model does not declare its rewards public")
	}
	for _, public := range []bool{true, false} {
		m.PublicRewards = public
		for _, agent := range []string{"practical-jdp", "practical-ldp", "practical-ucbvi"} {
			ln, err := build(m, &Curve{Agent: agent, Epsilon: 1, Episodes: 100}, 100, 1e-5, false, engine.Streams{Seed: 1})
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Contains(ln.privacy, agents.PublicRewardsStructure); got != public {
				t.Errorf("%s, public rewards %v: report %q", agent, public, ln.privacy)
			}
		}
	}
}
