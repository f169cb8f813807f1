// Package tabular runs configured tabular experiments: one or more curves (an agent with a
// privacy setting) over several seeds, in parallel, with exact per-episode regret, and writes
// the results (CSV, manifest, plots) atomically into a run directory.
//
// Reproducibility: every run derives all of its randomness from its seed through package rng
// (users: "users"/k; tie-breaking: "agent"/"tie"; each noise mechanism: "noise"/<name>), so the
// same seed gives bit-identical results whatever the worker count. All agents of one seed face
// the same users (common random numbers).
package tabular

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"

	agents "github.com/dprl/dprl/agents/tabular"
	"github.com/dprl/dprl/experiment/calibration"
	"github.com/dprl/dprl/experiment/engine"
	"github.com/dprl/dprl/experiment/internal/cfgfile"
	"github.com/dprl/dprl/experiment/rundir"
	"github.com/dprl/dprl/internal/bounds"
	model "github.com/dprl/dprl/model/tabular"
)

// BonusSpec selects a bonus preset and overrides.
type BonusSpec struct {
	// Preset is "practical" or "theory".
	Preset string `yaml:"preset,omitempty" json:"preset,omitempty"`
	// Multiplier multiplies the whole bonus, in (0, 1e6]; omitted (0) means 1, an explicit 0 in
	// a file is rejected.
	Multiplier float64 `yaml:"multiplier,omitempty" json:"multiplier,omitempty"`
	// Optional overrides of preset fields (nil = keep).
	Scale *float64 `yaml:"scale,omitempty" json:"scale,omitempty"`
	C3    *float64 `yaml:"c3,omitempty" json:"c3,omitempty"`
	C4    *float64 `yaml:"c4,omitempty" json:"c4,omitempty"`
}

// CurveSpec is one curve: an agent with a privacy setting.
type CurveSpec struct {
	// Label names the curve in plots and files (default derived from the fields).
	Label string `yaml:"label,omitempty" json:"label"`
	// Agent is a name from `dprl list`.
	Agent string `yaml:"agent" json:"agent"`
	// Epsilon is the nominal ε (private agents).
	Epsilon float64 `yaml:"epsilon,omitempty" json:"epsilon,omitempty"`
	// Calibration is "exact" (default; "strict" is its old name, accepted as an alias), "paper"
	// or "unit" (package experiment/calibration).
	Calibration string `yaml:"calibration,omitempty" json:"calibration,omitempty"`
	// EMode is "practical" or "theory" (default: the bonus preset's name).
	EMode string `yaml:"e_mode,omitempty" json:"e_mode,omitempty"`
	// Bonus overrides the experiment's bonus for this curve.
	Bonus *BonusSpec `yaml:"bonus,omitempty" json:"bonus,omitempty"`
	// Groups puts the curve into named figures (default ["main"]).
	Groups []string `yaml:"groups,omitempty" json:"groups,omitempty"`
}

// Config is a whole experiment.
type Config struct {
	Name string    `yaml:"name" json:"name"`
	Env  EnvConfig `yaml:"env" json:"env"`
	// Runs are the keys episodes and seeds.
	engine.Runs `yaml:",inline"`
	Beta        float64     `yaml:"beta,omitempty" json:"beta"`
	Bonus       BonusSpec   `yaml:"bonus,omitempty" json:"bonus"`
	Curves      []CurveSpec `yaml:"curves" json:"curves"`
	// Noise is "seeded" (default for experiments) or "secure".
	Noise string `yaml:"noise,omitempty" json:"noise,omitempty"`
	// Summary selects a summary written into the run directory before the manifest:
	// "qiao-fig1" (summary.md and summary.claims.json of the Figure 1 claims) or "" (none).
	Summary string `yaml:"summary,omitempty" json:"summary,omitempty"`
	// Inputs are the files this configuration was read from (set by LoadConfig, with the
	// SHA-256 of the bytes parsed); they are recorded in the manifest.
	Inputs []rundir.Input `yaml:"-" json:"-"`
	// envs is the environment registry the configuration resolves env.name through (nil:
	// Envs()); Family.Envs sets it.
	envs *TabularEnvs
}

// registry returns the environment registry of the configuration.
func (c *Config) registry() *TabularEnvs {
	if c.envs != nil {
		return c.envs
	}
	return Envs()
}

// takes reports whether the configuration's environment takes the parameter name.
func (c *Config) takes(name string) bool {
	e, ok := c.registry().Lookup(c.Env.Name)
	return ok && slices.Contains(e.ParamNames(), name)
}

// ParseConfig reads a YAML (or JSON, which is YAML) experiment config strictly (unknown
// fields, duplicate keys and a second document are errors). A field whose zero value means the
// default (beta, bonus.multiplier, env.horizon, the names) may be omitted but not set to zero:
// an explicit zero is rejected with the allowed range rather than silently replaced.
func ParseConfig(data []byte) (*Config, error) { return parseConfig(data, nil) }

// parseConfig is ParseConfig with the environment registry envs (nil: Envs()).
func parseConfig(data []byte, envs *TabularEnvs) (*Config, error) {
	c := &Config{envs: envs}
	return cfgfile.Parse(data, c, "config", c.rejectExplicitZeros, func() error {
		c.defaults()
		return c.Validate()
	})
}

// calibrationNames are the tabular calibrations (package experiment/calibration).
var calibrationNames = calibration.Allowed(calibration.Exact, calibration.Paper, calibration.Unit)

// rejectExplicitZeros refuses the fields present in the document with the zero value that
// defaults() would replace.
func (c *Config) rejectExplicitZeros(keys cfgfile.Keys) error {
	d := []cfgfile.Default{
		{Path: "name", Value: c.Name, Allowed: "a non-empty name"},
		{Path: "beta", Value: c.Beta, Allowed: "in (0, 1)"},
		{Path: "noise", Value: c.Noise, Allowed: "seeded or secure"},
		{Path: "env.name", Value: c.Env.Name, Allowed: c.registry().AllowedOr()},
		{Path: "env.horizon", Value: c.Env.Horizon, Allowed: "in [1, 10000]"},
		{Path: "bonus.preset", Value: c.Bonus.Preset, Allowed: "theory or practical"},
		{Path: "bonus.multiplier", Value: c.Bonus.Multiplier, Allowed: "in " + bounds.MultiplierRange},
	}
	for i, cv := range c.Curves {
		f := fmt.Sprintf("curves[%d].", i)
		d = append(d,
			cfgfile.Default{Path: f + "label", Value: cv.Label, Allowed: "a non-empty label"},
			cfgfile.Default{Path: f + "calibration", Value: cv.Calibration, Allowed: "one of " + calibrationNames},
			cfgfile.Default{Path: f + "e_mode", Value: cv.EMode, Allowed: "theory or practical"})
		if cv.Bonus != nil {
			d = append(d,
				cfgfile.Default{Path: f + "bonus.preset", Value: cv.Bonus.Preset, Allowed: "theory or practical"},
				cfgfile.Default{Path: f + "bonus.multiplier", Value: cv.Bonus.Multiplier, Allowed: "in " + bounds.MultiplierRange})
		}
	}
	return keys.RejectExplicitZeros(d...)
}

// LoadConfig reads a config file (at most 64 MiB) and records it, with the SHA-256 of the
// bytes parsed, as an input of the run.
func LoadConfig(path string) (*Config, error) {
	return cfgfile.Load(path, "config", ParseConfig, func(c *Config, in rundir.Input) { c.Inputs = []rundir.Input{in} })
}

func (c *Config) defaults() {
	if c.Name == "" {
		c.Name = "run"
	}
	if c.Beta == 0 {
		c.Beta = 0.1
	}
	if c.Bonus.Preset == "" {
		c.Bonus.Preset = "practical"
	}
	if c.Noise == "" {
		c.Noise = "seeded"
	}
	if c.Env.Name == "" {
		c.Env.Name = "riverswim"
	}
	if c.Env.Horizon == 0 && c.takes("horizon") {
		c.Env.Horizon = 20
	}
	for i := range c.Curves {
		cv := &c.Curves[i]
		if cv.Calibration == "" {
			cv.Calibration = calibration.Exact
		}
		if c, ok := calibration.Alias(cv.Calibration); ok {
			cv.Calibration = c // outputs carry the canonical name
		}
		if len(cv.Groups) == 0 {
			cv.Groups = []string{"main"}
		}
		if cv.Label == "" {
			cv.Label = c.defaultLabel(*cv)
		}
	}
}

func (c *Config) defaultLabel(cv CurveSpec) string {
	info, err := agents.Lookup(cv.Agent)
	if err != nil || info.Model == agents.NonPrivate {
		return cv.Agent
	}
	return fmt.Sprintf("%s eps=%g %s", cv.Agent, cv.Epsilon, cv.Calibration)
}

// Validate checks the config; errors name the field and the allowed range.
func (c *Config) Validate() error {
	if err := rundir.CheckName("name", c.Name); err != nil {
		return err
	}
	if c.Summary != "" && c.Summary != "qiao-fig1" {
		return fmt.Errorf("summary: must be qiao-fig1 or empty, got %q", c.Summary)
	}
	if err := c.Runs.Check(1); err != nil {
		return err
	}
	if !(c.Beta > 0 && c.Beta < 1) {
		return fmt.Errorf("beta: must be in (0,1), got %g", c.Beta)
	}
	if c.Noise != "seeded" && c.Noise != "secure" {
		return fmt.Errorf("noise: must be seeded or secure, got %q", c.Noise)
	}
	switch e, ok := c.registry().Lookup(c.Env.Name); {
	case !ok:
		return fmt.Errorf("env.name: unknown environment %q (allowed: %s)", c.Env.Name, c.registry().Allowed())
	case e.File:
		if c.Env.Path == "" {
			return fmt.Errorf("env.path: required for env %s", e.Name)
		}
	case c.takes("horizon") && (c.Env.Horizon < 1 || c.Env.Horizon > 10000):
		return fmt.Errorf("env.horizon: must be in [1, 10000], got %d", c.Env.Horizon)
	}
	if err := c.Bonus.validate("bonus"); err != nil {
		return err
	}
	if len(c.Curves) == 0 {
		return fmt.Errorf("curves: at least one curve is required")
	}
	labels := map[string]bool{}
	files := map[string]string{}
	groups := map[string]string{}
	for i, cv := range c.Curves {
		f := fmt.Sprintf("curves[%d]", i)
		info, err := agents.Lookup(cv.Agent)
		if err != nil {
			return fmt.Errorf("%s.agent: %w", f, err)
		}
		if info.Model != agents.NonPrivate {
			if !(cv.Epsilon > 0) || math.IsInf(cv.Epsilon, 0) {
				return fmt.Errorf("%s.epsilon: must be finite and > 0 for %s, got %g", f, cv.Agent, cv.Epsilon)
			}
			if err := bounds.Epsilon(f+".epsilon", cv.Epsilon); err != nil {
				return err
			}
			if _, err := agents.ParseCalibration(cv.Calibration); err != nil {
				return fmt.Errorf("%s.%w", f, err)
			}
		}
		if cv.EMode != "" && cv.EMode != "theory" && cv.EMode != "practical" {
			return fmt.Errorf("%s.e_mode: must be theory or practical, got %q", f, cv.EMode)
		}
		if cv.Bonus != nil {
			if err := cv.Bonus.validate(f + ".bonus"); err != nil {
				return err
			}
		}
		if labels[cv.Label] {
			return fmt.Errorf("%s.label: duplicate label %q", f, cv.Label)
		}
		labels[cv.Label] = true
		if err := rundir.CheckName(f+".label", cv.Label); err != nil {
			return err
		}
		if other, ok := files[sanitize(cv.Label)]; ok {
			return fmt.Errorf("%s.label: %q and %q would both be written to curves/%s.csv; rename one", f, other, cv.Label, sanitize(cv.Label))
		}
		files[sanitize(cv.Label)] = cv.Label
		for j, g := range cv.Groups {
			if err := rundir.CheckName(fmt.Sprintf("%s.groups[%d]", f, j), g); err != nil {
				return err
			}
			if other, ok := groups[sanitize(g)]; ok && other != g {
				return fmt.Errorf("%s.groups[%d]: %q and %q would both be drawn into regret-%s; rename one", f, j, other, g, sanitize(g))
			}
			groups[sanitize(g)] = g
		}
	}
	// Every curve keeps its cumulative regret for every seed and episode.
	return bounds.Stored(len(c.Curves), len(c.Seeds), c.Episodes)
}

func (b BonusSpec) validate(field string) error {
	if b.Preset != "" && b.Preset != "theory" && b.Preset != "practical" {
		return fmt.Errorf("%s.preset: unknown preset %q (allowed: theory, practical)", field, b.Preset)
	}
	if b.Multiplier != 0 && !(b.Multiplier > 0 && b.Multiplier <= bounds.MaxMultiplier) {
		return fmt.Errorf("%s.multiplier: must be in %s (omit it for the default 1), got %g", field, bounds.MultiplierRange, b.Multiplier)
	}
	for name, p := range map[string]*float64{"scale": b.Scale, "c3": b.C3, "c4": b.C4} {
		if p != nil && (!(*p >= 0) || math.IsInf(*p, 0)) {
			return fmt.Errorf("%s.%s: must be finite and >= 0, got %g", field, name, *p)
		}
	}
	return nil
}

// BuildEnv constructs the experiment's MDP with the constructor its environment registered
// (Envs).
func (c *Config) BuildEnv() (*model.MDP, error) {
	e, ok := c.registry().Lookup(c.Env.Name)
	if !ok {
		return nil, fmt.Errorf("env.name: unknown environment %q", c.Env.Name)
	}
	return e.New(c.Env)
}

// agentConfig resolves a curve into an agent config.
func (c *Config) agentConfig(cv CurveSpec) (agents.Config, error) {
	info, err := agents.Lookup(cv.Agent)
	if err != nil {
		return agents.Config{}, err
	}
	bs := c.Bonus
	if cv.Bonus != nil {
		o := *cv.Bonus
		if o.Preset != "" {
			bs.Preset = o.Preset
		}
		if o.Multiplier != 0 {
			bs.Multiplier = o.Multiplier
		}
		if o.Scale != nil {
			bs.Scale = o.Scale
		}
		if o.C3 != nil {
			bs.C3 = o.C3
		}
		if o.C4 != nil {
			bs.C4 = o.C4
		}
	}
	bonus, err := agents.BonusPreset(bs.Preset, info.Algorithm == "private-ucbvi")
	if err != nil {
		return agents.Config{}, err
	}
	if bs.Multiplier != 0 {
		bonus.Multiplier = bs.Multiplier
	}
	if bs.Scale != nil {
		bonus.Scale = *bs.Scale
	}
	if bs.C3 != nil {
		bonus.C3 = *bs.C3
	}
	if bs.C4 != nil {
		bonus.C4 = *bs.C4
	}
	priv := agents.PrivacyConfig{Model: info.Model, Epsilon: cv.Epsilon, Beta: c.Beta, EScale: 1}
	if info.Model != agents.NonPrivate {
		priv.Calibration, err = agents.ParseCalibration(cv.Calibration)
		if err != nil {
			return agents.Config{}, err
		}
	}
	emode := cv.EMode
	if emode == "" {
		emode = bs.Preset
	}
	if emode == "practical" {
		priv.EMode = agents.EPractical
	}
	return agents.Config{Algorithm: info.Algorithm, Privacy: priv, Bonus: bonus}, nil
}

// sanitize turns a label into a file name.
func sanitize(label string) string { return filepath.Clean(rundir.FileName(label)) }
