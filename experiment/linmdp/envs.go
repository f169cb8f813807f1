package linmdp

import (
	"github.com/dprl/dprl/experiment/engine"
	model "github.com/dprl/dprl/model/linmdp"
)

// Envs returns the family's environments (the reference environment first): what a
// configuration's envs[].kind and a RunSpec's env.name select (env.params are EnvSpec's fields
// by their YAML names), what `dprl list` shows and what EnvSpec.Build builds. A new
// environment registers here.
func Envs() *engine.Envs[EnvSpec, *model.MDP] {
	r := &engine.Envs[EnvSpec, *model.MDP]{FilePath: func(e *EnvSpec) *string { return &e.Path }}
	type param = engine.EnvParam[EnvSpec]
	type env = engine.Env[EnvSpec, *model.MDP]
	horizon := func(def float64) param {
		return param{Name: "horizon", Int: true, Def: def, Lo: 1, Hi: 1000, Field: func(e *EnvSpec) any { return &e.Horizon }}
	}
	seed := param{Name: "seed", Int: true, Def: 1, Lo: 0, Hi: 1 << 52, Field: func(e *EnvSpec) any { return &e.Seed }}
	r.Register(env{Name: "latentriver",
		Desc: "E2 LatentRiver(m, M): d = m latent levels, N = mM states, A = 3 (spec §6.4); default m=5, M=10, H=20",
		Params: []param{{Name: "m", Int: true, Def: 5, Lo: 2, Hi: 100, Field: func(e *EnvSpec) any { return &e.M }},
			{Name: "copies", Int: true, Def: 10, Lo: 2, Hi: 1000, Field: func(e *EnvSpec) any { return &e.Copies }}, horizon(20)},
		New: func(e EnvSpec) (*model.MDP, error) {
			return model.LatentRiver(e.M, e.Copies, 0.1, 0.9, 0.05, e.Horizon)
		}})
	r.Register(env{Name: "riverswim",
		Desc:   "E1 RiverSwim-OneHot(n): tabular chain with one-hot features, d = 2n (spec §6.3); default n=6, H=20",
		Params: []param{{Name: "n", Int: true, Def: 6, Lo: 2, Hi: 1000, Field: func(e *EnvSpec) any { return &e.N }}, horizon(20)},
		New:    func(e EnvSpec) (*model.MDP, error) { return model.RiverSwimOneHot(e.N, e.Horizon) }})
	r.Register(env{Name: "randomsimplex", Desc: "E3 seeded random simplex linear MDP (N, A, d, seed; spec §6.5)",
		Params: []param{{Name: "n", Int: true, Def: 100, Lo: 1, Hi: 100000, Field: func(e *EnvSpec) any { return &e.N }},
			{Name: "a", Int: true, Def: 4, Lo: 1, Hi: 1000, Field: func(e *EnvSpec) any { return &e.A }},
			{Name: "d", Int: true, Def: 8, Lo: 1, Hi: 1000, Field: func(e *EnvSpec) any { return &e.D }}, horizon(10), seed},
		New: func(e EnvSpec) (*model.MDP, error) {
			return model.RandomSimplex(e.N, e.A, e.D, e.Horizon, min(e.D, 3), min(e.N, 10), e.Seed, true)
		}})
	r.Register(env{Name: "twostate100", Desc: "TwoState-100: 2 states, 100 actions with random sign features, d = 10",
		Params: []param{horizon(15), seed},
		New:    func(e EnvSpec) (*model.MDP, error) { return model.TwoState100(e.Seed, e.Horizon) }})
	r.Register(env{Name: "file", File: true, Desc: "a linear MDP (features, mu, theta, init) from a JSON/YAML file",
		New: func(e EnvSpec) (*model.MDP, error) { return model.Load(e.Path) }})
	return r
}
