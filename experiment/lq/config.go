// Package lq is the experiment of the LQ family: `dprl reproduce lq` runs OFU-RL and
// Private-OFU-RL on the reference environment LQ-E1 (lq spec §5.4) for several ε and seeds,
// in parallel and bit-identically whatever the number of workers, and writes curves, figures,
// a summary and a manifest (last).
package lq

import (
	_ "embed"
	"fmt"
	"math"

	agents "github.com/dprl/dprl/agents/lq"
	"github.com/dprl/dprl/experiment/calibration"
	"github.com/dprl/dprl/experiment/engine"
	"github.com/dprl/dprl/experiment/internal/cfgfile"
	"github.com/dprl/dprl/experiment/rundir"
	"github.com/dprl/dprl/internal/bounds"
	model "github.com/dprl/dprl/model/lq"
	"github.com/dprl/dprl/privacy/accounting"
)

//go:embed configs/lq-e1.yaml
var embedded []byte

// Search is the optimistic step's configurable part.
type Search struct {
	RandomStarts int `yaml:"random_starts" json:"random_starts"`
	MaxIter      int `yaml:"max_iter" json:"max_iter"`
}

// Sweep is the optional extended sweep.
type Sweep struct {
	Episodes        int       `yaml:"episodes" json:"episodes"`
	Seeds           []uint64  `yaml:"seeds" json:"seeds"`
	Epsilons        []float64 `yaml:"epsilons" json:"epsilons"`
	ZeroOutEpsilons []float64 `yaml:"zero_out_epsilons" json:"zero_out_epsilons"`
	ReportAt        []int     `yaml:"report_at" json:"report_at"`
}

// Setup is what the configurations of both LQ reproductions begin with (Config and
// PracticalExpConfig embed it inline): the run's name, the system and the runs.
type Setup struct {
	// Name names the run (optional).
	Name string `yaml:"name" json:"name"`
	// System is a registered system (Envs; lq-e1 when omitted) or the path of a system file
	// (model/lq format).
	System string `yaml:"system" json:"system"`
	// Runs are the keys episodes and seeds.
	engine.Runs `yaml:",inline"`
}

// explicitZeros are the keys of s whose zero value means the default (name, system).
func (s *Setup) explicitZeros() []cfgfile.Default {
	return []cfgfile.Default{
		{Path: "name", Value: s.Name, Allowed: "a non-empty name"},
		{Path: "system", Value: s.System, Allowed: "lq-e1 or the path of a system file"},
	}
}

// check checks the name (when set) and the runs, with at least minEpisodes episodes.
func (s *Setup) check(minEpisodes int) error {
	if s.Name != "" {
		if err := rundir.CheckName("name", s.Name); err != nil {
			return err
		}
	}
	return s.Runs.Check(minEpisodes)
}

// BuildSystem returns the configured system: a registered one (Envs; LQ-E1 when omitted) or
// a system file.
func (s *Setup) BuildSystem() (*model.System, error) {
	envs := Envs()
	if systemFile(s.System) {
		file, _ := envs.Lookup("file")
		return file.New(s.System)
	}
	name := s.System
	if name == "" {
		name = envs.Default()
	}
	e, _ := envs.Lookup(name)
	return e.New(name)
}

// Config is the experiment configuration (format of experiment/lq/configs/lq-e1.yaml).
type Config struct {
	// Setup holds the keys name, system, episodes and seeds.
	Setup           `yaml:",inline"`
	Delta           float64   `yaml:"delta" json:"delta"`
	Alpha           float64   `yaml:"alpha" json:"alpha"`
	Lambda          float64   `yaml:"lambda" json:"lambda"`
	Neighbouring    string    `yaml:"neighbouring" json:"neighbouring"`
	Calibration     string    `yaml:"calibration" json:"calibration"`
	WidthMultiplier float64   `yaml:"width_multiplier" json:"width_multiplier"`
	Search          Search    `yaml:"search" json:"search"`
	Epsilons        []float64 `yaml:"epsilons" json:"-"`
	ReportAt        []int     `yaml:"report_at" json:"report_at"`
	Extended        Sweep     `yaml:"extended" json:"extended,omitzero"`
	// RunExtended runs the extended sweep instead of the main one (`dprl reproduce lq
	// --extended`; omitted: the main sweep).
	RunExtended bool `yaml:"run_extended,omitempty" json:"-"`
	// Inputs are the files this configuration was read from (LoadConfig), with their SHA-256.
	Inputs []rundir.Input `yaml:"-" json:"-"`
}

// LoadConfig reads a configuration file (at most 64 MiB) and records it, with the SHA-256 of
// the bytes parsed, as an input of the run.
func LoadConfig(path string) (*Config, error) {
	return cfgfile.Load(path, "lq experiment", ParseConfig, func(c *Config, in rundir.Input) { c.Inputs = []rundir.Input{in} })
}

// DefaultConfig returns the embedded configuration of `dprl reproduce lq`.
func DefaultConfig() (*Config, error) { return ParseConfig(embedded) }

// ParseConfig decodes (strictly: unknown fields, duplicate keys and a second document are
// errors) and validates a configuration. The fields whose zero value means the default (name,
// system, calibration) may be omitted but not set to zero.
func ParseConfig(data []byte) (*Config, error) {
	c := &Config{}
	return cfgfile.Parse(data, c, "lq experiment: parsing config", func(keys cfgfile.Keys) error {
		return keys.RejectExplicitZeros(append(c.explicitZeros(),
			cfgfile.Default{Path: "calibration", Value: c.Calibration, Allowed: "one of " + CalibrationNames})...)
	}, c.Validate)
}

// CalibrationNames are the LQ calibrations (package experiment/calibration): exact (the exact
// ρ*, default) and paper (the paper's σ, which overspends ε under the paper's own zCDP
// accounting; the ledger's exact μ-GDP composition of the two counters certifies ≈ ε/2 for both).
var CalibrationNames = calibration.Allowed(calibration.Exact, calibration.Paper)

// Validate checks every field and names the offending one with its allowed range.
func (c *Config) Validate() error {
	if err := c.check(1); err != nil {
		return err
	}
	if len(c.Epsilons) == 0 || len(c.Epsilons) > 64 {
		return fmt.Errorf("epsilons: must list 1 to 64 values, got %d", len(c.Epsilons))
	}
	cal, err := calibration.Canonical("calibration", c.Calibration, calibration.Exact, calibration.Paper)
	if err != nil {
		return err
	}
	c.Calibration = cal
	if _, err := accounting.ParseNeighbouring(c.Neighbouring); err != nil {
		return fmt.Errorf("neighbouring: %w", err)
	}
	for i, e := range c.Epsilons {
		if !(e > 0) {
			return fmt.Errorf("epsilons: each must be > 0 or .inf, got %v", e)
		}
		if err := bounds.EpsilonOrInf(fmt.Sprintf("epsilons[%d]", i), e); err != nil {
			return err
		}
		cfg := c.agentConfig(e, c.Episodes, c.Neighbouring)
		if _, err := agents.ComputeConstants(agents.Public{N: 1, D: 1, H: 1, Cw: 0.1}, cfg); err != nil {
			return err
		}
	}
	for _, k := range c.ReportAt {
		if k < 1 {
			return fmt.Errorf("report_at: entries must be >= 1, got %d", k)
		}
	}
	if x := c.Extended; x.Episodes != 0 {
		if x.Episodes < 1 || x.Episodes > bounds.MaxEpisodes || len(x.Seeds) == 0 || len(x.Seeds) > bounds.MaxSeeds {
			return fmt.Errorf("extended: episodes must be in [1, %d] with 1 to %d seeds, got %d episodes, %d seeds", bounds.MaxEpisodes, bounds.MaxSeeds, x.Episodes, len(x.Seeds))
		}
		for i, e := range append(append([]float64(nil), x.Epsilons...), x.ZeroOutEpsilons...) {
			if !(e > 0) {
				return fmt.Errorf("extended.epsilons: each must be > 0, got %v", e)
			}
			if err := bounds.EpsilonOrInf(fmt.Sprintf("extended.epsilons[%d] (with zero_out_epsilons)", i), e); err != nil {
				return err
			}
		}
	} else if c.RunExtended {
		return fmt.Errorf("run_extended: the configuration has no extended sweep (extended.episodes)")
	}
	_, err = c.BuildSystem()
	return err
}

// agentConfig returns the agent configuration of one curve.
func (c *Config) agentConfig(eps float64, episodes int, neighbouring string) agents.Config {
	a := agents.DefaultConfig(eps, episodes)
	a.Delta, a.Alpha, a.Lambda = c.Delta, c.Alpha, c.Lambda
	a.Neighbouring, _ = accounting.ParseNeighbouring(neighbouring)
	a.PaperCalibration = c.Calibration == "paper"
	a.WidthMultiplier = c.WidthMultiplier
	a.Search.NumRandomStarts, a.Search.MaxIter = c.Search.RandomStarts, c.Search.MaxIter
	return a
}

// epsLabel formats ε for labels ("inf" for the non-private baseline).
func epsLabel(e float64) string {
	if math.IsInf(e, 1) {
		return "inf"
	}
	return fmt.Sprintf("%g", e)
}
