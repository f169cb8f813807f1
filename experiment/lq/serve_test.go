package lq

import (
	"testing"

	agents "github.com/dprl/dprl/agents/lq"
	"github.com/dprl/dprl/experiment/engine"
	"github.com/dprl/dprl/experiment/engine/servetest"
)

// served checks lq's served agents (the practical one and the papers') against `dprl run`'s
// units (servetest); a run that stays on the zero line compares little.
var served = servetest.Suite{
	Family: Family{},
	Env:    "env: {name: lq-e1}\n",
	Users:  engine.FromOne,
	// The unit records R(k) at every k (nil checkpoints).
	Unit: func(t *testing.T, p engine.Plan, col *engine.Collection) ([]int, []float64) {
		if _, ok := p.(*practicalPlan); ok {
			return nil, servetest.Load[practicalUnit](t, col).Cum
		}
		return nil, servetest.Load[SeedRun](t, col).Cum
	},
	Nontrivial: func(t *testing.T, s *engine.RunSpec, cum []float64) {
		K := s.Episodes
		sys, err := (&Setup{System: "lq-e1"}).BuildSystem()
		if err != nil {
			t.Fatal(err)
		}
		if zero := ZeroLine(sys, K); cum[K-1] == zero[K-1] {
			t.Fatalf("R(K) = %v is the zero line's (u ≡ 0 throughout): the test compares little", cum[K-1])
		}
	},
	Wire: func(rule any) any {
		switch rule.(type) {
		case *agents.PracticalPlanner:
			return new(*agents.PracticalPlanner)
		case *agents.Billboard:
			return new(*agents.Billboard)
		}
		return nil
	},
}

func TestServedMatchesRun(t *testing.T) {
	// At this K practical-ofu-rl leaves the zero policy (u ≡ 0) only at a large ε, and the
	// paper's Private-OFU-RL not at all (its non-private OFU-RL does: the same code).
	served.MatchesRun(t, servetest.Run{Agent: "practical-ofu-rl", K: 300, Eps: "100"}, servetest.Run{Agent: "ofu-rl", K: 300, Eps: "1"})
}

// TestServedAgents: every agent of the family is served; its privacy report is JSON and its
// first rule round-trips through its wire form.
func TestServedAgents(t *testing.T) { served.Agents(t, AgentNames()) }

// TestServedSecureKeyed: with privacy.noise secure and a key, the noise is keyed.
func TestServedSecureKeyed(t *testing.T) {
	served.SecureKeyed(t, "practical-ofu-rl", 300, 3)
}
