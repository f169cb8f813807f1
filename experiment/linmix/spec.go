package linmix

import (
	"fmt"
	"slices"
	"strings"

	"github.com/dprl/dprl/experiment/calibration"
	"github.com/dprl/dprl/experiment/engine"
	"github.com/dprl/dprl/internal/bounds"
)

// Settings of the reproductions that a RunSpec does not expose (see PlanSpec).
const (
	// specP is the failure probability p (configs/linear-mixture.yaml).
	specP = 0.05
	// specPoints is the number of stored checkpoints (configs/linear-mixture.yaml).
	specPoints = 400
	// specShiftMult is c_shift of the runs with c_β ≠ 1 (configs/linear-mixture.yaml).
	specShiftMult = 0.01
	// specPracticalBatch, specPracticalBudget and specPracticalBetaMult are the tuned
	// practical-vtr settings of configs/practical-linear-mixture.yaml.
	specPracticalBatch    = 500
	specPracticalBudget   = 0.6
	specPracticalBetaMult = 0.01
)

// PlanSpec implements engine.SpecPlanner: the shared run schema for linear mixture MDPs.
//
//   - env: two-state-hard (default, the reproduction's reference environment; params dim 5,
//     horizon 10, q 0.1, rho 0.5), hard-to-learn (dim 5, horizon 6, as in the reproduction;
//     its hidden signs are drawn from the run seed), riverswim (states 5, horizon 20, spec
//     §7.2), base-mixture (states 10, actions 4, dim 6, horizon 8, spec §7.3; drawn from the run
//     seed), or file (a linear mixture MDP file with its own H; no params). The parameter
//     names are Config's envs[] fields; omitted ones take the defaults above.
//   - agents: algorithm/mode names (dprl list): ucrl-vtr, ucrl-vtr+, linopt-vi, linopt-po and
//     dprl's practical-vtr, each in mode none, jdp or ldp. A jdp or ldp agent runs at every ε
//     of privacy.epsilons, a none agent once.
//   - privacy: δ of the (ε, δ) agents; calibration paper (default), laplace (pure ε-DP, δ not
//     used) or zcdp for the papers' private agents, laplace and zcdp for ucrl-vtr only;
//     practical-vtr calibrates through its own μ-GDP accountant (privacy.calibration must then
//     be empty or paper). noise seeded only (the experiment runs the agents' seeded form).
//   - multipliers.bonus: the papers' agents run with beta_mults [bonus] (c_β; 1 is the theory
//     width), with c_shift 0.01 (the reproduction's shift_mult) when bonus ≠ 1;
//     practical-vtr's width multiplier is 0.01·bonus (its tuned value in
//     practical-linear-mixture.yaml, scaled). Neither touches a noise level.
//
// The other settings are the reproductions': p = 0.05, 400 checkpoints (linear-mixture.yaml),
// and for practical-vtr batch_every 500 and budget 0.6 in every mode (practical-linear-
// mixture.yaml; mode none is then the noise-off twin of the private curves). So with
// bonus 1 (or 0.01) the papers' curves are the reproduction's theory (or tuned) curves.
func (Family) PlanSpec(s *engine.RunSpec, source string) (engine.Plan, error) {
	cfg, err := specConfig(s)
	if err != nil {
		return nil, err
	}
	return newPlan(cfg)
}

// specEnv translates env into an EnvConfig through the registry (parameters checked,
// environment built once).
func specEnv(s *engine.RunSpec) (EnvConfig, error) {
	var e EnvConfig
	kind, _, err := Envs().ResolveSet(s, FamilyName, &e)
	e.Kind = kind
	if err != nil {
		return e, err
	}
	if err := e.checkEnv("env"); err != nil {
		return e, err // before the environment is built
	}
	if _, err := e.Build(s.Seeds[0], s.Episodes); err != nil {
		return e, s.EnvError(err)
	}
	return e, nil
}

// seededSpec is how the family translates the common part of a RunSpec.
var seededSpec = engine.SeededSpec{Family: "linmix", MinEpisodes: 10, Why: "its experiments build the agents' seeded form",
	Calibrations: []string{calibration.Paper, calibration.Laplace, calibration.ZCDP}}

// specConfig translates a RunSpec into a Config (validated).
func specConfig(s *engine.RunSpec) (*Config, error) {
	env, calib, err := engine.SeededPrelude(s, seededSpec, specEnv)
	if err != nil {
		return nil, err
	}
	if calib == calibration.Paper {
		calib = "" // the family's default, spelled as in the reproductions' curves
	}
	cfg := &Config{Name: s.Name, Runs: s.Runs.Clone(), Delta: s.Privacy.Delta,
		P: specP, Points: specPoints, Envs: []EnvConfig{env}, BetaMults: []float64{s.Multipliers.Bonus}, ShiftMult: specShiftMult}
	for i, name := range s.Agents {
		if err := engine.CheckAgent(i, name, FamilyName, AgentNames()); err != nil {
			return nil, err
		}
		alg, mode, _ := strings.Cut(name, "/")
		cv := CurveSpec{Algorithm: alg, Mode: mode}
		if mode != "none" {
			if len(s.Privacy.Epsilons) == 0 {
				return nil, fmt.Errorf("privacy.epsilons: required for the private agent %s (agents[%d]), each in %s", name, i, bounds.EpsilonRange)
			}
			cv.Epsilons = append([]float64(nil), s.Privacy.Epsilons...)
			if a := row(alg); calib != "" && !slices.Contains(a.Calibrations, calib) {
				return nil, fmt.Errorf("privacy.calibration: %s is not a calibration of %s (agents[%d]) (allowed with it: %s)", calib, name, i, allowedCalibrations(a))
			}
			cv.Calibration = calib
		}
		if row(alg).Practical {
			cv.Practical = &PracticalSpec{BatchEvery: specPracticalBatch, Budget: specPracticalBudget, BetaMult: specPracticalBetaMult * s.Multipliers.Bonus}
		}
		// Validated one curve at a time so that an error names the agent it comes from.
		one := *cfg
		one.Curves = []CurveSpec{cv}
		if err := one.Validate(); err != nil {
			return nil, fmt.Errorf("agents[%d] (%s): %w", i, name, err)
		}
		cfg.Curves = append(cfg.Curves, cv)
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return cfg, nil
}

// SpecEnvs implements engine.SpecEnvLister: the registered environments (Envs).
func (Family) SpecEnvs() []engine.SpecEnv { return Envs().SpecEnvs() }

// allowedCalibrations is what privacy.calibration may be with agent a: empty, or one of its
// calibrations (paper, the family's default, is also empty).
func allowedCalibrations(a Agent) string {
	if len(a.Calibrations) == 0 {
		return "paper or empty: it calibrates through its own μ-GDP accountant"
	}
	return strings.Join(a.Calibrations, ", ") + " or empty"
}
