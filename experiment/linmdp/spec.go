package linmdp

import (
	"fmt"

	"github.com/dprl/dprl/experiment/calibration"
	"github.com/dprl/dprl/experiment/engine"
	"github.com/dprl/dprl/internal/bounds"
)

// Settings of the reproductions that a RunSpec does not expose (see PlanSpec).
const (
	// specP, specCheckpoints and specTieBreak are p, checkpoints and tie_break of the
	// reproductions' main blocks (configs/linear-mdp.yaml, configs/practical-linear-mdp.yaml).
	specP           = 0.05
	specCheckpoints = 60
	specTieBreak    = "bonus"
	// specMatchCBeta is the non-private multiplier of the reproductions' tuned β mode.
	specMatchCBeta = 0.05
)

// PlanSpec implements engine.SpecPlanner: the shared run schema for linear MDPs.
//
//   - env: latentriver (default, the reproductions' E2; params m 5, copies 10, horizon 20),
//     riverswim (E1; n 6, horizon 20), randomsimplex (E3; n 100, a 4, d 8, horizon 10 — the
//     spec §6.5 defaults — and seed 1), twostate100 (seed 1, horizon 15, the benchmarks'
//     instance) or file (a linear MDP file with its own H; no params). The parameter names are
//     Config's envs[] fields; omitted ones take the defaults above. The environment is named
//     by its kind in the outputs.
//   - agents: every name of dprl list (Config.agents). An agent that uses ε (the private
//     agents and their ε-dependent twins rare-switch-reg, batch-twin, practical-lsvi-noiseoff)
//     runs at every ε of privacy.epsilons, the others (lsvi-ucb, rare-switch,
//     practical-rare-switch, practical-batch-twin) once.
//   - privacy: δ of the private agents. Each agent's calibration is fixed by its name
//     (AgentCalibration): privacy.calibration, if set, must be exact, paper or zcdp and equal
//     the calibration of every calibrated agent listed (ngo and the practical agents exact;
//     ngo-printed, luyo-batched, luyo-nonbatched paper; luyo-zcdp zcdp). noise seeded only (the
//     experiment seeds every agent's noise).
//   - multipliers.bonus: one β mode, the reproductions' tuned mode scaled: every agent's β is
//     matched to bonus·0.05·dH√ln(2dKH/p)·√(its regulariser) (match_c_beta 0.05·bonus,
//     match_regulariser true; named "tuned", or "tuned-x<bonus>" when bonus ≠ 1). With bonus 1
//     the cells are those of the reproductions' tuned mode; practical-lsvi-theory keeps
//     c_β = 1. β is post-processing: it never changes a noise level.
//
// The other settings are those of the reproductions' main blocks: p = 0.05, 60 log-spaced
// checkpoints, tie-break bonus. The run is one block named after the run.
func (Family) PlanSpec(s *engine.RunSpec, source string) (engine.Plan, error) {
	cfg, err := specConfig(s)
	if err != nil {
		return nil, err
	}
	return newSuitePlan(&Suite{Name: cfg.Name, Blocks: []*Config{cfg}}, nil)
}

// specEnv translates env into an EnvSpec through the registry (parameters checked,
// environment built once).
func specEnv(s *engine.RunSpec) (EnvSpec, error) {
	var e EnvSpec
	kind, env, err := Envs().ResolveSet(s, FamilyName, &e)
	e.Name, e.Kind = kind, kind
	if err != nil {
		return e, err
	}
	if _, err := env.New(e); err != nil {
		return e, s.EnvError(err)
	}
	return e, nil
}

// seededSpec is how the family translates the common part of a RunSpec.
var seededSpec = engine.SeededSpec{Family: "linmdp", MinEpisodes: 10, Why: "the experiment seeds every agent's noise",
	Calibrations: []string{calibration.Exact, calibration.Paper, calibration.ZCDP}, Note: "; each agent's calibration is fixed by its name, dprl list"}

// specConfig translates a RunSpec into a Config (validated).
func specConfig(s *engine.RunSpec) (*Config, error) {
	env, calib, err := engine.SeededPrelude(s, seededSpec, specEnv)
	if err != nil {
		return nil, err
	}
	usesEps := false
	for i, a := range s.Agents {
		if err := engine.CheckAgent(i, a, FamilyName, AgentNames()); err != nil {
			return nil, err
		}
		if epsilonFree(a) {
			continue
		}
		usesEps = true
		if len(s.Privacy.Epsilons) == 0 {
			return nil, fmt.Errorf("privacy.epsilons: required for the agent %s (agents[%d]), which runs at every ε, each in %s", a, i, bounds.EpsilonRange)
		}
		if c := AgentCalibration(a); calib != "" && c != "" && c != calib {
			return nil, fmt.Errorf("privacy.calibration: %s, but agent %s (agents[%d]) has calibration %s, fixed by its name (allowed with it: %s or empty; ngo-printed is ngo with paper, luyo-zcdp Luyo's agent with zcdp)", calib, a, i, c, c)
		}
	}
	beta := BetaMode{Name: "tuned", MatchCBeta: specMatchCBeta * s.Multipliers.Bonus, MatchRegulariser: true}
	if s.Multipliers.Bonus != 1 {
		beta.Name = fmt.Sprintf("tuned-x%g", s.Multipliers.Bonus)
	}
	cfg := &Config{Name: s.Name, Runs: s.Runs.Clone(), Delta: s.Privacy.Delta,
		P: specP, Checkpoints: specCheckpoints, TieBreak: specTieBreak, Agents: append([]string(nil), s.Agents...),
		Envs: []EnvSpec{env}, BetaModes: []BetaMode{beta}}
	if usesEps {
		cfg.Epsilons = append([]float64(nil), s.Privacy.Epsilons...)
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return cfg, nil
}

// SpecEnvs implements engine.SpecEnvLister: the registered environments (Envs).
func (Family) SpecEnvs() []engine.SpecEnv { return Envs().SpecEnvs() }
