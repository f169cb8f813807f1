package tabular

import (
	"fmt"
	"slices"
	"strconv"

	"go.yaml.in/yaml/v3"

	agents "github.com/dprl/dprl/agents/tabular"
	"github.com/dprl/dprl/experiment/engine"
	"github.com/dprl/dprl/internal/bounds"
	"github.com/dprl/dprl/internal/inputerr"
)

// ParamFlag is a named `dprl run` flag of the tabular family that gives an environment
// parameter (--horizon for env.params.horizon, …).
type ParamFlag struct{ Param, Flag string }

// ParamFlags returns the tabular family's named flags of environment parameters, in the order
// the flags are checked.
func ParamFlags() []ParamFlag {
	return []ParamFlag{{"horizon", "horizon"}, {"states", "states"}, {"actions", "actions"},
		{"branching", "branching"}, {"reward_density", "reward-density"}, {"env_seed", "env-seed"}}
}

// ParamFlagMap returns ParamFlags as env.params name → flag.
func ParamFlagMap() map[string]string {
	m := map[string]string{}
	for _, p := range ParamFlags() {
		m[p.Param] = p.Flag
	}
	return m
}

// PaperFlags returns the `dprl run` flags of the papers' tabular agents alone (their bonus
// settings).
func PaperFlags() []string { return []string{"beta", "preset", "e-mode"} }

// OnlyFlags returns the `dprl run` flags of the tabular family alone: its named environment
// parameters and the papers' agents' settings (other families take environment parameters as
// --env-param).
func OnlyFlags() []string {
	var out []string
	for _, p := range ParamFlags() {
		out = append(out, p.Flag)
	}
	return append(out, PaperFlags()...)
}

// Flags are the `dprl run` flags of a run of the papers' tabular agents: the shared flags
// (RunFlags; Changed reports which were given) and the family's own (its named environment
// parameters and bonus settings).
type Flags struct {
	engine.RunFlags
	Preset, EMode                       string
	Horizon, States, Actions, Branching int
	Beta, Density                       float64
	EnvSeed                             uint64
}

// ApplyParamFlags sets the tabular family's named flags from --env-param values (the shared
// way to give environment parameters) with set (the flag set's Set), refusing a parameter
// without a named flag or given both ways (changed reports whether a flag was given).
func ApplyParamFlags(params map[string]float64, changed func(string) bool, set func(flag, value string) error) error {
	flags := ParamFlagMap()
	for k, v := range params {
		name, ok := flags[k]
		if !ok {
			return inputerr.New("--env-param %s: unknown parameter of family tabular (allowed: horizon, states, actions, branching, reward_density, env_seed)", k)
		}
		if changed(name) {
			return inputerr.New("--env-param %s: also given as --%s", k, name)
		}
		if err := set(name, strconv.FormatFloat(v, 'g', -1, 64)); err != nil {
			return inputerr.New("--env-param %s: %v", k, err)
		}
	}
	return nil
}

// SpecFlags returns f, the shared flags of a run in the shared run schema, with the tabular
// family's part: for family tabular (dprl's practical agents) its named environment flags are
// env.params and the papers' agents' settings are refused; for another family every flag of
// the tabular family alone is refused.
func SpecFlags(f engine.RunFlags) engine.RunFlags {
	f.Refused, f.RefusedWhy = OnlyFlags(), fmt.Sprintf("with --family %s --agent %s (the papers' agents' settings; give environment parameters as --env-param NAME=VALUE)", f.Family, f.Agent)
	if f.Family == FamilyName {
		f.Refused, f.NamedParams = PaperFlags(), ParamFlagMap()
	}
	return f
}

// FromFlags returns the configuration of a run of the papers' tabular agents given by flags:
// --delta is refused (they are pure ε-DP), --env-param values set the named flags (set is the
// flag set's Set, which updates f), then Config.
func (f *Flags) FromFlags(set func(flag, value string) error) (*Config, error) {
	if f.Changed("delta") {
		return nil, inputerr.New("--delta: the papers' tabular agents are pure ε-DP (δ is for dprl's (ε, δ) practical agents, e.g. --agent practical-jdp)")
	}
	params, err := engine.ParseEnvParams(f.EnvParams)
	if err != nil {
		return nil, err
	}
	if err := ApplyParamFlags(params, f.Changed, set); err != nil {
		return nil, err
	}
	return f.Config()
}

// Config checks the flags and returns the run's configuration, through the same parser
// (validation, defaults) as a configuration file. An explicit value is never replaced by a
// default, and a flag that would have no effect for the chosen environment (Envs: a parameter
// it does not take) or agent is refused. Errors are bad input naming the flag.
func (f Flags) Config() (*Config, error) {
	if err := f.check(); err != nil {
		return nil, err
	}
	sd, err := engine.SeedsFlag(f.Seeds)
	if err != nil {
		return nil, err
	}
	if f.Env != "file" && (f.Horizon < 1 || f.Horizon > 10000) {
		return nil, inputerr.New("env.horizon (--horizon): must be in [1, 10000], got %d", f.Horizon)
	}
	cfg := &Config{Name: "run", Runs: engine.Runs{Episodes: f.Episodes, Seeds: sd}, Beta: f.Beta, Noise: f.Noise,
		Env:    EnvConfig{Name: f.Env},
		Bonus:  BonusSpec{Preset: f.Preset, Multiplier: f.Multiplier},
		Curves: []CurveSpec{{Agent: f.Agent, Epsilon: f.Epsilon, Calibration: f.Calibration, EMode: f.EMode}}}
	// Only the parameters the environment takes (the flags' defaults of the others, e.g. the
	// Garnet shape for RiverSwim, are not its configuration); the file's own H for env file.
	Envs().CopyParams(f.Env, &cfg.Env, &EnvConfig{Name: f.Env, Horizon: f.Horizon, Path: f.EnvFile, States: f.States,
		Actions: f.Actions, Branching: f.Branching, Density: f.Density, EnvSeed: f.EnvSeed})
	data, _ := yaml.Marshal(cfg)
	if cfg, err = ParseConfig(data); err != nil {
		return nil, inputerr.Wrap(err)
	}
	return cfg, nil
}

// check refuses a flag value that would be replaced by a default and a flag that would have no
// effect for the chosen environment or agent.
func (f Flags) check() error {
	ch := f.Changed
	if ch("beta") && !(f.Beta > 0 && f.Beta < 1) {
		return inputerr.New("--beta: must be in (0, 1), got %g", f.Beta)
	}
	if ch("multiplier") && !(f.Multiplier > 0 && f.Multiplier <= bounds.MaxMultiplier) {
		return inputerr.New("--multiplier: must be in %s, got %g (0 would switch the bonus off; the configuration format reads 0 as the default 1)", bounds.MultiplierRange, f.Multiplier)
	}
	if e, ok := Envs().Lookup(f.Env); ok {
		var refused []string
		for _, p := range ParamFlags() {
			if !slices.Contains(e.ParamNames(), p.Param) {
				refused = append(refused, p.Flag)
			}
		}
		if !e.File {
			refused = append(refused, "env-file")
		}
		note := map[string]string{"riverswim": " (RiverSwim has S = 6, A = 2)", "file": " (the file sets the MDP, including its horizon)"}[e.Name]
		if err := refuse(ch, "with --env "+e.Name+note, refused...); err != nil {
			return err
		}
		if e.File && !ch("env-file") {
			return inputerr.New("--env-file: required with --env %s", e.Name)
		}
	}
	if info, err := agents.Lookup(f.Agent); err == nil && info.Model == agents.NonPrivate {
		return refuse(ch, fmt.Sprintf("for the non-private agent %s", f.Agent), "epsilon", "calibration", "e-mode", "noise")
	}
	return nil
}

// refuse refuses the flags of names that were given, naming why they would have no effect.
func refuse(changed func(string) bool, why string, names ...string) error {
	for _, n := range names {
		if changed(n) {
			return inputerr.New("--%s: has no effect %s; remove it", n, why)
		}
	}
	return nil
}
