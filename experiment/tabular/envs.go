package tabular

import (
	"github.com/dprl/dprl/experiment/engine"
	model "github.com/dprl/dprl/model/tabular"
	"github.com/dprl/dprl/model/tabular/gymenvs"
)

// TabularEnvs is the tabular family's environment registry: environments configured by an
// EnvConfig (env.params are its fields, by their YAML names) and built into an MDP.
type TabularEnvs = engine.Envs[EnvConfig, *model.MDP]

// Envs returns the tabular family's environments (the reference environment first): what
// env.name, env.params and `dprl run --env` select, `dprl list` shows and BuildEnv builds. A
// new environment registers here.
func Envs() *TabularEnvs {
	r := &TabularEnvs{FilePath: func(e *EnvConfig) *string { return &e.Path }}
	horizon := engine.EnvParam[EnvConfig]{Name: "horizon", Int: true, Def: 20, Lo: 1, Hi: 10000, Field: func(e *EnvConfig) any { return &e.Horizon }}
	r.Register(engine.Env[EnvConfig, *model.MDP]{Name: "riverswim", Params: []engine.EnvParam[EnvConfig]{horizon},
		Desc: "RiverSwim (Osband et al. 2013 episodic variant, as in Chowdhury & Zhou 2021 and Qiao & Wang 2023): S=6, A=2, default H=20",
		New:  func(e EnvConfig) (*model.MDP, error) { return model.RiverSwim(e.Horizon) }})
	r.Register(engine.Env[EnvConfig, *model.MDP]{Name: "garnet",
		Desc: "seeded random Garnet-style MDP (dprl run also takes --states, --actions, --branching, --reward-density, --env-seed)",
		Params: []engine.EnvParam[EnvConfig]{horizon,
			{Name: "states", Int: true, Def: 10, Lo: 1, Hi: 10000, Field: func(e *EnvConfig) any { return &e.States }},
			{Name: "actions", Int: true, Def: 3, Lo: 1, Hi: 1000, Field: func(e *EnvConfig) any { return &e.Actions }},
			{Name: "branching", Int: true, Field: func(e *EnvConfig) any { return &e.Branching },
				Range: func(e *EnvConfig) (float64, float64, float64) { return float64(min(3, e.States)), 1, float64(e.States) }},
			{Name: "reward_density", Def: 0.3, Lo: 0, Hi: 1, Field: func(e *EnvConfig) any { return &e.Density }},
			{Name: "env_seed", Int: true, Def: 1, Lo: 0, Hi: 1 << 52, Field: func(e *EnvConfig) any { return &e.EnvSeed }}},
		New: func(e EnvConfig) (*model.MDP, error) {
			return model.Garnet(model.GarnetConfig{S: e.States, A: e.Actions, H: e.Horizon,
				Branching: e.Branching, Homogeneous: true, RewardDensity: e.Density, Seed: e.EnvSeed})
		}})
	for _, g := range gymenvs.Envs() {
		name := g.Name
		r.Register(engine.Env[EnvConfig, *model.MDP]{Name: name, Desc: g.Desc,
			New: func(EnvConfig) (*model.MDP, error) { return gymenvs.Load(name) }})
	}
	r.Register(engine.Env[EnvConfig, *model.MDP]{Name: "file", File: true,
		Desc: "an MDP loaded from a JSON or YAML file (env.file, dprl run --env-file)",
		New:  r.LoadFile("env.path %s: %w", model.Load)})
	return r
}
