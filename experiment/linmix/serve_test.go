package linmix

import (
	"testing"

	agents "github.com/dprl/dprl/agents/linmix"
	"github.com/dprl/dprl/experiment/engine"
	"github.com/dprl/dprl/experiment/engine/servetest"
)

// served checks linmix's served agents against `dprl run`'s units (servetest): user k draws
// from Users().Index(k); the unit records R(k) at the plan's checkpoints; rules are agents.Rule.
var served = servetest.Suite{
	Family: Family{},
	Env:    "env: {name: two-state-hard, params: {dim: 3, horizon: 4}}\n",
	Users:  engine.FromOne,
	Unit: func(t *testing.T, p engine.Plan, col *engine.Collection) ([]int, []float64) {
		return p.(*plan).checkpoints, servetest.Load[unitResult](t, col).Cum
	},
	Wire: func(any) any { return new(*agents.Rule) },
}

func TestServedMatchesRun(t *testing.T) {
	served.MatchesRun(t,
		// practical-vtr releases every 500 users (the spec's batch_every).
		servetest.Run{Agent: "practical-vtr/jdp", K: 2000}, servetest.Run{Agent: "practical-vtr/ldp", K: 2000},
		// the papers' agents: UCRL-VTR+ (its rule carries the billboard and widths) and
		// LinOpt-PO (a softmax policy).
		servetest.Run{Agent: "ucrl-vtr+/jdp", K: 300}, servetest.Run{Agent: "linopt-po/ldp", K: 300})
}

// TestServedAgents: every agent of the family is served; its privacy report is JSON and its
// first rule round-trips through its wire form.
func TestServedAgents(t *testing.T) { served.Agents(t, AgentNames()) }

// TestServedSecureKeyed: with privacy.noise secure and a key, the noise is keyed.
func TestServedSecureKeyed(t *testing.T) {
	served.SecureKeyed(t, "practical-vtr/jdp", 2000, 2)
}
