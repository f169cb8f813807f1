package tabular

import (
	"fmt"
	"strings"

	agents "github.com/dprl/dprl/agents/tabular"
	"github.com/dprl/dprl/experiment/calibration"
	"github.com/dprl/dprl/experiment/engine"
	"github.com/dprl/dprl/experiment/tabular/practical"
	"github.com/dprl/dprl/internal/bounds"
)

// PlanSpec implements engine.SpecPlanner: the shared run schema for tabular MDPs.
//
//   - env: an environment of the family's registry (Family.Envs; Envs): riverswim (default;
//     params horizon), garnet (params horizon, states, actions, branching, reward_density,
//     env_seed) or file (the MDP file's own H; no params).
//   - agents: the papers' tabular agents (dprl list); a private agent runs at every ε of
//     privacy.epsilons, a non-private one once. A spec naming one of dprl's practical agents
//     goes to the practical suite (practical.Suite.PlanSpec), which also runs ucbvi and the
//     papers' dp-ucbvi-jdp/ldp beside them.
//   - privacy: calibration exact (default), paper or unit; these agents are pure ε-DP, so
//     privacy.delta is not used; noise seeded or secure.
//   - multipliers.bonus multiplies the bonus (preset practical, β = 0.1).
func (f Family) PlanSpec(s *engine.RunSpec, source string) (engine.Plan, error) {
	for _, name := range s.Agents {
		if _, err := agents.LookupPractical(name); err == nil {
			return practical.Suite{Envs: f.envs()}.PlanSpec(s, source)
		}
	}
	cfg, err := specConfig(s, f.envs())
	if err != nil {
		return nil, err
	}
	return newPlan(cfg)
}

// specConfig translates a RunSpec into a Config (validated), resolving env.name and env.params
// through envs.
func specConfig(s *engine.RunSpec, envs *TabularEnvs) (*Config, error) {
	cfg := &Config{Name: s.Name, Runs: engine.Runs{Episodes: s.Episodes, Seeds: append([]uint64(nil), s.Seeds...)}, Noise: s.Privacy.Noise,
		Bonus: BonusSpec{Preset: "practical", Multiplier: s.Multipliers.Bonus}, envs: envs}
	env, e, err := envs.Resolve(s, "tabular", "environment")
	cfg.Env.Name = env
	if err != nil {
		return nil, err
	}
	if err := envs.Set(e, s, &cfg.Env); err != nil {
		return nil, err
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

// SpecEnvs implements engine.SpecEnvLister: the registered environments (Family.Envs).
func (f Family) SpecEnvs() []engine.SpecEnv { return f.envs().SpecEnvs() }

// practicalNames lists dprl's practical tabular agents (for errors).
func practicalNames() string {
	var names []string
	for _, a := range agents.PracticalAgents() {
		names = append(names, a.Name)
	}
	return strings.Join(names, ", ")
}
