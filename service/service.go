// Package service is `dprl serve`: the curator side of dprl's agents behind an HTTP/JSON API,
// for real users. It exposes exactly the agent contract of package agents/protocol — a user
// fetches the published policy, plays one episode on her side, and sends one report (her
// trajectory to a trusted JDP curator, or a report she privatised herself to an LDP one) —
// so every servable agent of every family is served by the same code (engine.Servable builds
// it; nothing here knows a family).
//
// What the server enforces (docs/serve.md has the whole list):
//   - the privacy guarantee is fixed at creation from public parameters (family, agent,
//     environment dimensions, ε, δ, capacity K) and never changes; nothing is accepted beyond
//     the capacity the calibration covers;
//   - each user contributes at most once per experiment (the single participation the proofs
//     assume); whether a user contributed is revealed only to a caller holding that user's own
//     credential (an HMAC of the experiment and user IDs under the server's secret), never by
//     any status code, body, page or timing to another caller;
//   - reports are bounded before they are read, decoded strictly, validated against the
//     curator's public header and clipped by the agent exactly as its sensitivity proof
//     requires; a refused report changes no state;
//   - no endpoint, log line or page returns a raw trajectory or an unreleased statistic: the
//     responses are the published policy (computed from released statistics only), public
//     parameters and counts;
//   - an acknowledged report is durable (package store: group commits, one fsync a batch) and
//     counted once; a restart replays the log into a curator rebuilt from the persisted key,
//     so no noise is redrawn.
package service

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/dprl/dprl/experiment/engine"
	"github.com/dprl/dprl/service/store"
)

// Config configures a Server.
type Config struct {
	// Dir is the data directory (the database and the models of experiments created with an
	// inline model).
	Dir string
	// Registry resolves families.
	Registry *engine.Registry
	// AdminToken authorises creating experiments and minting user credentials; ClientToken
	// authorises submitting reports. Both are required (at least 16 characters).
	AdminToken, ClientToken string
	// Seeded is the test mode: experiments may name a seed and then draw all their randomness
	// (noise included) from it, reproducibly, like `dprl run`. Never for real users: the noise
	// is then predictable from the seed. The status page and the ledger label it.
	Seeded bool
	// MaxBatch is the largest group commit (default 512); Queue the per-experiment queue
	// (default 4096).
	MaxBatch, Queue int
	// MaxExperiments bounds the number of experiments (default 64).
	MaxExperiments int
	// LockWait is how long Open waits for another process's lock (default 1 s).
	LockWait time.Duration
	// Logf, if non-nil, receives operational log lines (never report contents).
	Logf func(format string, args ...any)
	// Store, if non-nil, is the durable state to serve (e.g. a PostgreSQL store, package
	// pgstore, whose leadership the caller holds) instead of the bbolt database in Dir; Dir
	// still holds the inline models. The server closes it.
	Store store.Backend

	// hooks are the crash-point harness's fault hooks on every commit path (set only by this
	// package's tests; a production server has none and no way to get any).
	hooks *faultHooks
	// SnapshotEvery and SnapshotInterval say when an experiment's state is snapshotted: after
	// that many acknowledged reports (default DefaultSnapshotEvery; < 0: never by count) or
	// that much time with new reports (default DefaultSnapshotInterval; < 0: never by time),
	// and when the server stops. RetainReports keeps the raw reports a snapshot covers (audit);
	// by default they are deleted with the snapshot (docs/serve.md, "Snapshots and
	// retention").
	SnapshotEvery    int
	SnapshotInterval time.Duration
	RetainReports    bool
	// MaxInflightBytes bounds the bytes of request bodies held at once, over all requests
	// (default DefaultMaxInflightBytes); a request beyond it is answered 503 with Retry-After.
	MaxInflightBytes int64

	// commitFault is the store's commit hook (store.Options.BeforeCommit; tests only).
	commitFault func() error
	// probeEvery is the storage prober's period while commits fail (default 1 s).
	probeEvery time.Duration
}

// Server is a running service: its store, its experiments and their committers.
type Server struct {
	cfg     Config
	st      store.Backend
	userKey [32]byte
	admin   [32]byte // SHA-256 of the tokens, compared in constant time
	client  [32]byte
	started time.Time

	mu    sync.RWMutex
	exps  map[string]*experiment
	order []string

	ctx      context.Context
	cancel   context.CancelFunc
	wg       sync.WaitGroup
	draining bool
	metrics  *httpMetrics
	storage  *health
	inflight *inflight
	probed   chan struct{} // closed when the storage prober stopped
}

// MinTokenLength is the shortest admin or client token accepted.
const MinTokenLength = 16

// New opens the store in cfg.Dir (locking it), rebuilds every experiment by replaying its log,
// and starts their committers.
func New(cfg Config) (*Server, error) {
	if cfg.Registry == nil {
		return nil, errors.New("service: no family registry")
	}
	if len(cfg.AdminToken) < MinTokenLength || len(cfg.ClientToken) < MinTokenLength {
		return nil, fmt.Errorf("tokens: the admin and client tokens must have at least %d characters", MinTokenLength)
	}
	if cfg.AdminToken == cfg.ClientToken {
		return nil, errors.New("tokens: the admin and client tokens must differ")
	}
	if cfg.MaxBatch <= 0 {
		cfg.MaxBatch = 512
	}
	if cfg.Queue <= 0 {
		cfg.Queue = 4096
	}
	if cfg.MaxExperiments <= 0 {
		cfg.MaxExperiments = 64
	}
	if cfg.LockWait <= 0 {
		cfg.LockWait = time.Second
	}
	if cfg.Logf == nil {
		cfg.Logf = func(string, ...any) {}
	}
	if cfg.MaxInflightBytes <= 0 {
		cfg.MaxInflightBytes = DefaultMaxInflightBytes
	}
	if cfg.probeEvery <= 0 {
		cfg.probeEvery = time.Second
	}
	st := cfg.Store
	if st == nil {
		bst, err := store.OpenWith(cfg.Dir, store.Options{Wait: cfg.LockWait, Logf: cfg.Logf, BeforeCommit: cfg.commitFault})
		if err != nil {
			return nil, err
		}
		st = bst
	}
	if err := compactSparse(st, cfg.Logf); err != nil {
		st.Close()
		return nil, err
	}
	if cfg.hooks != nil {
		h := cfg.hooks
		st.SetCommitHooks(&store.CommitHooks{Before: func() error { return h.at(hookBeforeCommit) }, After: func() { h.at(hookAfterCommit) }})
	}
	s := &Server{cfg: cfg, st: st, userKey: st.UserKey(), admin: digest(cfg.AdminToken), client: digest(cfg.ClientToken),
		started: time.Now(), exps: map[string]*experiment{}, metrics: newHTTPMetrics(), storage: &health{logf: cfg.Logf},
		inflight: &inflight{limit: cfg.MaxInflightBytes}, probed: make(chan struct{})}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	defs, err := st.Experiments()
	if err != nil {
		st.Close()
		return nil, err
	}
	for _, def := range defs {
		t := time.Now()
		x, err := newExperiment(cfg.Registry, st, def, cfg.Dir, cfg.Queue, cfg.Logf, s.storage)
		if err != nil {
			st.Close()
			return nil, err
		}
		if def.Seeded && !cfg.Seeded {
			st.Close()
			return nil, fmt.Errorf("experiment %s was created in seeded test mode: restart with --seeded to serve it", def.ID)
		}
		cfg.Logf("experiment %s: %s %s, %d reports replayed in %s", def.ID, x.spec.Family, x.spec.Agents[0], x.users, time.Since(t).Round(time.Millisecond))
		s.add(x)
	}
	go func() {
		defer close(s.probed)
		s.storage.probe(s.ctx, st, cfg.probeEvery)
	}()
	return s, nil
}

func (s *Server) add(x *experiment) {
	x.hooks = s.cfg.hooks
	if r, err := s.st.HasRevocations(x.def.ID); r || err != nil {
		x.mayRevoke.Store(true)
	}
	s.mu.Lock()
	s.exps[x.def.ID] = x
	s.order = append(s.order, x.def.ID)
	sort.Strings(s.order)
	s.mu.Unlock()
	// Reports replayed after the last snapshot count towards the next one.
	x.snapPolicy, x.lastSnap, x.sinceSnap = s.snapshotPolicy(), time.Now(), x.users-int(x.snapBase)
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		x.run(s.ctx, s.st, s.cfg.MaxBatch)
	}()
}

func (s *Server) lookup(id string) *experiment {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.exps[id]
}

func (s *Server) all() []*experiment {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]*experiment, 0, len(s.order))
	for _, id := range s.order {
		out = append(out, s.exps[id])
	}
	return out
}

// Close stops the committers after the reports they hold are committed and answered, and
// closes the store (releasing its lock). Call it after the HTTP server's Shutdown returned
// (no handler is waiting any more).
func (s *Server) Close() error {
	s.mu.Lock()
	s.draining = true
	for _, x := range s.exps {
		x.close()
	}
	s.mu.Unlock()
	s.wg.Wait()
	s.cancel()
	<-s.probed
	return s.st.Close()
}

// newID returns a new random experiment ID (16 lower-case base32 characters).
func newID() (string, error) {
	var b [10]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return strings.ToLower(base32.StdEncoding.EncodeToString(b[:])), nil
}

// modelPath is where an experiment's inline model is kept (relative to the data directory).
func modelPath(id string) string { return filepath.Join("models", id+".json") }

// Handler returns the HTTP handler of the API, the metrics, the health checks and the status
// page.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	for _, r := range s.routes() {
		mux.HandleFunc(r.pattern, s.metrics.wrap(r.pattern, r.h))
	}
	return s.withBudget(jsonErrors(mux))
}
