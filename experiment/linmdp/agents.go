package linmdp

import (
	"fmt"
	"strings"

	agents "github.com/dprl/dprl/agents/linmdp"
	"github.com/dprl/dprl/experiment/calibration"
	"github.com/dprl/dprl/experiment/engine"
	model "github.com/dprl/dprl/model/linmdp"
	"github.com/dprl/dprl/rng"
)

// Privacy is how an agent of the table uses ε.
type Privacy int

const (
	// NonPrivate agents ignore ε: one curve per environment and β mode.
	NonPrivate Privacy = iota
	// Twin agents are non-private but built at every ε (a private agent's regulariser,
	// schedule or widths at that ε, on exact statistics).
	Twin
	// JDP agents are (ε,δ)-JDP (or claim to be: ngo-printed reports its effective ε).
	JDP
)

// usesEpsilon reports whether the agent runs at every ε of the configuration.
func (p Privacy) usesEpsilon() bool { return p != NonPrivate }

// String is the privacy column of `dprl list`.
func (p Privacy) String() string {
	switch p {
	case Twin:
		return "non-private twin (run at every ε)"
	case JDP:
		return "(ε,δ)-JDP"
	}
	return "non-private"
}

// Work is an agent's per-episode work: when it recomputes its policy.
type Work int

const (
	// Refit recomputes the policy after every episode (K updates, all recorded).
	Refit Work = iota
	// Switch recomputes it when a (noisy) determinant test fires (low switching).
	Switch
	// Batch recomputes it at the ends of data-independent batches.
	Batch
)

// String is the per-episode work in `dprl list`.
func (w Work) String() string {
	switch w {
	case Switch:
		return "refit at low-switching updates"
	case Batch:
		return "refit at batch ends"
	}
	return "refit every episode"
}

// Layout is an agent's memory layout (agentBytes).
type Layout int

const (
	// Stats: the per-step statistics only (Gram, target, next-state sums).
	Stats Layout = iota
	// Tree: Stats plus the binary-mechanism trees and released, factored Grams of the papers'
	// private agents (and their noise-off twins, which keep the same structures).
	Tree
	// Pooled: dprl's practical layout (pooled statistics, BLT counters, a feature copy). Its
	// constructor builds counters of size K, so validation does not build it.
	Pooled
)

// Agent is one row of the family's agent table: everything the configuration check, the
// runner, the memory estimate, the listing and the service know about an agent.
type Agent struct {
	// Name is the agent's name in configurations (agents:) and RunSpecs.
	Name string
	// Desc describes it in `dprl list`.
	Desc string
	// Privacy says whether it is private and whether it runs at every ε.
	Privacy Privacy
	// Calibration is its noise calibration (package experiment/calibration; "" when
	// non-private), fixed by its name.
	Calibration string
	// Work is its per-episode work (when it refits; Refit agents record K updates).
	Work Work
	// Theory is the papers' regret growth exponent (leading term at large K), if any.
	Theory engine.Exponent
	// Memory is its memory layout; Probes the extra agents its constructor builds besides
	// itself (each as large as the agent).
	Memory Layout
	Probes int
	// Spurious counts the updates the exact Gram matrix would not have triggered (a
	// NON-PRIVATE diagnostic of a noisy switching test).
	Spurious bool
	// Twins are the agents its privacy cost is measured against (private − twin, same seed),
	// in this order.
	Twins []string
	// New builds the agent of cell on env with the common parameters com (its c_β, K, p,
	// tie break and noise).
	New func(env *model.MDP, cfg *Config, cell Cell, com agents.Common) (agents.Agent, error)
}

// agentTable is the family's agent table: a new agent is its file in agents/linmdp plus one
// row here. The papers' agents come first, then dprl's practical ones (prefix "practical-").
// Nothing writes to it (tests substitute a copy with withAgent).
var agentTable = []Agent{
	{Name: "lsvi-ucb", Desc: "LSVI-UCB (Jin et al. 2020), refit every episode, non-private",
		Work: Refit, Theory: engine.Theory(0.5), Memory: Stats,
		New: func(env *model.MDP, cfg *Config, cell Cell, com agents.Common) (agents.Agent, error) {
			return agents.NewLSVIUCB(env, com)
		}},
	{Name: "rare-switch", Desc: "ngo with noise off (LSVI-UCB-RareSwitch), non-private",
		Work: Switch, Theory: engine.Theory(0.5), Memory: Tree, New: ngo(agents.NgoConfig{NoiseOff: true})},
	{Name: "ngo", Desc: "Private LSVI-UCB with low switching (Ngo, Vietri & Wu 2022, Alg. 1), ρ-zCDP → (ε,δ)-JDP with the spec's corrected constants [S]",
		Privacy: JDP, Calibration: calibration.Exact, Work: Switch, Theory: engine.Theory(0.5), Memory: Tree, Spurious: true,
		Twins: []string{"rare-switch", "rare-switch-reg"}, New: ngo(agents.NgoConfig{})},
	// [P]: the printed calibration; its Info reports the effective ε it actually spends.
	{Name: "ngo-printed", Desc: "ngo with the printed constants [P]: NOT private at the nominal ε (prints its effective ε)",
		Privacy: JDP, Calibration: calibration.Paper, Work: Switch, Theory: engine.Theory(0.5), Memory: Tree,
		New: ngo(agents.NgoConfig{Calibration: agents.CalibPrinted})},
	// Noise off, but with the regulariser Ngo uses at this ε (λ = 2λ̃_Λ): separates the cost of
	// the regulariser from the cost of the noise.
	{Name: "rare-switch-reg", Desc: "rare-switch with ngo's regulariser λ = 2λ̃_Λ at the given ε, non-private (separates regulariser from noise)",
		Privacy: Twin, Work: Switch, Theory: engine.Theory(0.5), Memory: Tree, Probes: 1,
		New: func(env *model.MDP, cfg *Config, cell Cell, com agents.Common) (agents.Agent, error) {
			probe, err := agents.NewNgo(env, agents.NgoConfig{Common: agents.Common{K: cfg.Episodes, P: cfg.P, Seed: &rng.Seed{}},
				Epsilon: cell.Epsilon, Delta: cfg.Delta})
			if err != nil {
				return nil, err
			}
			com.Lambda = probe.Info().Regulariser
			return agents.NewNgo(env, agents.NgoConfig{Common: com, NoiseOff: true})
		}},
	{Name: "luyo-batched", Desc: "privacy-preserving batched LSVI-UCB (Luyo et al. 2021, Alg. 2, App. E.1, c_K = dΥ), (ε,δ)-JDP",
		Privacy: JDP, Calibration: calibration.Paper, Work: Batch, Theory: engine.Theory(0.6), Memory: Tree,
		Twins: []string{"batch-twin"}, New: luyo(agents.LuyoConfig{})},
	// Spec §4.6 zCDP recalibration of Alg. 2 (not in the paper).
	{Name: "luyo-zcdp", Desc: "luyo-batched with the spec's zCDP recalibration (§4.6, not in the paper)",
		Privacy: JDP, Calibration: calibration.ZCDP, Work: Batch, Theory: engine.Theory(0.6), Memory: Tree,
		New: luyo(agents.LuyoConfig{Calibration: agents.LuyoZCDP})},
	// Same B as the private agent at this ε (E.1 formula), noise off.
	{Name: "batch-twin", Desc: "luyo-batched with noise off (LSVI-UCB-Batch), non-private",
		Privacy: Twin, Work: Batch, Theory: engine.Theory(0.5), Memory: Tree, New: luyo(agents.LuyoConfig{NoiseOff: true})},
	{Name: "luyo-nonbatched", Desc: "Luyo et al.'s non-batched variant (B = K, Remarks 3 and 7), (ε,δ)-JDP",
		Privacy: JDP, Calibration: calibration.Paper, Work: Refit, Theory: engine.Theory(0.75), Memory: Tree,
		Twins: []string{"lsvi-ucb"}, New: luyo(agents.LuyoConfig{NonBatched: true})},
	// dprl's practical agents have no regret proof; their non-private twins are LSVI-UCB
	// variants (pooled), 1/2.
	{Name: "practical-lsvi", Desc: "practical private LSVI-UCB, low switching, Gaussian continual counters, exact μ-GDP accounting, (ε,δ)-JDP",
		Privacy: JDP, Calibration: calibration.Exact, Work: Switch, Memory: Pooled,
		Twins: []string{"practical-rare-switch", "practical-lsvi-noiseoff"}, New: practical(func(*agents.PracticalConfig) {})},
	{Name: "practical-lsvi-batched", Desc: "practical-lsvi updating its policy at every release (a data-independent batch schedule) instead of low switching",
		Privacy: JDP, Calibration: calibration.Exact, Work: Batch, Memory: Pooled,
		Twins: []string{"practical-batch-twin"}, New: practical(func(pc *agents.PracticalConfig) { pc.Batched = true })},
	{Name: "practical-rare-switch", Desc: "practical-lsvi's non-private twin (exact statistics, same schedule)",
		Work: Switch, Theory: engine.Theory(0.5), Memory: Pooled,
		New: practical(func(pc *agents.PracticalConfig) { pc.Mode = agents.PracticalNonPrivate })},
	{Name: "practical-batch-twin", Desc: "practical-lsvi-batched's non-private twin",
		Work: Batch, Theory: engine.Theory(0.5), Memory: Pooled,
		New: practical(func(pc *agents.PracticalConfig) { pc.Mode, pc.Batched = agents.PracticalNonPrivate, true })},
	{Name: "practical-lsvi-noiseoff", Desc: "practical-lsvi on exact statistics with the private agent's regulariser and widths (separates the cost of the noise)",
		Privacy: Twin, Work: Switch, Memory: Pooled,
		New: practical(func(pc *agents.PracticalConfig) { pc.Mode = agents.PracticalNoiseOff })},
	// The theory variant ignores the β mode's c_β (c_β = 1).
	{Name: "practical-lsvi-theory", Desc: "practical-lsvi with the theory constants (c_β = 1)",
		Privacy: JDP, Calibration: calibration.Exact, Work: Switch, Memory: Pooled,
		New: practical(func(pc *agents.PracticalConfig) { pc.Theory, pc.CBeta = true, 1 })},
}

// ngo builds a row's constructor of Ngo et al.'s agent with the fixed fields of nc (its ε, δ
// and common parameters are the cell's).
func ngo(nc agents.NgoConfig) func(*model.MDP, *Config, Cell, agents.Common) (agents.Agent, error) {
	return func(env *model.MDP, cfg *Config, cell Cell, com agents.Common) (agents.Agent, error) {
		c := nc
		c.Common = com
		if !c.NoiseOff {
			c.Epsilon, c.Delta = cell.Epsilon, cfg.Delta
		}
		return agents.NewNgo(env, c)
	}
}

// luyo builds a row's constructor of Luyo et al.'s agent with the fixed fields of lc.
func luyo(lc agents.LuyoConfig) func(*model.MDP, *Config, Cell, agents.Common) (agents.Agent, error) {
	return func(env *model.MDP, cfg *Config, cell Cell, com agents.Common) (agents.Agent, error) {
		c := lc
		c.Common, c.Epsilon, c.Delta = com, cell.Epsilon, cfg.Delta
		return agents.NewLuyo(env, c)
	}
}

// practical builds a row's constructor of dprl's practical agent, set fixing its variant.
func practical(set func(*agents.PracticalConfig)) func(*model.MDP, *Config, Cell, agents.Common) (agents.Agent, error) {
	return func(env *model.MDP, cfg *Config, cell Cell, com agents.Common) (agents.Agent, error) {
		pc := agents.PracticalConfig{Common: com, Epsilon: cell.Epsilon, Delta: cfg.Delta}
		set(&pc)
		return agents.NewPractical(env, pc)
	}
}

// lookupAgent returns the table's row of name.
func lookupAgent(name string) (Agent, bool) { return engine.TableRow(agentTable, name, agentName) }

// agentName is a row\'s name (the table\'s key).
func agentName(a Agent) string { return a.Name }

// row returns the row of a validated configuration's agent (the zero row for an unknown one).
func row(name string) Agent {
	a, _ := lookupAgent(name)
	return a
}

// Agents returns a copy of the family's agent table.
func Agents() []Agent { return append([]Agent(nil), agentTable...) }

// AgentNames returns every agent name a configuration accepts (Config.Agents), in the
// table's order: the papers' agents first, then dprl's practical ones (prefix "practical-").
func AgentNames() []string { return engine.TableNames(agentTable, agentName) }

// AgentCalibration returns the calibration name (package experiment/calibration) of a
// linear-MDP agent, fixed by its name (its row); "" for a non-private agent or twin.
func AgentCalibration(agent string) string { return row(agent).Calibration }

// listing is the agent's line in `dprl list`.
func (a Agent) listing() string {
	var b strings.Builder
	b.WriteString(a.Desc)
	if a.Calibration != "" {
		b.WriteString("; calibration " + a.Calibration)
	}
	fmt.Fprintf(&b, " — %s; %s; theory exponent %s", a.Privacy, a.Work, a.Theory)
	return b.String()
}
