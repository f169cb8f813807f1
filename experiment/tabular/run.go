package tabular

import (
	"context"
	"time"

	"github.com/dprl/dprl/agents/protocol"
	agents "github.com/dprl/dprl/agents/tabular"
	"github.com/dprl/dprl/experiment/engine"
	"github.com/dprl/dprl/experiment/rundir"
	model "github.com/dprl/dprl/model/tabular"
	"github.com/dprl/dprl/privacy/noise"
)

// SeedRun is the outcome of one (curve, seed) run.
type SeedRun struct {
	Seed uint64 `json:"seed"`
	// Cum[k] is the exact cumulative regret after episode k+1.
	Cum []float64 `json:"-"`
	// Final is Cum[K−1].
	Final float64 `json:"final_regret"`
	// Policies counts how many times the policy changed between consecutive episodes.
	PolicyChanges int                 `json:"policy_changes"`
	Diagnostics   agents.PlannerStats `json:"diagnostics"`
	// LastE is the count-error bound E of the last release.
	LastE float64 `json:"last_E"`
	// Seconds is the wall time of the run.
	Seconds float64 `json:"seconds"`
}

// CurveResult holds all seeds of one curve.
type CurveResult struct {
	Spec    CurveSpec            `json:"spec"`
	Privacy agents.PrivacyReport `json:"privacy"`
	Bonus   agents.BonusConfig   `json:"bonus"`
	Runs    []SeedRun            `json:"runs"`
}

// Result is a finished experiment.
type Result struct {
	Config  *Config       `json:"config"`
	Env     string        `json:"env"`
	VStar   float64       `json:"v_star"`
	Curves  []CurveResult `json:"curves"`
	Seconds float64       `json:"wall_seconds"`
	Workers int           `json:"workers"`
	// Horizon is the H actually used (a file environment's own H).
	Horizon int `json:"horizon"`
	// Inputs are the files read (config, model file) with their SHA-256.
	Inputs []rundir.Input `json:"-"`
	// Output controls Write (Force, LogY); Run copies it from Options.Output.
	Output rundir.Options `json:"-"`
	// NoLearning is the expected per-episode regret of the uniformly random policy.
	NoLearning float64 `json:"no_learning_regret_per_episode"`
	// qiao is the qiao-fig1 summary written by Write.
	qiao *qiaoOutput
}

// Options control execution (not results): Workers (0 = GOMAXPROCS), Progress (episodes done,
// episodes total) and Output (handed to the result's Write).
type Options = engine.LocalOptions

// SetOutput implements engine.Outputter.
func (r *Result) SetOutput(o rundir.Options) { r.Output = o }

// Run executes every (curve, seed) pair of cfg on this machine through the engine and
// returns the result without writing files. The result does not depend on opts.Workers.
func Run(ctx context.Context, cfg *Config, opts Options) (*Result, error) {
	return engine.RunLocal(ctx, opts, func() (*engine.Planned, error) { return PlanConfig(cfg) }, (*plan).result)
}

// newAgent builds the agent of one seed: its tie stream and noise streams are derived from the
// run seed, so runs are reproducible and independent of scheduling.
func newAgent(m *model.MDP, cfg *Config, ac agents.Config, streams engine.Streams) (*agents.Agent, error) {
	st := agents.Streams{Tie: streams.Agent().Child("tie").Rand()}
	switch cfg.Noise {
	case "secure":
		st.Noise = nil // the agents' deployment default: crypto-seeded granular noise
	default:
		st.Noise = func(name string) noise.Source {
			return noise.NewSeeded(streams.Noise(name).Rand())
		}
	}
	// The terminal states are public structure of the environment: the agent receives them.
	ac.Terminal, ac.TerminalReward = m.Terminal, m.TerminalReward
	return agents.New(m.S, m.A, m.H, cfg.Episodes, ac, st)
}

// RunSeed runs one agent for cfg.Episodes episodes with the streams of one seed and returns
// its exact cumulative regret. advance, if non-nil, is called with the number of episodes
// completed since its last call. The agent runs through the one episode loop (protocol.Run):
// its curator publishes, user k plays from her stream Users().Index(k−1) and reports.
func RunSeed(ctx context.Context, m *model.MDP, cfg *Config, ac agents.Config, st engine.Streams, advance func(int64)) (SeedRun, error) {
	start := time.Now()
	ag, err := newAgent(m, cfg, ac, st)
	if err != nil {
		return SeedRun{}, err
	}
	K := cfg.Episodes
	sess, ev, err := ag.Session(agents.AgentName(ac), m, K)
	if err != nil {
		return SeedRun{}, err
	}
	out := SeedRun{Seed: st.Seed, Cum: make([]float64, K)}
	cum := 0.0
	if err := protocol.Run(ctx, sess, protocol.Options{Episodes: K, Users: st.Episodes(engine.FromZero), Progress: advance,
		Each: func(k int, regret float64) {
			cum += regret
			out.Cum[k-1] = cum
		}}); err != nil {
		return SeedRun{}, err
	}
	out.Final = cum
	out.PolicyChanges = ev.PolicyChanges()
	out.Diagnostics = ag.Server.Diagnostics()
	out.LastE = ag.Server.Billboard().E
	out.Seconds = time.Since(start).Seconds()
	return out, nil
}
