package lq

import (
	"fmt"
	"math"

	agents "github.com/dprl/dprl/agents/lq"
	"github.com/dprl/dprl/experiment/calibration"
	"github.com/dprl/dprl/experiment/engine"
	"github.com/dprl/dprl/privacy/counter"
)

// Agent is one row of the LQ family's agent table: everything the configuration checks, the
// two suites' runners, the memory estimate, the listing and the service know about an agent.
type Agent struct {
	// Name is the agent's name (agents: of a RunSpec or a practical-lq block).
	Name string
	// Desc describes it in `dprl list`.
	Desc string
	// Private agents are (ε,δ)-JDP and run at every ε of their EpsilonsField; the others run
	// once, at ε = ∞.
	Private bool
	// Calibrations are the privacy.calibration values of the paper's suite it runs under
	// (none: its noise is fixed by its own accountant).
	Calibrations []string
	// Work is its per-episode work.
	Work string
	// Theory is the paper's regret growth exponent, if any.
	Theory engine.Exponent
	// Paper agents are the paper's OFU-RL (agents/lq.RunWith: two binary-tree counters), run
	// by the paper's suite when only paper agents are listed; the others are dprl's practical
	// agent (agents/lq.RunPracticalWith) configured by Variant, run by the practical suite.
	Paper bool
	// EpsilonsField is the practical-lq field listing a private agent's ε (epsilons or
	// theory_epsilons); EpisodesField the field of its K (episodes, paper_episodes or
	// ofu_episodes; 0 skips the agent).
	EpsilonsField, EpisodesField string
	// SharedBLT: a practical agent using the BLT fit every such run of the suite shares.
	SharedBLT bool
	// Variant sets the practical agent's variant on its configuration (nil: none).
	Variant func(ac *agents.PracticalConfig)
	// Label is its curve's label in the practical suite (its CSV's name) at ε eps.
	Label func(name, eps string) string
}

// practicalLabel labels a private practical curve; paperTheory is the paper's exponent, √K
// (Theorem 1 non-private, Theorem 3 private: docs/spec/lq.md §2.4, §3.9).
var (
	practicalLabel = func(name, eps string) string { return fmt.Sprintf("%s eps=%s [practical, dprl]", name, eps) }
	paperTheory    = engine.Theory(0.5)
)

// agentTable is the family's agent table, in the practical suite's curve order: a new agent
// is its file in agents/lq plus one row here. Nothing writes to it (tests substitute a copy
// with withAgent).
var agentTable = []Agent{
	{Name: agents.PracticalName, Desc: "practical Private-OFU-RL: budgeted contributions, batched releases, continual counters, (ε,δ)-JDP under replace-one",
		Private: true, Work: "plans every episode from the counter's release of every batch_every episodes", EpsilonsField: "epsilons", EpisodesField: "episodes",
		SharedBLT: true, Label: practicalLabel},
	{Name: agents.PracticalTheoryName, Desc: "practical-ofu-rl with the theory constants (budget H((1+γ)²+1), union bound over releases)",
		Private: true, Work: "plans every episode from the counter's release of every batch_every episodes", EpsilonsField: "theory_epsilons", EpisodesField: "episodes",
		Variant: func(ac *agents.PracticalConfig) { ac.Theory = true }, Label: practicalLabel},
	{Name: agents.PracticalNoiseOffName, Desc: "practical-ofu-rl's non-private twin",
		Work: "plans every episode from exact statistics on practical-ofu-rl's schedule", EpisodesField: "episodes", SharedBLT: true,
		Variant: func(ac *agents.PracticalConfig) { ac.NoiseOff = true },
		Label:   func(name, _ string) string { return name + " (non-private twin) [practical, dprl]" }},
	{Name: "private-ofu-rl", Desc: "Private-OFU-RL (Alg. 1): two binary-tree counters with Gaussian noise, (ε,δ)-JDP, private confidence radius (spec fix), pair scaling",
		Private: true, Calibrations: []string{calibration.Exact, calibration.Paper}, Work: "an optimistic search every episode on the counters' releases",
		Theory: paperTheory, Paper: true, EpsilonsField: "epsilons", EpisodesField: "paper_episodes",
		Label: func(_, eps string) string { return fmt.Sprintf("Private-OFU-RL eps=%s (paper)", eps) }},
	{Name: "ofu-rl", Desc: "OFU-RL with changing regularizers, non-private baseline (λI, exact statistics; ε = ∞)",
		Work: "an optimistic search every episode on exact statistics", Theory: paperTheory, Paper: true, EpisodesField: "ofu_episodes",
		Label: func(string, string) string { return "OFU-RL eps=inf (paper, non-private)" }},
}

// lookupAgent returns the table's row of name.
func lookupAgent(name string) (Agent, bool) { return engine.TableRow(agentTable, name, agentName) }

// agentName is a row\'s name (the table\'s key).
func agentName(a Agent) string { return a.Name }

// row returns the row of a validated agent name (the zero row for an unknown one).
func row(name string) Agent {
	a, _ := lookupAgent(name)
	return a
}

// paperAgent is the name of the paper's agent with the given privacy (the paper's suite's
// curves: ofu-rl at ε = ∞, private-ofu-rl at a finite ε).
func paperAgent(private bool) string {
	for _, a := range agentTable {
		if a.Paper && a.Private == private {
			return a.Name
		}
	}
	return ""
}

// Agents returns a copy of the family's agent table.
func Agents() []Agent { return append([]Agent(nil), agentTable...) }

// AgentNames returns every agent the LQ reproductions run (the table's order: dprl's practical
// agents, then the paper's Private-OFU-RL and OFU-RL).
func AgentNames() []string { return engine.TableNames(agentTable, agentName) }

// practicalSuiteAgent reports whether the agents list names an agent only the practical suite
// runs (then every listed agent runs there).
func practicalSuiteAgent(names []string) bool {
	for _, n := range names {
		if a, ok := lookupAgent(n); ok && !a.Paper {
			return true
		}
	}
	return false
}

// episodes is the K the configuration gives agent a (0 skips it).
func (c *PracticalExpConfig) episodes(a Agent) int {
	switch a.EpisodesField {
	case "paper_episodes":
		return c.PaperEpisodes
	case "ofu_episodes":
		return c.OFUEpisodes
	}
	return c.Episodes
}

// epsilons is the ε a private agent runs at ([∞] for a non-private one).
func (c *PracticalExpConfig) epsilons(a Agent) []float64 {
	switch {
	case !a.Private:
		return []float64{math.Inf(1)}
	case a.EpsilonsField == "theory_epsilons":
		return c.TheoryEpsilons
	}
	return c.Epsilons
}

// unitAgent returns the configuration of the practical curve sp (its row's variant) with the
// shared BLT fit blt.
func (c *PracticalExpConfig) unitAgent(sp practicalSpec, blt *counter.BLTParams) agents.PracticalConfig {
	ac := c.agent(sp.eps, sp.K)
	a := row(sp.agent)
	if a.Variant != nil {
		a.Variant(&ac)
	}
	if a.SharedBLT {
		ac.BLT = blt
	}
	return ac
}

// listing is the agent's line in `dprl list`.
func (a Agent) listing() string {
	return fmt.Sprintf("%s — %s; theory exponent %s", a.Desc, a.Work, a.Theory)
}
