package linmdp

import (
	"testing"

	"github.com/dprl/dprl/experiment/engine"
	"github.com/dprl/dprl/experiment/engine/servetest"
)

// served checks linmdp's served agents against `dprl run`'s units (servetest): its users share
// one environment stream, its unit records R(k) at the plan's checkpoints.
var served = servetest.Suite{
	Family: Family{},
	Env:    "env: {name: latentriver, params: {m: 2, copies: 3, horizon: 5}}\n",
	Users:  engine.SharedEnv,
	Unit: func(t *testing.T, p engine.Plan, col *engine.Collection) ([]int, []float64) {
		return p.(*suitePlan).blocks[0].tmpl.Checkpoints, servetest.Load[SeedResult](t, col).Cum
	},
	Wire: func(any) any { return new([][]int) },
}

func TestServedMatchesRun(t *testing.T) {
	served.MatchesRun(t, servetest.Run{Agent: "practical-lsvi", K: 300}, servetest.Run{Agent: "lsvi-ucb", K: 300})
}

// TestServedAgents: every agent of the family is served; its privacy report is JSON and its
// first rule round-trips through its wire form.
func TestServedAgents(t *testing.T) { served.Agents(t, AgentNames()) }

// TestServedSecureKeyed: with privacy.noise secure and a key, the noise is keyed.
func TestServedSecureKeyed(t *testing.T) {
	served.SecureKeyed(t, "practical-lsvi-batched", 300, 3)
}
