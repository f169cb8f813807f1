package lq

import (
	"fmt"
	"math"

	agents "github.com/dprl/dprl/agents/lq"
	"github.com/dprl/dprl/experiment/engine"
	"github.com/dprl/dprl/privacy/counter"
	"github.com/dprl/dprl/privacy/ledger"
)

var _ engine.Servable = Family{}

// Session implements engine.Servable: every LQ agent (the paper's OFU-RL and Private-OFU-RL,
// dprl's practical-ofu-rl, its theory variant and noise-off twin) is served. As PlanSpec, a
// served RunSpec naming a practical agent goes to the practical suite (PracticalSuite.Session);
// the paper's agent is translated by the same specConfig as `dprl run` and built by the same
// constructor as its unit (agents/lq.NewOFUSession, which RunWith runs) with the unit's
// streams (runStreams), so with seeded noise a served agent publishes the run's releases. With
// privacy.noise secure the counters' noise comes from st's secure sources (keyed by st.Key: a
// restarted service redraws the same noise; crypto-seeded without a key). The rule is the
// *Billboard (its JSON round-trips exactly; a new version every episode, which it carries).
func (Family) Session(s *engine.RunSpec, st engine.Streams) (engine.Served, error) {
	if practicalSuiteAgent(s.Agents) {
		return PracticalSuite{}.Session(s, st)
	}
	cfg, err := specConfig(engine.ServedSpec(s, st))
	if err != nil {
		return engine.Served{}, err
	}
	if len(cfg.Epsilons) != 1 {
		return engine.Served{}, engine.ServedUnitsError(len(cfg.Epsilons), "curves")
	}
	sys, err := cfg.BuildSystem()
	if err != nil {
		return engine.Served{}, err
	}
	rs := runStreams(st)
	if s.Privacy.Noise == "secure" {
		rs.B1, rs.B2 = st.SecureNoise("privacy/B1"), st.SecureNoise("privacy/B2")
	}
	ss, err := agents.NewOFUSession(sys, cfg.agentConfig(cfg.Epsilons[0], cfg.Episodes, cfg.Neighbouring), rs)
	if err != nil {
		return engine.Served{}, err
	}
	return engine.Served{Session: ss.Session, Privacy: ss.Constants, Statement: ss.Constants.Guarantee, Users: engine.FromOne}, nil
}

// Session builds the one practical agent of a served RunSpec (Family.Session) through the same
// practicalSpecConfig, curve list and agent configuration (unitAgent, with the BLT fit shared
// by the suite's practical runs) as a unit of `dprl run`, and the same constructor
// (agents/lq.NewPracticalSession, which RunPracticalWith runs) with the unit's streams
// (practicalRunStreams; secure: the counter's noise from st.SecureNoise). The rule is the
// planner's published output (*agents/lq.PracticalPlanner: the confidence set and reference
// plans of the current release; its JSON round-trips exactly).
func (PracticalSuite) Session(s *engine.RunSpec, st engine.Streams) (engine.Served, error) {
	cfg, err := practicalSpecConfig(engine.ServedSpec(s, st))
	if err != nil {
		return engine.Served{}, err
	}
	specs := cfg.specs()
	if len(specs) != 1 {
		return engine.Served{}, engine.ServedUnitsError(len(specs), "curves")
	}
	sp := specs[0]
	if row(sp.agent).Paper {
		return engine.Served{}, fmt.Errorf("agents: %s is served by family lq's paper suite", sp.agent)
	}
	sys, err := cfg.BuildSystem()
	if err != nil {
		return engine.Served{}, err
	}
	blt, err := cfg.sharedBLT()
	if err != nil {
		return engine.Served{}, err
	}
	rs := practicalRunStreams(st)
	if s.Privacy.Noise == "secure" {
		rs.Noise = st.SecureNoise("privacy/practical")
	}
	ps, err := agents.NewPracticalSession(sys, cfg.unitAgent(sp, blt), rs)
	if err != nil {
		return engine.Served{}, err
	}
	rep := ps.Curator.Report()
	if math.IsInf(rep.Nominal, 1) {
		// The noise-off twin runs at ε = ∞ (the suite's curve): it claims nothing, and its
		// report states no nominal ε (+Inf has no JSON form).
		rep.Nominal = 0
	}
	return engine.Served{Session: ps.Session, Privacy: rep, Statement: practicalGuarantee(rep), Users: engine.FromOne}, nil
}

// specs returns the practical reproduction's curves in its order (the table's), of the
// selected agents (c.Agents): each at every ε of its field (once, at ε = ∞, if non-private)
// with its K (none when its K is 0).
func (c *PracticalExpConfig) specs() []practicalSpec {
	var out []practicalSpec
	for _, a := range agentTable {
		if K := c.episodes(a); K > 0 && c.runs(a.Name) {
			for _, e := range c.epsilons(a) {
				out = append(out, practicalSpec{a.Name, e, K})
			}
		}
	}
	return out
}

// sharedBLT returns the BLT fit shared by every practical run of c (the capacity is the same
// for all; nil when none uses it).
func (c *PracticalExpConfig) sharedBLT() (*counter.BLTParams, error) {
	uses := false
	for _, a := range agentTable {
		uses = uses || (a.SharedBLT && c.runs(a.Name))
	}
	if c.Counter != "blt" || !uses {
		return nil, nil
	}
	b, err := counter.FitSqrtBLT(agents.PracticalCapacity(c.Episodes, c.BatchEvery), counter.DefaultBLTBuffers)
	if err != nil {
		return nil, err
	}
	return &b, nil
}

// practicalGuarantee is a practical curve's privacy statement.
func practicalGuarantee(rep ledger.Report) string {
	if rep.Private() {
		return fmt.Sprintf("(ε=%.4g, δ=%g)-JDP replace-one, μ=%.4g-GDP, σ=%.4g, B=%g", rep.Epsilon, rep.Delta, rep.Mu, rep.Sigma(), rep.Entries[0].Inputs["budget"])
	}
	return "non-private"
}
