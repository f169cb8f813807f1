package practical

import (
	"github.com/dprl/dprl/experiment/engine"
	model "github.com/dprl/dprl/model/tabular"
	"github.com/dprl/dprl/model/tabular/gymenvs"
)

// SpecEnvConfig is the environment of a RunSpec of the suite: its parameters (env.params, by
// these YAML names) and a model file's path.
type SpecEnvConfig struct {
	Horizon       int     `yaml:"horizon,omitempty"`
	States        int     `yaml:"states,omitempty"`
	Actions       int     `yaml:"actions,omitempty"`
	Branching     int     `yaml:"branching,omitempty"`
	RewardDensity float64 `yaml:"reward_density,omitempty"`
	EnvSeed       uint64  `yaml:"env_seed,omitempty"`
	File          string  `yaml:"file,omitempty"`
}

// SpecEnvs is the suite's environment registry: the environments a configuration of the suite
// can express (RiverSwim, time-homogeneous Garnets of the reproduction's shapes, MDP files),
// with the suite's bounds.
func SpecEnvs() *engine.Envs[SpecEnvConfig, *model.MDP] {
	r := &engine.Envs[SpecEnvConfig, *model.MDP]{FilePath: func(e *SpecEnvConfig) *string { return &e.File }}
	horizon := engine.EnvParam[SpecEnvConfig]{Name: "horizon", Int: true, Def: 20, Lo: 1, Hi: 10000, Field: func(e *SpecEnvConfig) any { return &e.Horizon }}
	r.Register(engine.Env[SpecEnvConfig, *model.MDP]{Name: "riverswim", Params: []engine.EnvParam[SpecEnvConfig]{horizon},
		New: func(e SpecEnvConfig) (*model.MDP, error) { return model.RiverSwim(e.Horizon) }})
	r.Register(engine.Env[SpecEnvConfig, *model.MDP]{Name: "garnet",
		Params: []engine.EnvParam[SpecEnvConfig]{horizon,
			{Name: "states", Int: true, Def: 10, Lo: 2, Hi: 200, Field: func(e *SpecEnvConfig) any { return &e.States }},
			{Name: "actions", Int: true, Def: 3, Lo: 2, Hi: 50, Field: func(e *SpecEnvConfig) any { return &e.Actions }},
			{Name: "branching", Int: true, Field: func(e *SpecEnvConfig) any { return &e.Branching },
				Range: func(e *SpecEnvConfig) (float64, float64, float64) {
					return float64(min(3, e.States)), 1, float64(e.States)
				}},
			{Name: "reward_density", Def: 0.3, Lo: 0, Hi: 1, OpenLo: true, Field: func(e *SpecEnvConfig) any { return &e.RewardDensity }},
			{Name: "env_seed", Int: true, Def: 1, Lo: 1, Hi: 1 << 52, Field: func(e *SpecEnvConfig) any { return &e.EnvSeed }}},
		New: func(e SpecEnvConfig) (*model.MDP, error) {
			return model.Garnet(model.GarnetConfig{S: e.States, A: e.Actions, H: e.Horizon, Branching: e.Branching,
				Homogeneous: true, RewardDensity: e.RewardDensity, Seed: e.EnvSeed})
		}})
	for _, g := range gymenvs.Envs() {
		name := g.Name
		r.Register(engine.Env[SpecEnvConfig, *model.MDP]{Name: name, Desc: g.Desc,
			New: func(SpecEnvConfig) (*model.MDP, error) { return gymenvs.Load(name) }})
	}
	r.Register(engine.Env[SpecEnvConfig, *model.MDP]{Name: "file", File: true, New: r.LoadFile("env.file: %s: %w", model.Load)})
	return r
}
