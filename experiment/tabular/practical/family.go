package practical

import (
	"context"
	"fmt"

	"go.yaml.in/yaml/v3"

	agents "github.com/dprl/dprl/agents/tabular"
	"github.com/dprl/dprl/experiment/engine"
	"github.com/dprl/dprl/experiment/rundir"
	"github.com/dprl/dprl/experiment/tabular/tabenv"
	model "github.com/dprl/dprl/model/tabular"
	"github.com/dprl/dprl/privacy/ledger"
)

// FamilyName is the family the suite belongs to: tabular MDPs (a family is a model class).
const FamilyName = "tabular"

// SuiteName is the suite's name in a tabular configuration block (`suite: practical`).
const SuiteName = "practical"

// Suite is the practical tabular suite of family tabular (dprl's practical private agents
// against UCBVI and the papers' DP-UCBVI on RiverSwim, Garnets and MDP files): its
// configuration block is Config, its units are (curve, seed) runs. The tabular family
// (package experiment/tabular) dispatches to it.
type Suite struct {
	// Envs are the family's environments (nil: tabenv.New()); the family passes its own, so
	// an environment registered there runs in this suite too.
	Envs *tabenv.Registry
}

// envs returns the suite's environment registry.
func (s Suite) envs() *tabenv.Registry {
	if s.Envs != nil {
		return s.Envs
	}
	return tabenv.New()
}

// Listing returns the suite's part of the tabular family's `dprl list`: dprl's practical
// agents and where they run.
func (Suite) Listing() engine.Listing {
	var l engine.Listing
	for _, a := range agents.PracticalAgents() {
		l.Agents = append(l.Agents, engine.Entry{Name: a.Name, Desc: a.Description})
	}
	l.Notes = []string{"dprl's practical agents run on every environment above: dprl run --agent practical-jdp …, or suite: practical in a",
		"  configuration block (the reproduction's grid with garnet.env_seeds, or curves: [{env, params, file, agent, epsilon}])."}
	return l
}

// repros are the suite's reproductions: practical-tabular takes --long.
var repros = engine.Repros{"practical-tabular": {
	Describe: "dprl's own practical private tabular agents (practical-jdp/ldp/psrl-jdp) vs UCBVI and the papers' DP-UCBVI, RiverSwim + Garnets, ε grid (--long: LDP at K = 10⁶)",
	Options:  []engine.Option{engine.LongOption("run the LDP curves for ldp_long_episodes (10⁶) instead of ldp_episodes (long: true)")}},
	"benchmarks": {
		Describe: "practical-jdp (ε = 1) beside its non-private twin, UCBVI and the uniform policy on FrozenLake 4×4/8×8, CliffWalking and Taxi at their time limits, K = 10⁶, 3 seeds (the table of docs/benchmarks.md)"}}

// Describe describes the suite's reproductions (engine.Describer of the tabular family).
func (Suite) Describe(repro string) string { return repros.Describe(repro) }

// Options returns the options of the suite's reproductions (engine.Optioner of the tabular
// family): practical-tabular --long.
func (Suite) Options(repro string) []engine.Option { return repros.Options(repro) }

// ApplyOptions applies --long to a suite block (long: true or false).
func (Suite) ApplyOptions(repro string, block []byte, set map[string]string) ([]byte, error) {
	return engine.ApplyBool(block, set, "long", func(block []byte, long bool) ([]byte, error) {
		cfg, err := ParseConfig(block)
		if err != nil {
			return nil, err
		}
		cfg.Long = long
		return yaml.Marshal(cfg)
	})
}

// Plan plans a suite block: a Config (strict decode, validated).
func (s Suite) Plan(block []byte, source string) (engine.Plan, error) {
	envs := s.envs()
	return engine.PlanBlock(block, func(b []byte) (*Config, error) { return parseConfig(b, envs) }, newPlan)
}

// Reproductions returns the suite's embedded reproductions: `practical-tabular` is
// configs/practical-tabular.yaml.
func (Suite) Reproductions() map[string][]byte {
	return map[string][]byte{"practical-tabular": defaultYAML, "benchmarks": benchmarksYAML}
}

// Resize resizes a suite block: every K (JDP, LDP, Garnet; as `--episodes`) and the
// RiverSwim seeds (as `--seeds`).
func (Suite) Resize(block []byte, episodes int, seeds []uint64) ([]byte, error) {
	return engine.ResizeConfig(block, ParseConfig, episodes, seeds, func(cfg *Config) (*[]uint64, []*int) {
		return &cfg.Seeds, []*int{&cfg.Episodes, &cfg.LDPEpisodes, &cfg.Garnet.Episodes}
	})
}

// plan is the experiment planned into (curve, seed) units, curve-major; a curve's seeds are
// the RiverSwim seeds or, for a Garnet curve, garnet.seeds.
type plan struct {
	cfg    *Config
	curves []*Curve
	envs   []*model.MDP
	index  [][2]int // unit i -> (curve, seed index)
	units  []engine.Unit
}

// unitSpec is the resolved configuration of one cell (its digest, with the seed, is the
// unit ID).
type unitSpec struct {
	Group    string        `json:"group"`
	Label    string        `json:"label"`
	Agent    string        `json:"agent"`
	Epsilon  float64       `json:"epsilon"`
	Episodes int           `json:"episodes"`
	Horizon  int           `json:"horizon"`
	Delta    float64       `json:"delta"`
	EnvSeed  uint64        `json:"env_seed,omitempty"`
	Garnet   *GarnetConfig `json:"garnet,omitempty"`
	// EnvSHA is the SHA-256 of the MDP file of env file.
	EnvSHA string `json:"env_sha256,omitempty"`
	// Noise is "secure" for the Secure source (omitted: seeded, as every reproduction).
	Noise string `json:"noise,omitempty"`
	// Params are the environment's other parameters (those horizon, env_seed and garnet do
	// not record: none for riverswim, garnet and the tables, so their unit IDs are those of
	// the runs before the one registry).
	Params map[string]float64 `json:"env_params,omitempty"`
}

// unitResult is what one (curve, seed) unit records: the seed's run and the accountant's
// statement (the curve reports its first seed's).
type unitResult struct {
	Run       SeedRun
	Privacy   string
	Private   bool
	Guarantee ledger.Report
}

func newPlan(cfg *Config) (*plan, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	curves, err := cfg.curves()
	if err != nil {
		return nil, err
	}
	p := &plan{cfg: cfg, curves: curves}
	for ci, cv := range p.curves {
		m, err := cfg.env(cv)
		if err != nil {
			return nil, fmt.Errorf("curve %s: %w", cv.Label, err)
		}
		p.envs = append(p.envs, m)
		if err := p.checkEnvs(); err != nil {
			return nil, err // before more environments are built
		}
		us := unitSpec{Group: cv.Group, Label: cv.Label, Agent: cv.Agent, Epsilon: cv.Epsilon, Episodes: cv.Episodes,
			Horizon: cfg.Horizon, Delta: cfg.Delta, EnvSeed: cv.EnvSeed}
		if cv.File != "" {
			in, err := rundir.HashFile("env", cv.File)
			if err != nil {
				return nil, fmt.Errorf("curve %s: file: %w", cv.Label, err)
			}
			us.Horizon, us.EnvSHA = m.H, in.SHA256
			p.cfg.Inputs = rundir.MergeInputs(p.cfg.Inputs, []rundir.Input{in})
		}
		if cfg.Noise == "secure" {
			us.Noise = cfg.Noise
		}
		us.Params = tabenv.Params(cfg.registry(), cv.Env)
		if h, ok := us.Params["horizon"]; ok {
			us.Horizon = int(h)
		}
		delete(us.Params, "horizon")
		delete(us.Params, "env_seed")
		if cv.Env.Name == "garnet" {
			g := cfg.Garnet
			g.Seeds, g.EnvSeeds = nil, nil
			g.States, g.Actions, g.Branching, g.RewardDensity = cv.Env.States, cv.Env.Actions, cv.Env.Branching, cv.Env.Density
			us.Garnet = &g
			us.Params = nil
		}
		units, err := engine.CellUnits(cv.Group+"/"+cv.Label, us, cv.seeds, cv.Episodes)
		if err != nil {
			return nil, fmt.Errorf("curve %s: %w", cv.Label, err)
		}
		p.units = append(p.units, units...)
		for si := range units {
			p.index = append(p.index, [2]int{ci, si})
		}
	}
	return p, nil
}

// Name implements engine.Plan: the configuration's name.
func (p *plan) Name() string { return p.cfg.Name }

// Units implements engine.Plan.
func (p *plan) Units() []engine.Unit { return p.units }

// Run implements engine.Plan: one curve for one seed (runSeed; all randomness from the
// unit's engine.Streams, the paths used before the engine).
func (p *plan) Run(ctx context.Context, i int, st engine.Streams, rec *engine.Recorder) error {
	ci := p.index[i][0]
	cv := p.curves[ci]
	// The environment is shared read-only by the units of a curve.
	r, ln, err := runSeed(ctx, p.envs[ci], cv, p.cfg.Delta, p.cfg.Noise == "secure", st, rec.Advance)
	if err != nil {
		return err // the engine names the unit (cell and seed)
	}
	return rec.Record(unitResult{Run: r, Privacy: ln.privacy, Private: ln.private, Guarantee: ln.report})
}

// result assembles the Result from the units' results (every unit is required).
func (p *plan) result(c *engine.Collection) (*Result, error) {
	res := &Result{Config: p.cfg, Workers: c.Workers, Seconds: c.Seconds, Uniform: map[string]float64{}, shapes: map[string]shape{}}
	for ci, tmpl := range p.curves {
		cv := *tmpl
		if _, ok := res.Uniform[cv.Group]; !ok {
			m := p.envs[ci]
			res.Uniform[cv.Group], res.shapes[cv.Group] = uniformRegret(m), shape{m.S, m.A, m.H, m.PublicSupport}
		}
		res.Curves = append(res.Curves, &cv)
		cv.Runs = make([]SeedRun, len(tmpl.seeds))
	}
	for i, ix := range p.index {
		var ur unitResult
		if err := c.Load(i, &ur); err != nil {
			return nil, err
		}
		cv := res.Curves[ix[0]]
		cv.Runs[ix[1]] = ur.Run
		if ix[1] == 0 {
			cv.Privacy, cv.PrivateAtNominal, cv.Guarantee = ur.Privacy, ur.Private, ur.Guarantee
		}
	}
	return res, nil
}

// Collect implements engine.Plan: curves, figures, summary and the manifest last (Write, with
// the collection's output options, so the engine writes meta.json, config.resolved.yaml and
// regret_long.csv just before the manifest, as for every family).
func (p *plan) Collect(c *engine.Collection) (string, error) {
	return engine.CollectWritten(c, p.collected, (*Result).Write, func(man *engine.RunManifest) string {
		return fmt.Sprintf("manifest.json, summary.md, %d figures, %d CSV files", len(man.Figures), len(man.Curves))
	})
}

// collected is the result of a collection (result) with the configuration's inputs and extra.
func (p *plan) collected(c *engine.Collection, extra []rundir.Input) (*Result, error) {
	res, err := p.result(c)
	if err != nil {
		return nil, err
	}
	res.Inputs = rundir.MergeAll(p.cfg.Inputs, extra)
	return res, nil
}

// SetOutput implements engine.Outputter.
func (r *Result) SetOutput(o rundir.Options) { r.Output = o }
