package practical

import (
	"strings"
	"testing"

	agents "github.com/dprl/dprl/agents/tabular"
	"github.com/dprl/dprl/experiment/engine"
	model "github.com/dprl/dprl/model/tabular"
	"github.com/dprl/dprl/model/tabular/gymenvs"
)

// publicStructure is a part of an embedded model (field) that the model declares public and
// a practical agent's privacy report then states (structure).
type publicStructure struct {
	env, what, structure string
	field                func(*model.MDP) *bool
}

// check loads the model, checks that it declares the structure public, and then, with the
// declaration on (i = 0) and off (i = 1), builds every agent on it (as the runner and the
// served builders do, through build) and checks that its report states the structure exactly
// when it is declared; each, if set, runs after every setting's agents.
func (ps publicStructure) check(t *testing.T, agentNames []string, each func(m *model.MDP, i int)) {
	t.Helper()
	m, err := gymenvs.Load(ps.env)
	if err != nil {
		t.Fatal(err)
	}
	if !*ps.field(m) {
		t.Fatalf("the embedded %s model does not declare its %s public", ps.env, ps.what)
	}
	for i, public := range []bool{true, false} {
		*ps.field(m) = public
		for _, agent := range agentNames {
			ln, err := build(m, &Curve{Agent: agent, Epsilon: 1, Episodes: 100}, 100, 1e-5, false, engine.Streams{Seed: 1})
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Contains(ln.privacy, ps.structure); got != public {
				t.Errorf("%s, public %s %v: report %q", agent, ps.what, public, ln.privacy)
			}
		}
		if each != nil {
			each(m, i)
		}
	}
}

// TestBuildUsesPublicRewards: the runner (and the served builders, which go through build)
// gives a practical agent the environment's public reward table when its model declares one —
// the report then states it and Δ₂ has no reward block — and nothing when it does not; the
// papers' agents are unaffected.
func TestBuildUsesPublicRewards(t *testing.T) {
	publicStructure{"frozenlake4x4", "rewards", agents.PublicRewardsStructure, func(m *model.MDP) *bool { return &m.PublicRewards }}.
		check(t, []string{"practical-jdp", "practical-ldp", "practical-ucbvi"}, nil)
}

// TestBuildUsesPublicSupport: the runner gives a practical agent the environment's public
// transition support when its model declares one — the report then states it (and only then)
// — and the memory estimate counts it.
func TestBuildUsesPublicSupport(t *testing.T) {
	var bytes [2]int64
	publicStructure{"frozenlake8x8", "support", agents.PublicSupportStructure, func(m *model.MDP) *bool { return &m.PublicSupport }}.
		check(t, []string{"practical-jdp", "practical-ldp", "practical-ucbvi", "practical-psrl-jdp"}, func(m *model.MDP, i int) {
			bytes[i] = curveAgentBytes(m, &Curve{Agent: "practical-jdp", Epsilon: 1, Episodes: 100}, 1e-5)
		})
	if !(bytes[0] > bytes[1]) {
		t.Errorf("memory estimate with the support %d, without %d: the support's tables are not counted", bytes[0], bytes[1])
	}
}
