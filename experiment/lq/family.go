package lq

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"

	agents "github.com/dprl/dprl/agents/lq"
	"github.com/dprl/dprl/experiment/engine"
	"github.com/dprl/dprl/experiment/rundir"
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

// Catalogue implements engine.Family.
func (Family) Catalogue(w io.Writer) {
	fmt.Fprintln(w, "Systems: lq-e1 (lq spec §5.4) or a system file (system: PATH)")
	fmt.Fprintln(w, "Agents:  "+strings.Join(AgentNames()[:2], ", ")+" (the paper's)")
	fmt.Fprintln(w, "Calibrations: "+CalibrationNames)
	fmt.Fprintln(w, "dprl's practical agents (suite: practical in a configuration; any system above): "+agents.PracticalName+", "+agents.PracticalTheoryName+", "+agents.PracticalNoiseOffName)
}

// Plan implements engine.Family: block is a Config (strict decode, validated); the main sweep.
func (Family) Plan(block []byte, source string) (engine.Plan, error) {
	suite, rest, err := splitSuite(block)
	if err != nil {
		return nil, err
	}
	if suite {
		return PracticalSuite{}.Plan(rest, source)
	}
	cfg, err := ParseConfig(block)
	if err != nil {
		return nil, err
	}
	return newPlan(cfg, false)
}

// Reproductions implements engine.Reproducer: `lq` is the embedded configs/lq-e1.yaml.
func (Family) Reproductions() map[string][]byte {
	out := map[string][]byte{"lq": append([]byte(nil), embedded...)}
	for name, block := range (PracticalSuite{}).Reproductions() {
		out[name] = engine.WithSuite(PracticalSuiteName, block)
	}
	return out
}

// splitSuite reports whether block is a practical-suite block (`suite: practical`) and returns
// the block without the key; another suite name is an error naming the allowed one.
func splitSuite(block []byte) (bool, []byte, error) {
	suite, rest, err := engine.SplitSuite(block)
	switch {
	case err != nil:
		return false, nil, err
	case suite == "":
		return false, block, nil
	case suite == PracticalSuiteName:
		return true, rest, nil
	}
	return false, nil, fmt.Errorf("suite: unknown suite %q of family lq (allowed: %s, or omit it for the paper's suite)", suite, PracticalSuiteName)
}

// Resize implements engine.Resizer (the main sweep's K and seeds).
func (Family) Resize(block []byte, episodes int, seeds []uint64) ([]byte, error) {
	suite, rest, err := splitSuite(block)
	if err != nil {
		return nil, err
	}
	if suite {
		b, err := PracticalSuite{}.Resize(rest, episodes, seeds)
		return engine.WithSuite(PracticalSuiteName, b), err
	}
	cfg, err := ParseConfig(block)
	if err != nil {
		return nil, err
	}
	if episodes != 0 {
		cfg.Episodes = episodes
	}
	if seeds != nil {
		cfg.Seeds = seeds
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return yaml.Marshal(cfg)
}

// PlanConfig plans an already parsed and validated configuration (flags applied): the main
// sweep, or the extended sweep when extended is set.
func PlanConfig(cfg *Config, extended bool) (*engine.Planned, error) {
	p, err := newPlan(cfg, extended)
	if err != nil {
		return nil, err
	}
	return engine.NewPlanned(FamilyName, p)
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
	sys, err := cfg.BuildSystem()
	if err != nil {
		return nil, err
	}
	p := &plan{cfg: cfg, extended: extended, sys: sys, K: cfg.Episodes, seeds: cfg.Seeds, reportAt: cfg.ReportAt}
	sysSHA := ""
	if cfg.System != "" && cfg.System != "lq-e1" {
		in, err := rundir.HashFile("system", cfg.System)
		if err != nil {
			return nil, fmt.Errorf("system: %w", err)
		}
		p.sysIn = []rundir.Input{in}
		sysSHA = in.SHA256
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
		spec, err := json.Marshal(unitSpec{System: sys.Name, SystemSHA: sysSHA, Label: s.Label, Agent: ac})
		if err != nil {
			return nil, fmt.Errorf("curve %s: %w", s.Label, err)
		}
		for _, seed := range p.seeds {
			p.units = append(p.units, engine.Unit{Cell: s.Label, Spec: spec, Seed: seed, Cost: int64(p.K)})
		}
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
// agent's randomness is the unit's root stream (rng.NewSeed(seed), as before the engine).
func (p *plan) Run(ctx context.Context, i int, st engine.Streams, rec *engine.Recorder) error {
	sp := p.specs[i/len(p.seeds)]
	ac := p.cfg.agentConfig(sp.Epsilon, p.K, sp.Neighbouring)
	var reported int64
	r, err := agents.Run(ctx, p.sys, ac, st.Root(), func(k int) {
		if k%256 == 0 {
			rec.Advance(int64(k) - reported)
			reported = int64(k)
		}
	})
	if err != nil {
		return err // the engine names the unit (cell and seed)
	}
	rec.Advance(int64(p.K) - reported)
	sr := SeedRun{Seed: st.Seed, Diag: r.Diag, Cum: make([]float64, p.K)}
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
	res.Inputs = rundir.MergeInputs(rundir.MergeInputs(rundir.MergeInputs(nil, p.cfg.Inputs), extra), p.sysIn)
	n := len(p.seeds)
	for ci, sp := range p.specs {
		cr := CurveResult{Spec: sp, Constants: p.consts[ci], Runs: make([]SeedRun, n)}
		for si := range p.seeds {
			if err := c.Load(ci*n+si, &cr.Runs[si]); err != nil {
				return nil, err
			}
		}
		res.Curves = append(res.Curves, cr)
	}
	return res, nil
}

// Collect implements engine.Plan: curves, figure, summary and the manifest last (Write).
func (p *plan) Collect(c *engine.Collection) (string, error) {
	res, err := p.result(c, c.Inputs)
	if err != nil {
		return "", err
	}
	res.Output = c.Options
	summary, err := res.Write(c.Dir, "", c.Command)
	if err != nil {
		return "", fmt.Errorf("writing %s: %w", c.Dir, err)
	}
	return fmt.Sprintf("%s\nWrote %s (manifest.json, summary.md, regret figure, curves/*.csv)", summary, filepath.Clean(c.Dir)), nil
}
