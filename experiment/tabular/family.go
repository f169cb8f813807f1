package tabular

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	agents "github.com/dprl/dprl/agents/tabular"
	"github.com/dprl/dprl/experiment/calibration"
	"github.com/dprl/dprl/experiment/engine"
	"github.com/dprl/dprl/experiment/rundir"
	"github.com/dprl/dprl/experiment/tabular/practical"
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
type Family struct {
	// Envs are the family's environments (nil: Envs()); tests register fake ones here.
	Envs *TabularEnvs
}

// envs returns the family's environment registry.
func (f Family) envs() *TabularEnvs {
	if f.Envs != nil {
		return f.Envs
	}
	return Envs()
}

// Name implements engine.Family.
func (Family) Name() string { return FamilyName }

// Catalogue implements engine.Family: the environments (with the parameters PlanSpec takes),
// the papers' agents and dprl's practical ones, and the privacy settings.
func (f Family) Catalogue(w io.Writer) {
	l := engine.Listing{Family: FamilyName, Title: "tabular MDPs (Qiao & Wang 2023; Chowdhury & Zhou 2021; dprl's practical agents)"}
	l.Envs = engine.EnvEntries(f.SpecEnvs())
	for _, a := range agents.Agents() {
		l.Agents = append(l.Agents, engine.Entry{Name: a.Name, Desc: a.Description})
	}
	l.Privacy = []engine.Entry{
		{Name: "identity", Desc: "privatizer: non-private, exact counts (E = 0)"},
		{Name: "central", Desc: "privatizer: ε-JDP, Laplace binary-mechanism counters on N_h(s,a), N_h(s,a,s'), R_h(s,a) (Qiao & Wang §5.1)"},
		{Name: "local", Desc: "privatizer: ε-LDP, Laplace noise on each user's own indicators, on the user's side (Qiao & Wang §5.2)"},
		{Name: "exact", Desc: "calibration (default): ε-private under replace-one neighbours (JDP b = 6HL/ε, LDP 6H/ε); strict is its old name"},
		{Name: "paper", Desc: "calibration: the paper's scales (3HL/ε, 3H/ε): ε under add/remove neighbours, 2ε under replace-one"},
		{Name: "unit", Desc: "calibration: scale 1/ε, reproduction only: NOT ε-private; outputs state the effective ε"},
	}
	l.Notes = []string{"Bonus presets (bonus.preset, dprl run --preset): theory (the paper's constants, eq. (31)), practical (tabular spec §2.6)"}
	l.Add(practical.Suite{}.Listing())
	l.Write(w)
}

// Describe implements engine.Describer.
func (Family) Describe(repro string) string {
	if repro == "qiao-fig1" {
		return "Qiao & Wang (2023) Figure 1: RiverSwim, UCBVI vs DP-UCBVI (JDP, LDP) at several ε"
	}
	return practical.Suite{}.Describe(repro)
}

// Options implements engine.Optioner: qiao-fig1 --calibration and --preset, practical-tabular
// --long.
func (Family) Options(repro string) []engine.Option {
	if repro == "qiao-fig1" {
		return []engine.Option{
			{Name: "calibration", Default: calibration.Paper, Usage: "calibration of the faithful curves: paper or exact (strict: old name of exact)"},
			{Name: "preset", Usage: "override the bonus preset: practical (default) or theory"},
		}
	}
	return practical.Suite{}.Options(repro)
}

// ApplyOptions implements engine.Optioner.
func (Family) ApplyOptions(repro string, block []byte, set map[string]string) ([]byte, error) {
	return engine.EditBlock(practicalSuite, block, func(rest []byte) ([]byte, error) {
		return practical.Suite{}.ApplyOptions(repro, rest, set)
	}, ParseConfig, func(cfg *Config) error {
		if v, ok := set["calibration"]; ok {
			if err := cfg.faithful(v); err != nil {
				return fmt.Errorf("--%w", err)
			}
		}
		if v, ok := set["preset"]; ok {
			if v != "practical" && v != "theory" {
				return fmt.Errorf("--preset: must be practical or theory, got %q", v)
			}
			cfg.Bonus.Preset = v
		}
		return nil
	})
}

// Plan implements engine.Family: block is a Config (strict decode, validated; its env.name
// resolved through f's environments).
func (f Family) Plan(block []byte, source string) (engine.Plan, error) {
	return practicalSuite.Plan(block, func(rest []byte) (engine.Plan, error) {
		return practical.Suite{Envs: f.envs()}.Plan(rest, source)
	}, func(block []byte) (engine.Plan, error) {
		cfg, err := parseConfig(block, f.envs())
		if err != nil {
			return nil, err
		}
		cfg.Env.Path = engine.RelativeTo(source, cfg.Env.Path)
		return newPlan(cfg)
	})
}

// Reproductions implements engine.Reproducer.
func (Family) Reproductions() map[string][]byte {
	return practicalSuite.AddReproductions(map[string][]byte{"qiao-fig1": append([]byte(nil), qiaoFig1YAML...)}, practical.Suite{}.Reproductions())
}

// practicalSuite is the practical suite's schema of a tabular block (`suite: practical`; a
// block without the key is the papers' suite, Config).
var practicalSuite = engine.NamedSuite{Family: FamilyName, Name: practical.SuiteName, Default: "the papers' suite"}

// PlanConfig plans an already parsed and validated configuration (flags applied).
func PlanConfig(cfg *Config) (*engine.Planned, error) {
	return engine.PlanWith(FamilyName, newPlan, cfg)
}

// plan is a tabular experiment planned into (curve, seed) units, curve-major.
type plan struct {
	cfg    *Config
	m      *model.MDP
	envIn  []rundir.Input
	acs    []agents.Config
	curves []CurveResult // spec, privacy report and bonus of each curve (Runs empty)
	units  []engine.Unit
	mem    engine.MemoryEstimate
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
	p.mem = p.memoryEstimate()
	if err := engine.CheckPlanning(p.mem.Unit[:1]); err != nil {
		return nil, err // before any agent is built (one per curve, in turn, to validate it)
	}
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
		units, err := engine.CellUnits(cv.Label, unitSpec{Env: cfg.Env, EnvSHA: envSHA, Episodes: cfg.Episodes, Noise: cfg.Noise, Label: cv.Label, Agent: ac}, cfg.Seeds, cfg.Episodes)
		if err != nil {
			return nil, fmt.Errorf("curves[%d]: %w", ci, err)
		}
		p.units = append(p.units, units...)
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
	return engine.Collect(c, p.result, func(res *Result) (string, error) {
		man, err := res.Write(c.Dir, c.Command, nil)
		if err != nil {
			return "", err
		}
		return collectText(c, res, man), nil
	})
}

// collectText is what Collect prints: the qiao-fig1 summary and the files written, or one line
// per curve.
func collectText(c *engine.Collection, res *Result, man *engine.RunManifest) string {
	var b strings.Builder
	if res.qiao != nil {
		b.WriteString(res.qiao.text)
		fmt.Fprintf(&b, "\nWrote %s (manifest.json, summary.md, %s, curves/<env>/*.csv)", c.Dir, strings.Join(man.Figures, ", "))
	} else {
		for i, cs := range man.Curves {
			fmt.Fprintf(&b, "%-28s R(K) = %10.1f  %s  %s\n", cs.Label, float64(cs.FinalMean), engine.FinalCI(cs), res.Curves[i].Privacy)
		}
		fmt.Fprintf(&b, "Wrote %s", filepath.Clean(c.Dir))
	}
	return b.String()
}

// Resize implements engine.Resizer.
func (Family) Resize(block []byte, episodes int, seeds []uint64) ([]byte, error) {
	return engine.EditBlock(practicalSuite, block, func(rest []byte) ([]byte, error) {
		return practical.Suite{}.Resize(rest, episodes, seeds)
	}, ParseConfig, func(cfg *Config) error {
		cfg.Resize(episodes, seeds)
		return nil
	})
}

// Session implements engine.Servable: dprl's practical tabular agents and the baselines of
// their suite are served (the practical suite builds them).
func (f Family) Session(s *engine.RunSpec, st engine.Streams) (engine.Served, error) {
	return practical.Suite{Envs: f.envs()}.Session(s, st)
}
