package engine

import (
	"math"
	"strconv"
	"strings"

	"github.com/dprl/dprl/internal/bounds"
	"github.com/dprl/dprl/internal/inputerr"
)

// RunFlags are the `dprl run` flags that fill the shared run schema for every family: --family,
// --env (default: the family's reference environment), --env-file, --env-param, --agent
// (required), --epsilon, --delta, --calibration, --noise, --multiplier, --episodes and --seeds.
type RunFlags struct {
	Family, Env, EnvFile, Agent, Calibration, Noise, Seeds string
	EnvParams                                              []string
	Epsilon, Delta, Multiplier                             float64
	Episodes                                               int
	// Changed reports whether a flag (its name without "--") was given.
	Changed func(flag string) bool
	// Refused are flags given for another kind of run (a family's own settings): each one
	// given is refused, naming why (RefusedWhy).
	Refused    []string
	RefusedWhy string
	// NamedParams are the family's named flags of environment parameters (env.params name →
	// flag, e.g. horizon → --horizon of the tabular family); Value returns a flag's value.
	NamedParams map[string]string
	Value       func(flag string) string
}

// MaxEnvParams bounds --env-param (as MaxSpecParams bounds env.params).
const MaxEnvParams = MaxSpecParams

// ParseEnvParams parses --env-param values NAME=NUMBER into a map (each name once).
func ParseEnvParams(vals []string) (map[string]float64, error) {
	if len(vals) > MaxEnvParams {
		return nil, inputerr.New("--env-param: at most %d parameters, got %d", MaxEnvParams, len(vals))
	}
	out := map[string]float64{}
	for _, v := range vals {
		k, num, ok := strings.Cut(v, "=")
		if !ok || k == "" || len(k) > 64 {
			return nil, inputerr.New("--env-param: want NAME=NUMBER (e.g. horizon=20), got %q", v)
		}
		x, err := strconv.ParseFloat(num, 64)
		if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, inputerr.New("--env-param %s: want a finite number, got %q", k, num)
		}
		if _, dup := out[k]; dup {
			return nil, inputerr.New("--env-param: %s given twice", k)
		}
		out[k] = x
	}
	return out, nil
}

// FlagError returns the error of a RunSpec built from flags as bad input, with the RunSpec
// field at the start of its message rewritten to its flag.
func FlagError(err error) error {
	// The RunSpec field paths and the flags that fill them.
	specFlagNames := []struct{ field, flag string }{
		{"privacy.epsilons[0]", "--epsilon"}, {"privacy.epsilons", "--epsilon"}, {"privacy.delta", "--delta"},
		{"privacy.calibration", "--calibration"}, {"privacy.noise", "--noise"}, {"agents[0]", "--agent"},
		{"env.params.", "--env-param "}, {"env.name", "--env"}, {"env.file", "--env-file"},
		{"multipliers.bonus", "--multiplier"}, {"episodes", "--episodes"}, {"seeds", "--seeds"},
	}
	msg := err.Error()
	for _, m := range specFlagNames {
		if strings.HasPrefix(msg, m.field) {
			return inputerr.New("%s%s", m.flag, strings.TrimPrefix(msg, m.field))
		}
	}
	return inputerr.Wrap(err)
}

// Spec builds the RunSpec of a flag-described run and validates it (Validate); errors are bad
// input naming the flag.
func (f RunFlags) Spec() (*RunSpec, error) {
	ch := f.Changed
	for _, n := range f.Refused {
		if ch(n) {
			return nil, inputerr.New("--%s: has no effect %s; remove it", n, f.RefusedWhy)
		}
	}
	if !ch("agent") {
		return nil, inputerr.New("--agent: required with --family %s (dprl list names the family's agents)", f.Family)
	}
	sd, err := SeedsFlag(f.Seeds)
	if err != nil {
		return nil, err
	}
	params, err := ParseEnvParams(f.EnvParams)
	if err != nil {
		return nil, err
	}
	s := &RunSpec{Family: f.Family, Name: "run", Agents: []string{f.Agent}, Runs: Runs{Episodes: f.Episodes, Seeds: sd},
		Privacy:     PrivacySpec{Delta: f.Delta, Noise: f.Noise},
		Multipliers: MultiplierSpec{Bonus: f.Multiplier}}
	if ch("env") {
		s.Env.Name = f.Env
	}
	if ch("env-file") {
		s.Env.File = f.EnvFile
		if !ch("env") {
			s.Env.Name = "file"
		}
	}
	for name, flag := range f.NamedParams {
		if !ch(flag) {
			continue
		}
		if _, dup := params[name]; dup {
			return nil, inputerr.New("--env-param %s: also given as --%s", name, flag)
		}
		v, err := strconv.ParseFloat(f.Value(flag), 64)
		if err != nil {
			return nil, inputerr.New("--%s: %v", flag, err)
		}
		params[name] = v
	}
	if len(params) > 0 {
		s.Env.Params = params
	}
	if ch("epsilon") {
		s.Privacy.Epsilons = []float64{f.Epsilon}
	}
	if ch("calibration") {
		s.Privacy.Calibration = f.Calibration
	}
	if ch("multiplier") && !(f.Multiplier > 0 && f.Multiplier <= bounds.MaxMultiplier) {
		return nil, inputerr.New("--multiplier: must be in %s, got %g", bounds.MultiplierRange, f.Multiplier)
	}
	if ch("delta") && !(f.Delta > 0 && f.Delta < 1) {
		return nil, inputerr.New("--delta: must be in (0, 1), got %g", f.Delta)
	}
	if err := s.Validate(); err != nil {
		return nil, FlagError(err)
	}
	return s, nil
}

// PlanFlags plans a RunSpec built from flags (PlanSpec); its errors name the flags (FlagError).
func (r *Registry) PlanFlags(s *RunSpec) (*Planned, error) {
	p, err := r.PlanSpec(s, "flags")
	if err != nil {
		return nil, FlagError(err)
	}
	return p, nil
}
