package practical

import (
	"errors"
	"slices"

	"fmt"

	"github.com/dprl/dprl/experiment/calibration"
	"github.com/dprl/dprl/experiment/engine"
	"github.com/dprl/dprl/experiment/tabular/tabenv"
	"github.com/dprl/dprl/internal/bounds"
)

// PlanSpec plans a RunSpec of family tabular whose agents are dprl's practical tabular agents
// (and the baselines of their reproduction).
//
//   - env: an environment of the family's registry (Suite.Envs, package tabenv; the same as
//     the papers' suite): riverswim (default; params horizon), garnet (params horizon, states,
//     actions, branching, reward_density, env_seed; time-homogeneous), the Gymnasium tables or
//     file (an MDP file with its own H; no params). The practical agents pool their statistics
//     over h when the model is time-homogeneous and keep them per step otherwise.
//   - agents: dprl's practical tabular agents (practical-jdp, practical-jdp-theory,
//     practical-jdp-plugin, practical-ldp, practical-ldp-plugin, practical-psrl-jdp,
//     practical-ucbvi, practical-psrl) and the baselines of the reproduction (ucbvi,
//     dp-ucbvi-jdp, dp-ucbvi-ldp); a private agent runs at every ε of privacy.epsilons, a
//     non-private one once.
//   - privacy: δ of the practical agents ((ε, δ) through their exact μ-GDP accountant; the
//     papers' dp-ucbvi-* are pure ε-DP); calibration exact only (the baselines run at the exact
//     calibration; the practical agents' σ is fixed by their accountant; other calibrations run
//     in family tabular); noise seeded or secure.
//   - multipliers.bonus must be 1: the practical agents' bonus is fixed by their preset and
//     has no multiplier (family tabular scales the papers' bonuses).
//
// The other settings are the reproduction's (configs/practical-tabular.yaml): every curve
// runs K = episodes over the seeds; the practical agents' defaults (pooled capped counts,
// visit cap 4, releases after users 1, 2, 4, … then every 200 (JDP) or 1000 (LDP) users,
// reward weight 0.5, β = 0.1); the baselines' practical UCBVI bonus (scale 0.1, β = 0.1); 500
// checkpoints of R(k) per run. The goals of issue 12 are not evaluated (they are stated on
// the reproduction's grid).
func (u Suite) PlanSpec(s *engine.RunSpec, source string) (engine.Plan, error) {
	cfg, err := specConfig(s, u.envs())
	if err != nil {
		return nil, err
	}
	return newPlan(cfg)
}

// SpecEnvs lists the suite's RunSpec environments: the family's registry (Suite.Envs).
func (s Suite) SpecEnvs() []engine.SpecEnv { return s.envs().SpecEnvs() }

// specConfig translates a RunSpec into a Config with explicit curves (validated).
func specConfig(s *engine.RunSpec, envs *tabenv.Registry) (*Config, error) {
	cfg := &Config{Name: s.Name, Episodes: s.Episodes, LDPEpisodes: s.Episodes, LDPLongEpisodes: s.Episodes,
		Seeds: append([]uint64(nil), s.Seeds...), Delta: s.Privacy.Delta, envs: envs}
	if s.Privacy.Noise == "secure" {
		cfg.Noise = "secure"
	}
	env, e, err := envs.Resolve(s, "tabular", "environment")
	if err != nil {
		return nil, err
	}
	ec, _, err := tabenv.Configure(envs, "env", env, s.Env.File, s.Env.Params)
	if err != nil {
		return nil, err
	}
	cfg.Horizon = ec.Horizon
	if !slices.Contains(e.ParamNames(), "horizon") { // a model with its own H
		m, err := e.New(ec)
		if err != nil {
			if e.File {
				return nil, fmt.Errorf("env.file: %s: %w", s.Env.File, errors.Unwrap(err))
			}
			return nil, err
		}
		cfg.Horizon = m.H
	}
	if env == "garnet" {
		cfg.Garnet.Episodes = s.Episodes // as recorded in the unit IDs of earlier runs
	}
	curve := func(agent string, eps float64) CurveSpec {
		return CurveSpec{Env: env, Params: s.Env.Params, File: s.Env.File, Agent: agent, Epsilon: eps}
	}
	if c := s.Privacy.Calibration; c != "" {
		if _, err := calibration.Canonical("privacy.calibration", c, calibration.Exact); err != nil {
			return nil, fmt.Errorf("%w (dprl's practical agents: their noise is fixed by their accountant, and the papers' dp-ucbvi-* run beside them at the exact calibration; run the papers' agents alone for the other calibrations)", err)
		}
	}
	if s.Multipliers.Bonus != 1 {
		return nil, fmt.Errorf("multipliers.bonus: family practical-tabular has no bonus multiplier (the practical agents' bonus is fixed by their preset; family tabular scales the papers' bonuses), got %g; allowed: 1", s.Multipliers.Bonus)
	}
	for i, name := range s.Agents {
		private, ok := agentPrivate(name)
		if !ok {
			return nil, fmt.Errorf("agents[%d]: unknown agent %q of dprl's practical tabular suite (allowed: %s)", i, name, agentNames())
		}
		if !private {
			cfg.Curves = append(cfg.Curves, curve(name, 0))
			continue
		}
		if len(s.Privacy.Epsilons) == 0 {
			return nil, fmt.Errorf("privacy.epsilons: required for the private agent %s (agents[%d]), each in %s", name, i, bounds.EpsilonRange)
		}
		for _, e := range s.Privacy.Epsilons {
			cfg.Curves = append(cfg.Curves, curve(name, e))
		}
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return cfg, nil
}
