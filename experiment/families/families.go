// Package families builds the engine's registry of every agent family dprl ships: `dprl run`,
// `dprl sweep`, `dprl list` and every `dprl reproduce NAME` (one per embedded reproduction)
// come from it. It is the one place that knows them all (engine's registry is built
// explicitly, no init side effect).
package families

import (
	"github.com/dprl/dprl/experiment/engine"
	explin "github.com/dprl/dprl/experiment/linmdp"
	lmexp "github.com/dprl/dprl/experiment/linmix"
	explq "github.com/dprl/dprl/experiment/lq"
	tabexp "github.com/dprl/dprl/experiment/tabular"
)

// New returns the registry of the families: tabular (with dprl's practical suite), lq (with
// its practical suite), linmix and linmdp, and the old names of the suites that became part
// of a family.
func New() *engine.Registry {
	r := &engine.Registry{}
	r.Register(tabexp.Family{})
	r.Register(explq.Family{})
	r.Register(lmexp.Family{})
	r.Register(explin.Family{})
	r.Renamed("practical-lq", "lq", "dprl's practical agents run on every LQ system, including system files (dprl run --family lq --agent practical-ofu-rl …; in a configuration: family: lq, suite: practical)")
	r.Renamed("practical-tabular", "tabular", "dprl's practical agents run on every tabular environment, including MDP files (dprl run --family tabular --agent practical-jdp …; in a configuration: family: tabular, suite: practical)")
	return r
}
