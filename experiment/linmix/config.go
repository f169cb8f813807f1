// Package linmix runs the linear-mixture reproduction (`dprl reproduce linear-mixture`):
// regret versus K for UCRL-VTR, private UCRL-VTR (JDP, LDP, pure-DP Laplace), UCRL-VTR+,
// LinOpt-VI and LinOpt-PO at several ε, on TwoStateHard and HardToLearn, over several seeds,
// with the theory widths (c_β = 1) and a tuned multiplier; it writes CSVs, figures with
// confidence bands, a summary that checks the papers' claims, and manifest.json (last).
//
// Neither paper has experiments (linear-mixture spec §7); the protocol is the spec's proposal.
package linmix

import (
	_ "embed"
	"fmt"
	"math"
	"strings"

	agents "github.com/dprl/dprl/agents/linmix"
	"github.com/dprl/dprl/experiment/calibration"
	"github.com/dprl/dprl/experiment/engine"
	"github.com/dprl/dprl/experiment/internal/cfgfile"
	"github.com/dprl/dprl/experiment/rundir"
	"github.com/dprl/dprl/internal/bounds"
	model "github.com/dprl/dprl/model/linmix"
)

//go:embed configs/linear-mixture.yaml
var defaultConfig []byte

//go:embed configs/practical-linear-mixture.yaml
var practicalConfig []byte

//go:embed configs/practical-linear-mixture-long.yaml
var practicalLongConfig []byte

// PracticalConfig parses the embedded configuration of `dprl reproduce
// practical-linear-mixture` (long: the K = 2·10⁵ LDP run).
func PracticalConfig(long bool) (*Config, error) {
	if long {
		return ParseConfig(practicalLongConfig)
	}
	return ParseConfig(practicalConfig)
}

// DefaultConfigYAML returns the embedded default configuration.
func DefaultConfigYAML() []byte { return append([]byte(nil), defaultConfig...) }

// EnvConfig selects an environment.
type EnvConfig struct {
	// Kind is a registered environment (Envs): two-state-hard, hard-to-learn, riverswim,
	// base-mixture or file. Its parameters are the fields below, by their YAML names.
	Kind string `yaml:"kind" json:"kind"`
	// Dim, Horizon, Q, Rho parametrise the built-in environments.
	Dim     int     `yaml:"dim,omitempty" json:"dim,omitempty"`
	Horizon int     `yaml:"horizon,omitempty" json:"horizon,omitempty"`
	Q       float64 `yaml:"q,omitempty" json:"q,omitempty"`
	Rho     float64 `yaml:"rho,omitempty" json:"rho,omitempty"`
	States  int     `yaml:"states,omitempty" json:"states,omitempty"`
	Actions int     `yaml:"actions,omitempty" json:"actions,omitempty"`
	// File is the path of a linear mixture MDP file (kind file).
	File string `yaml:"file,omitempty" json:"file,omitempty"`
	// seed and episodes are the run seed and K that Build was given (a constructor's
	// randomness and size).
	seed     uint64
	episodes int
}

// CurveSpec is one family of curves: an algorithm and privacy mode, expanded over Epsilons
// (private modes) and over the config's BetaMults.
//
// Algorithm practical-vtr is dprl's own practical private UCRL-VTR (agents/linmix
// PracticalLabel, no regret proof), configured by Practical; it ignores BetaMults (its width
// multiplier is practical.beta_mult) and runs once.
type CurveSpec struct {
	Algorithm   string         `yaml:"algorithm" json:"algorithm"`
	Mode        string         `yaml:"mode" json:"mode"`
	Calibration string         `yaml:"calibration,omitempty" json:"calibration,omitempty"`
	Epsilons    []float64      `yaml:"epsilons,omitempty" json:"epsilons,omitempty"`
	Practical   *PracticalSpec `yaml:"practical,omitempty" json:"practical,omitempty"`
}

// PracticalAlgorithm names dprl's practical private UCRL-VTR in configurations.
const PracticalAlgorithm = "practical-vtr"

// PracticalSpec configures a practical-vtr curve (agents/linmix.PracticalConfig; zero values
// take the agent's defaults).
type PracticalSpec struct {
	BatchEvery int     `yaml:"batch_every,omitempty" json:"batch_every,omitempty"`
	Budget     float64 `yaml:"budget,omitempty" json:"budget,omitempty"`
	Clip       float64 `yaml:"clip,omitempty" json:"clip,omitempty"`
	Counter    string  `yaml:"counter,omitempty" json:"counter,omitempty"`
	Lambda0    float64 `yaml:"lambda0,omitempty" json:"lambda0,omitempty"`
	Confidence float64 `yaml:"confidence,omitempty" json:"confidence,omitempty"`
	BetaMult   float64 `yaml:"beta_mult,omitempty" json:"beta_mult,omitempty"`
	Theory     bool    `yaml:"theory,omitempty" json:"theory,omitempty"`
}

// practicalConfigs returns the agent configurations of a practical-vtr curve (one per ε).
func (cv CurveSpec) practicalConfigs(c *Config) ([]agents.PracticalConfig, error) {
	mode, err := parseMode(cv.Mode)
	if err != nil {
		return nil, err
	}
	ps := PracticalSpec{}
	if cv.Practical != nil {
		ps = *cv.Practical
	}
	eps := cv.Epsilons
	if mode == agents.None {
		eps = []float64{0}
	}
	var out []agents.PracticalConfig
	for _, e := range eps {
		pc := agents.PracticalConfig{Privacy: agents.PracticalPrivacy{Mode: mode, Epsilon: e, BatchEvery: ps.BatchEvery, Counter: ps.Counter, Clip: ps.Clip, Budget: ps.Budget},
			Episodes: c.Episodes, Lambda0: ps.Lambda0, Confidence: ps.Confidence, BetaMult: ps.BetaMult, Theory: ps.Theory, P: c.P}
		if mode != agents.None {
			pc.Privacy.Delta = c.Delta
		}
		if err := pc.Validate(); err != nil {
			return nil, err
		}
		out = append(out, pc)
	}
	return out, nil
}

// Config is the experiment configuration (YAML, unknown fields rejected).
type Config struct {
	Name string `yaml:"name" json:"name"`
	// Runs are the keys episodes (K) and seeds.
	engine.Runs `yaml:",inline"`
	Delta       float64     `yaml:"delta" json:"delta"`
	P           float64     `yaml:"p" json:"p"`
	Envs        []EnvConfig `yaml:"envs" json:"envs"`
	Curves      []CurveSpec `yaml:"curves" json:"curves"`
	// BetaMults lists c_β values; 1 is the theory width. Every curve runs with each.
	BetaMults []float64 `yaml:"beta_mults" json:"beta_mults"`
	// ShiftMult is c_shift for the runs with c_β ≠ 1 (the theory runs use 1).
	ShiftMult float64 `yaml:"shift_mult" json:"shift_mult,omitempty"`
	// Points is the number of checkpoints stored per curve (log-spaced and linear, ≤ K).
	Points int `yaml:"points" json:"points"`
	// Inputs are the files this configuration was read from (LoadConfig), with their SHA-256.
	Inputs []rundir.Input `yaml:"-" json:"-"`
}

// DefaultConfig parses the embedded default configuration.
func DefaultConfig() (*Config, error) { return ParseConfig(defaultConfig) }

// LoadConfig reads a configuration file (at most 64 MiB) and records it, with the SHA-256 of
// the bytes parsed, as an input of the run.
func LoadConfig(path string) (*Config, error) {
	return cfgfile.Load(path, "linear-mixture config", ParseConfig, func(c *Config, in rundir.Input) { c.Inputs = []rundir.Input{in} })
}

// ParseConfig parses (strictly: unknown fields, duplicate keys and a second document are
// errors) and validates a YAML configuration. A field whose zero value means the default
// (name, points, shift_mult, an environment's states, a practical curve's settings) may be
// omitted but not set to zero: an explicit zero is rejected with the allowed range.
func ParseConfig(b []byte) (*Config, error) {
	c := &Config{}
	return cfgfile.Parse(b, c, "linear-mixture config", c.rejectExplicitZeros, c.Validate)
}

// rejectExplicitZeros refuses the fields present in the document with the zero value that
// Validate or the agents' defaults would replace.
func (c *Config) rejectExplicitZeros(keys cfgfile.Keys) error {
	d := []cfgfile.Default{
		{Path: "name", Value: c.Name, Allowed: "a non-empty name"},
		{Path: "points", Value: c.Points, Allowed: "in [10, 100000]"},
		{Path: "shift_mult", Value: c.ShiftMult, Allowed: "a finite number > 0"},
	}
	for i, e := range c.Envs {
		d = append(d, cfgfile.Default{Path: fmt.Sprintf("envs[%d].states", i), Value: e.States, Allowed: "in [3, 20] for riverswim (default 5)"})
	}
	for i, cv := range c.Curves {
		f := fmt.Sprintf("curves[%d].", i)
		d = append(d, cfgfile.Default{Path: f + "calibration", Value: cv.Calibration, Allowed: "one of " + CalibrationNames})
		if p := cv.Practical; p != nil {
			d = append(d,
				cfgfile.Default{Path: f + "practical.batch_every", Value: p.BatchEvery, Allowed: "an integer >= 1"},
				cfgfile.Default{Path: f + "practical.budget", Value: p.Budget, Allowed: "in (0, 1]"},
				cfgfile.Default{Path: f + "practical.clip", Value: p.Clip, Allowed: "in (0, 1]"},
				cfgfile.Default{Path: f + "practical.counter", Value: p.Counter, Allowed: "a counter name (default blt)"},
				cfgfile.Default{Path: f + "practical.lambda0", Value: p.Lambda0, Allowed: "a finite number > 0"},
				cfgfile.Default{Path: f + "practical.confidence", Value: p.Confidence, Allowed: "in (0, 1)"},
				cfgfile.Default{Path: f + "practical.beta_mult", Value: p.BetaMult, Allowed: "a finite number > 0"})
		}
	}
	return keys.RejectExplicitZeros(d...)
}

// CalibrationNames are the linear-mixture calibrations (package experiment/calibration):
// paper (Luyo et al. Cor. 5/6, default), laplace (pure ε-DP, spec §3.5) and zcdp (spec P7).
var CalibrationNames = calibration.Allowed(calibration.Paper, calibration.Laplace, calibration.ZCDP)

// Validate checks the configuration; errors name the field and the allowed range.
func (c *Config) Validate() error {
	if c.Name == "" {
		c.Name = "linear-mixture"
	}
	if c.Points == 0 {
		c.Points = 400
	}
	if c.ShiftMult == 0 {
		c.ShiftMult = 1
	}
	if err := engine.CheckLinearBlock(c.Name, c.Runs, 10, c.Delta, c.P); err != nil {
		return err
	}
	switch {
	case len(c.Envs) == 0:
		return fmt.Errorf("envs: empty, want at least one environment")
	case len(c.Curves) == 0:
		return fmt.Errorf("curves: empty, want at least one curve")
	case len(c.BetaMults) == 0:
		return fmt.Errorf("beta_mults: empty, want e.g. [1, 0.01]")
	case c.Points < 10 || c.Points > 100000:
		return fmt.Errorf("points: %d, want 10..100000", c.Points)
	case !(c.ShiftMult > 0) || math.IsInf(c.ShiftMult, 0):
		return fmt.Errorf("shift_mult: %v, want a finite number > 0", c.ShiftMult)
	}
	for i, b := range c.BetaMults {
		if !(b > 0) || math.IsInf(b, 0) {
			return fmt.Errorf("beta_mults[%d]: %v, want a finite number > 0", i, b)
		}
	}
	var envs []*model.MDP
	for i, e := range c.Envs {
		if err := e.checkEnv(fmt.Sprintf("envs[%d]", i)); err != nil {
			return err // before the environment is built
		}
		m, err := e.Build(1, c.Episodes)
		if err != nil {
			return fmt.Errorf("envs[%d]: %w", i, err)
		}
		envs = append(envs, m)
	}
	for i, cv := range c.Curves {
		for j, e := range cv.Epsilons {
			if err := bounds.Epsilon(fmt.Sprintf("curves[%d].epsilons[%d]", i, j), e); err != nil {
				return err
			}
		}
		a, ok := lookupAgent(cv.Algorithm)
		if !ok {
			return fmt.Errorf("curves[%d].algorithm: %q unknown (%s)", i, cv.Algorithm, algorithms())
		}
		mode, err := parseMode(cv.Mode)
		if err != nil {
			return fmt.Errorf("curves[%d].mode: %w", i, err)
		}
		if !a.hasMode(mode) {
			return fmt.Errorf("curves[%d].mode: %s does not run in mode %s", i, a.Name, cv.Mode)
		}
		if cv.Practical != nil && !a.Practical {
			return fmt.Errorf("curves[%d].practical: not for algorithm %s (only for %s)", i, cv.Algorithm, practicalNames())
		}
		if cv.Calibration != "" {
			if len(a.Calibrations) == 0 {
				return fmt.Errorf("curves[%d].calibration: %s calibrates through its own accountant; omit calibration", i, a.Name)
			}
			if _, err := calibration.Canonical(fmt.Sprintf("curves[%d].calibration", i), cv.Calibration, a.Calibrations...); err != nil {
				return err
			}
		}
		if _, err := a.Expand(c, cv, 1); err != nil {
			return fmt.Errorf("curves[%d] (%s/%s): %w", i, cv.Algorithm, cv.Mode, err)
		}
		if cv.Mode != "none" && len(cv.Epsilons) == 0 {
			return fmt.Errorf("curves[%d].epsilons: empty for a private mode", i)
		}
		if a.Check == nil {
			continue
		}
		// Every noise scale, shift and width must be finite (a tiny ε overflows them): checked
		// on every environment before any compute, not when the run reaches the curve.
		for j, m := range envs {
			for _, bm := range c.BetaMults {
				curves, err := a.Expand(c, cv, bm)
				if err != nil {
					return fmt.Errorf("curves[%d] (%s/%s): %w", i, cv.Algorithm, cv.Mode, err)
				}
				for _, cur := range curves {
					if err := a.Check(m, cur); err != nil {
						return fmt.Errorf("curves[%d] (%s/%s) on envs[%d]: %w", i, cv.Algorithm, cv.Mode, j, err)
					}
				}
			}
		}
	}
	return nil
}

// practicalNames lists the table's practical algorithms (those taking curves[].practical).
func practicalNames() string {
	var n []string
	for _, a := range agentTable {
		if a.Practical {
			n = append(n, a.Name)
		}
	}
	return strings.Join(n, ", ")
}

func parseMode(s string) (agents.Mode, error) {
	for _, m := range []agents.Mode{agents.None, agents.JDP, agents.LDP} {
		if m.String() == s {
			return m, nil
		}
	}
	return 0, fmt.Errorf("%q unknown (none, jdp, ldp)", s)
}

// riverSwimStates is RiverSwim's S: States, or 5 when it is omitted (0).
func (e EnvConfig) riverSwimStates() int {
	if e.States == 0 {
		return 5
	}
	return e.States
}

// Build constructs the environment with the constructor its kind registered (Envs);
// HardToLearn's hidden signs (and a base mixture's kernels) are drawn from the environment
// stream of seed (engine.Streams.Env).
func (e EnvConfig) Build(seed uint64, K int) (*model.MDP, error) {
	envs := Envs()
	k, ok := envs.Lookup(e.Kind)
	if !ok {
		return nil, fmt.Errorf("kind: %q unknown (%s)", e.Kind, envs.Allowed())
	}
	e.seed, e.episodes = seed, K
	return k.New(e)
}

// used returns the configuration actually used: environments with only their kind's
// parameters (a file environment with the file's own H), no calibration or ε on non-private
// curves, and no c_shift when every run uses the theory multiplier.
func (c *Config) used(horizons []int) *Config {
	u := *c
	u.Inputs = nil
	u.Envs = make([]EnvConfig, len(c.Envs))
	envs := Envs()
	for i, e := range c.Envs {
		k := EnvConfig{Kind: e.Kind, Horizon: e.Horizon}
		envs.CopyParams(e.Kind, &k, &e)
		if e.Kind == "riverswim" {
			k.States = e.riverSwimStates()
		}
		if i < len(horizons) && horizons[i] > 0 {
			k.Horizon = horizons[i]
		}
		u.Envs[i] = k
	}
	u.Curves = make([]CurveSpec, len(c.Curves))
	for i, cv := range c.Curves {
		if cv.Mode == "none" {
			cv.Calibration, cv.Epsilons = "", nil
		}
		u.Curves[i] = cv
	}
	tuned := false
	for _, b := range c.BetaMults {
		tuned = tuned || b != 1
	}
	if !tuned {
		u.ShiftMult = 0
	}
	return &u
}
