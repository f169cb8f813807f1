package lq

import (
	"context"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"time"

	agents "github.com/dprl/dprl/agents/lq"
	"github.com/dprl/dprl/experiment/engine"
	"github.com/dprl/dprl/experiment/rundir"
	"github.com/dprl/dprl/internal/bounds"
	model "github.com/dprl/dprl/model/lq"
)

// FamilyName is the LQ family's name in configurations (`family: lq`).
const FamilyName = "lq"

// Family is the LQ family plugged into the engine: every LQ agent — the paper's OFU-RL and
// Private-OFU-RL (lq spec §5.4) and dprl's practical ones — on LQ-E1 or a system file. Its
// configuration block is Config (the paper's suite; its units are (curve, seed) runs of the
// main sweep; the extended sweep, Config.Extended, is planned by PlanConfig(cfg, true)) or,
// with `suite: practical`, PracticalExpConfig (PracticalSuite); a RunSpec goes to the
// practical suite when it names a practical agent.
type Family struct{}

// Name implements engine.Family.
func (Family) Name() string { return FamilyName }

// Catalogue implements engine.Family: LQ-E1 and system files, the paper's agents and dprl's
// practical ones, and the calibrations.
func (f Family) Catalogue(w io.Writer) {
	l := engine.Listing{Family: FamilyName, Title: "linear-quadratic control (Chowdhury, Zhou & Shroff 2022; dprl's practical agents)"}
	l.Envs = engine.EnvEntries(f.SpecEnvs())
	l.Agents = engine.TableEntries(agentTable, agentName, Agent.listing)
	l.Privacy = []engine.Entry{
		{Name: "exact", Desc: "calibration (default): the exact ρ* of the paper's agent"},
		{Name: "paper", Desc: "calibration: the paper's σ (overspends ε under the paper's zCDP accounting; the ledger's μ-GDP certifies it)"},
		{Name: "zero-out", Desc: "neighbouring relation of the extended sweep's zero-out curves (default replace-one)"},
	}
	l.Add(PracticalSuite{}.Listing())
	l.Write(w)
}

// Describe implements engine.Describer.
func (Family) Describe(repro string) string {
	if repro == "lq" {
		return "LQ control: OFU-RL vs Private-OFU-RL on LQ-E1, regret vs K for ε ∈ {0.1, 1, 10, ∞} (--extended: ε ∈ {10, 100, 1000}, K = 10⁵)"
	}
	return PracticalSuite{}.Describe(repro)
}

// Options implements engine.Optioner: lq --extended and --multiplier, practical-lq --long.
func (Family) Options(repro string) []engine.Option {
	if repro == "lq" {
		return []engine.Option{
			{Name: "extended", Bool: true, Default: "false", Usage: "run the extended sweep ε ∈ {10, 100, 1000} (+ zero-out ε = 10) instead (run_extended: true; --episodes and --seeds then resize it)"},
			{Name: "multiplier", Default: "1", Usage: "confidence-width multiplier (1 = theory; never changes noise; width_multiplier)"},
		}
	}
	return PracticalSuite{}.Options(repro)
}

// ApplyOptions implements engine.Optioner.
func (Family) ApplyOptions(repro string, block []byte, set map[string]string) ([]byte, error) {
	return engine.EditBlock(practicalSuite, block, func(rest []byte) ([]byte, error) {
		return PracticalSuite{}.ApplyOptions(repro, rest, set)
	}, ParseConfig, func(cfg *Config) error {
		if v, ok := set["extended"]; ok {
			var err error
			if cfg.RunExtended, err = strconv.ParseBool(v); err != nil {
				return fmt.Errorf("--extended: %w", err)
			}
		}
		if v, ok := set["multiplier"]; ok {
			m, err := strconv.ParseFloat(v, 64)
			if err != nil || !(m > 0) || m > bounds.MaxMultiplier {
				return fmt.Errorf("--multiplier: must be in %s, got %q", bounds.MultiplierRange, v)
			}
			cfg.WidthMultiplier = m
		}
		return nil
	})
}

// Plan implements engine.Family: block is a Config (strict decode, validated); the main sweep.
func (Family) Plan(block []byte, source string) (engine.Plan, error) {
	return practicalSuite.Plan(block, func(rest []byte) (engine.Plan, error) {
		return PracticalSuite{}.Plan(rest, source)
	}, func(block []byte) (engine.Plan, error) {
		cfg, err := ParseConfig(block)
		if err != nil {
			return nil, err
		}
		return newPlan(cfg, cfg.RunExtended)
	})
}

// Reproductions implements engine.Reproducer: `lq` is the embedded configs/lq-e1.yaml.
func (Family) Reproductions() map[string][]byte {
	return practicalSuite.AddReproductions(map[string][]byte{"lq": append([]byte(nil), embedded...)}, PracticalSuite{}.Reproductions())
}

// practicalSuite is the practical suite's schema of an LQ block (`suite: practical`; a block
// without the key is the paper's suite, Config).
var practicalSuite = engine.NamedSuite{Family: FamilyName, Name: PracticalSuiteName, Default: "the paper's suite"}

// Resize implements engine.Resizer: K and seeds of the sweep the block runs (the main one, or
// the extended one with run_extended).
func (Family) Resize(block []byte, episodes int, seeds []uint64) ([]byte, error) {
	return engine.EditBlock(practicalSuite, block, func(rest []byte) ([]byte, error) {
		return PracticalSuite{}.Resize(rest, episodes, seeds)
	}, ParseConfig, func(cfg *Config) error {
		if cfg.RunExtended {
			engine.ResizeFields(episodes, seeds, &cfg.Extended.Seeds, &cfg.Extended.Episodes)
		} else {
			engine.ResizeFields(episodes, seeds, &cfg.Seeds, &cfg.Episodes)
		}
		return nil
	})
}

// PlanConfig plans an already parsed and validated configuration (flags applied): the main
// sweep, or the extended sweep when extended is set.
func PlanConfig(cfg *Config, extended bool) (*engine.Planned, error) {
	return engine.PlanWith(FamilyName, func(cfg *Config) (*plan, error) { return newPlan(cfg, extended) }, cfg)
}

// plan is an LQ experiment planned into (curve, seed) units, curve-major.
type plan struct {
	cfg      *Config
	extended bool
	sys      *model.System
	sysIn    []rundir.Input
	K        int
	seeds    []uint64
	reportAt []int
	specs    []CurveSpec
	consts   []agents.Constants
	zero     []float64
	units    []engine.Unit
}

// unitSpec is the resolved configuration of one cell (its digest, with the seed, is the unit
// ID): the system (name and file digest) and the agent's full configuration.
type unitSpec struct {
	System    string        `json:"system"`
	SystemSHA string        `json:"system_sha256,omitempty"`
	Label     string        `json:"label"`
	Agent     agents.Config `json:"agent"`
}

func newPlan(cfg *Config, extended bool) (*plan, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	// Every curve keeps its cumulative regret for every seed and episode.
	curves, nSeeds, K := 1+len(cfg.Epsilons), len(cfg.Seeds), cfg.Episodes
	if extended {
		x := cfg.Extended
		curves, nSeeds, K = 1+len(x.Epsilons)+len(x.ZeroOutEpsilons), len(x.Seeds), x.Episodes
	}
	if err := bounds.Stored(curves, nSeeds, K); err != nil {
		return nil, err
	}
	sys, err := cfg.BuildSystem()
	if err != nil {
		return nil, err
	}
	p := &plan{cfg: cfg, extended: extended, sys: sys, K: cfg.Episodes, seeds: cfg.Seeds, reportAt: cfg.ReportAt}
	var sysSHA string
	if p.sysIn, sysSHA, err = hashSystem(cfg.System); err != nil {
		return nil, err
	}
	if extended {
		x := cfg.Extended
		if x.Episodes == 0 {
			return nil, fmt.Errorf("extended: the configuration has no extended sweep")
		}
		p.K, p.seeds, p.reportAt = x.Episodes, x.Seeds, x.ReportAt
		for _, e := range x.Epsilons {
			p.specs = append(p.specs, CurveSpec{Epsilon: e, Neighbouring: cfg.Neighbouring})
		}
		for _, e := range x.ZeroOutEpsilons {
			p.specs = append(p.specs, CurveSpec{Epsilon: e, Neighbouring: "zero-out"})
		}
	} else {
		for _, e := range cfg.Epsilons {
			p.specs = append(p.specs, CurveSpec{Epsilon: e, Neighbouring: cfg.Neighbouring})
		}
	}
	for i := range p.specs {
		s := &p.specs[i]
		s.EpsilonText = epsLabel(s.Epsilon)
		if math.IsInf(s.Epsilon, 1) {
			s.Label = "OFU-RL (eps=inf)"
		} else {
			s.Label = fmt.Sprintf("Private-OFU-RL eps=%s %s", s.EpsilonText, s.Neighbouring)
		}
		ac := cfg.agentConfig(s.Epsilon, p.K, s.Neighbouring)
		consts, err := agents.ComputeConstants(agents.PublicOf(sys), ac)
		if err != nil {
			return nil, err
		}
		p.consts = append(p.consts, consts)
		// +Inf has no JSON form: the label (with EpsilonText) names ε in the unit spec.
		ac.Epsilon = 0
		units, err := engine.CellUnits(s.Label, unitSpec{System: sys.Name, SystemSHA: sysSHA, Label: s.Label, Agent: ac}, p.seeds, p.K)
		if err != nil {
			return nil, fmt.Errorf("curve %s: %w", s.Label, err)
		}
		p.units = append(p.units, units...)
	}
	if err := checkLeast(p.memoryEstimate(), len(p.units), p.K); err != nil {
		return nil, err // before the zero line (K values, seconds at large K) is computed
	}
	p.zero = ZeroLine(sys, p.K)
	return p, nil
}

// Name implements engine.Plan.
func (p *plan) Name() string {
	if p.extended {
		return "lq-extended"
	}
	return "lq"
}

// Units implements engine.Plan.
func (p *plan) Units() []engine.Unit { return p.units }

// Run implements engine.Plan: unit i is curve i / len(seeds), seed i mod len(seeds); the
// agent runs through the one episode loop with the unit's streams (runStreams: the paths of
// the unit's root stream used before the engine).
func (p *plan) Run(ctx context.Context, i int, st engine.Streams, rec *engine.Recorder) error {
	sp := p.specs[i/len(p.seeds)]
	ac := p.cfg.agentConfig(sp.Epsilon, p.K, sp.Neighbouring)
	start := time.Now()
	r, err := agents.RunWith(ctx, p.sys, ac, runStreams(st), rec.Advance)
	if err != nil {
		return err // the engine names the unit (cell and seed)
	}
	sr := SeedRun{Seed: st.Seed, Diag: r.Diag, Cum: make([]float64, p.K), Seconds: time.Since(start).Seconds()}
	c := 0.0
	for k, v := range r.Regret {
		c += v
		sr.Cum[k] = c
		if dev := rundir.Number(math.Abs(c-p.zero[k]) / p.zero[k]); dev > sr.ZeroLineMaxRelDev || !dev.Defined() {
			sr.ZeroLineMaxRelDev = dev
		}
		if sr.FirstOffZero == 0 && math.Abs(c-p.zero[k]) > 1e-9*p.zero[k] {
			sr.FirstOffZero = k + 1
		}
	}
	sr.Final = c
	return rec.Record(sr)
}

// result assembles the Result from the units' results (every unit is required: the summary
// compares curves at equal seeds).
func (p *plan) result(c *engine.Collection, extra []rundir.Input) (*Result, error) {
	res := &Result{Config: p.cfg, Extended: p.extended, Episodes: p.K, Seeds: p.seeds, ReportAt: p.reportAt,
		System: p.sys.Name, Horizon: p.sys.H, Zero: p.zero, Workers: c.Workers, Seconds: c.Seconds}
	res.Inputs = rundir.MergeAll(p.cfg.Inputs, extra, p.sysIn)
	n := len(p.seeds)
	for ci, sp := range p.specs {
		runs, err := engine.LoadRuns[SeedRun](c, ci*n, n)
		if err != nil {
			return nil, err
		}
		res.Curves = append(res.Curves, CurveResult{Spec: sp, Constants: p.consts[ci], Runs: runs})
	}
	return res, nil
}

// Collect implements engine.Plan: curves, figure, summary and the manifest last (Write).
func (p *plan) Collect(c *engine.Collection) (string, error) {
	return engine.Collect(c, p.result, func(res *Result) (string, error) {
		summary, err := res.Write(c.Dir, "", c.Command)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("%s\nWrote %s (manifest.json, summary.md, regret-<system> figure, curves/<system>/*.csv)", summary, filepath.Clean(c.Dir)), nil
	})
}
