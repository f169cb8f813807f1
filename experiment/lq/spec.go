package lq

import (
	"fmt"
	"math"

	agents "github.com/dprl/dprl/agents/lq"
	"github.com/dprl/dprl/experiment/calibration"
	"github.com/dprl/dprl/experiment/engine"
	"github.com/dprl/dprl/internal/bounds"
)

// PlanSpec implements engine.SpecPlanner: the shared run schema for LQ control.
//
//   - env: a registered system (Envs): lq-e1 (default) or file (a system file, model/lq
//     Config format); no params.
//   - agents: ofu-rl (non-private, ε = ∞) and private-ofu-rl (at every ε of privacy.epsilons).
//     A spec naming one of dprl's practical agents goes to the practical suite
//     (PracticalSuite.PlanSpec), which runs the paper's agents beside them.
//   - privacy: δ; calibration exact (default) or paper; replace-one neighbours; noise seeded
//     (the experiments' source; the LQ agents are not wired to the secure source).
//   - multipliers.bonus is the confidence-width multiplier (never changes noise).
//
// The other settings are the reproduction's (lq spec §5.4): α = 0.05, λ = 1, 4 random starts
// and 100 iterations of the optimistic search, R(k) reported at 1-2-5 steps up to K.
func (Family) PlanSpec(s *engine.RunSpec, source string) (engine.Plan, error) {
	for _, a := range s.Agents {
		switch a {
		case agents.PracticalName, agents.PracticalTheoryName, agents.PracticalNoiseOffName:
			return PracticalSuite{}.PlanSpec(s, source)
		}
	}
	cfg, err := specConfig(s)
	if err != nil {
		return nil, err
	}
	return newPlan(cfg, false)
}

// specConfig translates a RunSpec into a Config (validated).
func specConfig(s *engine.RunSpec) (*Config, error) {
	cfg := &Config{Name: s.Name, Episodes: s.Episodes, Seeds: append([]uint64(nil), s.Seeds...), Delta: s.Privacy.Delta,
		Alpha: 0.05, Lambda: 1, Neighbouring: "replace-one", Calibration: s.Privacy.Calibration,
		WidthMultiplier: s.Multipliers.Bonus, Search: Search{RandomStarts: 4, MaxIter: 100}}
	var err error
	if cfg.System, _, err = specSystem(s, "lq"); err != nil {
		return nil, err
	}
	if cfg.Calibration == "" {
		cfg.Calibration = calibration.Exact
	}
	if _, err := calibration.Canonical("privacy.calibration", cfg.Calibration, calibration.Exact, calibration.Paper); err != nil {
		return nil, fmt.Errorf("%w (family lq)", err)
	}
	if err := s.SeededOnly("lq", "the LQ runners build the agents' seeded noise"); err != nil {
		return nil, err
	}
	for i, a := range s.Agents {
		switch a {
		case "ofu-rl":
			cfg.Epsilons = append(cfg.Epsilons, math.Inf(1))
		case "private-ofu-rl":
			if len(s.Privacy.Epsilons) == 0 {
				return nil, fmt.Errorf("privacy.epsilons: required for the private agent private-ofu-rl (agents[%d]), each in %s", i, bounds.EpsilonRange)
			}
			cfg.Epsilons = append(cfg.Epsilons, s.Privacy.Epsilons...)
		default:
			return nil, fmt.Errorf("agents[%d]: unknown agent %q of family lq (allowed: ofu-rl, private-ofu-rl, %s, %s, %s)", i, a, agents.PracticalName, agents.PracticalTheoryName, agents.PracticalNoiseOffName)
		}
	}
	for k := 1; k <= s.Episodes; k *= 10 {
		for _, m := range []int{1, 2, 5} {
			if k*m >= 100 && k*m < s.Episodes {
				cfg.ReportAt = append(cfg.ReportAt, k*m)
			}
		}
		if k > s.Episodes/10 {
			break
		}
	}
	cfg.ReportAt = append(cfg.ReportAt, s.Episodes)
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return cfg, nil
}

// SpecEnvs implements engine.SpecEnvLister: the registered systems (Envs).
func (Family) SpecEnvs() []engine.SpecEnv { return Envs().SpecEnvs() }
