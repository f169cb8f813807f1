// Package linmdp is the linear-MDP experiment behind `dprl reproduce linear-mdp`: regret vs K
// for LSVI-UCB, the two private agents (Ngo et al. Alg. 1, Luyo et al. Alg. 2 batched and
// non-batched) and their noise-off twins at several ε, on the spec's environments, with
// confidence bands, update counts, theory and tuned β multipliers, a privacy-cost-vs-ε plot and
// regret growth exponents next to the theory's.
package linmdp

import (
	_ "embed"
	"fmt"
	"math"

	"github.com/dprl/dprl/experiment/engine"
	"github.com/dprl/dprl/experiment/internal/cfgfile"
	"github.com/dprl/dprl/experiment/rundir"
	"github.com/dprl/dprl/internal/bounds"
	model "github.com/dprl/dprl/model/linmdp"
	"github.com/dprl/dprl/rng"
)

//go:embed configs/linear-mdp.yaml
var defaultConfig []byte

// EnvSpec names one environment of the experiment.
type EnvSpec struct {
	// Name labels the environment in outputs (e.g. "E2").
	Name string `yaml:"name" json:"name"`
	// Kind is a registered environment (Envs): latentriver, riverswim, randomsimplex,
	// twostate100 or file. Its parameters are the fields below, by their YAML names.
	Kind string `yaml:"kind" json:"kind"`
	// M is LatentRiver's m; Copies its M; N RiverSwim's n or RandomSimplex's N.
	M      int `yaml:"m,omitempty" json:"m,omitempty"`
	Copies int `yaml:"copies,omitempty" json:"copies,omitempty"`
	N      int `yaml:"n,omitempty" json:"n,omitempty"`
	// A and D are RandomSimplex's action count and dimension; Seed its generator seed (also
	// TwoState-100's).
	A    int    `yaml:"a,omitempty" json:"a,omitempty"`
	D    int    `yaml:"d,omitempty" json:"d,omitempty"`
	Seed uint64 `yaml:"seed,omitempty" json:"seed,omitempty"`
	// Horizon is H (ignored for kind file, which carries its own).
	Horizon int `yaml:"horizon" json:"horizon"`
	// Path is the linear-MDP file for kind file.
	Path string `yaml:"path,omitempty" json:"path,omitempty"`
}

// Build constructs the environment with the constructor its kind registered (Envs).
func (e EnvSpec) Build() (*model.MDP, error) {
	envs := Envs()
	if k, ok := envs.Lookup(e.Kind); ok {
		return k.New(e)
	}
	return nil, fmt.Errorf("envs[%s].kind must be one of %s; got %q", e.Name, envs.Allowed(), e.Kind)
}

// BetaMode is one β setting: either a fixed multiplier for every agent, or (MatchCBeta > 0)
// per-agent multipliers chosen so that every agent's β equals MatchCBeta·dH√ln(2dKH/p) —
// times √(regulariser) if MatchRegulariser, so that every agent gives an unexplored unit
// feature the same bonus β/√regulariser as the non-private agent with λ = 1.
type BetaMode struct {
	// Name labels the mode in outputs.
	Name string `yaml:"name" json:"name"`
	// CBeta is a multiplier used by every agent.
	CBeta float64 `yaml:"c_beta,omitempty" json:"c_beta,omitempty"`
	// MatchCBeta is the non-private multiplier every agent's β is matched to.
	MatchCBeta float64 `yaml:"match_c_beta,omitempty" json:"match_c_beta,omitempty"`
	// MatchRegulariser multiplies the matched β by √(the agent's regulariser).
	MatchRegulariser bool `yaml:"match_regulariser,omitempty" json:"match_regulariser,omitempty"`
}

// Config is the experiment configuration.
type Config struct {
	// Name labels the block (its output directory in a suite).
	Name string `yaml:"name" json:"name"`
	// Runs are the keys episodes (K, known in advance by every agent) and seeds.
	engine.Runs `yaml:",inline"`
	// Delta is the δ of every private agent; P the failure probability p.
	Delta float64 `yaml:"delta" json:"delta,omitempty"`
	P     float64 `yaml:"p" json:"p"`
	// Checkpoints is the number of log-spaced episodes at which cumulative regret is kept.
	Checkpoints int `yaml:"checkpoints" json:"checkpoints"`
	// TieBreak is bonus (default), untruncated, lowest-index or seeded-random.
	TieBreak string `yaml:"tie_break" json:"tie_break"`
	// Epsilons are the ε of the private agents (and of their ε-dependent twins).
	Epsilons []float64 `yaml:"epsilons" json:"epsilons,omitempty"`
	// Agents are agent names (rows of the agent table, AgentNames).
	Agents []string `yaml:"agents" json:"agents"`
	// Envs are the environments; BetaModes the β settings.
	Envs      []EnvSpec  `yaml:"envs" json:"envs"`
	BetaModes []BetaMode `yaml:"beta_modes" json:"beta_modes"`
	// Inputs are the files this configuration was read from (LoadSuite), with their SHA-256.
	Inputs []rundir.Input `yaml:"-" json:"-"`
}

// epsilonFree reports whether an agent ignores ε (the non-private agents; its table row).
func epsilonFree(a string) bool { return !row(a).Privacy.usesEpsilon() }

// ParseConfig parses (strictly: unknown fields, duplicate keys and a second document are
// errors) and validates a YAML configuration. A field whose zero value means "unset"
// (tie_break, a β mode's c_beta / match_c_beta) may be omitted but not set to zero: an
// explicit zero is rejected with the allowed range.
func ParseConfig(data []byte) (*Config, error) {
	c := &Config{}
	return cfgfile.Parse(data, c, "linear-mdp config", func(keys cfgfile.Keys) error { return c.rejectExplicitZeros(keys, "") }, c.Validate)
}

// rejectExplicitZeros refuses the fields present in the document (under prefix, "" for a
// top-level configuration) with the zero value that means "unset".
func (c *Config) rejectExplicitZeros(keys cfgfile.Keys, prefix string) error {
	d := []cfgfile.Default{{Path: prefix + "tie_break", Value: c.TieBreak, Allowed: "one of bonus, untruncated, lowest-index, seeded-random"}}
	for i, b := range c.BetaModes {
		f := fmt.Sprintf("%sbeta_modes[%d].", prefix, i)
		d = append(d,
			cfgfile.Default{Path: f + "c_beta", Value: b.CBeta, Allowed: "a finite number > 0 (or omit it and set match_c_beta)"},
			cfgfile.Default{Path: f + "match_c_beta", Value: b.MatchCBeta, Allowed: "a finite number > 0 (or omit it and set c_beta)"})
	}
	return keys.RejectExplicitZeros(d...)
}

// Validate checks every field and names the offending one with its allowed range.
func (c *Config) Validate() error {
	if err := engine.CheckLinearBlock(c.Name, c.Runs, 10, c.Delta, c.P); err != nil {
		return err
	}
	switch {
	case c.Checkpoints < 2 || c.Checkpoints > 10000:
		return fmt.Errorf("checkpoints: must be in [2, 10000], got %d", c.Checkpoints)
	case len(c.Envs) == 0:
		return fmt.Errorf("envs: need at least one environment")
	case len(c.BetaModes) == 0:
		return fmt.Errorf("beta_modes: need at least one β setting")
	case len(c.Agents) == 0:
		return fmt.Errorf("agents: need at least one agent (allowed: %v)", AgentNames())
	}
	if c.TieBreak == "" {
		c.TieBreak = "bonus"
	}
	switch c.TieBreak {
	case "bonus", "untruncated", "lowest-index", "seeded-random":
	default:
		return fmt.Errorf("tie_break: must be one of bonus, untruncated, lowest-index, seeded-random; got %q", c.TieBreak)
	}
	for i, e := range c.Epsilons {
		if !(e > 0) || math.IsInf(e, 0) {
			return fmt.Errorf("epsilons: every ε must be finite and > 0, got %g", e)
		}
		if err := bounds.Epsilon(fmt.Sprintf("epsilons[%d]", i), e); err != nil {
			return err
		}
	}
	for _, a := range c.Agents {
		if _, ok := lookupAgent(a); !ok {
			return fmt.Errorf("agents: unknown agent %q (allowed: %v)", a, AgentNames())
		}
		if !epsilonFree(a) && len(c.Epsilons) == 0 {
			return fmt.Errorf("epsilons: agent %q needs at least one ε", a)
		}
	}
	names := map[string]bool{}
	for i, e := range c.Envs {
		if err := uniqueName(fmt.Sprintf("envs[%d].name", i), e.Name, names); err != nil {
			return err
		}
		if e.Kind != "file" && (e.Horizon < 1 || e.Horizon > 1000) {
			return fmt.Errorf("envs[%s].horizon: must be in [1, 1000], got %d", e.Name, e.Horizon)
		}
		env, err := e.Build()
		if err != nil {
			return fmt.Errorf("envs[%s]: %w", e.Name, err)
		}
		// Every paper agent's constants (noise scales ∝ 1/ε, widths) must be finite at every
		// ε: a tiny ε is refused here, before any compute, not when the run reaches the cell.
		// (The practical agents calibrate through μ-GDP, whose σ stays finite as ε → 0, and
		// their constructor builds counters of size K: the Pooled layout is not built here.)
		for _, a := range c.Agents {
			if epsilonFree(a) || row(a).Memory == Pooled {
				continue
			}
			if err := checkAgent(env, c, Cell{Env: e.Name, Agent: a}); err != nil {
				return fmt.Errorf("agents: %s on %s: %w", a, e.Name, err) // before it is built
			}
			for _, eps := range c.Epsilons {
				if _, err := newAgent(env, c, Cell{Env: e.Name, Agent: a, Epsilon: eps}, 1, &rng.Seed{}, nil); err != nil {
					return fmt.Errorf("agents: %s at ε = %g on %s: %w", a, eps, e.Name, err)
				}
			}
		}
	}
	bn := map[string]bool{}
	for i, b := range c.BetaModes {
		if err := uniqueName(fmt.Sprintf("beta_modes[%d].name", i), b.Name, bn); err != nil {
			return err
		}
		if (b.CBeta > 0) == (b.MatchCBeta > 0) {
			return fmt.Errorf("beta_modes[%s]: set exactly one of c_beta > 0 or match_c_beta > 0", b.Name)
		}
		if math.IsInf(b.CBeta, 0) || math.IsInf(b.MatchCBeta, 0) {
			return fmt.Errorf("beta_modes[%s]: multipliers must be finite", b.Name)
		}
	}
	return nil
}

// uniqueName checks the name of field, which becomes a file or directory name (rundir.CheckName),
// and that it is unique, after turning it into a file name, among the names seen so far (seen,
// to which it is added).
func uniqueName(field, name string, seen map[string]bool) error {
	if err := rundir.CheckName(field, name); err != nil {
		return err
	}
	if seen[sanitize(name)] {
		return fmt.Errorf("%s: must be unique (also after turning it into a file name), got %q", field, name)
	}
	seen[sanitize(name)] = true
	return nil
}

// hasPrivate reports whether any agent of the configuration uses ε (a private agent or an
// ε-dependent twin).
func (c *Config) hasPrivate() bool {
	for _, a := range c.Agents {
		if !epsilonFree(a) {
			return true
		}
	}
	return false
}

// used returns the configuration actually used: each environment with only the parameters of
// its kind (a file environment with the file's own H), and no ε/δ without an agent using them.
func (c *Config) used(horizons map[string]int) *Config {
	u := *c
	u.Inputs = nil
	u.Envs = make([]EnvSpec, len(c.Envs))
	envs := Envs()
	for i, e := range c.Envs {
		k := EnvSpec{Name: e.Name, Kind: e.Kind, Horizon: e.Horizon}
		envs.CopyParams(e.Kind, &k, &e)
		if h, ok := horizons[e.Name]; ok {
			k.Horizon = h
		}
		u.Envs[i] = k
	}
	if !c.hasPrivate() {
		u.Epsilons, u.Delta = nil, 0
	}
	return &u
}
