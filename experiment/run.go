package experiment

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	agents "github.com/dprl/dprl/agents/tabular"
	"github.com/dprl/dprl/experiment/rundir"
	model "github.com/dprl/dprl/model/tabular"
	"github.com/dprl/dprl/privacy/noise"
	"github.com/dprl/dprl/rng"
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

// Options control execution (not results).
type Options struct {
	// Workers is the number of parallel runs (0 = GOMAXPROCS).
	Workers int
	// Progress, if non-nil, is called with (episodes done, episodes total) from time to time.
	Progress func(done, total int64)
	// Output is handed to the result's Write: Force (replace an earlier run in the output
	// directory), Inputs (extra input files to record) and LogY.
	Output rundir.Options
}

// Run executes every (curve, seed) pair of cfg. The result does not depend on opts.
func Run(ctx context.Context, cfg *Config, opts Options) (*Result, error) {
	m, err := cfg.BuildEnv()
	if err != nil {
		return nil, err
	}
	workers := opts.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	if err := opts.Output.Validate(); err != nil {
		return nil, err
	}
	res := &Result{Config: cfg, Env: m.Name, VStar: model.NewRegret(m).OptimalValue(), Workers: workers, Horizon: m.H, Output: opts.Output}
	res.NoLearning = noLearning(m, res.VStar)
	res.Inputs = append(append(res.Inputs, cfg.Inputs...), opts.Output.Inputs...)
	if cfg.Env.Name == "file" {
		in, err := rundir.HashFile("env", cfg.Env.Path)
		if err != nil {
			return nil, fmt.Errorf("env.path: %w", err)
		}
		res.Inputs = append(res.Inputs, in)
	}
	res.Curves = make([]CurveResult, len(cfg.Curves))
	type job struct{ c, s int }
	var jobs []job
	for ci, cv := range cfg.Curves {
		ac, err := cfg.agentConfig(cv)
		if err != nil {
			return nil, fmt.Errorf("curves[%d]: %w", ci, err)
		}
		// Build once to validate and record the privacy report and resolved bonus.
		ag, err := newAgent(m, cfg, ac, cfg.Seeds[0])
		if err != nil {
			return nil, fmt.Errorf("curves[%d] (%s): %w", ci, cv.Label, err)
		}
		res.Curves[ci] = CurveResult{Spec: cv, Privacy: ag.Privacy, Bonus: ag.Bonus, Runs: make([]SeedRun, len(cfg.Seeds))}
		for si := range cfg.Seeds {
			jobs = append(jobs, job{ci, si})
		}
	}
	total := int64(len(jobs)) * int64(cfg.Episodes)
	var done atomic.Int64
	start := time.Now()
	ch := make(chan job)
	errs := make([]error, len(jobs))
	var wg sync.WaitGroup
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var stopTicker chan struct{}
	if opts.Progress != nil {
		stopTicker = make(chan struct{})
		go func() {
			t := time.NewTicker(200 * time.Millisecond)
			defer t.Stop()
			for {
				select {
				case <-t.C:
					opts.Progress(done.Load(), total)
				case <-stopTicker:
					return
				}
			}
		}()
	}
	var errIdx atomic.Int64
	errIdx.Store(-1)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range ch {
				cv := cfg.Curves[j.c]
				ac, _ := cfg.agentConfig(cv)
				run, err := RunSeed(ctx, m, cfg, ac, cfg.Seeds[j.s], &done)
				if err != nil {
					errs[j.c*len(cfg.Seeds)+j.s] = fmt.Errorf("curve %q seed %d: %w", cv.Label, cfg.Seeds[j.s], err)
					cancel()
					continue
				}
				res.Curves[j.c].Runs[j.s] = run
			}
		}()
	}
feed:
	for _, j := range jobs {
		select {
		case ch <- j:
		case <-ctx.Done():
			break feed
		}
	}
	close(ch)
	wg.Wait()
	if stopTicker != nil {
		close(stopTicker)
		opts.Progress(done.Load(), total)
	}
	for _, e := range errs {
		if e != nil {
			return nil, e
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	res.Seconds = time.Since(start).Seconds()
	return res, nil
}

// newAgent builds the agent of one seed: its tie stream and noise streams are derived from the
// run seed, so runs are reproducible and independent of scheduling.
func newAgent(m *model.MDP, cfg *Config, ac agents.Config, seed uint64) (*agents.Agent, error) {
	root := rng.NewSeed(seed)
	st := agents.Streams{Tie: root.Child("agent").Child("tie").Rand()}
	switch cfg.Noise {
	case "secure":
		st.Noise = nil // the agents' deployment default: crypto-seeded granular noise
	default:
		st.Noise = func(name string) noise.Source {
			return noise.NewSeeded(root.Child("noise").Child(name).Rand())
		}
	}
	return agents.New(m.S, m.A, m.H, cfg.Episodes, ac, st)
}

// RunSeed runs one agent for cfg.Episodes episodes with the given seed and returns its exact
// cumulative regret. done, if non-nil, is advanced as episodes complete.
func RunSeed(ctx context.Context, m *model.MDP, cfg *Config, ac agents.Config, seed uint64, done *atomic.Int64) (SeedRun, error) {
	start := time.Now()
	ag, err := newAgent(m, cfg, ac, seed)
	if err != nil {
		return SeedRun{}, err
	}
	K := cfg.Episodes
	out := SeedRun{Seed: seed, Cum: make([]float64, K)}
	reg := model.NewRegret(m)
	users := rng.NewSeed(seed).Child("users")
	pcg := rand.NewPCG(0, 0)
	user := rand.New(pcg)
	traj := model.NewTrajectory(m.H)
	prev := model.NewDeterministic(m.S, m.H)
	last, cum := 0.0, 0.0
	const chunk = 1024
	reported := 0
	for k := 0; k < K; k++ {
		if k%chunk == 0 && k > 0 {
			if done != nil {
				done.Add(int64(k - reported))
				reported = k
			}
			if err := ctx.Err(); err != nil {
				return SeedRun{}, err
			}
		}
		pol, err := ag.Server.Policy()
		if err != nil {
			return SeedRun{}, fmt.Errorf("episode %d: %w", k+1, err)
		}
		// Exact regret of π_k; re-evaluated only when the policy changed.
		if k == 0 || !samePolicy(pol, prev) {
			last = reg.Of(pol)
			if k > 0 {
				out.PolicyChanges++
			}
			for h := range pol.Act {
				copy(prev.Act[h], pol.Act[h])
			}
		}
		cum += last
		out.Cum[k] = cum
		if k == K-1 {
			break // episode K's data is never released (spec pitfall 24)
		}
		users.Index(uint64(k)).Reseed(pcg)
		m.Rollout(pol, user, traj)
		if err := ag.Server.Receive(ag.Client.Encode(traj)); err != nil {
			return SeedRun{}, fmt.Errorf("episode %d: %w", k+1, err)
		}
	}
	if done != nil {
		done.Add(int64(K - reported))
	}
	out.Final = cum
	out.Diagnostics = ag.Server.Diagnostics()
	out.LastE = ag.Server.Billboard().E
	out.Seconds = time.Since(start).Seconds()
	return out, nil
}

func samePolicy(a, b *model.Policy) bool {
	for h := range a.Act {
		if !slices.Equal(a.Act[h], b.Act[h]) {
			return false
		}
	}
	return true
}
