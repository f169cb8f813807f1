package linmix

import (
	"math/rand/v2"

	"github.com/dprl/dprl/experiment/engine"
	model "github.com/dprl/dprl/model/linmix"
)

// Envs returns the family's environments (the reference environment first): what a
// configuration's envs[].kind and a RunSpec's env.name select (env.params are EnvConfig's
// fields by their YAML names), what `dprl list` shows and what EnvConfig.Build builds. A new
// environment registers here.
func Envs() *engine.Envs[EnvConfig, *model.MDP] {
	r := &engine.Envs[EnvConfig, *model.MDP]{FilePath: func(e *EnvConfig) *string { return &e.File }}
	type param = engine.EnvParam[EnvConfig]
	type env = engine.Env[EnvConfig, *model.MDP]
	horizon := func(def, lo float64) param {
		return param{Name: "horizon", Int: true, Def: def, Lo: lo, Hi: 10000, Field: func(e *EnvConfig) any { return &e.Horizon }}
	}
	dim := func(def, lo, hi float64) param {
		return param{Name: "dim", Int: true, Def: def, Lo: lo, Hi: hi, Field: func(e *EnvConfig) any { return &e.Dim }}
	}
	states := func(def, lo, hi float64) param {
		return param{Name: "states", Int: true, Def: def, Lo: lo, Hi: hi, Field: func(e *EnvConfig) any { return &e.States }}
	}
	r.Register(env{Name: "two-state-hard",
		Desc: "S={x0,x1}, A={±1}^{d-1}, P(x1|x0,a)=q+⟨μ,a⟩ (linear-mixture spec §7.1; default d=5, H=10, q=0.1, ρ=0.5)",
		Params: []param{dim(5, 2, 16), horizon(10, 1),
			{Name: "q", Def: 0.1, Lo: 0, Hi: 0.5, OpenLo: true, Field: func(e *EnvConfig) any { return &e.Q }},
			{Name: "rho", Def: 0.5, Lo: 0, Hi: 1, Field: func(e *EnvConfig) any { return &e.Rho }}},
		New: func(e EnvConfig) (*model.MDP, error) { return model.TwoStateHard(e.Dim, e.Horizon, e.Q, e.Rho, nil) }})
	r.Register(env{Name: "hard-to-learn",
		Desc:   "Zhou, Gu & Szepesvári (2021) instance as in the public LDP-UCRL-VTR code: S=H+2, A=2^{d-1}, seeded",
		Params: []param{dim(5, 2, 16), {Name: "horizon", Int: true, Def: 6, Lo: 2, Hi: 1000, Field: func(e *EnvConfig) any { return &e.Horizon }}},
		New: func(e EnvConfig) (*model.MDP, error) {
			return model.HardToLearn(e.Dim, e.Horizon, e.episodes, e.rand())
		}})
	r.Register(env{Name: "riverswim", Desc: "RiverSwim viewed as a linear mixture, d=S²A (spec §7.2)",
		Params: []param{states(5, 3, 20), horizon(20, 1)},
		New:    func(e EnvConfig) (*model.MDP, error) { return model.RiverSwim(e.riverSwimStates(), e.Horizon) }})
	r.Register(env{Name: "base-mixture", Desc: "mixture of d seeded base kernels (spec §7.3)",
		Params: []param{states(10, 3, 1000), {Name: "actions", Int: true, Def: 4, Lo: 1, Hi: 64, Field: func(e *EnvConfig) any { return &e.Actions }},
			dim(6, 1, 64), horizon(8, 1)},
		New: func(e EnvConfig) (*model.MDP, error) {
			return model.BaseMixture(e.States, e.Actions, e.Dim, e.Horizon, e.rand())
		}})
	r.Register(env{Name: "file", File: true, Desc: "a linear mixture MDP from JSON/YAML (e.g. model/linmix/testdata/tiny.yaml)",
		New: func(e EnvConfig) (*model.MDP, error) { return model.Load(e.File) }})
	return r
}

// rand returns the environment stream of the run seed Build was given (engine.Streams.Env).
func (e EnvConfig) rand() *rand.Rand { return engine.Streams{Seed: e.seed}.Env().Rand() }
