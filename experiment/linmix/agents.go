package linmix

import (
	"fmt"
	"slices"
	"strings"

	agents "github.com/dprl/dprl/agents/linmix"
	"github.com/dprl/dprl/experiment/calibration"
	"github.com/dprl/dprl/experiment/engine"
	model "github.com/dprl/dprl/model/linmix"
	"github.com/dprl/dprl/privacy/ledger"
	"github.com/dprl/dprl/privacy/noise"
)

// Layout is an agent's memory layout (agentBytes).
type Layout int

const (
	// Regressions: two ridge regressions of dimension d per step with their noise trees.
	Regressions Layout = iota
	// RewardRegression: LinOpt's second regression has the dimension max(d, d2) of the
	// reward features.
	RewardRegression
	// Pooled: dprl's practical layout: Regressions plus the factorisation (BLT) counter over
	// every step.
	Pooled
)

// Agent is one row of the family's agent table (an algorithm; its agents are algorithm/mode
// for each of its Modes): everything the configuration check, the runner, the memory
// estimate, the listing and the service know about it.
type Agent struct {
	// Name is curves[].algorithm.
	Name string
	// Desc describes it in `dprl list`.
	Desc string
	// Modes are the privacy modes it runs in (curves[].mode; the listing's algorithm/mode).
	Modes []agents.Mode
	// Calibrations are the curves[].calibration values of its private modes (the first is the
	// default); none when it calibrates through its own accountant.
	Calibrations []string
	// Work is its per-episode work.
	Work string
	// Theory is the papers' regret growth exponent in each mode (indexed by agents.Mode).
	Theory [3]engine.Exponent
	// Memory is its memory layout.
	Memory Layout
	// Practical agents take curves[].practical and run once (their width multiplier is
	// practical.beta_mult), not once per beta_mults.
	Practical bool
	// Expand returns the curves of a configuration's curve spec at one c_β (one per ε), with
	// their agent fields (label, configuration, algorithm, mode, ε, multipliers); it validates
	// them.
	Expand func(c *Config, cv CurveSpec, betaMult float64) ([]*Curve, error)
	// Check, if set, refuses a curve whose constants are not finite on m (before any compute).
	Check func(m *model.MDP, cur *Curve) error
	// New builds a curve's agent for a unit on m with streams st (secure: st's secure noise).
	New func(m *model.MDP, cur *Curve, st engine.Streams, secure bool) (*unit, error)
}

// papers' exponents: √K non-private and under JDP ([L] Cor. 5, 10; [Z] Thm 6.5), K^{3/4}
// under LDP ([L] Cor. 6, 11; [Z] LDP [D]) — docs/spec/linear_mixture.md's table.
var papersTheory = [3]engine.Exponent{agents.None: engine.Theory(0.5), agents.JDP: engine.Theory(0.5), agents.LDP: engine.Theory(0.75)}

// allModes are the three privacy modes.
var allModes = []agents.Mode{agents.None, agents.JDP, agents.LDP}

// agentTable is the family's agent table: a new agent is its file in agents/linmix plus one
// row here. The papers' algorithms come first, then dprl's practical-vtr. Nothing writes to
// it (tests substitute a copy with withAgent).
var agentTable = []Agent{
	paperRow(agents.UCRLVTR, "UCRL-VTR (Ayoub et al.; private versions Luyo et al. Alg. 1, Cor. 5/6 constants)", Regressions,
		calibration.Paper, calibration.Laplace, calibration.ZCDP),
	paperRow(agents.UCRLVTRPlus, "UCRL-VTR+ (variance-aware; private versions Luyo et al. Alg. 3, RECONSTRUCTED in the spec §4, Cor. 10/11)", Regressions, calibration.Paper),
	paperRow(agents.LinOptVI, "Zhou's (Private-)LinOpt-VI, four counters per step (LDP version DERIVED, spec §5.7)", RewardRegression, calibration.Paper),
	paperRow(agents.LinOptPO, "Zhou's (Private-)LinOpt-PO, softmax mirror-descent policy (LDP DERIVED)", RewardRegression, calibration.Paper),
	{Name: PracticalAlgorithm, Desc: "practical private UCRL-VTR: Gaussian factorisation counters, exact μ-GDP accounting",
		Modes: allModes, Work: "replans every episode from statistics its counters release every practical.batch_every episodes",
		Memory: Pooled, Practical: true, Expand: expandPractical, New: newPractical},
}

// paperRow is the row of one of the papers' algorithms (package agents/linmix's Config).
func paperRow(alg agents.Algorithm, desc string, mem Layout, calibs ...string) Agent {
	return paperAgent(alg.String(), alg, desc, mem, calibs...)
}

// paperAgent is the row named name of a variant of one of the papers' algorithms, alg.
func paperAgent(name string, alg agents.Algorithm, desc string, mem Layout, calibs ...string) Agent {
	return Agent{Name: name, Desc: desc, Modes: allModes, Calibrations: calibs, Work: "replans every episode from its (noisy) statistics",
		Theory: papersTheory, Memory: mem,
		Expand: func(c *Config, cv CurveSpec, betaMult float64) ([]*Curve, error) {
			return expandPaper(c, name, alg, cv, betaMult)
		},
		Check: func(m *model.MDP, cur *Curve) error { return agents.CheckConstants(m, cur.Agent) },
		New:   newPaper}
}

// expandPaper returns the curves of row name, one of the papers' algorithms (alg): one per ε at
// betaMult.
func expandPaper(c *Config, name string, alg agents.Algorithm, cv CurveSpec, betaMult float64) ([]*Curve, error) {
	mode, err := parseMode(cv.Mode)
	if err != nil {
		return nil, err
	}
	eps := cv.Epsilons
	if mode == agents.None {
		eps = []float64{0}
	}
	var out []*Curve
	for _, e := range eps {
		ac := agents.Config{Algorithm: alg, Mode: mode, Calibration: agents.Calibration(cv.Calibration), Episodes: c.Episodes,
			Epsilon: e, Delta: c.Delta, P: c.P, BetaMult: betaMult}
		if mode != agents.None && ac.Calibration == agents.Laplace {
			ac.Delta = 0
		}
		if betaMult != 1 {
			ac.ShiftMult = c.ShiftMult
		}
		if err := ac.Validate(); err != nil {
			return nil, err
		}
		out = append(out, &Curve{Label: name + strings.TrimPrefix(label(ac), alg.String()), Agent: ac, Algorithm: name, Mode: ac.Mode.String(),
			Calibration: string(ac.Calibration), Epsilon: ac.Epsilon, BetaMult: ac.BetaMult, ShiftMult: ac.ShiftMult})
	}
	return out, nil
}

// newPaper builds one of the papers' agents.
func newPaper(m *model.MDP, cur *Curve, st engine.Streams, secure bool) (*unit, error) {
	var aa *agents.Agent
	var err error
	if secure {
		aa, err = agents.NewWithNoise(m, cur.Agent, st.Root(), func(path string) noise.Source { return st.SecureNoise("noise/" + path) })
	} else {
		aa, err = agents.NewSeeded(m, cur.Agent, st.Root())
	}
	if err != nil {
		return nil, err
	}
	return &unit{a: aa, ur: unitResult{Constants: aa.Constants()}}, nil
}

// expandPractical returns practical-vtr's curves (one per ε; betaMult is not used: its width
// multiplier is practical.beta_mult).
func expandPractical(c *Config, cv CurveSpec, _ float64) ([]*Curve, error) {
	pcs, err := cv.practicalConfigs(c)
	if err != nil {
		return nil, err
	}
	var out []*Curve
	for _, pc := range pcs {
		lab := pc.Name()
		if pc.Privacy.Mode != agents.None {
			lab += fmt.Sprintf(" ε=%g", pc.Privacy.Epsilon)
		}
		lab += fmt.Sprintf(" cβ=%g", pc.BetaMult)
		if pc.Privacy.BatchEvery > 1 {
			lab += fmt.Sprintf(" M=%d", pc.Privacy.BatchEvery)
		}
		lab += " (dprl's own)"
		out = append(out, &Curve{Label: lab, Practical: &pc, Algorithm: PracticalAlgorithm, Mode: pc.Privacy.Mode.String(),
			Epsilon: pc.Privacy.Epsilon, BetaMult: pc.BetaMult})
	}
	return out, nil
}

// newPractical builds practical-vtr with its ledger's guarantee and public constants.
func newPractical(m *model.MDP, cur *Curve, st engine.Streams, secure bool) (*unit, error) {
	var pa *agents.PracticalAgent
	var err error
	if secure {
		pa, err = agents.NewPracticalWithNoise(m, *cur.Practical, st.Root(), st.SecureNoise("practical-noise"))
	} else {
		pa, err = agents.NewPracticalSeeded(m, *cur.Practical, st.Root())
	}
	if err != nil {
		return nil, err // the engine names the unit (cell and seed)
	}
	u := &unit{}
	g := pa.Guarantee()
	u.ur.Guarantee = &g
	u.ur.Constants = agents.Constants{Privacy: agents.PracticalLabel + "; " + g.String(), Covered: g.PrivateAtNominal || g.Model == ledger.None,
		NoiseKind: "gaussian"}
	if g.Model == ledger.None {
		u.ur.Constants.NoiseKind = "none"
	}
	if sg := g.Sigma(); sg > 0 {
		u.ur.Constants.SigmaMat, u.ur.Constants.SigmaVec = []float64{sg}, []float64{sg}
	}
	u.practical, u.a = pa, pa
	return u, nil
}

// lookupAgent returns the table's row of the algorithm name.
func lookupAgent(name string) (Agent, bool) { return engine.TableRow(agentTable, name, agentName) }

// agentName is a row\'s name (the table\'s key).
func agentName(a Agent) string { return a.Name }

// row returns the row of a validated curve's algorithm (the zero row for an unknown one).
func row(name string) Agent {
	a, _ := lookupAgent(name)
	return a
}

// algorithms lists the table's algorithm names, for errors.
func algorithms() string { return strings.Join(engine.TableNames(agentTable, agentName), ", ") }

// Agents returns a copy of the family's agent table.
func Agents() []Agent { return append([]Agent(nil), agentTable...) }

// AgentNames returns every algorithm/mode pair a configuration accepts (curves[].algorithm and
// curves[].mode), in the table's order: the papers' algorithms first, then dprl's
// practical-vtr.
func AgentNames() []string {
	var out []string
	for _, a := range agentTable {
		for _, m := range a.Modes {
			out = append(out, a.Name+"/"+m.String())
		}
	}
	return out
}

// hasMode reports whether the row runs in mode.
func (a Agent) hasMode(mode agents.Mode) bool { return slices.Contains(a.Modes, mode) }

// TheoryExponent is the papers' regret growth exponent of algorithm alg in mode (a curve's
// algorithm and mode), "none" without a theorem.
func TheoryExponent(alg, mode string) engine.Exponent {
	m, err := parseMode(mode)
	if err != nil {
		return engine.Exponent{}
	}
	return row(alg).Theory[m]
}
