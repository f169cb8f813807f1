// Package tabenv is the tabular family's one environment registry: the environments both of
// its suites (the papers' suite, package experiment/tabular, and dprl's practical suite,
// experiment/tabular/practical) select by name, configure by their numeric parameters
// (env.params) and build into an MDP. A new tabular environment is its model constructor
// (model/tabular/<env>.go) and one Register call in New.
package tabenv

import (
	"fmt"
	"strings"

	"github.com/dprl/dprl/experiment/engine"
	model "github.com/dprl/dprl/model/tabular"
	"github.com/dprl/dprl/model/tabular/gymenvs"
)

// Config selects an environment of the registry; its numeric fields are the environments'
// parameters, by their env.params names (the YAML names).
type Config struct {
	// Name is a registered environment: riverswim, garnet, a Gymnasium toy-text table or file.
	Name string `yaml:"name" json:"name"`
	// Horizon is H (riverswim, garnet).
	Horizon int `yaml:"horizon,omitempty" json:"horizon,omitempty"`
	// Path is the MDP file (file).
	Path string `yaml:"path,omitempty" json:"path,omitempty"`
	// Garnet parameters.
	States    int     `yaml:"states,omitempty" json:"states,omitempty"`
	Actions   int     `yaml:"actions,omitempty" json:"actions,omitempty"`
	Branching int     `yaml:"branching,omitempty" json:"branching,omitempty"`
	Density   float64 `yaml:"reward_density,omitempty" json:"reward_density,omitempty"`
	EnvSeed   uint64  `yaml:"env_seed,omitempty" json:"env_seed,omitempty"`
}

// Registry is the tabular family's environment registry: environments configured by a Config
// and built into an MDP.
type Registry = engine.Envs[Config, *model.MDP]

// Env is one registered environment.
type Env = engine.Env[Config, *model.MDP]

// Param is one numeric parameter of an environment.
type Param = engine.EnvParam[Config]

// New returns the tabular family's environments (the reference environment first): what
// env.name and env.params select in both suites, `dprl list` shows and both suites build. A
// new environment registers here.
func New() *Registry {
	r := &Registry{FilePath: func(e *Config) *string { return &e.Path }}
	horizon := Param{Name: "horizon", Int: true, Def: 20, Lo: 1, Hi: 10000, Field: func(e *Config) any { return &e.Horizon }}
	r.Register(Env{Name: "riverswim", Params: []Param{horizon},
		Desc: "RiverSwim (Osband et al. 2013 episodic variant, as in Chowdhury & Zhou 2021 and Qiao & Wang 2023): S=6, A=2, default H=20",
		New:  func(e Config) (*model.MDP, error) { return model.RiverSwim(e.Horizon) }})
	r.Register(Env{Name: "garnet",
		Desc: "seeded random time-homogeneous Garnet-style MDP (dprl run also takes --states, --actions, --branching, --reward-density, --env-seed)",
		Params: []Param{horizon,
			{Name: "states", Int: true, Def: 10, Lo: 1, Hi: 10000, Field: func(e *Config) any { return &e.States }},
			{Name: "actions", Int: true, Def: 3, Lo: 1, Hi: 1000, Field: func(e *Config) any { return &e.Actions }},
			{Name: "branching", Int: true, Field: func(e *Config) any { return &e.Branching },
				Range: func(e *Config) (float64, float64, float64) { return float64(min(3, e.States)), 1, float64(e.States) }},
			{Name: "reward_density", Def: 0.3, Lo: 0, Hi: 1, Field: func(e *Config) any { return &e.Density }},
			{Name: "env_seed", Int: true, Def: 1, Lo: 0, Hi: 1 << 52, Field: func(e *Config) any { return &e.EnvSeed }}},
		New: func(e Config) (*model.MDP, error) {
			return model.Garnet(model.GarnetConfig{S: e.States, A: e.Actions, H: e.Horizon,
				Branching: e.Branching, Homogeneous: true, RewardDensity: e.Density, Seed: e.EnvSeed})
		}})
	for _, g := range gymenvs.Envs() {
		name := g.Name
		r.Register(Env{Name: name, Desc: g.Desc,
			New: func(Config) (*model.MDP, error) { return gymenvs.Load(name) }})
	}
	r.Register(Env{Name: "file", File: true,
		Desc: "an MDP loaded from a JSON or YAML file (env.file, dprl run --env-file)",
		New:  r.LoadFile("env.path %s: %w", model.Load)})
	return r
}

// Configure returns the configuration of the environment name of r with the parameters
// params (each checked against the environment's range; an omitted one takes its default; a
// parameter the environment does not take is an error) and, for the file environment, the
// model file file. Errors name the field as field (e.g. "env" or "curves[2]"): field.name,
// field.params.<name>, field.file.
func Configure(r *Registry, field, name, file string, params map[string]float64) (Config, Env, error) {
	e, ok := r.Lookup(name)
	if !ok {
		return Config{}, e, fmt.Errorf("%s.name: unknown environment %q (allowed: %s)", field, name, r.Allowed())
	}
	if e.File != (file != "") {
		return Config{}, e, fmt.Errorf("%s.file: a model file for environment file, and only for it (environment %s, file %q)", field, name, file)
	}
	c := Config{Name: name}
	s := engine.RunSpec{Env: engine.EnvSpec{Name: name, File: file, Params: params}}
	if err := r.Set(e, &s, &c); err != nil {
		return Config{}, e, fmt.Errorf("%s", strings.Replace(err.Error(), "env.", field+".", 1))
	}
	return c, e, nil
}

// Params returns the parameters of c's environment, by name (nil for none, or for an
// environment r does not have).
func Params(r *Registry, c Config) map[string]float64 {
	e, ok := r.Lookup(c.Name)
	if !ok || len(e.Params) == 0 {
		return nil
	}
	out := make(map[string]float64, len(e.Params))
	for _, p := range e.Params {
		switch v := p.Field(&c).(type) {
		case *int:
			out[p.Name] = float64(*v)
		case *uint64:
			out[p.Name] = float64(*v)
		case *float64:
			out[p.Name] = *v
		}
	}
	return out
}
