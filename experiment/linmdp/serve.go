package linmdp

import (
	"fmt"

	agents "github.com/dprl/dprl/agents/linmdp"
	"github.com/dprl/dprl/experiment/engine"
	"github.com/dprl/dprl/report"
)

var _ engine.Servable = Family{}

// Session implements engine.Servable: every linear-MDP agent (the papers' and dprl's practical
// ones) is served. The one cell of the served RunSpec (checked by engine.CheckServed) is
// translated by the same specConfig and prepare (resolved c_β) as `dprl run` and built by the
// same newUnit as its unit with the seed st.Seed, so with seeded noise a served agent publishes
// the run's policies. With privacy.noise secure the agent's noise comes from st's secure
// sources (keyed by st.Key: a restarted service redraws the same noise; crypto-seeded without a
// key). The rule is the greedy policy [][]int (its JSON round-trips exactly).
func (Family) Session(s *engine.RunSpec, st engine.Streams) (engine.Served, error) {
	cfg, err := specConfig(engine.ServedSpec(s, st))
	if err != nil {
		return engine.Served{}, err
	}
	tmpl, envs, err := prepare(cfg)
	if err != nil {
		return engine.Served{}, err
	}
	if len(tmpl.Cells) != 1 {
		return engine.Served{}, engine.ServedUnitsError(len(tmpl.Cells), "cells")
	}
	cell := tmpl.Cells[0].Cell
	ag, sess, err := newUnit(envs[cell.Env], cfg, cell, st, s.Privacy.Noise == "secure")
	if err != nil {
		return engine.Served{}, err
	}
	if p, ok := ag.(*agents.Practical); ok {
		r := p.Report()
		return engine.Served{Session: sess, Privacy: r, Statement: r.String(), Users: engine.SharedEnv}, nil
	}
	in := ag.Info()
	return engine.Served{Session: sess, Privacy: in, Statement: papersStatement(cell, in), Users: engine.SharedEnv}, nil
}

// papersStatement is the privacy column of the summary for one of the papers' agents.
func papersStatement(c Cell, in agents.Info) string {
	if !in.Private {
		if in.Note != "" {
			return "non-private (" + in.Note + ")"
		}
		return "non-private"
	}
	s := fmt.Sprintf("ε=%g (certified %s)", c.Epsilon, report.EffectiveEpsilon(in.EffectiveEp, "replace-one"))
	if in.Note != "" {
		s += "; " + in.Note
	}
	return s
}
