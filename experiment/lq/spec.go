package lq

import (
	"fmt"
	"math"
	"strings"

	"github.com/dprl/dprl/experiment/calibration"
	"github.com/dprl/dprl/experiment/engine"
	"github.com/dprl/dprl/internal/bounds"
	model "github.com/dprl/dprl/model/lq"
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
	if practicalSuiteAgent(s.Agents) {
		return PracticalSuite{}.PlanSpec(s, source)
	}
	cfg, err := specConfig(s)
	if err != nil {
		return nil, err
	}
	return newPlan(cfg, false)
}

// specConfig translates a RunSpec into a Config (validated).
func specConfig(s *engine.RunSpec) (*Config, error) {
	cfg := &Config{Setup: Setup{Name: s.Name, Runs: s.Runs.Clone()}, Delta: s.Privacy.Delta,
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
		r, ok := lookupAgent(a)
		switch {
		case !ok || !r.Paper:
			return nil, fmt.Errorf("agents[%d]: unknown agent %q of family lq (allowed: %s)", i, a, strings.Join(AgentNames(), ", "))
		case !r.Private:
			cfg.Epsilons = append(cfg.Epsilons, math.Inf(1))
		case len(s.Privacy.Epsilons) == 0:
			return nil, fmt.Errorf("privacy.epsilons: required for the private agent %s (agents[%d]), each in %s", a, i, bounds.EpsilonRange)
		default:
			cfg.Epsilons = append(cfg.Epsilons, s.Privacy.Epsilons...)
		}
	}
	cfg.ReportAt = reportSteps(s.Episodes)
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return cfg, nil
}

// SpecEnvs implements engine.SpecEnvLister: the registered systems (Envs).
func (Family) SpecEnvs() []engine.SpecEnv { return Envs().SpecEnvs() }

// PlanSpec plans a RunSpec of family lq that names one of dprl's practical LQ agents.
//
//   - env: lq-e1 (default) or file (a system file, model/lq Config format); no params.
//   - agents: practical-ofu-rl, practical-ofu-rl-theory (private, at every ε of
//     privacy.epsilons), practical-ofu-rl-noise-off (once), and the paper's private-ofu-rl (at
//     every ε) and ofu-rl (once), as the reproduction runs them; curves in that order.
//   - privacy: δ; calibration exact only (the practical agents' σ comes from their exact μ-GDP
//     accountant, private-ofu-rl runs at the exact ρ*; the paper's agents alone run the paper's calibration);
//     replace-one neighbours; noise seeded (the runner derives the noise from the run seed; the
//     secure source is not wired).
//   - multipliers.bonus must be 1: the practical agent's confidence set comes from the noise
//     actually added and has no width multiplier (run the paper's agents alone to scale their width).
//
// The other settings are the reproduction's (configs/practical-lq.yaml): every agent runs K =
// episodes; budget B = 4, releases after users 1, 2, 4, … then every 500 users, the BLT counter,
// α = 0.05 per release, 4 reference directions, 4 random starts and 100 iterations of the
// optimistic search, R(k) reported at 1-2-5 steps up to K. The issue-13 goals are evaluated
// (on LQ-E1) when practical-ofu-rl runs at ε = 1.
func (PracticalSuite) PlanSpec(s *engine.RunSpec, source string) (engine.Plan, error) {
	cfg, err := practicalSpecConfig(s)
	if err != nil {
		return nil, err
	}
	p, err := newPracticalPlan(cfg)
	if err != nil {
		return nil, err
	}
	p.spec = true
	return p, nil
}

// SpecEnvs lists the suite's RunSpec environments: the family's systems (Envs).
func (PracticalSuite) SpecEnvs() []engine.SpecEnv { return Envs().SpecEnvs() }

// practicalSpecConfig translates a RunSpec into a PracticalExpConfig that runs the requested
// agents (validated).
func practicalSpecConfig(s *engine.RunSpec) (*PracticalExpConfig, error) {
	cfg := &PracticalExpConfig{Setup: Setup{Name: s.Name, Runs: s.Runs.Clone()}, PaperEpisodes: s.Episodes, OFUEpisodes: s.Episodes,
		Delta: s.Privacy.Delta, Budget: 4, BatchEvery: 500, Counter: "blt",
		Confidence: 0.05, References: 4, Search: Search{RandomStarts: 4, MaxIter: 100}, ReportAt: reportSteps(s.Episodes)}
	system, file, err := specSystem(s, "practical-lq")
	if err != nil {
		return nil, err
	}
	if file {
		if _, err := model.Load(system); err != nil {
			return nil, fmt.Errorf("env.file: %w", err)
		}
	}
	cfg.System = system
	if c := s.Privacy.Calibration; c != "" {
		if _, err := calibration.Canonical("privacy.calibration", c, calibration.Exact); err != nil {
			return nil, fmt.Errorf("%w (family practical-lq: the practical agents' noise is fixed by their accountant and private-ofu-rl runs at the exact ρ*; the paper's agents alone run the paper's calibration)", err)
		}
	}
	if err := s.SeededOnly("practical-lq", "the LQ runners build the agents' seeded noise"); err != nil {
		return nil, err
	}
	if s.Multipliers.Bonus != 1 {
		return nil, fmt.Errorf("multipliers.bonus: family practical-lq has no width multiplier (the practical agent's confidence set comes from the noise actually added; family lq scales the paper's agents' width), got %g; allowed: 1", s.Multipliers.Bonus)
	}
	for i, a := range s.Agents {
		r, ok := lookupAgent(a)
		switch {
		case !ok:
			return nil, fmt.Errorf("agents[%d]: unknown agent %q of family practical-lq (allowed: %s)", i, a, strings.Join(AgentNames(), ", "))
		case r.Private && len(s.Privacy.Epsilons) == 0:
			return nil, fmt.Errorf("privacy.epsilons: required for the private agent %s (agents[%d]), each in %s", a, i, bounds.EpsilonRange)
		}
		cfg.Agents = append(cfg.Agents, a)
		if r.Private && r.EpsilonsField == "theory_epsilons" {
			cfg.TheoryEpsilons = append([]float64(nil), s.Privacy.Epsilons...)
		}
	}
	cfg.Epsilons = append([]float64(nil), s.Privacy.Epsilons...)
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return cfg, nil
}

// reportSteps returns the episodes at which the summary reports R(k): 1-2-5 steps from 100
// below K, then K.
func reportSteps(K int) []int {
	var out []int
	for k := 100; k < K; k *= 10 {
		for _, m := range []int{1, 2, 5} {
			if k*m < K {
				out = append(out, k*m)
			}
		}
		if k > math.MaxInt/100 {
			break
		}
	}
	return append(out, K)
}
