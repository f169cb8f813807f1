package linmdp

import (
	"context"
	"fmt"
	"math"

	agents "github.com/dprl/dprl/agents/linmdp"
	"github.com/dprl/dprl/agents/protocol"
	"github.com/dprl/dprl/experiment/engine"
	"github.com/dprl/dprl/experiment/internal/uniform"
	"github.com/dprl/dprl/experiment/rundir"
	model "github.com/dprl/dprl/model/linmdp"
	"github.com/dprl/dprl/privacy/noise"
	"github.com/dprl/dprl/rng"
)

// noLearning returns V*_1 − V^{uniform}_1: the per-episode regret of the uniformly random
// policy (the no-learning reference), if computing it costs at most about 10⁸ operations.
func noLearning(m *model.MDP, vstar float64) (float64, bool) {
	if float64(m.N)*float64(m.N)*float64(m.A)*float64(m.H)*float64(m.D) > 1e8 {
		return 0, false
	}
	return vstar - uniform.Value(m.H, m.N, m.A, m.Init, func(h, s, a int, next []float64) float64 {
		q := m.Reward(h, s, a)
		for s2 := 0; s2 < m.N; s2++ {
			q += m.P(h, s, a, s2) * next[s2]
		}
		return q
	}), true
}

// Cell is one curve: an agent at one ε (0 for non-private agents) in one environment under
// one β setting.
type Cell struct {
	Env     string  `json:"env"`
	Beta    string  `json:"beta_mode"`
	Agent   string  `json:"agent"`
	Epsilon float64 `json:"epsilon,omitempty"`
	// CBeta is the multiplier actually used (after matching, for tuned modes).
	CBeta float64 `json:"c_beta"`
	Label string  `json:"label"`
	// Calibration is the agent's noise calibration in dprl's vocabulary (package
	// experiment/calibration; empty for a non-private agent): see AgentCalibration.
	Calibration string `json:"calibration,omitempty"`
}

// SeedResult is one run of one cell.
type SeedResult struct {
	Seed uint64 `json:"seed"`
	// Cum is the cumulative regret at the experiment's checkpoints.
	Cum []float64 `json:"-"`
	// FirstMean and LastMean are the mean per-episode regret over the first and last 10% of
	// episodes.
	FirstMean float64 `json:"first_decile_mean"`
	LastMean  float64 `json:"last_decile_mean"`
	// Updates is the number of policy updates; UpdateEpisodes the first 200 of their episodes.
	Updates        int   `json:"updates"`
	UpdateEpisodes []int `json:"update_episodes,omitempty"`
	// Spurious counts Ngo updates that the exact Gram matrix would not have triggered. It is a
	// NON-PRIVATE diagnostic computed from the raw statistics (spec §6.6), labelled so
	// wherever it is written (the nonprivate_diag_ prefix).
	Spurious int         `json:"nonprivate_diag_spurious_updates,omitempty"`
	Info     agents.Info `json:"info"`
}

// CellResult gathers a cell's runs.
type CellResult struct {
	Cell Cell         `json:"cell"`
	Runs []SeedResult `json:"runs"`
}

// Result is the outcome of an experiment.
type Result struct {
	Config      *Config            `json:"config"`
	Checkpoints []int              `json:"checkpoints"`
	Cells       []CellResult       `json:"cells"`
	VStar       map[string]float64 `json:"v_star"`
	Seconds     float64            `json:"wall_seconds"`
	Workers     int                `json:"workers"`
	// Horizons is the H actually used per environment (a file environment's own H).
	Horizons map[string]int `json:"horizons"`
	// NoLearning is the per-episode regret of the uniformly random policy per environment
	// (absent when too large to compute).
	NoLearning map[string]float64 `json:"no_learning_regret_per_episode"`
	// Inputs are the files read (config, model files) with their SHA-256.
	Inputs []rundir.Input `json:"-"`
	// Output controls Write; Run copies it from Options.Output.
	Output rundir.Options `json:"-"`
	// extra is a section appended to summary.md (a suite's goals, for a one-block suite).
	extra string
	// envSHA is the SHA-256 of each file environment's file by environment name (prepare
	// reads it once; the units' IDs include it).
	envSHA map[string]string
}

// Options controls Run: Workers is the number of parallel runs (≥ 1), Progress is called
// after each run with (done, total) runs, Output is handed to Write.
type Options = engine.LocalOptions

// SetOutput implements engine.Outputter.
func (r *Result) SetOutput(o rundir.Options) { r.Output = o }

// Checkpoints returns about n log-spaced episode numbers in [1, K], always including K.
func Checkpoints(K, n int) []int {
	var out []int
	last := 0
	for i := 0; i < n; i++ {
		k := int(math.Round(math.Pow(float64(K), float64(i)/float64(n-1))))
		k = min(max(k, 1), K)
		if k > last {
			out = append(out, k)
			last = k
		}
	}
	if last != K {
		out = append(out, K)
	}
	return out
}

// nonPrivateBeta mirrors agents' LSVI-UCB β = d·H·√ln(2dKH/p) (spec §2.2).
func nonPrivateBeta(d, H, K int, p float64) float64 {
	return float64(d) * float64(H) * math.Sqrt(math.Log(2*float64(d)*float64(K)*float64(H)/p))
}

// Cells lists the experiment's curves in a fixed order.
func (c *Config) Cells() []Cell {
	var out []Cell
	for _, e := range c.Envs {
		for _, b := range c.BetaModes {
			for _, a := range c.Agents {
				eps := []float64{0}
				if !epsilonFree(a) {
					eps = c.Epsilons
				}
				for _, x := range eps {
					l := a
					if x > 0 {
						l = fmt.Sprintf("%s eps=%g", a, x)
					}
					out = append(out, Cell{Env: e.Name, Beta: b.Name, Agent: a, Epsilon: x, Label: l, Calibration: AgentCalibration(a)})
				}
			}
		}
	}
	return out
}

// newAgent builds the cell's agent with multiplier cbeta; src, if non-nil, is its noise source
// by mechanism (agents.Common.Noise: a served agent's secure noise), else the noise derives
// from seed.
func newAgent(env *model.MDP, cfg *Config, cell Cell, cbeta float64, seed *rng.Seed, src func(string) noise.Source) (agents.Agent, error) {
	tie, err := agents.ParseTieBreak(cfg.TieBreak)
	if err != nil {
		return nil, err
	}
	com := agents.Common{K: cfg.Episodes, P: cfg.P, CBeta: cbeta, Tie: tie, Seed: seed, Noise: src}
	a, ok := lookupAgent(cell.Agent)
	if !ok {
		return nil, fmt.Errorf("unknown agent %q", cell.Agent)
	}
	return a.New(env, cfg, cell, com)
}

// Run executes every (cell, seed) pair on this machine through the engine (in memory) and
// returns the result without writing files. The same configuration gives bit-identical results
// whatever the number of workers: every run derives its streams from its own seed
// (environment: seed/env, agent noise and ties: seed/agent).
func Run(ctx context.Context, cfg *Config, opts Options) (*Result, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if opts.Workers < 1 {
		return nil, fmt.Errorf("workers: must be >= 1, got %d", opts.Workers)
	}
	return engine.RunLocal(ctx, opts, func() (*engine.Planned, error) {
		return PlanSuite(&Suite{Name: cfg.Name, Blocks: []*Config{cfg}})
	}, (*suitePlan).first)
}

// prepare builds the block's Result without runs: environments (V*, H, no-learning regret),
// cells with their resolved c_β, and the environment files read (in Inputs).
func prepare(cfg *Config) (*Result, map[string]*model.MDP, error) {
	envs := map[string]*model.MDP{}
	res := &Result{Config: cfg, Checkpoints: Checkpoints(cfg.Episodes, cfg.Checkpoints), VStar: map[string]float64{},
		Horizons: map[string]int{}, NoLearning: map[string]float64{}, envSHA: map[string]string{}}
	for i, e := range cfg.Envs {
		if e.Kind == "file" {
			in, err := rundir.HashFile("env", e.Path)
			if err != nil {
				return nil, nil, fmt.Errorf("envs[%d].path: %w", i, err)
			}
			res.Inputs = append(res.Inputs, in)
			res.envSHA[e.Name] = in.SHA256
		}
		m, err := e.Build()
		if err != nil {
			return nil, nil, fmt.Errorf("envs[%s]: %w", e.Name, err)
		}
		envs[e.Name] = m
		res.Horizons[e.Name] = m.H
		v, _ := m.OptimalValues()
		s := 0.0
		for i, p := range m.Init {
			s += p * v[0][i]
		}
		res.VStar[e.Name] = s
		if nl, ok := noLearning(m, s); ok {
			res.NoLearning[e.Name] = nl
		}
	}
	modes := map[string]BetaMode{}
	for _, b := range cfg.BetaModes {
		modes[b.Name] = b
	}
	cells := cfg.Cells()
	for i := range cells {
		c := &cells[i]
		b := modes[c.Beta]
		c.CBeta = b.CBeta
		if b.MatchCBeta > 0 {
			env := envs[c.Env]
			if err := checkAgent(env, cfg, *c); err != nil {
				return nil, nil, fmt.Errorf("%s/%s/%s: %w", c.Env, c.Beta, c.Label, err)
			}
			probe, err := newAgent(env, cfg, *c, 1, &rng.Seed{}, nil)
			if err != nil {
				return nil, nil, fmt.Errorf("%s/%s/%s: %w", c.Env, c.Beta, c.Label, err)
			}
			in := probe.Info()
			target := b.MatchCBeta * nonPrivateBeta(env.D, env.H, cfg.Episodes, cfg.P)
			if b.MatchRegulariser {
				target *= math.Sqrt(in.Regulariser)
			}
			if !(in.Beta > 0) || math.IsInf(in.Beta, 0) {
				return nil, nil, fmt.Errorf("beta_modes[%s].match_c_beta: agent %s on %s has β = %g at c_β = 1, so no multiplier matches it (use c_beta for this agent)", b.Name, c.Agent, c.Env, in.Beta)
			}
			c.CBeta = target / in.Beta
		}
		res.Cells = append(res.Cells, CellResult{Cell: *c})
	}
	return res, envs, nil
}

// newUnit builds the agent of one cell for one unit and its contract, as a unit of the plan runs
// it (runOne) and a service serves it (Family.Session): the agent's streams are st.Agent();
// secure takes its noise from st's secure sources (engine.Streams.SecureNoise: keyed by st.Key,
// crypto-seeded without one) instead of the seeded streams below st.Agent().
func newUnit(env *model.MDP, cfg *Config, cell Cell, st engine.Streams, secure bool) (agents.Agent, protocol.Session, error) {
	as := st.Agent()
	var src func(string) noise.Source
	if secure {
		src = st.SecureNoise
	}
	ag, err := newAgent(env, cfg, cell, cell.CBeta, &as, src)
	if err != nil {
		return nil, nil, err
	}
	sess, _, _ := agents.NewSession(env, ag, cell.Agent, cfg.Episodes)
	return ag, sess, nil
}

// runOne runs one cell for one seed through the one episode loop (protocol.Run): the agent's
// streams are st.Agent(), the users draw in turn from the run's environment stream st.Env()
// (engine.SharedEnv), as before the engine.
func runOne(ctx context.Context, env *model.MDP, cfg *Config, cell Cell, st engine.Streams, cps []int) (SeedResult, error) {
	ag, sess, err := newUnit(env, cfg, cell, st, false)
	if err != nil {
		return SeedResult{}, err
	}
	K := cfg.Episodes
	regret := make([]float64, K)
	if err := protocol.Run(ctx, sess, protocol.Options{Episodes: K, Users: st.Episodes(engine.SharedEnv),
		Each: func(k int, r float64) { regret[k-1] = r }}); err != nil {
		return SeedResult{}, err
	}
	tr := agents.Trace{Regret: regret, Updates: ag.Updates(), Info: ag.Info()}
	sr := SeedResult{Seed: st.Seed, Updates: len(tr.Updates), Info: tr.Info}
	cum := 0.0
	j := 0
	for k, r := range tr.Regret {
		cum += r
		for j < len(cps) && cps[j] == k+1 {
			sr.Cum = append(sr.Cum, cum)
			j++
		}
	}
	dec := max(K/10, 1)
	for _, r := range tr.Regret[:dec] {
		sr.FirstMean += r / float64(dec)
	}
	for _, r := range tr.Regret[K-dec:] {
		sr.LastMean += r / float64(dec)
	}
	a := row(cell.Agent)
	for i, u := range tr.Updates {
		if a.Spurious && !u.ExactWouldTrigger {
			sr.Spurious++
		}
		if i < 200 && a.Work != Refit {
			sr.UpdateEpisodes = append(sr.UpdateEpisodes, u.Episode)
		}
	}
	return sr, nil
}
