package engine

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/dprl/dprl/experiment/calibration"
	"github.com/dprl/dprl/experiment/internal/cfgfile"
	"github.com/dprl/dprl/experiment/rundir"
	"github.com/dprl/dprl/internal/bounds"
)

// RunSpec is the configuration schema shared by every family (issue 11): the same fields mean
// the same thing whatever the family, in a YAML file (`dprl run --config`, `dprl sweep`) and as
// flags (`dprl run --family … --env … --agent … --epsilon …`).
//
//	family: linmdp                 # the agent family (dprl list)
//	name: e2-practical             # run directory runs/<name> (default "run")
//	env: {name: latentriver, params: {m: 5, copies: 10, horizon: 20}}   # or {name: file, file: m.yaml}
//	agents: [practical-lsvi, rare-switch]
//	privacy: {epsilons: [0.5, 1, 2], delta: 1.0e-5, calibration: exact, noise: seeded}
//	episodes: 20000
//	seeds: [1, 2, 3]
//	multipliers: {bonus: 1}
//
// The run is the grid agents × ε × seeds: a private agent runs at every ε of privacy.epsilons, a
// non-private one once. A family's richer sweep blocks (the embedded reproductions: curves with
// per-curve settings, several environments, blocks) remain available beside it; a document is a
// RunSpec when it names agents and every top-level key is one of RunSpec's (see IsRunSpec).
type RunSpec struct {
	// Family is the agent family (set from the `family:` key or --family).
	Family string `yaml:"family" json:"family"`
	// Name names the run (default "run").
	Name string `yaml:"name,omitempty" json:"name"`
	// Env is the environment.
	Env EnvSpec `yaml:"env,omitempty" json:"env"`
	// Agents are agent names from `dprl list` for the family.
	Agents []string `yaml:"agents" json:"agents"`
	// Privacy is the privacy setting of the private agents.
	Privacy PrivacySpec `yaml:"privacy,omitempty" json:"privacy"`
	// Runs are the keys episodes (K, the number of users per run) and seeds.
	Runs `yaml:",inline"`
	// Multipliers scale the agents' confidence widths (never their noise).
	Multipliers MultiplierSpec `yaml:"multipliers,omitempty" json:"multipliers"`
}

// EnvSpec selects an environment of the family.
type EnvSpec struct {
	// Name is an environment name of the family (dprl list), "file", or "" for the family's
	// reference environment.
	Name string `yaml:"name,omitempty" json:"name,omitempty"`
	// File is the model file of Name "file".
	File string `yaml:"file,omitempty" json:"file,omitempty"`
	// Params are the environment's numeric parameters by name (horizon, states, dim, …; dprl
	// list names them); omitted ones take the family's defaults.
	Params map[string]float64 `yaml:"params,omitempty" json:"params,omitempty"`
}

// PrivacySpec is the privacy setting of a run's private agents.
type PrivacySpec struct {
	// Epsilons are the nominal ε of the private agents, each in bounds.EpsilonRange.
	Epsilons []float64 `yaml:"epsilons,omitempty" json:"epsilons,omitempty"`
	// Delta is δ for (ε, δ) agents, in (0, 1); 0 means the family's default (1e-5).
	Delta float64 `yaml:"delta,omitempty" json:"delta,omitempty"`
	// Calibration is a name of package experiment/calibration ("" = the family's default).
	Calibration string `yaml:"calibration,omitempty" json:"calibration,omitempty"`
	// Noise is the noise source: "seeded" (default; reproducible experiments) or "secure".
	Noise string `yaml:"noise,omitempty" json:"noise,omitempty"`
}

// MultiplierSpec holds the multipliers of a run.
type MultiplierSpec struct {
	// Bonus multiplies the exploration bonus / confidence width, in (0, bounds.MaxMultiplier];
	// 0 means 1.
	Bonus float64 `yaml:"bonus,omitempty" json:"bonus,omitempty"`
}

// SpecPlanner is a family that plans the shared RunSpec schema.
type SpecPlanner interface {
	// PlanSpec plans s (validated by Validate, defaults applied). Errors name RunSpec's
	// fields (env.params.horizon, agents[1], privacy.epsilons[0], …) and the allowed values.
	PlanSpec(s *RunSpec, source string) (Plan, error)
}

// SpecEnv is an environment a SpecPlanner family accepts in env.name, with the names of its
// env.params and its description (for `dprl list`).
type SpecEnv struct {
	Name   string
	Params []string
	Desc   string
}

// SpecEnvLister is a SpecPlanner that lists its environments, the reference environment (the
// one used when env.name is omitted) first.
type SpecEnvLister interface {
	SpecEnvs() []SpecEnv
}

// Bounds of RunSpec's fields (every input is bounded before anything is allocated): episodes
// and seeds by bounds.MaxEpisodes and bounds.MaxSeeds, as in every family, and
const (
	// MaxSpecAgents bounds the number of agents and of ε values.
	MaxSpecAgents = 100
	// MaxSpecParams bounds the number of environment parameters.
	MaxSpecParams = 64
)

// MaxSpecValues bounds the episodes of a run in total, agents × ε × seeds × episodes
// (bounds.MaxStoredValues, the bound on the regret values a run keeps; families that keep
// checkpoints only need less memory, but 5·10⁸ episodes is also hours of compute): larger grids
// are sweeps of several runs.
const MaxSpecValues = bounds.MaxStoredValues

// DefaultDelta is δ when privacy.delta is omitted.
const DefaultDelta = 1e-5

// runSpecKeys are RunSpec's top-level keys.
var runSpecKeys = []string{"family", "name", "env", "agents", "privacy", "episodes", "seeds", "multipliers"}

// IsRunSpec reports whether the configuration document data (with or without its `family:`
// key) is in the shared RunSpec schema: it is a mapping that has an `agents` key and no key
// outside RunSpec's. Anything else is a family's own sweep block.
func IsRunSpec(data []byte) bool {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil || len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return false
	}
	m := doc.Content[0]
	hasAgents := false
	for i := 0; i+1 < len(m.Content); i += 2 {
		k := m.Content[i].Value
		if k == "agents" {
			hasAgents = true
		}
		known := false
		for _, s := range runSpecKeys {
			known = known || k == s
		}
		if !known {
			return false
		}
	}
	return hasAgents
}

// ParseRunSpec decodes a RunSpec document strictly (unknown fields, duplicate keys and a second
// document are errors), sets Family to family when the document has none, applies the defaults
// and validates the shared fields.
func ParseRunSpec(data []byte, family string) (*RunSpec, error) {
	s := new(RunSpec)
	return cfgfile.Parse(data, s, "config", func(keys cfgfile.Keys) error {
		return keys.RejectExplicitZeros(
			cfgfile.Default{Path: "name", Value: s.Name, Allowed: "a non-empty name"},
			cfgfile.Default{Path: "privacy.delta", Value: s.Privacy.Delta, Allowed: "in (0, 1)"},
			cfgfile.Default{Path: "privacy.noise", Value: s.Privacy.Noise, Allowed: "seeded or secure"},
			cfgfile.Default{Path: "multipliers.bonus", Value: s.Multipliers.Bonus, Allowed: "in " + bounds.MultiplierRange})
	}, func() error {
		if s.Family == "" {
			s.Family = family
		}
		return s.Validate()
	})
}

// Validate applies the defaults (name "run", δ 1e-5, noise seeded, bonus multiplier 1) and
// checks the fields every family shares; the family checks the rest (names of environments
// and agents, environment parameters, calibrations) in PlanSpec.
func (s *RunSpec) Validate() error {
	if s.Name == "" {
		s.Name = "run"
	}
	if s.Privacy.Delta == 0 {
		s.Privacy.Delta = DefaultDelta
	}
	if s.Privacy.Noise == "" {
		s.Privacy.Noise = "seeded"
	}
	if s.Multipliers.Bonus == 0 {
		s.Multipliers.Bonus = 1
	}
	if err := rundir.CheckName("name", s.Name); err != nil {
		return err
	}
	if s.Family == "" {
		return fmt.Errorf("family: required (the agent family, see dprl list)")
	}
	if err := s.Runs.Check(1); err != nil {
		return err
	}
	switch {
	case len(s.Agents) == 0 || len(s.Agents) > MaxSpecAgents:
		return fmt.Errorf("agents: must list 1 to %d agents (dprl list), got %d", MaxSpecAgents, len(s.Agents))
	case len(s.Privacy.Epsilons) > MaxSpecAgents:
		return fmt.Errorf("privacy.epsilons: at most %d values, got %d", MaxSpecAgents, len(s.Privacy.Epsilons))
	case !(s.Privacy.Delta > 0 && s.Privacy.Delta < 1):
		return fmt.Errorf("privacy.delta: must be in (0, 1), got %g", s.Privacy.Delta)
	case s.Privacy.Noise != "seeded" && s.Privacy.Noise != "secure":
		return fmt.Errorf("privacy.noise: must be seeded or secure, got %q", s.Privacy.Noise)
	case !(s.Multipliers.Bonus > 0 && s.Multipliers.Bonus <= bounds.MaxMultiplier):
		return fmt.Errorf("multipliers.bonus: must be in %s, got %g", bounds.MultiplierRange, s.Multipliers.Bonus)
	case len(s.Env.Params) > MaxSpecParams:
		return fmt.Errorf("env.params: at most %d parameters, got %d", MaxSpecParams, len(s.Env.Params))
	case s.Env.Name == "file" && s.Env.File == "":
		return fmt.Errorf("env.file: required with env.name file (a model file)")
	case s.Env.Name != "file" && s.Env.File != "":
		return fmt.Errorf("env.file: only with env.name file, got env.name %q", s.Env.Name)
	}
	cells := len(s.Agents) * max(1, len(s.Privacy.Epsilons))
	if v := float64(cells) * float64(len(s.Seeds)) * float64(s.Episodes); v > MaxSpecValues {
		return fmt.Errorf("episodes: agents × ε × seeds × episodes = %d·%d·%d = %.3g episodes in total exceeds the limit 2^29 of one run; use fewer seeds or episodes, or split the grid into several runs or a sweep",
			cells, len(s.Seeds), s.Episodes, v)
	}
	agents := map[string]bool{}
	for i, a := range s.Agents {
		if a == "" {
			return fmt.Errorf("agents[%d]: empty name (dprl list names the agents)", i)
		}
		if agents[a] {
			return fmt.Errorf("agents[%d]: agent %q listed twice", i, a)
		}
		agents[a] = true
	}
	eps := map[float64]bool{}
	for i, e := range s.Privacy.Epsilons {
		if err := bounds.Epsilon(fmt.Sprintf("privacy.epsilons[%d]", i), e); err != nil {
			return err
		}
		if eps[e] {
			return fmt.Errorf("privacy.epsilons[%d]: ε = %g listed twice", i, e)
		}
		eps[e] = true
	}
	if c := s.Privacy.Calibration; c != "" {
		canon, err := calibration.Canonical("privacy.calibration", c, calibration.Names()...)
		if err != nil {
			return err
		}
		s.Privacy.Calibration = canon
	}
	for _, k := range s.ParamNames() {
		v := s.Env.Params[k]
		if math.IsNaN(v) || math.IsInf(v, 0) || math.Abs(v) > 1e12 {
			return fmt.Errorf("env.params.%s: must be a finite number of magnitude at most 1e12, got %g", k, v)
		}
	}
	return nil
}

// ParamNames returns the names of env.params, sorted.
func (s *RunSpec) ParamNames() []string {
	var out []string
	for k := range s.Env.Params {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// CheckParams refuses an env.params name outside allowed (the environment's parameters); the
// error names the parameter and the allowed ones.
func (s *RunSpec) CheckParams(allowed ...string) error {
	for _, k := range s.ParamNames() {
		ok := false
		for _, a := range allowed {
			ok = ok || a == k
		}
		if !ok {
			if len(allowed) == 0 {
				return fmt.Errorf("env.params.%s: environment %q takes no parameters", k, s.Env.Name)
			}
			return fmt.Errorf("env.params.%s: unknown parameter of environment %q (allowed: %s)", k, s.Env.Name, strings.Join(allowed, ", "))
		}
	}
	return nil
}

// IntParam returns env.params[name] as an integer in [lo, hi], or def when it is absent; the
// error names the field and the range.
func (s *RunSpec) IntParam(name string, def, lo, hi int) (int, error) {
	v, ok := s.Env.Params[name]
	if !ok {
		return def, nil
	}
	if v != math.Trunc(v) || v < float64(lo) || v > float64(hi) {
		return 0, fmt.Errorf("env.params.%s: must be an integer in [%d, %d], got %g", name, lo, hi, v)
	}
	return int(v), nil
}

// EnvError wraps the error of building the environment a RunSpec names, under the field that
// caused it: env.file for a model file, env.params otherwise.
func (s *RunSpec) EnvError(err error) error {
	if s.Env.Name == "file" {
		return fmt.Errorf("env.file: %w", err)
	}
	return fmt.Errorf("env.params: %w", err)
}

// MinEpisodes checks a family's own minimum K (the maximum, bounds.MaxEpisodes, is the same in
// every family and checked by Validate); the error names the field and the family.
func (s *RunSpec) MinEpisodes(family string, minEpisodes int) error {
	if s.Episodes < minEpisodes || s.Episodes > bounds.MaxEpisodes {
		return fmt.Errorf("episodes: must be in [%d, %d] for family %s, got %d", minEpisodes, bounds.MaxEpisodes, family, s.Episodes)
	}
	return nil
}

// SeededOnly refuses privacy.noise other than "seeded" for a family whose experiments build
// their agents' seeded noise source; why says so in the family's words.
func (s *RunSpec) SeededOnly(family, why string) error {
	if s.Privacy.Noise != "seeded" {
		return fmt.Errorf("privacy.noise: family %s runs only with the seeded source (%s), got %q", family, why, s.Privacy.Noise)
	}
	return nil
}

// FloatParam returns env.params[name] in [lo, hi], or def when it is absent; the error names the
// field and the range.
func (s *RunSpec) FloatParam(name string, def, lo, hi float64) (float64, error) {
	v, ok := s.Env.Params[name]
	if !ok {
		return def, nil
	}
	if v < lo || v > hi {
		return 0, fmt.Errorf("env.params.%s: must be in [%g, %g], got %g", name, lo, hi, v)
	}
	return v, nil
}

// PlanSpec plans a RunSpec with its family (which must implement SpecPlanner).
func (r *Registry) PlanSpec(s *RunSpec, source string) (*Planned, error) {
	f, err := r.Lookup(s.Family)
	if err != nil {
		return nil, err
	}
	sp, ok := f.(SpecPlanner)
	if !ok {
		var names []string
		for _, n := range r.Names() {
			if _, ok := r.families[n].(SpecPlanner); ok {
				names = append(names, n)
			}
		}
		return nil, fmt.Errorf("family %s: runs only its own sweep blocks (dprl sweep config %s prints one); the shared run schema is planned by %s", s.Family, s.Family, strings.Join(names, ", "))
	}
	p, err := sp.PlanSpec(s, source)
	if err != nil {
		return nil, err
	}
	return NewPlanned(f.Name(), p)
}
