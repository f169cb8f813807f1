package service

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dprl/dprl/agents/protocol"
	"github.com/dprl/dprl/experiment/engine"
	"github.com/dprl/dprl/service/client"
	"github.com/dprl/dprl/service/store"
)

// experiment is one served experiment: its curator (the agent's session, of which only the
// curator side is used), the published policy, and the committer that serialises reports into
// the curator in the order of the durable log.
type experiment struct {
	def    *store.Experiment
	spec   engine.RunSpec
	served engine.Served
	head   protocol.Header
	// dec decodes the reports of head (protocol.Decode, without re-parsing the usual header).
	dec *protocol.Decoder
	// maxBytes bounds a report's body (protocol.MaxBytes of the header).
	maxBytes int64

	// mayRevoke is set when a credential of the experiment may be revoked (one was revoked
	// before the start, or a revocation began since; set on any doubt): only then does a
	// submission read the revocations (prepare). Whether an experiment has revocations says
	// nothing about whether a user contributed.
	mayRevoke atomic.Bool

	queue  chan *submission
	qmu    sync.RWMutex // guards closed: no send on a closed queue
	closed bool
	sv     engine.Servable
	logf   func(string, ...any)
	// health is the server's storage health (a failed commit makes the server not ready).
	health *health
	// hooks are the crash-point harness's fault hooks on the commit path (nil in production).
	hooks *faultHooks
	// stale is set when the in-memory curator is ahead of the durable log (a commit failed):
	// the committer refuses reports (503) until recover rebuilt the curator from the log
	// (at staleRetry, backing off by staleWait). Committer-only.
	stale      error
	staleRetry time.Time
	staleWait  time.Duration
	// skipped counts stored reports the curator refused on replay (feed).
	skipped uint64
	// catchUp, during a rebuild, takes the durable records never published (feed).
	catchUp *catchUp
	// Snapshots (snapshot.go; committer-only): the policy, reports since the last snapshot,
	// its time, and whether the curator cannot be snapshotted.
	snapPolicy   snapshotPolicy
	sinceSnap    int
	snapBase     uint64 // the reports the restored snapshot covered (startup)
	lastSnap     time.Time
	snapDisabled bool

	mu  sync.RWMutex // guards the fields below (written by the committer)
	pub published
	// users is the number of acknowledged reports (the log's length).
	users    int
	versions []versionAt // policy versions and the user count at which each was published
	curve    []curvePoint
	cum      float64 // cumulative simulated regret of acknowledged users who reported one
	simUsers int

	stats counters
}

type published struct {
	version uint64
	body    []byte // the policy response (JSON), computed when the version changes
	etag    string
}

type versionAt struct {
	Version uint64 `json:"version"`
	Users   int    `json:"users"`
}

type curvePoint struct {
	Users int     `json:"users"`
	Cum   float64 `json:"cumulative_regret"`
}

// counters are the experiment's metrics (atomic through mu).
type counters struct {
	accepted, replayed, duplicate, capacity, invalid uint64
	batches, batched                                 uint64
}

// submission is one report waiting for the committer.
type submission struct {
	user   [32]byte
	idem   string
	regret float64
	rep    protocol.Report
	raw    []byte // binary encoding, for the log
	done   chan result
}

type result struct {
	status int
	body   any
}

// newExperiment builds the curator of def and replays its log (every record is durable, so
// what the replay computes is published as it goes). A new experiment (st nil) has no log yet.
func newExperiment(reg *engine.Registry, st store.Backend, def *store.Experiment, dir string, queue int, logf func(string, ...any), h *health) (*experiment, error) {
	var spec engine.RunSpec
	if err := json.Unmarshal(def.Spec, &spec); err != nil {
		return nil, fmt.Errorf("experiment %s: spec: %w", def.ID, err)
	}
	if spec.Env.Name == "file" && !filepath.IsAbs(spec.Env.File) {
		spec.Env.File = filepath.Join(dir, spec.Env.File) // an inline model kept in the data directory
	}
	sv, err := engine.CheckServed(reg, &spec)
	if err != nil {
		return nil, fmt.Errorf("experiment %s: %w", def.ID, err)
	}
	if logf == nil {
		logf = func(string, ...any) {}
	}
	if h == nil {
		h = &health{}
	}
	x := &experiment{def: def, spec: spec, sv: sv, queue: make(chan *submission, queue), logf: logf, health: h}
	if x.served, err = x.session(); err != nil {
		return nil, err
	}
	x.head = x.served.Session.Expect()
	x.dec = protocol.NewDecoder(x.head)
	x.maxBytes = int64(protocol.MaxBytes(x.head))
	if err := x.publish(); err != nil {
		return nil, err
	}
	if st == nil {
		return x, nil
	}
	err = x.feed(st, func(r *store.Record, used bool) error {
		x.users++
		x.addRegret(r.Regret)
		if !used {
			return nil
		}
		err := x.publish()
		var pp *planPanic
		if errors.As(err, &pp) {
			return err
		}
		if err != nil {
			x.logf("experiment %s: %v (the last policy stays published)", x.def.ID, err)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("experiment %s: replaying its log: %w", def.ID, err)
	}
	return x, nil
}

// session builds a fresh curator of the experiment (no report received yet).
func (x *experiment) session() (engine.Served, error) {
	served, err := x.sv.Session(&x.spec, streams(x.def, &x.spec))
	if err != nil {
		return engine.Served{}, fmt.Errorf("experiment %s: %w", x.def.ID, err)
	}
	return served, nil
}

// feed replays the experiment's durable log into x.served.Session in order, publishing after
// each report as the live committer does, and calls each (if non-nil) after every record with
// whether the curator used it. A stored report the curator now refuses (it fails to decode,
// Receive refuses it, or the curator panics on it) is logged, counted and skipped, never a
// crash: after a panic the curator is rebuilt and the feed restarts without that record.
func (x *experiment) feed(st store.Backend, each func(r *store.Record, used bool) error) error {
	skip := map[uint64]bool{}
	for pass := 0; ; pass++ {
		// Restore the latest snapshot (snapshot.go), then replay the records after it.
		base, err := x.restoreSnapshot(st, each != nil, pass > 0)
		if err != nil {
			return err
		}
		restart := uint64(0)
		err = st.ReplayAfter(x.def.ID, base, func(seq uint64, r *store.Record) error {
			c := x.catchUp
			if late := each == nil && c != nil && seq > c.from; late {
				c.regrets = append(c.regrets, r.Regret) // a user served, used or skipped
			} else {
				c = nil
			}
			if skip[seq] {
				if each != nil {
					return each(r, false)
				}
				return nil
			}
			rep, err := x.dec.Decode(r.Report)
			if err == nil {
				var panicked bool
				if panicked, err = safeReceive(x.served.Session, rep); panicked {
					restart = seq
					return errRestart
				}
			}
			if err != nil {
				skip[seq] = true
				x.skipped++
				x.logf("experiment %s: record %d: the curator refuses this acknowledged report; it is skipped: %v", x.def.ID, seq, err)
				if each != nil {
					return each(r, false)
				}
				return nil
			}
			if c != nil {
				// Durable but never published (a commit reported failed had happened): staged
				// as the committer stages, published by the rebuild.
				c.sg.received++
				var pp *planPanic
				if err := x.stage(c.sg); errors.As(err, &pp) {
					restart = seq
					return errRestart
				} else if err != nil {
					x.logf("experiment %s: record %d: %v (the last policy stays published)", x.def.ID, seq, err)
				}
				return nil
			}
			if each == nil { // a rebuild: advance the curator's releases exactly as the live committer did
				if _, _, panicked, err := safePublish(x.served.Session); panicked {
					restart = seq
					return errRestart
				} else if err != nil {
					x.logf("experiment %s: record %d: %v (the last policy stays published)", x.def.ID, seq, err)
				}
				return nil
			}
			var pp *planPanic
			if err := each(r, true); errors.As(err, &pp) {
				restart = seq
				return errRestart
			} else {
				return err
			}
		})
		if !errors.Is(err, errRestart) {
			return err
		}
		skip[restart] = true
		x.skipped++
		x.logf("experiment %s: record %d: the curator panicked on this acknowledged report; it is skipped and the curator rebuilt", x.def.ID, restart)
		served, err := x.session()
		if err != nil {
			return err
		}
		x.mu.Lock()
		x.served = served // a startup replay restarts from the snapshot's published state (restoreSnapshot)
		x.mu.Unlock()
		if each == nil {
			// A rebuild: the curator publishes once before any report, as at creation.
			if c := x.catchUp; c != nil {
				*c.sg, c.regrets = staged{versions: c.sg.versions[:0]}, c.regrets[:0]
			}
			if _, _, panicked, err := safePublish(x.served.Session); panicked || err != nil {
				return fmt.Errorf("the rebuilt curator's first publication: %w", err)
			}
		}
	}
}

var errRestart = errors.New("restart the feed")

// safeReceive hands rep to the curator. A panic (a bug the boundary should have excluded) is
// returned as an error with panicked set: the curator's state is then unknown and it must be
// rebuilt.
func safeReceive(s protocol.Session, rep protocol.Report) (panicked bool, err error) {
	defer func() {
		if p := recover(); p != nil {
			err, panicked = fmt.Errorf("the curator panicked on the report: %v", p), true
		}
	}()
	return false, s.Receive(rep)
}

// safePublish asks the curator for its policy; a panic is returned as an error with panicked
// set (as safeReceive).
func safePublish(s protocol.Session) (v uint64, rule any, panicked bool, err error) {
	defer func() {
		if p := recover(); p != nil {
			err, panicked = fmt.Errorf("the planner panicked: %v", p), true
		}
	}()
	v, rule, err = s.Publish()
	return v, rule, false, err
}

// rebuild replaces the curator by a fresh one fed the durable log, then the reports of the
// current batch that were accepted but are not committed yet (pending, in order, restaging
// st). Nothing visible changes: the published state is a function of the durable log only.
func (x *experiment) rebuild(st store.Backend, pending []*submission, sg *staged) error {
	served, err := x.session()
	if err != nil {
		return err
	}
	// The server published once at creation, before any report (newExperiment): so does the
	// rebuilt curator, or its releases would not be the ones the log determines.
	if _, _, panicked, err := safePublish(served.Session); panicked || err != nil {
		return fmt.Errorf("the rebuilt curator's first publication: %w", err)
	}
	old := x.served
	x.mu.Lock()
	x.served = served
	x.mu.Unlock()
	*sg = staged{versions: sg.versions[:0]}
	x.mu.RLock()
	known := x.users
	x.mu.RUnlock()
	c := &catchUp{from: uint64(known), sg: sg}
	x.catchUp = c
	err = x.feed(st, nil)
	x.catchUp = nil
	if err != nil {
		x.mu.Lock()
		x.served = old
		x.mu.Unlock()
		return err
	}
	if len(c.regrets) > 0 {
		// The log holds reports whose commit was reported failed but happened: what they
		// produced is durable, so it is published now (their users' retries are acknowledged
		// as replays).
		x.logf("experiment %s: %d reports of a commit reported failed are in the durable log; published now", x.def.ID, len(c.regrets))
		x.mu.Lock()
		x.applyLocked(sg)
		x.users += len(c.regrets)
		x.stats.accepted += uint64(len(c.regrets))
		x.mu.Unlock()
		for _, r := range c.regrets {
			x.addRegret(r)
		}
	}
	for _, s := range pending {
		if panicked, err := safeReceive(x.served.Session, s.rep); err != nil || panicked {
			return fmt.Errorf("re-receiving an accepted report: %v", err)
		}
		sg.received++
		if err := x.stage(sg); err != nil {
			x.logf("experiment %s: %v (the last policy stays published)", x.def.ID, err)
		}
	}
	return nil
}

// catchUp collects, during a rebuild, the durable records beyond the published users: sg
// stages their releases, regrets holds their simulated regrets.
type catchUp struct {
	from    uint64 // the published users (records up to from are published)
	sg      *staged
	regrets []float64
}

// streams returns the unit streams of an experiment: its spec's seed in seeded test mode;
// otherwise a seed and a noise key derived from its secret key.
func streams(def *store.Experiment, spec *engine.RunSpec) engine.Streams {
	if def.Seeded {
		return engine.Streams{Seed: spec.Seeds[0]}
	}
	var key [32]byte
	copy(key[:], def.Key)
	m := hmac.New(sha256.New, key[:])
	m.Write([]byte("dprl/seed"))
	return engine.Streams{Seed: binary.LittleEndian.Uint64(m.Sum(nil)), Key: &key}
}

// stage asks the curator for the next user's policy (once per received report, as the episode
// loop does) and, when its version changed, encodes the policy response into st. Nothing staged
// is visible: apply makes it so, and the committer applies only after the reports it was
// computed from are durably committed (commit before publish: a crash can never withdraw or
// change a published version, nor show one release's noise on two histories).
func (x *experiment) stage(st *staged) error {
	v, rule, panicked, err := safePublish(x.served.Session)
	if panicked {
		return &planPanic{err}
	}
	if err != nil {
		return fmt.Errorf("experiment %s: publish: %w", x.def.ID, err)
	}
	last := x.pub
	if st.base.body != nil {
		last = st.base
	}
	if st.pub.body != nil {
		last = st.pub
	}
	if last.body != nil && v == last.version {
		return nil
	}
	raw, err := protocol.EncodeRule(rule)
	if err != nil {
		return err
	}
	pr := policyResponse{Policy: client.Policy{Experiment: x.def.ID, Version: v, Header: x.head, Rule: raw}}
	if us, ok := x.served.Session.Curator().(protocol.UserSider); ok {
		pr.UserSide = us.UserSide()
	}
	body, err := json.Marshal(pr)
	if err != nil {
		return err
	}
	st.pub = published{version: v, body: body, etag: `"` + strconv.FormatUint(v, 10) + `"`}
	st.versions = append(st.versions, versionAt{Version: v, Users: x.users + st.ahead + st.received})
	return nil
}

// planPanic is stage's error when the planner panicked: the curator must be rebuilt.
type planPanic struct{ err error }

func (p *planPanic) Error() string { return p.err.Error() }

// staged is what the committer computed from received but not yet committed reports: the
// policy to publish and the release history to add once they are durable.
type staged struct {
	received int // reports received into the curator since the last apply
	pub      published
	versions []versionAt
	// ahead and base describe the group being appended when these reports were received on
	// top of it (committer.go): its reports and the policy it staged (body nil: none), which
	// precede these reports' in the log and in publication.
	ahead int
	base  published
}

// apply publishes what was staged (its reports are durable) and resets st.
func (x *experiment) apply(st *staged) {
	x.mu.Lock()
	x.applyLocked(st)
	x.mu.Unlock()
}

// applyLocked is apply with x.mu held.
func (x *experiment) applyLocked(st *staged) {
	if st.pub.body != nil {
		x.pub = st.pub
	}
	x.versions = append(x.versions, st.versions...)
	if len(x.versions) > maxHistory {
		x.versions = append(x.versions[:0], x.versions[len(x.versions)-maxHistory:]...)
	}
	*st = staged{versions: st.versions[:0]}
}

// publish stages and applies at once (creation and replay: the log is already durable).
func (x *experiment) publish() error {
	var st staged
	if err := x.stage(&st); err != nil {
		return err
	}
	x.apply(&st)
	return nil
}

// maxHistory bounds the release history kept for the status page and the ledger.
const maxHistory = 1000

func (x *experiment) addRegret(r float64) {
	if math.IsNaN(r) {
		return
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	x.cum += r
	x.simUsers++
	// Points at users 1, 2, 4, … and then every 1/200 of the capacity: at most ~230 points
	// (snapshot adds the latest).
	step := max(x.served.Session.Capacity()/200, 1)
	if x.simUsers&(x.simUsers-1) == 0 || x.simUsers%step == 0 {
		x.curve = append(x.curve, curvePoint{Users: x.simUsers, Cum: x.cum})
	}
}

// unavailable is the answer to a report the experiment could not take because its curator is
// not in step with the durable log (a failed commit); nothing was stored.
func unavailable(err error) result {
	return result{http.StatusServiceUnavailable, apiError{Code: "unavailable", Message: "the report was not stored (storage error; the server retries and recovers by itself): " + err.Error()}}
}

// commitFailed answers the batch 503 after its commit failed (or may not have happened): the
// curator is ahead of the log, so nothing it staged is published, and the curator is rebuilt
// from the log before the next report is taken (recover).
func (x *experiment) commitFailed(err error, accepted []*submission, pending *staged) {
	err = fmt.Errorf("commit: %w", err)
	x.logf("experiment %s: %v; %d reports refused (503), nothing published", x.def.ID, err, len(accepted))
	x.health.commitFailed(err)
	x.stale = err
	x.staleRetry = time.Time{}
	*pending = staged{versions: pending.versions[:0]}
	for _, s := range accepted {
		s.done <- unavailable(err)
	}
}

// recover rebuilds a stale curator from the durable log, at most once per backoff period (1 s,
// doubling to 30 s while the rebuild fails). It reports whether the curator is in step again.
func (x *experiment) recover(st store.Backend) bool {
	now := time.Now()
	if now.Before(x.staleRetry) {
		return false
	}
	var sg staged
	if err := x.rebuild(st, nil, &sg); err != nil {
		x.staleWait = min(max(2*x.staleWait, time.Second), 30*time.Second)
		x.staleRetry = now.Add(x.staleWait)
		x.logf("experiment %s: rebuilding the curator from the log failed (next try in %s): %v", x.def.ID, x.staleWait, err)
		return false
	}
	x.logf("experiment %s: curator rebuilt from the durable log after %v", x.def.ID, x.stale)
	x.stale, x.staleWait, x.staleRetry = nil, 0, time.Time{}
	return true
}

// admit checks a submission's participation (only reached with the user's own credential) and
// the capacity. A retry of an acknowledged report (same user, same idempotency key) returns
// its original acknowledgement.
func (x *experiment) admit(st store.Backend, s *submission, inBatch map[[32]byte]*submission) (result, bool) {
	if prev, ok := inBatch[s.user]; ok {
		return x.repeat(s, prev.idem, 0)
	}
	seq, idem, err := st.Contributed(x.def.ID, s.user) // the key survives the record's deletion
	if err != nil {
		return result{http.StatusInternalServerError, apiError{Code: "internal", Message: err.Error()}}, false
	}
	if seq != 0 {
		return x.repeat(s, idem, seq)
	}
	x.mu.RLock()
	full := x.users+len(inBatch) >= x.served.Session.Capacity()
	x.mu.RUnlock()
	if full {
		x.count(func(c *counters) { c.capacity++ })
		return result{http.StatusConflict, apiError{Code: "capacity_exhausted", Message: fmt.Sprintf("the experiment's calibration covers %d users and all have reported; no further report can be used", x.served.Session.Capacity())}}, false
	}
	return result{}, true
}

// repeat answers a second submission by a user who already contributed: the original
// acknowledgement for the same idempotency key, a conflict otherwise.
func (x *experiment) repeat(s *submission, idem string, seq uint64) (result, bool) {
	if idem == s.idem && seq != 0 {
		x.count(func(c *counters) { c.replayed++ })
		x.mu.RLock()
		v := x.pub.version
		x.mu.RUnlock()
		return result{http.StatusOK, ack{Experiment: x.def.ID, Sequence: seq, IdempotencyKey: idem, Replayed: true, PolicyVersion: v}}, false
	}
	x.count(func(c *counters) { c.duplicate++ })
	if idem == s.idem { // the same request twice in one batch: the first is being committed
		return result{http.StatusConflict, apiError{Code: "in_progress", Message: "this report is being committed; retry to get its acknowledgement"}}, false
	}
	return result{http.StatusConflict, apiError{Code: "already_contributed", Message: "this user already contributed to this experiment (each user contributes at most once)"}}, false
}

func (x *experiment) count(f func(*counters)) {
	x.mu.Lock()
	f(&x.stats)
	x.mu.Unlock()
}

// refusal turns a curator's refusal into a 400 naming the field.
func refusal(err error) result {
	var fe *protocol.FieldError
	if errors.As(err, &fe) {
		return result{http.StatusBadRequest, apiError{Code: "invalid_report", Field: "report." + fe.Field, Message: err.Error()}}
	}
	return result{http.StatusBadRequest, apiError{Code: "invalid_report", Field: "report", Message: err.Error()}}
}

// close closes the queue: the committer answers what it holds and stops.
func (x *experiment) close() {
	x.qmu.Lock()
	x.closed = true
	close(x.queue)
	x.qmu.Unlock()
}

// submit queues s and waits for the committer's answer (or the request's end).
func (x *experiment) submit(ctx context.Context, s *submission) result {
	return x.submitAll(ctx, []*submission{s})[0]
}

// submitAll queues the submissions in order (nil ones are skipped) and waits for the
// committer's answers; the committer takes them in this order, usually in one group commit.
func (x *experiment) submitAll(ctx context.Context, subs []*submission) []result {
	out := make([]result, len(subs))
	queued := make([]bool, len(subs))
	x.qmu.RLock()
	for i, s := range subs {
		if s == nil {
			continue
		}
		if x.closed {
			out[i] = result{http.StatusServiceUnavailable, apiError{Code: "unavailable", Message: "the server is shutting down; nothing was stored; retry later"}}
			continue
		}
		select {
		case x.queue <- s:
			queued[i] = true
		case <-ctx.Done():
			out[i] = result{http.StatusServiceUnavailable, apiError{Code: "unavailable", Message: "request cancelled before the report was queued; nothing was stored"}}
		}
	}
	x.qmu.RUnlock()
	for i, s := range subs {
		if !queued[i] {
			continue
		}
		select {
		case out[i] = <-s.done:
		case <-ctx.Done():
			// The committer still answers into the buffered channel; the client retries
			// with the same idempotency key to learn the outcome.
			out[i] = result{http.StatusServiceUnavailable, apiError{Code: "unavailable", Message: "request cancelled while the report was being committed; retry with the same Idempotency-Key"}}
		}
	}
	return out
}

// snapshot is the public state of the experiment (ledger, status page).
func (x *experiment) snapshot() ledgerResponse {
	x.mu.RLock()
	defer x.mu.RUnlock()
	c := x.served.Session.Capacity()
	l := ledgerResponse{
		Experiment: x.def.ID, Created: x.def.Created, Family: x.spec.Family, Agent: x.spec.Agents[0],
		Kind: string(x.head.Kind), Delta: x.spec.Privacy.Delta, Capacity: c, UsersServed: x.users,
		CapacityLeft: c - x.users, PolicyVersion: x.pub.version, Releases: append([]versionAt(nil), x.versions...),
		Statement: x.served.Statement, Guarantee: x.served.Privacy, Seeded: x.def.Seeded,
		Simulated: append([]curvePoint(nil), x.curve...),
	}
	if n := len(l.Simulated); x.simUsers > 0 && (n == 0 || l.Simulated[n-1].Users != x.simUsers) {
		l.Simulated = append(l.Simulated, curvePoint{Users: x.simUsers, Cum: x.cum}) // the latest user
	}
	l.Episodes, l.Env.Name, l.Env.Params = x.spec.Episodes, x.spec.Env.Name, x.spec.Env.Params
	if len(x.spec.Privacy.Epsilons) == 1 {
		l.Epsilon = x.spec.Privacy.Epsilons[0]
	}
	// Every agent's guarantee in the one report type (the run directory's manifest prints the
	// same object): the ledger's composition of the mechanisms the agent registered.
	if g, err := engine.Guarantee(x.served.Privacy); err == nil {
		// The page and the statement print the same object.
		l.Mu, l.Guarantee, l.Statement = g.Mu, g, g.String()
		if g.Epsilon > 0 {
			l.AchievedEpsilon = g.Epsilon
		}
	}
	x.label(&l)
	return l
}
