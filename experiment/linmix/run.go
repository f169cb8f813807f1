package linmix

import (
	"context"
	"fmt"
	"math"
	"sort"

	agents "github.com/dprl/dprl/agents/linmix"
	"github.com/dprl/dprl/experiment/engine"
	"github.com/dprl/dprl/experiment/rundir"
	model "github.com/dprl/dprl/model/linmix"
	"github.com/dprl/dprl/privacy/ledger"
)

// Curve is one (environment, agent configuration) pair run over all seeds.
type Curve struct {
	// Env is the environment's index in Config.Envs and EnvName its label.
	Env     int    `json:"env"`
	EnvName string `json:"env_name"`
	// Label names the curve (algorithm/mode[-calibration] ε=… cβ=…).
	Label string `json:"label"`
	// Agent is the agent configuration.
	Agent agents.Config `json:"-"`
	// Practical, if non-nil, makes this a practical-vtr curve (dprl's own agent) and Guarantee
	// is its privacy ledger's report.
	Practical *agents.PracticalConfig `json:"practical,omitempty"`
	Guarantee *ledger.Report          `json:"guarantee,omitempty"`
	// Algorithm, Mode, Calibration, Epsilon, BetaMult, ShiftMult echo Agent for the manifest.
	Algorithm   string  `json:"algorithm"`
	Mode        string  `json:"mode"`
	Calibration string  `json:"calibration"`
	Epsilon     float64 `json:"epsilon,omitempty"`
	BetaMult    float64 `json:"beta_mult"`
	ShiftMult   float64 `json:"shift_mult"`
	// Constants are the public constants used (σ, Υ, β, privacy statement).
	Constants agents.Constants `json:"constants"`
	// Runs holds, per seed, the cumulative regret at the checkpoints.
	Runs [][]float64 `json:"-"`
	// Diagnostics per seed.
	Diagnostics []agents.Diagnostics `json:"diagnostics"`
	// Seconds is each seed's wall time of its K episodes (0: not timed, a unit file written
	// before it was recorded).
	Seconds []float64 `json:"seconds"`
	// VStar is V*_1(s_1) of the environment (seed 1's instance for seeded environments).
	VStar float64 `json:"v_star"`
	// Uniform is the per-episode regret of the uniform random policy.
	Uniform float64 `json:"uniform_regret_per_episode"`
	// Horizon is the environment's H.
	Horizon int `json:"horizon"`
}

// Result is a finished experiment.
type Result struct {
	Config      *Config `json:"config"`
	Checkpoints []int   `json:"checkpoints"`
	Curves      []*Curve
	Seconds     float64 `json:"wall_seconds"`
	Workers     int     `json:"workers"`
	// Inputs are the files read (config, model files) with their SHA-256.
	Inputs []rundir.Input `json:"-"`
	// Output controls Write; Run copies it from Options.Output.
	Output rundir.Options `json:"-"`
}

// Checkpoints returns the episodes at which cumulative regret is stored: points values,
// half log-spaced and half linearly spaced, always including 1 and K.
func Checkpoints(K, points int) []int {
	set := map[int]bool{1: true, K: true}
	half := points / 2
	for i := 0; i < half; i++ {
		set[int(math.Round(math.Exp(math.Log(float64(K))*float64(i)/float64(half-1))))] = true
		set[int(math.Round(float64(K)*float64(i+1)/float64(half)))] = true
	}
	var out []int
	for k := range set {
		if k >= 1 && k <= K {
			out = append(out, k)
		}
	}
	sort.Ints(out)
	return out
}

func label(ac agents.Config) string {
	s := ac.Name()
	if ac.Mode != agents.None {
		s += fmt.Sprintf(" ε=%g", ac.Epsilon)
	}
	return s + fmt.Sprintf(" cβ=%g", ac.BetaMult)
}

// Curves expands the configuration into curves (without running them).
func (c *Config) curves() ([]*Curve, error) {
	var out []*Curve
	for ei, e := range c.Envs {
		m, err := e.Build(c.Seeds[0], c.Episodes)
		if err != nil {
			return nil, fmt.Errorf("envs[%d]: %w", ei, err)
		}
		uni := uniformRegret(m)
		for bi, bm := range c.BetaMults {
			for _, cv := range c.Curves {
				a := row(cv.Algorithm)
				if a.Practical && bi > 0 {
					continue // once, not per c_β
				}
				curves, err := a.Expand(c, cv, bm)
				if err != nil {
					return nil, err
				}
				for _, cur := range curves {
					cur.Env, cur.EnvName, cur.VStar, cur.Uniform, cur.Horizon = ei, m.Name(), m.VStar(), uni, m.Horizon()
					cur.Runs, cur.Diagnostics = make([][]float64, len(c.Seeds)), make([]agents.Diagnostics, len(c.Seeds))
					out = append(out, cur)
				}
			}
		}
	}
	return out, nil
}

func uniformRegret(m *model.MDP) float64 {
	p := model.Policy{Prob: make([]float64, m.Horizon()*m.NumStates()*m.NumActions())}
	for i := range p.Prob {
		p.Prob[i] = 1 / float64(m.NumActions())
	}
	return m.NewEvaluator().Regret(p)
}

// Options controls Run: Workers is the number of parallel (curve, seed) runs (≥ 1; fewer
// means one), Progress and Output as engine.LocalOptions.
type Options = engine.LocalOptions

// SetOutput implements engine.Outputter.
func (r *Result) SetOutput(o rundir.Options) { r.Output = o }

// Run executes the experiment on this machine through the engine (every (curve, seed) unit,
// in memory) and returns the result without writing files. Each unit is single-threaded and
// derives all its randomness from its seed (rng.NewSeed(seed)), so the result is bit-identical
// whatever the number of workers; different curves share the users' streams (common random
// numbers).
func Run(ctx context.Context, c *Config, opts Options) (*Result, error) {
	opts.Workers = max(opts.Workers, 1)
	return engine.RunLocal(ctx, opts, func() (*engine.Planned, error) { return engine.PlanWith(FamilyName, newPlan, c) }, (*plan).result)
}
