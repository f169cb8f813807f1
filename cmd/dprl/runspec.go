package main

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/dprl/dprl/experiment"
	"github.com/dprl/dprl/experiment/engine"
	"github.com/dprl/dprl/experiment/rundir"
	"github.com/dprl/dprl/internal/bounds"
)

// tabularOnlyFlags are the `dprl run` flags of the tabular family alone (its environments'
// named parameters and its bonus settings); other families take environment parameters as
// --env-param.
var tabularOnlyFlags = []string{"horizon", "states", "actions", "branching", "reward-density", "env-seed", "beta", "preset", "e-mode"}

// tabularParamFlags maps the tabular environments' env.params names to their named flags.
var tabularParamFlags = map[string]string{"horizon": "horizon", "states": "states", "actions": "actions",
	"branching": "branching", "reward_density": "reward-density", "env_seed": "env-seed"}

// maxEnvParams bounds --env-param (as engine.MaxSpecParams bounds env.params).
const maxEnvParams = engine.MaxSpecParams

// parseEnvParams parses --env-param values NAME=NUMBER into a map (each name once).
func parseEnvParams(vals []string) (map[string]float64, error) {
	if len(vals) > maxEnvParams {
		return nil, badInput("--env-param: at most %d parameters, got %d", maxEnvParams, len(vals))
	}
	out := map[string]float64{}
	for _, v := range vals {
		k, num, ok := strings.Cut(v, "=")
		if !ok || k == "" || len(k) > 64 {
			return nil, badInput("--env-param: want NAME=NUMBER (e.g. horizon=20), got %q", v)
		}
		x, err := strconv.ParseFloat(num, 64)
		if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, badInput("--env-param %s: want a finite number, got %q", k, num)
		}
		if _, dup := out[k]; dup {
			return nil, badInput("--env-param: %s given twice", k)
		}
		out[k] = x
	}
	return out, nil
}

// applyTabularParams sets the tabular family's named flags from --env-param (the shared way to
// give environment parameters), refusing a parameter given both ways.
func applyTabularParams(cmd *cobra.Command, params map[string]float64) error {
	for k, v := range params {
		name, ok := tabularParamFlags[k]
		if !ok {
			return badInput("--env-param %s: unknown parameter of family tabular (allowed: horizon, states, actions, branching, reward_density, env_seed)", k)
		}
		if cmd.Flags().Changed(name) {
			return badInput("--env-param %s: also given as --%s", k, name)
		}
		if err := cmd.Flags().Set(name, strconv.FormatFloat(v, 'g', -1, 64)); err != nil {
			return badInput("--env-param %s: %v", k, err)
		}
	}
	return nil
}

// specFlagNames maps RunSpec field paths to the `dprl run` flags that fill them, so that an
// error about a flag-built run names the flag.
var specFlagNames = []struct{ field, flag string }{
	{"privacy.epsilons[0]", "--epsilon"}, {"privacy.epsilons", "--epsilon"}, {"privacy.delta", "--delta"},
	{"privacy.calibration", "--calibration"}, {"privacy.noise", "--noise"}, {"agents[0]", "--agent"},
	{"env.params.", "--env-param "}, {"env.name", "--env"}, {"env.file", "--env-file"},
	{"multipliers.bonus", "--multiplier"}, {"episodes", "--episodes"}, {"seeds", "--seeds"},
}

// flagError rewrites the RunSpec field at the start of err's message to its flag.
func flagError(err error) error {
	msg := err.Error()
	for _, m := range specFlagNames {
		if strings.HasPrefix(msg, m.field) {
			return badInput("%s%s", m.flag, strings.TrimPrefix(msg, m.field))
		}
	}
	return usageError{err}
}

// runSpecFlags are the values of the shared `dprl run` flags.
type runSpecFlags struct {
	family, env, envFile, agent, calib, noise, seeds string
	params                                           []string
	eps, delta, mult                                 float64
	episodes                                         int
}

// runSpecFromFlags builds the shared RunSpec of a flag-described run of a family other than
// tabular: --env (default: the family's reference environment), --env-file, --env-param,
// --agent (required), --epsilon, --delta, --calibration, --noise, --multiplier, --episodes,
// --seeds. The tabular family's own flags are refused.
func runSpecFromFlags(cmd *cobra.Command, f runSpecFlags) (*engine.RunSpec, error) {
	ch := cmd.Flags().Changed
	rejected := tabularOnlyFlags
	if f.family == experiment.FamilyName {
		// dprl's practical tabular agents: the tabular environments' named flags are env.params;
		// the papers' bonus settings do not apply.
		rejected = []string{"beta", "preset", "e-mode"}
	}
	if err := rejectChanged(cmd, fmt.Sprintf("with --family %s --agent %s (the papers' agents' settings; give environment parameters as --env-param NAME=VALUE)", f.family, f.agent), rejected...); err != nil {
		return nil, err
	}
	if !ch("agent") {
		return nil, badInput("--agent: required with --family %s (dprl list names the family's agents)", f.family)
	}
	sd, err := parseSeeds(f.seeds)
	if err != nil {
		return nil, err
	}
	params, err := parseEnvParams(f.params)
	if err != nil {
		return nil, err
	}
	s := &engine.RunSpec{Family: f.family, Name: "run", Agents: []string{f.agent}, Episodes: f.episodes, Seeds: sd,
		Privacy:     engine.PrivacySpec{Delta: f.delta, Noise: f.noise},
		Multipliers: engine.MultiplierSpec{Bonus: f.mult}}
	if ch("env") {
		s.Env.Name = f.env
	}
	if ch("env-file") {
		s.Env.File = f.envFile
		if !ch("env") {
			s.Env.Name = "file"
		}
	}
	if f.family == experiment.FamilyName {
		for name, flag := range tabularParamFlags {
			if !ch(flag) {
				continue
			}
			if _, dup := params[name]; dup {
				return nil, badInput("--env-param %s: also given as --%s", name, flag)
			}
			v, err := strconv.ParseFloat(cmd.Flags().Lookup(flag).Value.String(), 64)
			if err != nil {
				return nil, badInput("--%s: %v", flag, err)
			}
			params[name] = v
		}
	}
	if len(params) > 0 {
		s.Env.Params = params
	}
	if ch("epsilon") {
		s.Privacy.Epsilons = []float64{f.eps}
	}
	if ch("calibration") {
		s.Privacy.Calibration = f.calib
	}
	if ch("multiplier") && !(f.mult > 0 && f.mult <= bounds.MaxMultiplier) {
		return nil, badInput("--multiplier: must be in %s, got %g", bounds.MultiplierRange, f.mult)
	}
	if ch("delta") && !(f.delta > 0 && f.delta < 1) {
		return nil, badInput("--delta: must be in (0, 1), got %g", f.delta)
	}
	if err := s.Validate(); err != nil {
		return nil, flagError(err)
	}
	return s, nil
}

// runSpec plans and runs a RunSpec built from flags.
func runSpec(s *engine.RunSpec, workers int, out string, outSet bool, o outputFlags, stdout, stderr io.Writer, quiet bool) error {
	if !outSet {
		out, outSet = defaultRunDir(s.Family, strings.Join(s.Agents, "+"), s), true
	}
	if err := preflight(workers, out, outSet, o); err != nil {
		return err
	}
	p, err := newRegistry().PlanSpec(s, "flags")
	if err != nil {
		return flagError(err)
	}
	return runPlanned(p, nil, workers, out, o, stdout, stderr, quiet)
}

// runPlanned executes a plan and prints its text with the wall time.
func runPlanned(p *engine.Planned, inputs []rundir.Input, workers int, out string, o outputFlags, stdout, stderr io.Writer, quiet bool) error {
	start := time.Now()
	text, err := executePlan(p, workers, out, o, inputs, stderr, quiet)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s in %.1f s.\n", text, time.Since(start).Seconds())
	return nil
}
