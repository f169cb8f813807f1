// Package practical runs `dprl reproduce practical-tabular`: dprl's own practical private
// tabular agents (agents/tabular practical-*; practical-privacy spec), labelled as dprl's and
// not the papers', against UCBVI and the papers' DP-UCBVI with the strict calibration, on
// RiverSwim (JDP and LDP at an ε grid) and seeded Garnet MDPs (the same constants, no tuning
// per environment). Every run derives its randomness from its seed through package rng, so
// results do not depend on the number of workers; outputs are written atomically with a
// manifest written last.
package practical

import (
	"bytes"
	_ "embed"
	"fmt"
	"math"
	"os"

	"go.yaml.in/yaml/v3"

	"github.com/dprl/dprl/experiment/rundir"
)

//go:embed configs/practical-tabular.yaml
var defaultYAML []byte

// GarnetConfig is the Garnet part of the experiment.
type GarnetConfig struct {
	EnvSeeds      []uint64 `yaml:"env_seeds" json:"env_seeds"`
	States        int      `yaml:"states" json:"states"`
	Actions       int      `yaml:"actions" json:"actions"`
	Branching     int      `yaml:"branching" json:"branching"`
	RewardDensity float64  `yaml:"reward_density" json:"reward_density"`
	Episodes      int      `yaml:"episodes" json:"episodes"`
	Seeds         []uint64 `yaml:"seeds" json:"seeds"`
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
	// Inputs are the files this configuration was read from (LoadConfig), with their SHA-256;
	// they are recorded in the manifest.
	Inputs []rundir.Input `yaml:"-" json:"-"`
}

// DefaultConfig returns the embedded configuration.
func DefaultConfig() (*Config, error) { return ParseConfig(defaultYAML) }

// LoadConfig reads a YAML configuration file and records it (with its SHA-256) in Inputs.
func LoadConfig(path string) (*Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	c, err := ParseConfig(b)
	if c != nil {
		c.Inputs = []rundir.Input{rundir.HashBytes("config", path, b)}
	}
	return c, err
}

// ParseConfig parses YAML, rejecting unknown fields, and validates it.
func ParseConfig(data []byte) (*Config, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var c Config
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	return &c, c.Validate()
}

func checkSeeds(field string, s []uint64) error {
	if len(s) == 0 {
		return fmt.Errorf("%s: at least one seed is required", field)
	}
	seen := map[uint64]bool{}
	for _, x := range s {
		if seen[x] {
			return fmt.Errorf("%s: duplicate seed %d", field, x)
		}
		seen[x] = true
	}
	return nil
}

// Validate checks every field; errors name the field and the allowed range.
func (c *Config) Validate() error {
	for _, f := range []struct {
		name string
		v    int
	}{{"episodes", c.Episodes}, {"ldp_episodes", c.LDPEpisodes}, {"ldp_long_episodes", c.LDPLongEpisodes}, {"garnet.episodes", c.Garnet.Episodes}} {
		if f.v < 10 || f.v > 100_000_000 {
			return fmt.Errorf("%s: must be in [10, 1e8], got %d", f.name, f.v)
		}
	}
	if c.Horizon < 1 || c.Horizon > 10000 {
		return fmt.Errorf("horizon: must be in [1, 10000], got %d", c.Horizon)
	}
	if err := checkSeeds("seeds", c.Seeds); err != nil {
		return err
	}
	if err := checkSeeds("garnet.seeds", c.Garnet.Seeds); err != nil {
		return err
	}
	if !(c.Delta > 0 && c.Delta < 1) {
		return fmt.Errorf("delta: must be in (0,1), got %g", c.Delta)
	}
	if len(c.Epsilons) == 0 {
		return fmt.Errorf("epsilons: at least one ε is required")
	}
	has1 := false
	for i, e := range c.Epsilons {
		if !(e > 0) || math.IsInf(e, 0) {
			return fmt.Errorf("epsilons[%d]: must be finite and > 0, got %g", i, e)
		}
		has1 = has1 || e == 1
	}
	if !has1 {
		return fmt.Errorf("epsilons: must contain 1 (the goals are stated at ε = 1)")
	}
	g := c.Garnet
	if len(g.EnvSeeds) == 0 {
		return fmt.Errorf("garnet.env_seeds: at least one environment is required")
	}
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
