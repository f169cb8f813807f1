package practical

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/dprl/dprl/agents/protocol"
	agents "github.com/dprl/dprl/agents/tabular"
	"github.com/dprl/dprl/experiment/engine"
	"github.com/dprl/dprl/experiment/rundir"
	"github.com/dprl/dprl/experiment/tabular/tabenv"
	model "github.com/dprl/dprl/model/tabular"
	"github.com/dprl/dprl/privacy/ledger"
	"github.com/dprl/dprl/privacy/noise"
)

// Curve is one (environment, agent, ε) configuration run over seeds.
type Curve struct {
	// Group is "riverswim-jdp", "riverswim-ldp" or "garnet-<seed>".
	Group string `json:"group"`
	Label string `json:"label"`
	// Agent is an agent name: "ucbvi", "dp-ucbvi-jdp", "dp-ucbvi-ldp" (the papers', strict
	// calibration) or a practical agent.
	Agent    string  `json:"agent"`
	Epsilon  float64 `json:"epsilon,omitempty"`
	Episodes int     `json:"episodes"`
	EnvSeed  uint64  `json:"env_seed,omitempty"`
	// File is the MDP file of env file.
	File string `json:"file,omitempty"`
	// Env is the curve's environment, resolved through the registry (its name and
	// parameters): what the curve's model is built from.
	Env tabenv.Config `json:"-"`
	// seeds are the curve's seeds (the configuration's, or garnet.seeds for the grid's
	// Garnets).
	seeds []uint64
	// Privacy is the accountant's statement (one line).
	Privacy string `json:"privacy"`
	// Guarantee is the privacy ledger's report (the one privacy object of the manifest).
	Guarantee ledger.Report `json:"guarantee"`
	// PrivateAtNominal is false only for a curve that does not meet its nominal (ε, δ).
	PrivateAtNominal bool `json:"private_at_nominal"`
	// Runs holds one result per seed.
	Runs []SeedRun `json:"runs"`
}

// SeedRun is one seed's result.
type SeedRun struct {
	Seed uint64 `json:"seed"`
	// Cum is the cumulative exact regret at the checkpoints.
	Cum []float64 `json:"-"`
	// Final is R(K); LastDecile the mean per-episode regret over the last K/10 episodes.
	Final      float64 `json:"final_regret"`
	LastDecile float64 `json:"last_decile_regret"`
	// EpisodesPerSecond is K / wall time of the run (single-threaded).
	EpisodesPerSecond float64 `json:"episodes_per_second"`
}

// Result is a finished experiment.
type Result struct {
	Config  *Config  `json:"config"`
	Curves  []*Curve `json:"curves"`
	Seconds float64  `json:"wall_seconds"`
	Workers int      `json:"workers"`
	// Uniform is the per-episode regret of the uniform random policy per environment group
	// (the no-learning reference: an agent that never learns plays it every episode).
	Uniform map[string]float64 `json:"uniform_regret_per_episode"`
	// Output are the output options of Write (LogY of the regret figures; BeforeManifest, set
	// by the engine, writes meta.json, config.resolved.yaml and regret_long.csv).
	Output rundir.Options `json:"-"`
	// Inputs are the input files recorded in the manifest (the configuration file).
	Inputs []rundir.Input `json:"-"`
	// shapes are the sizes of each group's model (the benchmark summary's headers).
	shapes map[string]shape
}

// shape is the size of a model: states, actions, horizon.
type shape struct {
	S, A, H int
	// PublicSupport: the model's transition support is public structure.
	PublicSupport bool
}

// Options control execution only.
type Options struct {
	Workers  int
	Progress func(done, total int64)
}

// Points is the number of checkpoints stored per run.
const Points = 500

// Checkpoints returns the episodes (1-based) at which cumulative regret is stored.
func Checkpoints(K int) []int {
	n := min(Points, K)
	out := make([]int, n)
	for i := range out {
		out[i] = (i + 1) * K / n
	}
	return out
}

// curves returns the configuration's curves, each with its environment resolved through the
// registry: the explicit ones (Config.Curves; group: the environment's name, with
// "-<env_seed>" for an environment seeded by env_seed; K = episodes) or the reproduction's grid.
func (c *Config) curves() ([]*Curve, error) {
	var cs []*Curve
	add := func(group, agent string, eps float64, K int, env tabenv.Config, seeds []uint64) *Curve {
		l := agent
		if eps > 0 {
			l = fmt.Sprintf("%s eps=%g", agent, eps)
		}
		cv := &Curve{Group: group, Label: l, Agent: agent, Epsilon: eps, Episodes: K, Env: env, seeds: seeds}
		cs = append(cs, cv)
		return cv
	}
	K := c.Episodes
	if len(c.Curves) > 0 {
		groups := map[string]tabenv.Config{}
		cells := map[string]bool{}
		for i, cs := range c.Curves {
			env, seeded, err := c.curveEnv(i, cs)
			if err != nil {
				return nil, err
			}
			group := cs.Env
			if seeded {
				group = fmt.Sprintf("%s-%d", cs.Env, env.EnvSeed)
			}
			if g, ok := groups[group]; ok && g != env {
				return nil, fmt.Errorf("curves[%d].params: environment %s with other parameters than an earlier curve of group %s (one configuration per environment and env_seed)", i, cs.Env, group)
			}
			groups[group] = env
			k := K
			if cs.Episodes != 0 {
				k = min(cs.Episodes, K)
			}
			cv := add(group, cs.Agent, cs.Epsilon, k, env, c.Seeds)
			if cells[group+"/"+cv.Label] {
				return nil, fmt.Errorf("curves[%d]: curve %s %s ε=%g listed twice", i, group, cs.Agent, cs.Epsilon)
			}
			cells[group+"/"+cv.Label] = true
			cv.File = cs.File
			if seeded {
				cv.EnvSeed = env.EnvSeed
			}
		}
		return cs, nil
	}
	rs, _, err := tabenv.Configure(c.registry(), "env", "riverswim", "", map[string]float64{"horizon": float64(c.Horizon)})
	if err != nil {
		return nil, err
	}
	add("riverswim-jdp", "ucbvi", 0, K, rs, c.Seeds)
	add("riverswim-jdp", "practical-ucbvi", 0, K, rs, c.Seeds)
	add("riverswim-jdp", "dp-ucbvi-jdp", 1, K, rs, c.Seeds)
	for _, e := range c.Epsilons {
		add("riverswim-jdp", "practical-jdp", e, K, rs, c.Seeds)
	}
	add("riverswim-jdp", "practical-jdp-plugin", 1, K, rs, c.Seeds)
	add("riverswim-jdp", "practical-psrl-jdp", 1, K, rs, c.Seeds)
	add("riverswim-jdp", "practical-jdp-theory", 1, K, rs, c.Seeds)
	KL := c.LDPEpisodes
	if c.Long {
		KL = c.LDPLongEpisodes
	}
	add("riverswim-ldp", "ucbvi", 0, KL, rs, c.Seeds)
	add("riverswim-ldp", "dp-ucbvi-ldp", 1, KL, rs, c.Seeds)
	for _, e := range c.Epsilons {
		add("riverswim-ldp", "practical-ldp", e, KL, rs, c.Seeds)
	}
	add("riverswim-ldp", "practical-ldp-plugin", 1, KL, rs, c.Seeds)
	for _, s := range c.Garnet.EnvSeeds {
		g := fmt.Sprintf("garnet-%d", s)
		params := c.garnetParams()
		params["env_seed"] = float64(s)
		env, _, err := tabenv.Configure(c.registry(), "garnet", "garnet", "", params)
		if err != nil {
			return nil, err
		}
		for _, a := range []string{"ucbvi", "practical-ucbvi", "practical-jdp", "practical-psrl-jdp"} {
			e := 0.0
			if a == "practical-jdp" || a == "practical-psrl-jdp" {
				e = 1
			}
			add(g, a, e, c.Garnet.Episodes, env, c.Garnet.Seeds).EnvSeed = s
		}
	}
	return cs, nil
}

// garnetParams are the parameters the garnet block sets (horizon: the configuration's).
func (c *Config) garnetParams() map[string]float64 {
	p := map[string]float64{"horizon": float64(c.Horizon)}
	g := c.Garnet
	for k, v := range map[string]float64{"states": float64(g.States), "actions": float64(g.Actions),
		"branching": float64(g.Branching), "reward_density": g.RewardDensity} {
		if v != 0 {
			p[k] = v
		}
	}
	return p
}

// curveEnv resolves the environment of explicit curve i through the registry: its params over
// the configuration's horizon (an environment with one) and the garnet block (garnet), over
// the registry's defaults; seeded reports whether the environment takes env_seed.
func (c *Config) curveEnv(i int, cs CurveSpec) (env tabenv.Config, seeded bool, err error) {
	field := fmt.Sprintf("curves[%d]", i)
	e, ok := c.registry().Lookup(cs.Env)
	if !ok {
		return env, false, fmt.Errorf("%s.env: unknown environment %q (allowed: %s)", field, cs.Env, c.registry().Allowed())
	}
	names := e.ParamNames()
	params := map[string]float64{}
	if e.Name == "garnet" {
		params = c.garnetParams()
	} else if slices.Contains(names, "horizon") {
		params["horizon"] = float64(c.Horizon)
	}
	seeded = slices.Contains(names, "env_seed")
	if cs.EnvSeed != 0 {
		if !seeded {
			return env, false, fmt.Errorf("%s.env_seed: environment %s takes no env_seed (its parameters: %s), got %d", field, cs.Env, strings.Join(names, ", "), cs.EnvSeed)
		}
		if _, both := cs.Params["env_seed"]; both {
			return env, false, fmt.Errorf("%s.env_seed: give the seed once, as params.env_seed (env_seed is its old spelling)", field)
		}
		params["env_seed"] = float64(cs.EnvSeed)
	}
	for k, v := range cs.Params {
		params[k] = v
	}
	env, _, err = tabenv.Configure(c.registry(), field, cs.Env, cs.File, params)
	return env, seeded, err
}

// env builds the model of curve cv with its environment's registered constructor.
func (c *Config) env(cv *Curve) (*model.MDP, error) {
	e, ok := c.registry().Lookup(cv.Env.Name)
	if !ok {
		return nil, fmt.Errorf("env %q: not registered", cv.Env.Name)
	}
	return e.New(cv.Env)
}

// learner is one curve's agent for one seed: its contract (protocol.Session) and the
// accountant's statement.
type learner struct {
	sess    protocol.Session
	ev      *agents.Evaluator
	privacy string
	private bool
	// report is the accountant's statement itself (JSON-encodable): the privacy ledger's
	// report, for the practical agents and the papers' alike.
	report ledger.Report
}

// build builds the learner of one curve for one seed; secure selects the agents' deployment
// noise source (crypto-seeded noise.Secure) instead of noise seeded from the run seed.
func build(m *model.MDP, cv *Curve, K int, delta float64, secure bool, st engine.Streams) (*learner, error) {
	src := func(name string) noise.Source { return noise.NewSeeded(st.Noise(name).Rand()) }
	practicalNoise := src("practical")
	switch {
	case secure && st.Key != nil:
		// A service's curator: secure noise keyed by its persisted secret (a restart redraws
		// exactly the same noise).
		src, practicalNoise = st.SecureNoise, st.SecureNoise("practical")
	case secure:
		// nil is the agents' deployment default: a crypto-seeded noise.Secure source.
		src, practicalNoise = nil, nil
	}
	tie := st.Agent().Child("tie").Rand()
	if _, err := agents.LookupPractical(cv.Agent); err == nil {
		cfg, err := agents.DefaultPracticalConfig(cv.Agent, cv.Epsilon, delta)
		if err != nil {
			return nil, err
		}
		// Pooling over h is valid only for a time-homogeneous model (a public property of
		// the environment, declared by its file): otherwise the statistics are per step.
		cfg.Privacy.Pool = m.Homogeneous()
		// The terminal states are public structure of the environment too, and so is its
		// reward function when the model declares it public (a simulator's published table):
		// the agent then plans with it and releases no reward statistics.
		cfg.Terminal, cfg.TerminalReward = m.Terminal, m.TerminalReward
		if m.PublicRewards {
			cfg.Privacy.PublicRewards, cfg.Rewards, cfg.EntryReward = true, m.R, m.EntryReward
		}
		// Likewise its transition support (the next states each (s, a) can reach) when the
		// model declares it public: counts are then released only inside it.
		if m.PublicSupport {
			cfg.Privacy.PublicSupport, cfg.Support = true, agents.SupportOf(m)
		}
		ag, err := agents.NewPractical(m.S, m.A, m.H, K, cfg, agents.PracticalStreams{
			Tie: tie, Posterior: st.Agent().Child("posterior").Rand(), Noise: practicalNoise})
		if err != nil {
			return nil, err
		}
		return newLearner(ag.Session, cv.Agent, m, K, ag.Privacy, ag.Privacy, ag.Privacy.PrivateAtNominal)
	}
	info, err := agents.Lookup(cv.Agent)
	if err != nil {
		return nil, err
	}
	priv := agents.PrivacyConfig{Model: info.Model, Epsilon: cv.Epsilon, Calibration: agents.Strict, Beta: 0.1, EMode: agents.EPractical, EScale: 1}
	ag, err := agents.New(m.S, m.A, m.H, K, agents.Config{Algorithm: info.Algorithm, Privacy: priv, Bonus: agents.PracticalBonus(),
		Terminal: m.Terminal, TerminalReward: m.TerminalReward}, agents.Streams{Tie: tie, Noise: src})
	if err != nil {
		return nil, err
	}
	return newLearner(ag.Session, cv.Agent, m, K, ag.Privacy, ag.Privacy.Ledger, ag.Privacy.PrivateAtNominal)
}

// newLearner opens the session of the agent named name (session: the agent's Session) and
// records with it the accountant's statement rep, private at the nominal ε or not.
func newLearner(session func(name string, m *model.MDP, K int) (protocol.Session, *agents.Evaluator, error),
	name string, m *model.MDP, K int, rep fmt.Stringer, g ledger.Report, private bool) (*learner, error) {
	sess, ev, err := session(name, m, K)
	if err != nil {
		return nil, err
	}
	return &learner{sess: sess, ev: ev, privacy: rep.String(), private: private, report: g}, nil
}

// runSeed runs one curve for one seed through the one episode loop (protocol.Run; user k
// plays from Users().Index(k−1), so all agents of a seed face the same users). advance
// receives the episodes done; privacy and private are the accountant's statement. secure
// selects the Secure noise source (build).
func runSeed(ctx context.Context, m *model.MDP, cv *Curve, delta float64, secure bool, st engine.Streams, advance func(int64)) (out SeedRun, ln *learner, err error) {
	K := cv.Episodes
	start := time.Now()
	ln, err = build(m, cv, K, delta, secure, st)
	if err != nil {
		return SeedRun{}, nil, err
	}
	cps := Checkpoints(K)
	out = SeedRun{Seed: st.Seed, Cum: make([]float64, 0, len(cps))}
	cum, tail, next := 0.0, 0.0, 0
	if err := protocol.Run(ctx, ln.sess, protocol.Options{Episodes: K, Users: st.Episodes(engine.FromZero), Every: 4096, Progress: advance,
		Each: func(k int, regret float64) {
			cum += regret
			if k > K-K/10 {
				tail += regret
			}
			if k == cps[next] {
				out.Cum = append(out.Cum, cum)
				next++
			}
		}}); err != nil {
		return SeedRun{}, nil, err
	}
	out.Final = cum
	out.LastDecile = tail / float64(K/10)
	out.EpisodesPerSecond = float64(K) / time.Since(start).Seconds()
	return out, ln, nil
}

// Run executes every (curve, seed) unit through the engine, in memory, and returns the result
// without writing files. The result does not depend on opts: each unit is single-threaded and
// derives all its randomness from its seed.
func Run(ctx context.Context, cfg *Config, opts Options) (*Result, error) {
	workers := opts.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	pl, err := engine.PlanWith(FamilyName, newPlan, cfg)
	if err != nil {
		return nil, err
	}
	return engine.RunResult(ctx, pl, engine.Local{Workers: workers, Progress: opts.Progress}, (*plan).result)
}

// uniformRegret is the per-episode regret of the uniformly random policy.
func uniformRegret(m *model.MDP) float64 {
	p := &model.Policy{Prob: make([][]float64, m.H)}
	for h := range p.Prob {
		p.Prob[h] = make([]float64, m.S*m.A)
		for i := range p.Prob[h] {
			p.Prob[h][i] = 1 / float64(m.A)
		}
	}
	return model.NewRegret(m).Of(p)
}
