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

// TestBuildUsesPublicSupport: the runner gives a practical agent the environment's public
// transition support when its model declares one — the report then states it (and only then)
// — and the memory estimate counts it.
func TestBuildUsesPublicSupport(t *testing.T) {
	m, err := gymenvs.Load("frozenlake8x8")
	if err != nil {
		t.Fatal(err)
	}
	if !m.PublicSupport {
		t.Fatal("the embedded FrozenLake 8x8 model does not declare its support public")
	}
	var bytes [2]int64
	for i, public := range []bool{true, false} {
		m.PublicSupport = public
		for _, agent := range []string{"practical-jdp", "practical-ldp", "practical-ucbvi", "practical-psrl-jdp"} {
			ln, err := build(m, &Curve{Agent: agent, Epsilon: 1, Episodes: 100}, 100, 1e-5, false, engine.Streams{Seed: 1})
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Contains(ln.privacy, agents.PublicSupportStructure); got != public {
				t.Errorf("%s, public support %v: report %q", agent, public, ln.privacy)
			}
		}
		bytes[i] = curveAgentBytes(m, &Curve{Agent: "practical-jdp", Epsilon: 1, Episodes: 100}, 1e-5)
	}
	if !(bytes[0] > bytes[1]) {
		t.Errorf("memory estimate with the support %d, without %d: the support's tables are not counted", bytes[0], bytes[1])
	}
}
