package linmix

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	agents "github.com/dprl/dprl/agents/linmix"
	"github.com/dprl/dprl/experiment/engine"
	"github.com/dprl/dprl/experiment/rundir"
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
	envs := map[string]string{
		"two-state-hard": "S={x0,x1}, A={±1}^{d-1}, P(x1|x0,a)=q+⟨μ,a⟩ (linear-mixture spec §7.1; default d=5, H=10, q=0.1, ρ=0.5)",
		"hard-to-learn":  "Zhou, Gu & Szepesvári (2021) instance as in the public LDP-UCRL-VTR code: S=H+2, A=2^{d-1}, seeded",
		"riverswim":      "RiverSwim viewed as a linear mixture, d=S²A (spec §7.2)",
		"base-mixture":   "mixture of d seeded base kernels (spec §7.3)",
		"file":           "a linear mixture MDP from JSON/YAML (e.g. model/linmix/testdata/tiny.yaml)",
	}
	algorithms := map[string]string{
		"ucrl-vtr":         "UCRL-VTR (Ayoub et al.; private versions Luyo et al. Alg. 1, Cor. 5/6 constants)",
		"ucrl-vtr+":        "UCRL-VTR+ (variance-aware; private versions Luyo et al. Alg. 3, RECONSTRUCTED in the spec §4, Cor. 10/11)",
		"linopt-vi":        "Zhou's (Private-)LinOpt-VI, four counters per step (LDP version DERIVED, spec §5.7)",
		"linopt-po":        "Zhou's (Private-)LinOpt-PO, softmax mirror-descent policy (LDP DERIVED)",
		PracticalAlgorithm: "practical private UCRL-VTR: Gaussian factorisation counters, exact μ-GDP accounting",
	}
	modes := map[string]string{"none": ", non-private", "jdp": ", (ε,δ)-JDP (central noise)", "ldp": ", (ε,δ)-LDP (user-side noise)"}
	l := engine.Listing{Family: FamilyName, Title: "linear mixture MDPs (Luyo et al. 2021 Alg. 1, 3; Zhou 2022; dprl's practical agent)"}
	for _, e := range f.SpecEnvs() {
		l.Envs = append(l.Envs, engine.Entry{Name: e.Name, Params: strings.Join(e.Params, ", "), Desc: envs[e.Name]})
	}
	for _, n := range AgentNames() {
		alg, mode, _ := strings.Cut(n, "/")
		l.Agents = append(l.Agents, engine.Entry{Name: n, Desc: algorithms[alg] + modes[mode]})
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

// Describe implements engine.Describer.
func (Family) Describe(repro string) string {
	switch repro {
	case "linear-mixture":
		return "linear mixture MDPs: UCRL-VTR vs private UCRL-VTR (JDP, LDP, Laplace), UCRL-VTR+, LinOpt-VI/PO on TwoStateHard and HardToLearn"
	case "practical-linear-mixture":
		return "linear mixtures: dprl's practical private UCRL-VTR (JDP/LDP, Gaussian factorisation counters, exact GDP) vs the papers' agents and baselines (--long: the K = 2·10⁵ LDP goal)"
	case "practical-linear-mixture-long":
		return "practical-linear-mixture --long: the K = 2·10⁵ LDP goal run"
	}
	return ""
}

// Options implements engine.Optioner: practical-linear-mixture --long (the embedded
// practical-linear-mixture-long configuration).
func (Family) Options(repro string) []engine.Option {
	if repro != "practical-linear-mixture" {
		return nil
	}
	return []engine.Option{{Name: "long", Bool: true, Default: "false", EmbeddedOnly: true,
		Usage: "the K = 2·10⁵ LDP goal run (the embedded practical-linear-mixture-long configuration)"}}
}

// ApplyOptions implements engine.Optioner.
func (Family) ApplyOptions(repro string, block []byte, set map[string]string) ([]byte, error) {
	v, ok := set["long"]
	if !ok || repro != "practical-linear-mixture" {
		return block, nil
	}
	long, err := strconv.ParseBool(v)
	if err != nil {
		return nil, fmt.Errorf("--long: %w", err)
	}
	if long {
		return append([]byte(nil), practicalLongConfig...), nil
	}
	return block, nil
}

// Plan implements engine.Family: block is a Config (strict decode, validated).
func (Family) Plan(block []byte, source string) (engine.Plan, error) {
	cfg, err := ParseConfig(block)
	if err != nil {
		return nil, err
	}
	return newPlan(cfg)
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

// PlanConfig plans an already parsed and validated configuration (flags applied).
func PlanConfig(cfg *Config) (*engine.Planned, error) {
	p, err := newPlan(cfg)
	if err != nil {
		return nil, err
	}
	return engine.NewPlanned(FamilyName, p)
}

// plan is a linear mixture experiment planned into (curve, seed) units, curve-major.
type plan struct {
	cfg         *Config
	curves      []*Curve
	checkpoints []int
	envIn       []rundir.Input
	units       []engine.Unit
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
	Guarantee *agents.PracticalGuarantee
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
		}
	}
	for _, cv := range curves {
		spec, err := json.Marshal(unitSpec{Env: cfg.Envs[cv.Env], EnvSHA: envSHA[cv.Env], Episodes: cfg.Episodes,
			Checkpoints: p.checkpoints, Label: cv.Label, Agent: cv.Agent, Practical: cv.Practical})
		if err != nil {
			return nil, fmt.Errorf("curve %s: %w", cv.Label, err)
		}
		cell := envTag(cv.Env, cv.EnvName) + "/" + cv.Label
		for _, seed := range cfg.Seeds {
			p.units = append(p.units, engine.Unit{Cell: cell, Spec: spec, Seed: seed, Cost: int64(cfg.Episodes)})
		}
	}
	return p, nil
}

// Name implements engine.Plan: the configuration's name.
func (p *plan) Name() string { return p.cfg.Name }

// Units implements engine.Plan.
func (p *plan) Units() []engine.Unit { return p.units }

// episoder is what a unit needs from an agent.
type episoder interface {
	Episode() (float64, error)
	Diagnostics() agents.Diagnostics
}

// Run implements engine.Plan: unit i is curve i / len(seeds), seed i mod len(seeds). The
// environment is built from the seed and the agent's randomness is the unit's root stream
// (rng.NewSeed(seed), as before the engine); different curves share the users' streams
// (common random numbers).
func (p *plan) Run(ctx context.Context, i int, st engine.Streams, rec *engine.Recorder) error {
	cv := p.curves[i/len(p.cfg.Seeds)]
	K := p.cfg.Episodes
	m, err := p.cfg.Envs[cv.Env].Build(st.Seed, K)
	if err != nil {
		return err
	}
	var ur unitResult
	var a episoder
	var practical *agents.PracticalAgent
	if cv.Practical != nil {
		pa, err := agents.NewPracticalSeeded(m, *cv.Practical, st.Root())
		if err != nil {
			return err // the engine names the unit (cell and seed)
		}
		g := pa.Guarantee()
		ur.Guarantee = &g
		ur.Constants = agents.Constants{Privacy: agents.PracticalLabel + "; " + g.String(), Covered: g.PrivateAtNominal || g.Mode == "none",
			NoiseKind: "gaussian"}
		if g.Mode == "none" {
			ur.Constants.NoiseKind = "none"
		}
		if g.Sigma > 0 {
			ur.Constants.SigmaMat, ur.Constants.SigmaVec = []float64{g.Sigma}, []float64{g.Sigma}
		}
		practical = pa
		a = pa
	} else {
		aa, err := agents.NewSeeded(m, cv.Agent, st.Root())
		if err != nil {
			return err
		}
		ur.Constants = aa.Constants()
		a = aa
	}
	cps := p.checkpoints
	ur.Cum = make([]float64, len(cps))
	cum, next := 0.0, 0
	for k := 1; k <= K; k++ {
		r, err := a.Episode()
		if err != nil {
			return err
		}
		cum += r
		if k == cps[next] {
			ur.Cum[next] = cum
			next++
		}
		if k%1000 == 0 {
			rec.Advance(1000)
			if ctx.Err() != nil {
				return ctx.Err()
			}
		}
	}
	rec.Advance(int64(K % 1000))
	ur.Diag = a.Diagnostics()
	if practical != nil {
		_, b := practical.Width()
		ur.Constants.Beta = []float64{b}
	}
	return rec.Record(ur)
}

// result assembles the Result from the units' results (every unit is required). A curve's
// constants and guarantee are those of its first seed's unit.
func (p *plan) result(c *engine.Collection, extra []rundir.Input) (*Result, error) {
	n := len(p.cfg.Seeds)
	res := &Result{Config: p.cfg, Checkpoints: p.checkpoints, Workers: c.Workers, Seconds: c.Seconds}
	res.Inputs = rundir.MergeInputs(rundir.MergeInputs(rundir.MergeInputs(nil, p.cfg.Inputs), extra), p.envIn)
	for ci, tmpl := range p.curves {
		cv := *tmpl
		cv.Runs = make([][]float64, n)
		cv.Diagnostics = make([]agents.Diagnostics, n)
		for si := range p.cfg.Seeds {
			var ur unitResult
			if err := c.Load(ci*n+si, &ur); err != nil {
				return nil, err
			}
			cv.Runs[si], cv.Diagnostics[si] = ur.Cum, ur.Diag
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
	res, err := p.result(c, c.Inputs)
	if err != nil {
		return "", err
	}
	res.Output = c.Options
	man, summary, err := res.Write(c.Dir, c.Command)
	if err != nil {
		return "", fmt.Errorf("writing %s: %w", c.Dir, err)
	}
	return fmt.Sprintf("%s\nWrote %s (manifest.json, summary.md, summary.claims.json, %d figures, curves/*/*.csv)", summary, filepath.Clean(c.Dir), len(man.Figures)), nil
}
