package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dprl/dprl/agents/protocol"
	"github.com/dprl/dprl/experiment/engine"
	"github.com/dprl/dprl/internal/atomicfile"
	"github.com/dprl/dprl/internal/boundedread"
)

// SimOptions configure Simulate.
type SimOptions struct {
	// Experiment is the served experiment's ID.
	Experiment string
	// Registry resolves the experiment's family.
	Registry *engine.Registry
	// Env is the simulated users' environment (a RunSpec env of the experiment's family);
	// empty means the environment the experiment was created with (its name and params).
	Env engine.EnvSpec
	// Users is the number of users to play (default: the experiment's K).
	Users int
	// Concurrency is the number of users playing at once (default 1: users arrive in order).
	Concurrency int
	// Seed, if non-nil, is seeded test mode: the users' streams and, for an LDP agent, their
	// noise come from this run seed exactly as in `dprl run --seeds Seed` (never for real
	// users: their reports' noise is then predictable). Otherwise the streams are drawn
	// from a crypto-seeded seed and the LDP noise from a crypto-seeded secure source.
	Seed *uint64
	// Epsilon and Delta are the users' own guarantee (ε, δ): a locally private user computes
	// her noise herself from them and the public dimensions, and only checks what the server
	// publishes (its ledger's ε and δ and its user_side), refusing to report when it would give
	// her less noise. They are required for an LDP experiment unless Seed is set (test mode,
	// where the ledger's are used when these are 0).
	Epsilon, Delta float64
	// UserPrefix prefixes the simulated users' IDs (default "sim-").
	UserPrefix string
	// Progress, if non-nil, receives the number of users done since its last call.
	Progress func(int64)
}

// SimResult is what Simulate measured.
type SimResult struct {
	// Regret is the exact regret of each user's episode (user k at index k−1).
	Regret []float64
	// Accepted is the number of reports acknowledged for this run; Replayed the users whose
	// report the server had already acknowledged (a second run with the same users: 200
	// replayed, the report not counted again); Skipped the users beyond the capacity (they
	// play but do not report, as in `dprl run`).
	Accepted, Replayed, Skipped int
	// Seconds is the wall time; Latency the submissions' latencies, sorted.
	Seconds float64
	Latency []time.Duration
}

// Cumulative returns the cumulative regret after each user.
func (r *SimResult) Cumulative() []float64 {
	out := make([]float64, len(r.Regret))
	s := 0.0
	for i, v := range r.Regret {
		s += v
		out[i] = s
	}
	return out
}

// Summary is the one line `dprl client simulate` prints.
func (r *SimResult) Summary(exp string) string {
	final := 0.0
	for _, v := range r.Regret {
		final += v
	}
	replayed := ""
	if r.Replayed > 0 {
		replayed = fmt.Sprintf(", %d replays (users whose report an earlier run submitted: acknowledged then, not counted again)", r.Replayed)
	}
	return fmt.Sprintf("experiment %s: %d users, %d reports acknowledged%s, %.0f reports/s, latency p50 %s p99 %s, cumulative regret %.17g",
		exp, len(r.Regret), r.Accepted, replayed, float64(r.Accepted)/r.Seconds, r.Quantile(0.5), r.Quantile(0.99), final)
}

// WriteCSV writes each user's regret and the cumulative regret (user,regret,cumulative_regret;
// full precision) to path, atomically.
func (r *SimResult) WriteCSV(path string) error {
	cum := r.Cumulative()
	return atomicfile.WriteFile(path, func(w io.Writer) error {
		fmt.Fprintln(w, "user,regret,cumulative_regret")
		for i, v := range r.Regret {
			fmt.Fprintf(w, "%d,%.17g,%.17g\n", i+1, v, cum[i])
		}
		return nil
	}, 0o644)
}

// ReadModel reads a model file for an experiment's inline env.model (JSON, at most 8 MiB).
func ReadModel(path string) (json.RawMessage, error) {
	b, err := boundedread.ReadFile(path, 8<<20)
	if err != nil {
		return nil, err
	}
	if !json.Valid(b) {
		return nil, fmt.Errorf("%s: a served model must be JSON", path)
	}
	return b, nil
}

// Quantile returns the q-quantile of the submission latencies.
func (r *SimResult) Quantile(q float64) time.Duration {
	if len(r.Latency) == 0 {
		return 0
	}
	return r.Latency[min(int(q*float64(len(r.Latency))), len(r.Latency)-1)]
}

// Simulate plays simulated users against the served experiment: each user fetches the
// published policy, plays one episode on the simulated environment, is evaluated exactly, and
// submits her report (privatised on her side for an LDP agent) with her own credential and an
// idempotency key (retried with the same key on a transport error). With Concurrency 1 and a
// Seed, against an experiment created with the same seed, the regrets are those of `dprl run`
// bit for bit. The users' regrets are sent with their reports (the public curve) only to an
// experiment created as a simulation (Ledger.Simulation); to any other experiment they send
// none (the server would refuse them) and the regrets are only measured here (SimResult).
func Simulate(ctx context.Context, c *Client, o SimOptions) (*SimResult, error) {
	l, err := c.Ledger(ctx, o.Experiment)
	if err != nil {
		return nil, err
	}
	spec := engine.RunSpec{Family: l.Family, Name: "simulated", Agents: []string{l.Agent}, Runs: engine.Runs{Episodes: l.Episodes},
		Env: o.Env, Privacy: engine.PrivacySpec{Delta: l.Delta, Noise: "secure"}}
	if spec.Env.Name == "" && spec.Env.File == "" {
		spec.Env = engine.EnvSpec{Name: l.Env.Name, Params: l.Env.Params}
	}
	if l.Epsilon > 0 {
		spec.Privacy.Epsilons = []float64{l.Epsilon}
	}
	st, noiseName, err := userStreams(o.Seed)
	if err != nil {
		return nil, err
	}
	spec.Privacy.Noise = noiseName
	spec.Seeds = []uint64{st.Seed}
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	sv, err := engine.CheckServed(o.Registry, &spec)
	if err != nil {
		return nil, err
	}
	probe, err := sv.Session(&spec, st)
	if err != nil {
		return nil, err
	}
	if err := ownGuarantee(&spec, l, o, probe.Session); err != nil {
		return nil, err
	}
	N := o.Users
	if N <= 0 {
		N = l.Episodes
	}
	if N > l.Episodes {
		return nil, fmt.Errorf("users: at most the experiment's K = %d, got %d", l.Episodes, N)
	}
	// The simulated users' reports must fit the experiment's curator: the same family, agent,
	// kind and dimensions (an environment of another size would index past the published
	// rule). Checked against the published header before any user plays.
	pub, err := c.Policy(ctx, o.Experiment)
	if err != nil {
		return nil, err
	}
	C := max(o.Concurrency, 1)
	if o.UserPrefix == "" {
		o.UserPrefix = "sim-"
	}
	res := &SimResult{Regret: make([]float64, N)}
	creds := &credentials{c: c, exp: o.Experiment, prefix: o.UserPrefix, chunks: map[int]map[string]string{}}
	var next atomic.Int64
	var mu sync.Mutex
	start := time.Now()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errs := make([]error, C)
	var wg sync.WaitGroup
	for w := range C {
		wst := st
		served, err := sv.Session(&spec, wst)
		if err == nil && served.Users == engine.SharedEnv && C > 1 {
			// The family's users draw in turn from one environment stream: concurrent
			// workers cannot share it, so each draws its own (not reproducible: seeded mode
			// needs concurrency 1).
			if o.Seed != nil {
				return nil, fmt.Errorf("concurrency: family %s's users share one environment stream, so seeded mode needs concurrency 1", l.Family)
			}
			wst.Seed = st.Seed + uint64(w)*0x9e3779b97f4a7c15
			served, err = sv.Session(&spec, wst)
		}
		if err != nil {
			return nil, err
		}
		if served.Session.Expect().Agent != l.Agent {
			return nil, fmt.Errorf("the local agent %s is not the experiment's %s", served.Session.Expect().Agent, l.Agent)
		}
		if err := served.Session.Expect().Check(pub.Header); err != nil {
			return nil, &MismatchError{Experiment: o.Experiment, Env: spec.Env, Err: err}
		}
		rm := &remote{c: c, exp: o.Experiment, creds: creds, check: userSideCheck(served.Session), noRegret: !l.Simulation}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() {
				// A published rule the local evaluator cannot take (the header check above
				// passed) fails the run, not the process.
				if p := recover(); p != nil {
					errs[w] = fmt.Errorf("user simulation failed on the experiment's published policy: %v", p)
					cancel()
				}
			}()
			err := protocol.RunRemote(ctx, served.Session, protocol.Options{Episodes: N, Users: wst.Episodes(served.Users),
				Next: func() int { return int(next.Add(1)) }, Every: 256, Progress: o.Progress,
				Each: func(k int, regret float64) { res.Regret[k-1] = regret }}, rm)
			if err != nil {
				errs[w] = err
				cancel()
			}
			mu.Lock()
			res.Accepted += rm.accepted
			res.Replayed += rm.replayed
			res.Latency = append(res.Latency, rm.latency...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	// The first worker's own failure, not the cancellations it caused.
	for _, err := range errs {
		if err != nil && !errors.Is(err, context.Canceled) {
			return nil, err
		}
	}
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	res.Seconds = time.Since(start).Seconds()
	res.Skipped = N - res.Accepted - res.Replayed
	slices.Sort(res.Latency)
	return res, nil
}

// MismatchError is a simulation whose users' environment does not fit the experiment: their
// reports would not be those its curator takes (another horizon, state count, …).
type MismatchError struct {
	Experiment string
	Env        engine.EnvSpec
	Err        error
}

func (e *MismatchError) Error() string {
	env := e.Env.Name
	if e.Env.File != "" {
		env = e.Env.File
	}
	if len(e.Env.Params) > 0 {
		env += fmt.Sprintf(" %v", e.Env.Params)
	}
	return fmt.Sprintf("env: the simulated users' environment (%s) does not fit experiment %s: %v", env, e.Experiment, e.Err)
}

func (e *MismatchError) Unwrap() error { return e.Err }

// remote is one worker's protocol.Remote: the server's policy and report endpoints.
type remote struct {
	c        *Client
	exp      string
	creds    *credentials
	accepted int
	replayed int // acknowledged by an earlier run (200 replayed on the first attempt)
	latency  []time.Duration
	cached   *Policy
	acked    uint64 // the policy version of the last acknowledgement
	// check, if non-nil, checks every fetched policy's user_side against the users' own
	// randomiser parameters (userSideCheck): on an error no report is sent.
	check func(pub json.RawMessage) error
	// noRegret withholds the users' regrets (an experiment not created as a simulation).
	noRegret bool
}

// Policy returns the published policy. The worker's last acknowledgement named the version
// published after its report: a policy of that version or a later one is current as of then.
// So no request is made while the worker's cached policy has that version (half the requests
// of a user under load), nor when the client's cache (another worker's fetch) holds it or a
// later one — the server never shows two contents under one version (ETag). Otherwise the
// policy is fetched (revalidated with If-None-Match), once for the workers that need it at
// the same time (Client.SharedPolicy); a shared answer older than the acknowledged version
// (fetched before it was published) is fetched again.
func (r *remote) Policy(ctx context.Context) (uint64, []byte, error) {
	if r.cached != nil && r.acked == r.cached.Version {
		return r.cached.Version, r.cached.Rule, nil
	}
	var p *Policy
	if q := r.c.cached(r.exp); r.cached != nil && q != nil && q.Version >= r.acked {
		p = q
	} else {
		err := retry(ctx, func() (err error) { p, err = r.c.SharedPolicy(ctx, r.exp); return err })
		if err == nil && p.Version < r.acked {
			err = retry(ctx, func() (err error) { p, err = r.c.Policy(ctx, r.exp); return err })
		}
		if err != nil {
			return 0, nil, err
		}
	}
	if r.check != nil {
		if err := r.check(p.UserSide); err != nil {
			return 0, nil, fmt.Errorf("experiment %s, policy version %d: %w", r.exp, p.Version, err)
		}
	}
	r.cached = p
	return p.Version, p.Rule, nil
}

// retry calls f until it succeeds, fails with a client error (4xx other than in_progress), or
// fails 12 times (transport errors and 5xx back off from 50 ms, doubling up to 6.4 s: about 38 s
// in all, for a server restarting, a standby taking over, or a database restarting under it).
func retry(ctx context.Context, f func() error) error {
	var err error
	for attempt := 0; ; attempt++ {
		err = f()
		var e *Error
		if err == nil || attempt == 11 || ctx.Err() != nil || (errors.As(err, &e) && e.Status < 500 && e.Code != "in_progress") {
			return err
		}
		select {
		case <-time.After(time.Duration(50<<min(attempt, 7)) * time.Millisecond):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (r *remote) Submit(ctx context.Context, k int, rep protocol.Report, regret float64) error {
	user := r.creds.prefix + strconv.Itoa(k)
	cred, err := r.creds.of(ctx, k)
	if err != nil {
		return err
	}
	s := Submission{User: user, Credential: cred, IdempotencyKey: "k" + strconv.Itoa(k), Report: rep, Regret: regret}
	if r.noRegret {
		s.Regret = math.NaN()
	}
	t := time.Now()
	// A transport error or a 5xx is retried with the same idempotency key: an acknowledged
	// report is then acknowledged again, never counted twice.
	var a *Ack
	attempts := 0
	err = retry(ctx, func() (err error) { attempts++; a, err = r.c.Submit(ctx, r.exp, s); return err })
	r.latency = append(r.latency, time.Since(t))
	if err != nil {
		return err
	}
	r.acked = a.PolicyVersion
	if a.Replayed && attempts == 1 {
		// Replayed on the first attempt: an earlier run (with the same users and keys)
		// submitted this report, not this one.
		r.replayed++
		return nil
	}
	r.accepted++
	return nil
}

// credentials mints the simulated users' credentials in chunks of 10 000 (admin token),
// keeping the last few chunks.
type credentials struct {
	c      *Client
	exp    string
	prefix string
	mu     sync.Mutex
	chunks map[int]map[string]string
}

const credChunk = 10000

func (cr *credentials) of(ctx context.Context, k int) (string, error) {
	i := (k - 1) / credChunk
	cr.mu.Lock()
	defer cr.mu.Unlock()
	ch, ok := cr.chunks[i]
	if !ok {
		users := make([]string, 0, credChunk)
		for u := i*credChunk + 1; u <= (i+1)*credChunk; u++ {
			users = append(users, cr.prefix+strconv.Itoa(u))
		}
		err := retry(ctx, func() (err error) { ch, err = cr.c.Credentials(ctx, cr.exp, users); return err })
		if err != nil {
			return "", err
		}
		for j := range cr.chunks {
			if j < i-4 {
				delete(cr.chunks, j)
			}
		}
		cr.chunks[i] = ch
	}
	return ch[cr.prefix+strconv.Itoa(k)], nil
}
