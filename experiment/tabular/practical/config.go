// Package practical runs `dprl reproduce practical-tabular`: dprl's own practical private
// tabular agents (agents/tabular practical-*; practical-privacy spec), labelled as dprl's and
// not the papers', against UCBVI and the papers' DP-UCBVI with the exact calibration, on
// RiverSwim (JDP and LDP at an ε grid) and seeded Garnet MDPs (the same constants, no tuning
// per environment). Every run derives its randomness from its seed through package rng, so
// results do not depend on the number of workers; outputs are written atomically with a
// manifest written last.
package practical

import (
	_ "embed"
	"fmt"
	"math"
	"strings"

	agents "github.com/dprl/dprl/agents/tabular"
	"github.com/dprl/dprl/experiment/engine"
	"github.com/dprl/dprl/experiment/rundir"
	"github.com/dprl/dprl/experiment/tabular/tabenv"
	"github.com/dprl/dprl/internal/boundedread"
	"github.com/dprl/dprl/internal/bounds"
	"github.com/dprl/dprl/internal/strictdecode"
)

//go:embed configs/practical-tabular.yaml
var defaultYAML []byte

//go:embed configs/benchmarks.yaml
var benchmarksYAML []byte

// GarnetConfig is the Garnet part of the experiment.
type GarnetConfig struct {
	EnvSeeds      []uint64 `yaml:"env_seeds" json:"env_seeds"`
	States        int      `yaml:"states" json:"states"`
	Actions       int      `yaml:"actions" json:"actions"`
	Branching     int      `yaml:"branching" json:"branching"`
	RewardDensity float64  `yaml:"reward_density" json:"reward_density"`
	// Runs are the keys episodes and seeds of the Garnet curves.
	engine.Runs `yaml:",inline"`
}

// Config is the whole experiment.
type Config struct {
	Name            string       `yaml:"name" json:"name"`
	Horizon         int          `yaml:"horizon" json:"horizon"`
	Episodes        int          `yaml:"episodes" json:"episodes"`
	LDPEpisodes     int          `yaml:"ldp_episodes" json:"ldp_episodes"`
	LDPLongEpisodes int          `yaml:"ldp_long_episodes" json:"ldp_long_episodes"`
	Seeds           []uint64     `yaml:"seeds" json:"seeds"`
	Delta           float64      `yaml:"delta" json:"delta"`
	Epsilons        []float64    `yaml:"epsilons" json:"epsilons"`
	Garnet          GarnetConfig `yaml:"garnet" json:"garnet"`
	// Long (set by --long, or long: true in a sweep configuration): the LDP curves run for
	// LDPLongEpisodes.
	Long bool `yaml:"long,omitempty" json:"long"`
	// Curves, when non-empty, replace the reproduction's grid of curves (the shared run schema,
	// PlanSpec): each curve runs for `episodes` over `seeds` on its environment, and
	// ldp_episodes, ldp_long_episodes, long, epsilons and garnet.{episodes, seeds, env_seeds}
	// are not used (they may be omitted). Omitted: the reproduction's grid.
	Curves []CurveSpec `yaml:"curves,omitempty" json:"curves,omitempty"`
	// Summary selects the summary of a configuration with explicit curves: omitted, one table
	// per environment; "benchmarks", the benchmark table (BenchmarkSummary: R(5·10⁴) and
	// R(K), the window 9·10⁴…10⁵, the last decile as shares of the uniform policy, the privacy
	// cost against the twin practical-ucbvi, the JDP lower-bound term H·S·A/ε and the goals).
	Summary string `yaml:"summary,omitempty" json:"summary,omitempty"`
	// Noise is the privacy noise source: "seeded" (omitted; reproducible, derived from the run
	// seed) or "secure" (the agents' deployment default, crypto-seeded; not reproducible).
	Noise string `yaml:"noise,omitempty" json:"noise,omitempty"`
	// Inputs are the files this configuration was read from (LoadConfig), with their SHA-256;
	// they are recorded in the manifest.
	Inputs []rundir.Input `yaml:"-" json:"-"`
	// envs is the environment registry the curves' environments are resolved through and
	// built with (nil: the family's, tabenv.New); Suite.Envs sets it.
	envs *tabenv.Registry
}

// registry returns the environment registry of the configuration.
func (c *Config) registry() *tabenv.Registry {
	if c.envs == nil {
		c.envs = tabenv.New()
	}
	return c.envs
}

// CurveSpec is one curve of a configuration with explicit curves (Config.Curves).
type CurveSpec struct {
	// Env is an environment of the family's registry (package tabenv; dprl list): riverswim,
	// garnet, a Gymnasium toy-text table or file (an MDP file with its own horizon; statistics
	// pooled over h only when the file's model is time-homogeneous).
	Env string `yaml:"env" json:"env"`
	// Params are the environment's parameters (env.params: dprl list names them). Omitted
	// ones take, in turn, the configuration's horizon (for an environment with a horizon), the
	// garnet block's shape (for garnet) and the registry's defaults.
	Params map[string]float64 `yaml:"params,omitempty" json:"params,omitempty"`
	// EnvSeed is the old spelling of params.env_seed (still read).
	EnvSeed uint64 `yaml:"env_seed,omitempty" json:"env_seed,omitempty"`
	// File is the MDP file (env file only; JSON or YAML, model/tabular.File; its own H).
	File string `yaml:"file,omitempty" json:"file,omitempty"`
	// Agent is ucbvi, dp-ucbvi-jdp, dp-ucbvi-ldp (the papers', exact calibration) or one of
	// dprl's practical tabular agents.
	Agent string `yaml:"agent" json:"agent"`
	// Epsilon is ε of a private agent (finite, > 0); omitted for a non-private one.
	Epsilon float64 `yaml:"epsilon,omitempty" json:"epsilon,omitempty"`
	// Episodes, when set, runs this curve for fewer episodes than the configuration's K (an
	// agent too slow for the whole run, e.g. UCBVI at H = 200); a value above the
	// configuration's episodes (after --episodes) is clamped to it.
	Episodes int `yaml:"episodes,omitempty" json:"episodes,omitempty"`
}

// MaxCurves bounds Config.Curves.
const MaxCurves = 10_000

// agentNames lists the agents of explicit curves (for errors): the papers' baselines of the
// reproduction (exact calibration, the repository's practical UCBVI bonus), then dprl's
// practical agents.
func agentNames() string {
	names := []string{"ucbvi", "dp-ucbvi-jdp", "dp-ucbvi-ldp"}
	for _, a := range agents.PracticalAgents() {
		names = append(names, a.Name)
	}
	return strings.Join(names, ", ")
}

// agentPrivate reports whether name is a private agent of the family (ok = false if it is not
// one of its agents).
func agentPrivate(name string) (private, ok bool) {
	switch name {
	case "ucbvi":
		return false, true
	case "dp-ucbvi-jdp", "dp-ucbvi-ldp":
		return true, true
	}
	if info, err := agents.LookupPractical(name); err == nil {
		return info.Model != agents.NonPrivate, true
	}
	return false, false
}

// DefaultConfig returns the embedded configuration.
func DefaultConfig() (*Config, error) { return ParseConfig(defaultYAML) }

// LoadConfig reads a YAML configuration file and records it (with its SHA-256) in Inputs.
func LoadConfig(path string) (*Config, error) {
	b, err := boundedread.ReadFile(path, boundedread.DefaultLimit)
	if err != nil {
		return nil, err
	}
	c, err := ParseConfig(b)
	if c != nil {
		c.Inputs = []rundir.Input{rundir.HashBytes("config", path, b)}
	}
	return c, err
}

// ParseConfig parses YAML strictly (strictdecode: unknown fields, duplicate keys and a second
// document are errors; a value of the wrong type is reported under its field) and validates it.
func ParseConfig(data []byte) (*Config, error) { return parseConfig(data, nil) }

// parseConfig is ParseConfig with the environment registry envs (nil: tabenv.New()).
func parseConfig(data []byte, envs *tabenv.Registry) (*Config, error) {
	c := Config{envs: envs}
	if err := strictdecode.Decode(data, "yaml", &c); err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	return &c, c.Validate()
}

// Validate checks every field; errors name the field and the allowed range.
func (c *Config) Validate() error {
	if len(c.Curves) > 0 {
		return c.validateCurves()
	}
	for _, f := range []struct {
		name string
		v    int
	}{{"episodes", c.Episodes}, {"ldp_episodes", c.LDPEpisodes}, {"ldp_long_episodes", c.LDPLongEpisodes}, {"garnet.episodes", c.Garnet.Episodes}} {
		if err := checkEpisodes(f.name, f.v); err != nil {
			return err
		}
	}
	if err := c.validateCommon(); err != nil {
		return err
	}
	if err := engine.CheckSeeds("garnet.seeds", c.Garnet.Seeds); err != nil {
		return err
	}
	if len(c.Epsilons) == 0 {
		return fmt.Errorf("epsilons: at least one ε is required")
	}
	has1 := false
	for i, e := range c.Epsilons {
		if !(e > 0) || math.IsInf(e, 0) {
			return fmt.Errorf("epsilons[%d]: must be finite and > 0, got %g", i, e)
		}
		if err := bounds.Epsilon(fmt.Sprintf("epsilons[%d]", i), e); err != nil {
			return err
		}
		has1 = has1 || e == 1
	}
	if !has1 {
		return fmt.Errorf("epsilons: must contain 1 (the goals are stated at ε = 1)")
	}
	if len(c.Garnet.EnvSeeds) == 0 {
		return fmt.Errorf("garnet.env_seeds: at least one environment is required")
	}
	return c.validateGarnetShape()
}

func checkEpisodes(field string, v int) error {
	if v < 10 || v > bounds.MaxEpisodes {
		return fmt.Errorf("%s: must be in [10, %d], got %d", field, bounds.MaxEpisodes, v)
	}
	return nil
}

// validateCommon checks the fields every configuration uses: horizon, seeds, delta, noise.
func (c *Config) validateCommon() error {
	if c.Horizon < 1 || c.Horizon > 10000 {
		return fmt.Errorf("horizon: must be in [1, 10000], got %d", c.Horizon)
	}
	if err := engine.CheckSeeds("seeds", c.Seeds); err != nil {
		return err
	}
	if !(c.Delta > 0 && c.Delta < 1) {
		return fmt.Errorf("delta: must be in (0,1), got %g", c.Delta)
	}
	if c.Noise != "" && c.Noise != "seeded" && c.Noise != "secure" {
		return fmt.Errorf("noise: must be seeded or secure, got %q", c.Noise)
	}
	return nil
}

func (c *Config) validateGarnetShape() error {
	g := c.Garnet
	if g.States < 2 || g.States > 200 || g.Actions < 2 || g.Actions > 50 {
		return fmt.Errorf("garnet.states/actions: must be in [2, 200] / [2, 50], got %d / %d", g.States, g.Actions)
	}
	if g.Branching < 1 || g.Branching > g.States {
		return fmt.Errorf("garnet.branching: must be in [1, states], got %d", g.Branching)
	}
	if !(g.RewardDensity > 0 && g.RewardDensity <= 1) {
		return fmt.Errorf("garnet.reward_density: must be in (0, 1], got %g", g.RewardDensity)
	}
	return nil
}

// validateCurves checks a configuration with explicit curves: the fields it uses and every
// curve (environment, agent, ε), each (environment, agent, ε) once.
func (c *Config) validateCurves() error {
	if err := checkEpisodes("episodes", c.Episodes); err != nil {
		return err
	}
	if c.Summary != "" && c.Summary != "benchmarks" {
		return fmt.Errorf("summary: unknown summary %q (allowed: benchmarks, or omit it)", c.Summary)
	}
	if err := c.validateCommon(); err != nil {
		return err
	}
	if len(c.Curves) > MaxCurves {
		return fmt.Errorf("curves: at most %d curves, got %d", MaxCurves, len(c.Curves))
	}
	for i, cv := range c.Curves {
		if cv.Episodes != 0 {
			if err := checkEpisodes(fmt.Sprintf("curves[%d].episodes", i), cv.Episodes); err != nil {
				return err
			}
		}
		private, ok := agentPrivate(cv.Agent)
		switch {
		case !ok:
			return fmt.Errorf("curves[%d].agent: unknown agent %q (allowed: %s)", i, cv.Agent, agentNames())
		case private && bounds.Epsilon("", cv.Epsilon) != nil:
			return fmt.Errorf("curves[%d].epsilon: the private agent %s needs ε in %s, got %g", i, cv.Agent, bounds.EpsilonRange, cv.Epsilon)
		case !private && cv.Epsilon != 0:
			return fmt.Errorf("curves[%d].epsilon: %s is not private (omit ε), got %g", i, cv.Agent, cv.Epsilon)
		}
	}
	_, err := c.curves() // every environment through the registry; each curve once
	return err
}
