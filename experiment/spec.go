package experiment

import (
	"fmt"
	"strings"

	agents "github.com/dprl/dprl/agents/tabular"
	"github.com/dprl/dprl/experiment/calibration"
	"github.com/dprl/dprl/experiment/engine"
	"github.com/dprl/dprl/experiment/practical"
	"github.com/dprl/dprl/internal/bounds"
)

// PlanSpec implements engine.SpecPlanner: the shared run schema for tabular MDPs.
//
//   - env: riverswim (default; params horizon), garnet (params horizon, states, actions,
//     branching, reward_density, env_seed) or file (the MDP file's own H; no params).
//   - agents: the papers' tabular agents (dprl list); a private agent runs at every ε of
//     privacy.epsilons, a non-private one once. A spec naming one of dprl's practical agents
//     goes to the practical suite (practical.Suite.PlanSpec), which also runs ucbvi and the
//     papers' dp-ucbvi-jdp/ldp beside them.
//   - privacy: calibration exact (default), paper or unit; these agents are pure ε-DP, so
//     privacy.delta is not used; noise seeded or secure.
//   - multipliers.bonus multiplies the bonus (preset practical, β = 0.1).
func (Family) PlanSpec(s *engine.RunSpec, source string) (engine.Plan, error) {
	for _, name := range s.Agents {
		if _, err := agents.LookupPractical(name); err == nil {
			return practical.Suite{}.PlanSpec(s, source)
		}
	}
	cfg, err := specConfig(s)
	if err != nil {
		return nil, err
	}
	return newPlan(cfg)
}

// specConfig translates a RunSpec into a Config (validated).
func specConfig(s *engine.RunSpec) (*Config, error) {
	cfg := &Config{Name: s.Name, Episodes: s.Episodes, Seeds: append([]uint64(nil), s.Seeds...), Noise: s.Privacy.Noise,
		Bonus: BonusSpec{Preset: "practical", Multiplier: s.Multipliers.Bonus}}
	env := s.Env.Name
	if env == "" {
		env = "riverswim"
	}
	cfg.Env.Name = env
	var err error
	switch env {
	case "riverswim":
		if err = s.CheckParams("horizon"); err != nil {
			return nil, err
		}
		if cfg.Env.Horizon, err = s.IntParam("horizon", 20, 1, 10000); err != nil {
			return nil, err
		}
	case "garnet":
		if err = s.CheckParams("horizon", "states", "actions", "branching", "reward_density", "env_seed"); err != nil {
			return nil, err
		}
		e := &cfg.Env
		if err = s.IntParams(engine.IntParam{Name: "horizon", Dst: &e.Horizon, Def: 20, Lo: 1, Hi: 10000},
			engine.IntParam{Name: "states", Dst: &e.States, Def: 10, Lo: 1, Hi: 10000},
			engine.IntParam{Name: "actions", Dst: &e.Actions, Def: 3, Lo: 1, Hi: 1000}); err != nil {
			return nil, err
		}
		if e.Branching, err = s.IntParam("branching", min(3, e.States), 1, e.States); err != nil {
			return nil, err
		}
		if e.Density, err = s.FloatParam("reward_density", 0.3, 0, 1); err != nil {
			return nil, err
		}
		seed, err := s.IntParam("env_seed", 1, 0, 1<<52)
		if err != nil {
			return nil, err
		}
		e.EnvSeed = uint64(seed)
	case "file":
		if err = s.CheckParams(); err != nil {
			return nil, err
		}
		cfg.Env.Path = s.Env.File
	default:
		return nil, fmt.Errorf("env.name: unknown environment %q of family tabular (allowed: riverswim, garnet, file)", env)
	}
	calib := s.Privacy.Calibration
	if calib == "" {
		calib = calibration.Exact
	}
	if _, err := calibration.Canonical("privacy.calibration", calib, calibration.Exact, calibration.Paper, calibration.Unit); err != nil {
		return nil, fmt.Errorf("%w (family tabular)", err)
	}
	for i, name := range s.Agents {
		info, err := agents.Lookup(name)
		if err != nil {
			return nil, fmt.Errorf("agents[%d]: %w, or one of dprl's practical agents (%s)", i, err, practicalNames())
		}
		if info.Model == agents.NonPrivate {
			cfg.Curves = append(cfg.Curves, CurveSpec{Agent: name})
			continue
		}
		if len(s.Privacy.Epsilons) == 0 {
			return nil, fmt.Errorf("privacy.epsilons: required for the private agent %s (agents[%d]), each in %s", name, i, bounds.EpsilonRange)
		}
		for _, e := range s.Privacy.Epsilons {
			cfg.Curves = append(cfg.Curves, CurveSpec{Agent: name, Epsilon: e, Calibration: calib})
		}
	}
	cfg.defaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return cfg, nil
}

// SpecEnvs implements engine.SpecEnvLister.
func (Family) SpecEnvs() []engine.SpecEnv {
	return []engine.SpecEnv{
		{Name: "riverswim", Params: []string{"horizon"},
			Desc: "RiverSwim (Osband et al. 2013 episodic variant, as in Chowdhury & Zhou 2021 and Qiao & Wang 2023): S=6, A=2, default H=20"},
		{Name: "garnet", Params: []string{"horizon", "states", "actions", "branching", "reward_density", "env_seed"},
			Desc: "seeded random Garnet-style MDP (dprl run also takes --states, --actions, --branching, --reward-density, --env-seed)"},
		{Name: "file", Desc: "an MDP loaded from a JSON or YAML file (env.file, dprl run --env-file)"}}
}

// practicalNames lists dprl's practical tabular agents (for errors).
func practicalNames() string {
	var names []string
	for _, a := range agents.PracticalAgents() {
		names = append(names, a.Name)
	}
	return strings.Join(names, ", ")
}
