package lq

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	agents "github.com/dprl/dprl/agents/lq"
	"github.com/dprl/dprl/experiment/engine"
	"github.com/dprl/dprl/experiment/rundir"
	model "github.com/dprl/dprl/model/lq"
	"github.com/dprl/dprl/privacy/counter"
	"github.com/dprl/dprl/privacy/ledger"
)

// PracticalSuiteName is the practical suite's name in an LQ configuration block
// (`suite: practical`).
const PracticalSuiteName = "practical"

// practicalDefaultName is the practical suite's default experiment name.
const practicalDefaultName = "practical-lq"

// PracticalSuite is the practical LQ suite of family lq (practical-ofu-rl, its theory-constant
// variant and noise-off twin, the paper's Private-OFU-RL and OFU-RL on LQ-E1 or a system
// file): its configuration block is PracticalExpConfig (with `long: true` for the long seeds),
// its units are (curve, seed) runs. Family dispatches to it.
type PracticalSuite struct{}

// Listing returns the suite's part of the LQ family's `dprl list`.
func (PracticalSuite) Listing() engine.Listing {
	return engine.Listing{Notes: []string{"dprl's practical agents run on every system above: dprl run --family lq --agent practical-ofu-rl …, or",
		"  suite: practical in a configuration block (agents: selects some of " + strings.Join(AgentNames(), ", ") + "; omitted: all)."}}
}

// practicalRepros are the suite's reproductions: practical-lq takes --long, and its figure's
// y axis is logarithmic by default.
var practicalRepros = engine.Repros{"practical-lq": {
	Describe: "dprl's practical Private-OFU-RL (practical-ofu-rl, no regret proof) vs the paper's Private-OFU-RL and OFU-RL on LQ-E1, ε grid (--long: 5 seeds)",
	Options:  []engine.Option{engine.LongOption("run the long seeds (5 seeds; long: true)"), {Name: "log-y", Default: "log"}}}}

// Describe describes the suite's reproductions (engine.Describer of the LQ family).
func (PracticalSuite) Describe(repro string) string { return practicalRepros.Describe(repro) }

// Options returns the options of the suite's reproductions (engine.Optioner of the LQ
// family): practical-lq --long and --log-y.
func (PracticalSuite) Options(repro string) []engine.Option { return practicalRepros.Options(repro) }

// ApplyOptions applies --long to a suite block (long: true or false). The block is edited as
// YAML, so that the fields whose zero value means a default stay omitted.
func (PracticalSuite) ApplyOptions(repro string, block []byte, set map[string]string) ([]byte, error) {
	return engine.ApplyBool(block, set, "long", func(block []byte, long bool) ([]byte, error) {
		return editPracticalYAML(block, func(m map[string]any, _ *PracticalExpConfig) {
			delete(m, "long")
			if long {
				m["long"] = true
			}
		})
	})
}

// editPracticalYAML parses and validates a suite block, applies edit to its YAML mapping (the
// parsed configuration beside it), and returns the edited block, validated again. The block is
// edited as YAML, so that the fields whose zero value means a default stay omitted.
func editPracticalYAML(block []byte, edit func(m map[string]any, cfg *PracticalExpConfig)) ([]byte, error) {
	cfg, err := ParsePracticalExpConfig(block)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := yaml.Unmarshal(block, &m); err != nil {
		return nil, fmt.Errorf("practical-lq: parsing config: %w", err)
	}
	edit(m, cfg)
	out, err := yaml.Marshal(m)
	if err != nil {
		return nil, err
	}
	if _, err := ParsePracticalExpConfig(out); err != nil {
		return nil, err
	}
	return out, nil
}

// Plan plans a suite block: a PracticalExpConfig (strict decode, validated).
func (PracticalSuite) Plan(block []byte, source string) (engine.Plan, error) {
	return engine.PlanBlock(block, ParsePracticalExpConfig, newPracticalPlan)
}

// Reproductions returns the suite's embedded reproductions: `practical-lq` is
// configs/practical-lq.yaml.
func (PracticalSuite) Reproductions() map[string][]byte {
	return map[string][]byte{"practical-lq": practicalEmbedded}
}

// Resize resizes a suite block as `dprl reproduce practical-lq --episodes/--seeds`: K of
// the practical agents (the paper's agents capped at it) and the seeds (the long seeds are
// dropped). The block is edited as YAML, so that the fields whose zero value means a default
// stay omitted.
func (PracticalSuite) Resize(block []byte, episodes int, seeds []uint64) ([]byte, error) {
	return editPracticalYAML(block, func(m map[string]any, cfg *PracticalExpConfig) {
		if episodes != 0 {
			m["episodes"] = episodes
			m["paper_episodes"] = min(cfg.PaperEpisodes, episodes)
			m["ofu_episodes"] = min(cfg.OFUEpisodes, episodes)
		}
		if seeds != nil {
			m["seeds"] = seeds
			delete(m, "long_seeds")
		}
	})
}

// PlanPractical plans an already parsed and validated configuration (flags applied).
func PlanPractical(cfg *PracticalExpConfig) (*engine.Planned, error) {
	return engine.PlanWith(FamilyName, newPracticalPlan, cfg)
}

// practicalSpec is one curve of the practical reproduction before it runs.
type practicalSpec struct {
	agent string
	eps   float64
	K     int
}

// practicalPlan is the practical reproduction planned into (curve, seed) units, curve-major.
type practicalPlan struct {
	cfg    *PracticalExpConfig
	sys    *model.System
	seeds  []uint64
	specs  []practicalSpec
	curves []PracticalCurve // templates: label, agent, ε, K, the paper's guarantee
	zero   []float64
	blt    *counter.BLTParams
	units  []engine.Unit
	// sysIn is the system file (if not lq-e1) with its SHA-256, recorded in the manifest.
	sysIn []rundir.Input
	// spec: planned from the shared run schema (PlanSpec), so the embedded configuration is
	// not an input.
	spec bool
}

// practicalUnitSpec is the resolved configuration of one cell (its digest, with the seed, is
// the unit ID): the agent, ε, K and every configuration field that reaches the agent.
type practicalUnitSpec struct {
	Agent    string `json:"agent"`
	Epsilon  string `json:"epsilon"`
	Episodes int    `json:"episodes"`
	System   string `json:"system"`
	// SystemSHA is the SHA-256 of a system file (omitted for lq-e1).
	SystemSHA  string  `json:"system_sha256,omitempty"`
	Delta      float64 `json:"delta"`
	Budget     float64 `json:"budget"`
	BatchEvery int     `json:"batch_every"`
	Counter    string  `json:"counter"`
	Confidence float64 `json:"confidence"`
	References int     `json:"references"`
	Search     Search  `json:"search"`
	// PracticalEpisodes is the practical agents' K (the BLT fit shared by every practical
	// run depends on it).
	PracticalEpisodes int `json:"practical_episodes"`
}

// practicalUnit is what one (curve, seed) unit records.
type practicalUnit struct {
	Cum           []float64
	Final         float64
	FirstOffZero  int
	Seconds       float64
	Guarantee     string
	Report        *ledger.Report
	PaperDiag     *agents.Diagnostics
	PracticalDiag *agents.PracticalDiagnostics
}

func newPracticalPlan(cfg *PracticalExpConfig) (*practicalPlan, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	sys, err := cfg.BuildSystem()
	if err != nil {
		return nil, err
	}
	p := &practicalPlan{cfg: cfg, sys: sys, seeds: cfg.Seeds}
	var sysSHA string
	if p.sysIn, sysSHA, err = hashSystem(cfg.System); err != nil {
		return nil, err
	}
	if cfg.Long && len(cfg.LongSeeds) > 0 {
		p.seeds = cfg.LongSeeds
	}
	p.specs = cfg.specs()
	if len(p.specs) == 0 {
		return nil, fmt.Errorf("agents: the configuration runs no curve (%v with these epsilons and episodes)", cfg.Agents)
	}
	maxK := 0
	for _, s := range p.specs {
		maxK = max(maxK, s.K)
	}
	if err := checkLeast(p.memoryEstimate(), len(p.specs)*len(p.seeds), maxK); err != nil {
		return nil, err // before the zero line (K values, seconds at large K) is computed
	}
	p.zero = ZeroLine(sys, maxK)
	// One BLT fit shared by every practical run (the capacity is the same for all).
	if p.blt, err = cfg.sharedBLT(); err != nil {
		return nil, err
	}
	p.curves = make([]PracticalCurve, len(p.specs))
	for i, s := range p.specs {
		c := &p.curves[i]
		c.Agent, c.Epsilon, c.EpsText, c.Episodes = s.agent, s.eps, epsLabel(s.eps), s.K
		a := row(s.agent)
		c.Label = a.Label(s.agent, c.EpsText)
		switch {
		case !a.Paper && a.Private:
			c.private = true
		case !a.Paper:
			c.Guarantee = "non-private"
			c.Privacy = ledger.Report{Model: ledger.NoiseOff, PrivateAtNominal: true}
		case a.Private:
			c.private = true
			ac := agents.DefaultConfig(s.eps, s.K)
			ac.Delta = cfg.Delta
			k, err := agents.ComputeConstants(agents.PublicOf(sys), ac)
			if err != nil {
				return nil, err
			}
			c.Guarantee = k.Guarantee
			if c.Privacy, err = guarantee(k); err != nil {
				return nil, err
			}
		default:
			c.Guarantee = "non-private"
			c.Privacy = ledger.Report{Model: ledger.None, PrivateAtNominal: true}
		}
		units, err := engine.CellUnits(c.Label, practicalUnitSpec{Agent: s.agent, Epsilon: c.EpsText, Episodes: s.K, System: sys.Name, SystemSHA: sysSHA,
			Delta: cfg.Delta, Budget: cfg.Budget, BatchEvery: cfg.BatchEvery, Counter: cfg.Counter, Confidence: cfg.Confidence,
			References: cfg.References, Search: cfg.Search, PracticalEpisodes: cfg.Episodes}, p.seeds, s.K)
		if err != nil {
			return nil, fmt.Errorf("curve %s: %w", c.Label, err)
		}
		p.units = append(p.units, units...)
	}
	return p, nil
}

// Name implements engine.Plan: the configuration's name.
func (p *practicalPlan) Name() string {
	if p.cfg.Name == "" {
		return practicalDefaultName
	}
	return p.cfg.Name
}

// Units implements engine.Plan.
func (p *practicalPlan) Units() []engine.Unit { return p.units }

// Run implements engine.Plan: unit i is curve i / len(seeds) for seed i mod len(seeds); the
// agent runs through the one episode loop with the unit's streams (runStreams,
// practicalRunStreams: the paths of the unit's root stream used before the engine).
func (p *practicalPlan) Run(ctx context.Context, i int, st engine.Streams, rec *engine.Recorder) error {
	sp := p.specs[i/len(p.seeds)]
	cfg := p.cfg
	t0 := time.Now()
	var u practicalUnit
	var regret []float64
	if row(sp.agent).Paper {
		ac := agents.DefaultConfig(sp.eps, sp.K)
		ac.Delta = cfg.Delta
		ac.Search.NumRandomStarts, ac.Search.MaxIter = cfg.Search.RandomStarts, cfg.Search.MaxIter
		r, err := agents.RunWith(ctx, p.sys, ac, runStreams(st), rec.Advance)
		if err != nil {
			return err // the engine names the unit (cell and seed)
		}
		regret, u.PaperDiag = r.Regret, &r.Diag
	} else {
		r, err := agents.RunPracticalWith(ctx, p.sys, cfg.unitAgent(sp, p.blt), practicalRunStreams(st), rec.Advance)
		if err != nil {
			return err
		}
		regret, u.PracticalDiag = r.Regret, &r.Diag
		u.Guarantee = practicalGuarantee(r.Report)
		rep := r.Report
		if math.IsInf(rep.Nominal, 0) {
			rep.Nominal = 0 // the noise-off twin's ε = ∞: no nominal target (JSON has no ∞)
		}
		u.Report = &rep
	}
	u.Cum = make([]float64, len(regret))
	c := 0.0
	for k, v := range regret {
		c += v
		u.Cum[k] = c
		if u.FirstOffZero == 0 && math.Abs(c-p.zero[k]) > 1e-9*p.zero[k] {
			u.FirstOffZero = k + 1
		}
	}
	u.Final = c
	u.Seconds = time.Since(t0).Seconds()
	return rec.Record(u)
}

// result assembles the PracticalResult from the units' results (every unit is required).
func (p *practicalPlan) result(c *engine.Collection) (*PracticalResult, error) {
	res := &PracticalResult{Config: p.cfg, System: p.sys.Name, Long: p.cfg.Long, Seeds: p.seeds, Zero: p.zero, Workers: c.Workers, Seconds: c.Seconds}
	n := len(p.seeds)
	res.Curves = make([]PracticalCurve, len(p.curves))
	for ci := range p.curves {
		cv := &res.Curves[ci]
		*cv = p.curves[ci]
		cv.Runs = make([]PracticalSeedRun, n)
		for si, seed := range p.seeds {
			var u practicalUnit
			if err := c.Load(ci*n+si, &u); err != nil {
				return nil, err
			}
			sr := PracticalSeedRun{Seed: seed, Final: u.Final, FirstOffZero: u.FirstOffZero, Seconds: u.Seconds, cum: u.Cum}
			switch {
			case u.PaperDiag != nil:
				sr.Diag = *u.PaperDiag
			case u.PracticalDiag != nil:
				sr.Diag = *u.PracticalDiag
			}
			cv.Runs[si] = sr
			if si == 0 && u.Guarantee != "" {
				cv.Guarantee = u.Guarantee
			}
			if si == 0 && u.Report != nil {
				cv.Privacy = *u.Report
			}
		}
	}
	if err := res.finish(); err != nil {
		return nil, err
	}
	return res, nil
}

// Collect implements engine.Plan: curves, figure, summary and the manifest last (with the
// collection's output options, so the engine writes meta.json, config.resolved.yaml and
// regret_long.csv just before the manifest, as for every family).
func (p *practicalPlan) Collect(c *engine.Collection) (string, error) {
	res, err := p.result(c)
	if err != nil {
		return "", err
	}
	inputs := rundir.MergeAll(c.Inputs, p.sysIn)
	if p.spec && inputs == nil {
		inputs = []rundir.Input{} // not the embedded configuration
	}
	summary, err := res.write(c.Dir, c.Options, inputs, c.Command)
	if err != nil {
		return "", fmt.Errorf("writing %s: %w", c.Dir, err)
	}
	return fmt.Sprintf("%s\nWrote %s (manifest.json, summary.md, regret-<system>.png/svg, curves/<system>/*.csv)", summary, filepath.Clean(c.Dir)), nil
}
