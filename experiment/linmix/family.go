package linmix

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	agents "github.com/dprl/dprl/agents/linmix"
	"github.com/dprl/dprl/agents/protocol"
	"github.com/dprl/dprl/experiment/engine"
	"github.com/dprl/dprl/experiment/rundir"
	"github.com/dprl/dprl/privacy/ledger"
)

// FamilyName is the linear mixture family's name in configurations (`family: linmix`).
const FamilyName = "linmix"

// Family is the linear mixture family (UCRL-VTR and its private variants, UCRL-VTR+,
// LinOpt-VI/PO, and dprl's practical-vtr) plugged into the engine (issue 11): its
// configuration block is Config, its units are (curve, seed) runs.
type Family struct{}

// Name implements engine.Family.
func (Family) Name() string { return FamilyName }

// Catalogue implements engine.Family: the environments (with the parameters PlanSpec takes),
// the algorithm/mode agents and the calibrations.
func (f Family) Catalogue(w io.Writer) {
	modes := map[agents.Mode]string{agents.None: ", non-private", agents.JDP: ", (ε,δ)-JDP (central noise)", agents.LDP: ", (ε,δ)-LDP (user-side noise)"}
	l := engine.Listing{Family: FamilyName, Title: "linear mixture MDPs (Luyo et al. 2021 Alg. 1, 3; Zhou 2022; dprl's practical agent)"}
	l.Envs = engine.EnvEntries(f.SpecEnvs())
	for _, a := range agentTable {
		for _, m := range a.Modes {
			d := a.Desc + modes[m]
			if m != agents.None && len(a.Calibrations) > 0 {
				d += "; calibrations " + strings.Join(a.Calibrations, ", ")
			}
			l.Agents = append(l.Agents, engine.Entry{Name: a.Name + "/" + m.String(), Desc: fmt.Sprintf("%s — %s; theory exponent %s", d, a.Work, a.Theory[m])})
		}
	}
	l.Privacy = []engine.Entry{
		{Name: "paper", Desc: "calibration (default; curves[].calibration): Luyo et al. Cor. 5/6"},
		{Name: "laplace", Desc: "calibration, ucrl-vtr: pure ε-DP, constants DERIVED in the spec §3.5"},
		{Name: "zcdp", Desc: "calibration, ucrl-vtr: spec P7, DERIVED"},
	}
	l.Notes = []string{"Calibrations (curves[].calibration, privacy.calibration): " + CalibrationNames + "; " + PracticalAlgorithm + " calibrates through its own μ-GDP accountant.",
		"In a configuration block an agent is a curve {algorithm, mode, epsilons} (curves[])."}
	l.Write(w)
}

// repros are the family's reproductions: practical-linear-mixture takes --long (the embedded
// practical-linear-mixture-long configuration).
var repros = engine.Repros{
	"linear-mixture": {Describe: "linear mixture MDPs: UCRL-VTR vs private UCRL-VTR (JDP, LDP, Laplace), UCRL-VTR+, LinOpt-VI/PO on TwoStateHard and HardToLearn"},
	"practical-linear-mixture": {Describe: "linear mixtures: dprl's practical private UCRL-VTR (JDP/LDP, Gaussian factorisation counters, exact GDP) vs the papers' agents and baselines (--long: the K = 2·10⁵ LDP goal)",
		Options: []engine.Option{{Name: "long", Bool: true, Default: "false", EmbeddedOnly: true,
			Usage: "the K = 2·10⁵ LDP goal run (the embedded practical-linear-mixture-long configuration)"}}},
	"practical-linear-mixture-long": {Describe: "practical-linear-mixture --long: the K = 2·10⁵ LDP goal run"},
}

// Describe implements engine.Describer.
func (Family) Describe(repro string) string { return repros.Describe(repro) }

// Options implements engine.Optioner: practical-linear-mixture --long.
func (Family) Options(repro string) []engine.Option { return repros.Options(repro) }

// ApplyOptions implements engine.Optioner: practical-linear-mixture --long is the embedded
// practical-linear-mixture-long configuration.
func (Family) ApplyOptions(repro string, block []byte, set map[string]string) ([]byte, error) {
	if repro != "practical-linear-mixture" {
		return block, nil
	}
	return engine.ApplyBool(block, set, "long", func(block []byte, long bool) ([]byte, error) {
		if !long {
			return block, nil
		}
		return append([]byte(nil), practicalLongConfig...), nil
	})
}

// Plan implements engine.Family: block is a Config (strict decode, validated).
func (Family) Plan(block []byte, source string) (engine.Plan, error) {
	return engine.PlanBlock(block, ParseConfig, newPlan)
}

// Reproductions implements engine.Reproducer: `linear-mixture` is the embedded
// configs/linear-mixture.yaml, `practical-linear-mixture` and `practical-linear-mixture-long`
// the practical reproduction's configurations.
func (Family) Reproductions() map[string][]byte {
	return map[string][]byte{"linear-mixture": DefaultConfigYAML(),
		"practical-linear-mixture":      append([]byte(nil), practicalConfig...),
		"practical-linear-mixture-long": append([]byte(nil), practicalLongConfig...)}
}

// Resize implements engine.Resizer (K and seeds).
func (Family) Resize(block []byte, episodes int, seeds []uint64) ([]byte, error) {
	return engine.ResizeConfig(block, ParseConfig, episodes, seeds, func(cfg *Config) (*[]uint64, []*int) {
		return &cfg.Seeds, []*int{&cfg.Episodes}
	})
}

// plan is a linear mixture experiment planned into (curve, seed) units, curve-major.
type plan struct {
	cfg         *Config
	curves      []*Curve
	checkpoints []int
	envIn       []rundir.Input
	units       []engine.Unit
	fileDims    map[int]envDims // dimensions of the file environments (memory estimate)
}

// unitSpec is the resolved configuration of one cell (its digest, with the seed, is the unit
// ID): the environment (with the digest of its file), K, the checkpoints and the agent's full
// configuration.
type unitSpec struct {
	Env         EnvConfig               `json:"env"`
	EnvSHA      string                  `json:"env_sha256,omitempty"`
	Episodes    int                     `json:"episodes"`
	Checkpoints []int                   `json:"checkpoints"`
	Label       string                  `json:"label"`
	Agent       agents.Config           `json:"agent"`
	Practical   *agents.PracticalConfig `json:"practical,omitempty"`
}

// unitResult is what one (curve, seed) unit records: the cumulative regret at the
// checkpoints, the diagnostics, and the public constants (and, for practical-vtr, the
// accountant's guarantee) the curve reports from its first seed.
type unitResult struct {
	Cum       []float64
	Diag      agents.Diagnostics
	Constants agents.Constants
	Guarantee *ledger.Report
	// Seconds is the wall time of the unit's K episodes (agent built, exact regret included).
	Seconds float64
}

func newPlan(cfg *Config) (*plan, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	curves, err := cfg.curves()
	if err != nil {
		return nil, err
	}
	p := &plan{cfg: cfg, curves: curves, checkpoints: Checkpoints(cfg.Episodes, cfg.Points)}
	envSHA := make([]string, len(cfg.Envs))
	for i, e := range cfg.Envs {
		if e.Kind == "file" {
			in, err := rundir.HashFile("env", e.File)
			if err != nil {
				return nil, fmt.Errorf("envs[%d].file: %w", i, err)
			}
			p.envIn = append(p.envIn, in)
			envSHA[i] = in.SHA256
			m, err := e.Build(1, cfg.Episodes)
			if err != nil {
				return nil, fmt.Errorf("envs[%d]: %w", i, err)
			}
			if p.fileDims == nil {
				p.fileDims = map[int]envDims{}
			}
			p.fileDims[i] = fileDims(m)
		}
	}
	for _, cv := range curves {
		units, err := engine.CellUnits(envTag(cv.Env, cv.EnvName)+"/"+cv.Label, unitSpec{Env: cfg.Envs[cv.Env], EnvSHA: envSHA[cv.Env], Episodes: cfg.Episodes,
			Checkpoints: p.checkpoints, Label: cv.Label, Agent: cv.Agent, Practical: cv.Practical}, cfg.Seeds, cfg.Episodes)
		if err != nil {
			return nil, fmt.Errorf("curve %s: %w", cv.Label, err)
		}
		p.units = append(p.units, units...)
	}
	return p, nil
}

// Name implements engine.Plan: the configuration's name.
func (p *plan) Name() string { return p.cfg.Name }

// Units implements engine.Plan.
func (p *plan) Units() []engine.Unit { return p.units }

// episoder is what a unit needs from an agent: its contract and its counters.
type episoder interface {
	Session() (protocol.Session, *agents.Evaluator)
	Diagnostics() agents.Diagnostics
}

// unit is one (curve, seed) unit's agent, as a unit of the plan runs it (Run) and a service
// serves it (Family.Session): its contract, its counters and its public constants.
type unit struct {
	a         episoder
	practical *agents.PracticalAgent
	ur        unitResult
}

// newUnit builds curve cv's agent for the unit with streams st: the environment is built from
// the seed and the agent's randomness is the unit's root stream (rng.NewSeed(seed), as before
// the engine). secure takes the agent's noise from st's secure sources
// (engine.Streams.SecureNoise: keyed by st.Key, crypto-seeded without one) instead of the
// seeded streams below the root.
func (c *Config) newUnit(cv *Curve, st engine.Streams, secure bool) (*unit, error) {
	m, err := c.Envs[cv.Env].Build(st.Seed, c.Episodes)
	if err != nil {
		return nil, err
	}
	return row(cv.Algorithm).New(m, cv, st, secure)
}

// Run implements engine.Plan: unit i is curve i / len(seeds), seed i mod len(seeds). The
// environment is built from the seed and the agent's randomness is the unit's root stream
// (rng.NewSeed(seed), as before the engine; newUnit); the agent runs through the one episode
// loop (protocol.Run), user k playing from Users().Index(k), so different curves share the
// users' streams (common random numbers).
func (p *plan) Run(ctx context.Context, i int, st engine.Streams, rec *engine.Recorder) error {
	cv := p.curves[i/len(p.cfg.Seeds)]
	K := p.cfg.Episodes
	u, err := p.cfg.newUnit(cv, st, false)
	if err != nil {
		return err
	}
	ur, a := u.ur, u.a
	cps := p.checkpoints
	ur.Cum = make([]float64, len(cps))
	cum, next := 0.0, 0
	sess, _ := a.Session()
	start := time.Now()
	if err := protocol.Run(ctx, sess, protocol.Options{Episodes: K, Users: st.Episodes(engine.FromOne), Every: 1000, Progress: rec.Advance,
		Each: func(k int, r float64) {
			cum += r
			if k == cps[next] {
				ur.Cum[next] = cum
				next++
			}
		}}); err != nil {
		return err
	}
	ur.Seconds = time.Since(start).Seconds()
	ur.Diag = a.Diagnostics()
	if u.practical != nil {
		_, b := u.practical.Width()
		ur.Constants.Beta = []float64{b}
	}
	return rec.Record(ur)
}

// result assembles the Result from the units' results (every unit is required). A curve's
// constants and guarantee are those of its first seed's unit.
func (p *plan) result(c *engine.Collection, extra []rundir.Input) (*Result, error) {
	n := len(p.cfg.Seeds)
	res := &Result{Config: p.cfg, Checkpoints: p.checkpoints, Workers: c.Workers, Seconds: c.Seconds}
	res.Inputs = rundir.MergeAll(p.cfg.Inputs, extra, p.envIn)
	for ci, tmpl := range p.curves {
		cv := *tmpl
		cv.Runs = make([][]float64, n)
		cv.Diagnostics = make([]agents.Diagnostics, n)
		cv.Seconds = make([]float64, n)
		for si := range p.cfg.Seeds {
			var ur unitResult
			if err := c.Load(ci*n+si, &ur); err != nil {
				return nil, err
			}
			cv.Runs[si], cv.Diagnostics[si], cv.Seconds[si] = ur.Cum, ur.Diag, ur.Seconds
			if si == 0 {
				cv.Constants, cv.Guarantee = ur.Constants, ur.Guarantee
			}
		}
		res.Curves = append(res.Curves, &cv)
	}
	return res, nil
}

// Collect implements engine.Plan: curves, figures, summary, claims and the manifest last
// (Write).
func (p *plan) Collect(c *engine.Collection) (string, error) {
	return engine.CollectWritten(c, p.result, (*Result).Write, func(man *engine.RunManifest) string {
		return fmt.Sprintf("manifest.json, summary.md, summary.claims.json, %d figures, curves/*/*.csv", len(man.Figures))
	})
}
