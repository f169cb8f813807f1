package experiment

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"

	agents "github.com/dprl/dprl/agents/tabular"
	"github.com/dprl/dprl/experiment/engine"
	"github.com/dprl/dprl/experiment/practical"
	"github.com/dprl/dprl/experiment/rundir"
	model "github.com/dprl/dprl/model/tabular"
)

// FamilyName is the tabular family's name in configurations (`family: tabular`).
const FamilyName = practical.FamilyName

// Family is the tabular family plugged into the engine: every tabular agent — the papers'
// (Qiao & Wang 2023; Chowdhury & Zhou 2021) and dprl's practical ones — on every tabular
// environment (RiverSwim, Garnets, MDP files). Its configuration block is Config (the papers'
// suite, e.g. qiao-fig1) or, with `suite: practical`, practical.Config (dprl's practical
// suite, e.g. practical-tabular); a RunSpec goes to the practical suite when it names a
// practical agent.
type Family struct{}

// Name implements engine.Family.
func (Family) Name() string { return FamilyName }

// Catalogue implements engine.Family: the environments, agents and privacy settings.
func (Family) Catalogue(w io.Writer) {
	fmt.Fprintln(w, "Environments:")
	fmt.Fprintln(w, "  riverswim   RiverSwim (Osband et al. 2013 episodic variant, as in Chowdhury & Zhou 2021 and Qiao & Wang 2023): S=6, A=2, default H=20")
	fmt.Fprintln(w, "  garnet      seeded random Garnet-style MDP (--states, --actions, --branching, --reward-density, --env-seed)")
	fmt.Fprintln(w, "  file        an MDP loaded from a JSON or YAML file (--env-file)")
	fmt.Fprintln(w, "\nAgents:")
	for _, a := range agents.Agents() {
		fmt.Fprintf(w, "  %-18s %s\n", a.Name, a.Description)
	}
	fmt.Fprintln(w, "\nPrivatizers:")
	fmt.Fprintln(w, "  identity    non-private: exact counts (E = 0)")
	fmt.Fprintln(w, "  central     ε-JDP: Laplace binary-mechanism counters on N_h(s,a), N_h(s,a,s'), R_h(s,a) (Qiao & Wang §5.1)")
	fmt.Fprintln(w, "  local       ε-LDP: Laplace noise on each user's own indicators, on the user's side (Qiao & Wang §5.2)")
	fmt.Fprintln(w, "\nCalibrations (--calibration):")
	fmt.Fprintln(w, "  strict      ε-private under the paper's replace-one definition (JDP b = 6HL/ε, LDP 6H/ε); default")
	fmt.Fprintln(w, "  paper       the paper's scales (3HL/ε, 3H/ε): ε under add/remove neighbours, 2ε under replace-one")
	fmt.Fprintln(w, "  unit        scale 1/ε, reproduction only: NOT ε-private; outputs state the effective ε")
	fmt.Fprintln(w, "\nBonus presets (--preset): theory (the paper's constants, eq. (31)), practical (tabular spec §2.6)")
	fmt.Fprintln(w, "\ndprl's practical agents (suite: practical in a configuration; any environment above):")
	for _, a := range agents.PracticalAgents() {
		fmt.Fprintf(w, "  %-22s %s\n", a.Name, a.Description)
	}
}

// Plan implements engine.Family: block is a Config (strict decode, validated).
func (Family) Plan(block []byte, source string) (engine.Plan, error) {
	suite, rest, err := splitSuite(block)
	if err != nil {
		return nil, err
	}
	if suite {
		return practical.Suite{}.Plan(rest, source)
	}
	cfg, err := ParseConfig(block)
	if err != nil {
		return nil, err
	}
	cfg.Env.Path = engine.RelativeTo(source, cfg.Env.Path)
	return newPlan(cfg)
}

// Reproductions implements engine.Reproducer.
func (Family) Reproductions() map[string][]byte {
	out := map[string][]byte{"qiao-fig1": append([]byte(nil), qiaoFig1YAML...)}
	for name, block := range (practical.Suite{}).Reproductions() {
		out[name] = engine.WithSuite(practical.SuiteName, block)
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
	case suite == practical.SuiteName:
		return true, rest, nil
	}
	return false, nil, fmt.Errorf("suite: unknown suite %q of family tabular (allowed: %s, or omit it for the papers' suite)", suite, practical.SuiteName)
}

// PlanConfig plans an already parsed and validated configuration (flags applied).
func PlanConfig(cfg *Config) (*engine.Planned, error) {
	p, err := newPlan(cfg)
	if err != nil {
		return nil, err
	}
	return engine.NewPlanned(FamilyName, p)
}

// plan is a tabular experiment planned into (curve, seed) units, curve-major.
type plan struct {
	cfg    *Config
	m      *model.MDP
	envIn  []rundir.Input
	acs    []agents.Config
	curves []CurveResult // spec, privacy report and bonus of each curve (Runs empty)
	units  []engine.Unit
}

// unitSpec is the resolved configuration of one cell: everything that determines a unit's
// result apart from its seed (its digest is the unit ID).
type unitSpec struct {
	Env      EnvConfig     `json:"env"`
	EnvSHA   string        `json:"env_sha256,omitempty"`
	Episodes int           `json:"episodes"`
	Noise    string        `json:"noise"`
	Label    string        `json:"label"`
	Agent    agents.Config `json:"agent"`
}

func newPlan(cfg *Config) (*plan, error) {
	m, err := cfg.BuildEnv()
	if err != nil {
		return nil, err
	}
	p := &plan{cfg: cfg, m: m}
	envSHA := ""
	if cfg.Env.Name == "file" {
		in, err := rundir.HashFile("env", cfg.Env.Path)
		if err != nil {
			return nil, fmt.Errorf("env.path: %w", err)
		}
		p.envIn = []rundir.Input{in}
		envSHA = in.SHA256
	}
	for ci, cv := range cfg.Curves {
		ac, err := cfg.agentConfig(cv)
		if err != nil {
			return nil, fmt.Errorf("curves[%d]: %w", ci, err)
		}
		// Build once to validate and record the privacy report and resolved bonus.
		ag, err := newAgent(m, cfg, ac, engine.Streams{Seed: cfg.Seeds[0]})
		if err != nil {
			return nil, fmt.Errorf("curves[%d] (%s): %w", ci, cv.Label, err)
		}
		p.acs = append(p.acs, ac)
		p.curves = append(p.curves, CurveResult{Spec: cv, Privacy: ag.Privacy, Bonus: ag.Bonus})
		spec, err := json.Marshal(unitSpec{Env: cfg.Env, EnvSHA: envSHA, Episodes: cfg.Episodes, Noise: cfg.Noise, Label: cv.Label, Agent: ac})
		if err != nil {
			return nil, fmt.Errorf("curves[%d]: %w", ci, err)
		}
		for _, s := range cfg.Seeds {
			p.units = append(p.units, engine.Unit{Cell: cv.Label, Spec: spec, Seed: s, Cost: int64(cfg.Episodes)})
		}
	}
	return p, nil
}

// Name implements engine.Plan.
func (p *plan) Name() string { return p.cfg.Name }

// Units implements engine.Plan.
func (p *plan) Units() []engine.Unit { return p.units }

// Run implements engine.Plan: unit i is curve i / len(seeds), seed i mod len(seeds).
func (p *plan) Run(ctx context.Context, i int, st engine.Streams, rec *engine.Recorder) error {
	ci := i / len(p.cfg.Seeds)
	run, err := RunSeed(ctx, p.m, p.cfg, p.acs[ci], st, rec.Advance)
	if err != nil {
		return err
	}
	return rec.Record(run)
}

// result assembles the in-memory Result from the units' results. A partial collection keeps
// the seeds present; a curve without any seed is an error.
func (p *plan) result(c *engine.Collection, extra []rundir.Input) (*Result, error) {
	cfg := p.cfg
	res := &Result{Config: cfg, Env: p.m.Name, VStar: model.NewRegret(p.m).OptimalValue(), Workers: c.Workers,
		Horizon: p.m.H, Seconds: c.Seconds}
	res.NoLearning = noLearning(p.m, res.VStar)
	res.Inputs = append(append(append(res.Inputs, cfg.Inputs...), extra...), p.envIn...)
	n := len(cfg.Seeds)
	for ci := range p.curves {
		cr := p.curves[ci]
		cr.Runs = make([]SeedRun, 0, n)
		for si := 0; si < n; si++ {
			i := ci*n + si
			if c.Partial && !c.Has(i) {
				continue
			}
			var run SeedRun
			if err := c.Load(i, &run); err != nil {
				return nil, err
			}
			cr.Runs = append(cr.Runs, run)
		}
		if len(cr.Runs) == 0 {
			return nil, fmt.Errorf("curve %q: no seed completed", cr.Spec.Label)
		}
		res.Curves = append(res.Curves, cr)
	}
	return res, nil
}

// Collect implements engine.Plan: the curves' CSVs, figures, the summary of the configuration
// (qiao-fig1) and the manifest last. The text is the summary (or one line per curve).
func (p *plan) Collect(c *engine.Collection) (string, error) {
	res, err := p.result(c, c.Inputs)
	if err != nil {
		return "", err
	}
	res.Output = c.Options
	man, err := res.Write(c.Dir, c.Command, nil)
	if err != nil {
		return "", fmt.Errorf("writing %s: %w", c.Dir, err)
	}
	var b strings.Builder
	if res.qiao != nil {
		b.WriteString(res.qiao.text)
		fmt.Fprintf(&b, "\nWrote %s (manifest.json, summary.md, %s, curves/*.csv)", c.Dir, strings.Join(man.Figures, ", "))
	} else {
		for _, cs := range man.Curves {
			fmt.Fprintf(&b, "%-28s R(K) = %10.1f  %s  %s\n", cs.Spec.Label, float64(cs.FinalMean), cs.CI(), cs.Privacy)
		}
		fmt.Fprintf(&b, "Wrote %s", filepath.Clean(c.Dir))
	}
	return b.String(), nil
}

// Resize implements engine.Resizer.
func (Family) Resize(block []byte, episodes int, seeds []uint64) ([]byte, error) {
	suite, rest, err := splitSuite(block)
	if err != nil {
		return nil, err
	}
	if suite {
		b, err := practical.Suite{}.Resize(rest, episodes, seeds)
		return engine.WithSuite(practical.SuiteName, b), err
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
