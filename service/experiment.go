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

	"github.com/dprl/dprl/agents/protocol"
	"github.com/dprl/dprl/experiment/engine"
	"github.com/dprl/dprl/privacy/ledger"
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
	// maxBytes bounds a report's body (protocol.MaxBytes of the header).
	maxBytes int64

	queue  chan *submission
	qmu    sync.RWMutex // guards closed: no send on a closed queue
	closed bool
	// failed is set when the in-memory curator can no longer be trusted to match the log
	// (a commit failed): the experiment refuses reports until the server restarts.
	failed error

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

// newExperiment builds the curator of def and replays its log.
// A new experiment (st nil) has no log yet.
func newExperiment(reg *engine.Registry, st *store.Store, def *store.Experiment, dir string, queue int) (*experiment, error) {
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
	served, err := sv.Session(&spec, streams(def, &spec))
	if err != nil {
		return nil, fmt.Errorf("experiment %s: %w", def.ID, err)
	}
	x := &experiment{def: def, spec: spec, served: served, head: served.Session.Expect(), queue: make(chan *submission, queue)}
	x.maxBytes = int64(protocol.MaxBytes(x.head))
	if err := x.publish(); err != nil {
		return nil, err
	}
	if st == nil {
		return x, nil
	}
	err = st.Replay(def.ID, func(seq uint64, r *store.Record) error {
		rep, err := protocol.Decode(r.Report, x.head)
		if err != nil {
			return fmt.Errorf("record %d: %w", seq, err)
		}
		if err := served.Session.Receive(rep); err != nil {
			return fmt.Errorf("record %d: the curator refuses an acknowledged report: %w", seq, err)
		}
		x.users++
		x.addRegret(r.Regret)
		return x.publish()
	})
	if err != nil {
		return nil, fmt.Errorf("experiment %s: replaying its log: %w", def.ID, err)
	}
	return x, nil
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

// publish asks the curator for the next user's policy (once per acknowledged report, as the
// episode loop does) and, when its version changed, encodes the policy response.
func (x *experiment) publish() error {
	v, rule, err := x.served.Session.Publish()
	if err != nil {
		return fmt.Errorf("experiment %s: publish: %w", x.def.ID, err)
	}
	if x.pub.body != nil && v == x.pub.version {
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
	x.mu.Lock()
	x.pub = published{version: v, body: body, etag: `"` + strconv.FormatUint(v, 10) + `"`}
	x.versions = append(x.versions, versionAt{Version: v, Users: x.users})
	if len(x.versions) > maxHistory {
		x.versions = append(x.versions[:0], x.versions[len(x.versions)-maxHistory:]...)
	}
	x.mu.Unlock()
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

// run is the committer: it takes the submissions in arrival order, in batches, checks
// participation and capacity, hands each to the curator (which validates and clips it as its
// sensitivity proof requires; a refused report changes no state), publishes after each accepted
// one, appends the batch to the durable log in one transaction, and only then answers. If the
// commit fails, the curator's state is ahead of the log: the experiment stops accepting (a
// restart replays the log).
func (x *experiment) run(ctx context.Context, st *store.Store, maxBatch int) {
	batch := make([]*submission, 0, maxBatch)
	accepted := make([]*submission, 0, maxBatch)
	recs := make([]*store.Record, 0, maxBatch)
	inBatch := make(map[[32]byte]*submission, maxBatch)
	for {
		batch = batch[:0]
		select {
		case s, ok := <-x.queue:
			if !ok {
				return
			}
			batch = append(batch, s)
		case <-ctx.Done():
			return
		}
	fill:
		for len(batch) < maxBatch {
			select {
			case s, ok := <-x.queue:
				if !ok {
					break fill
				}
				batch = append(batch, s)
			default:
				break fill
			}
		}
		accepted, recs = accepted[:0], recs[:0]
		clear(inBatch)
		for _, s := range batch {
			if r, ok := x.admit(st, s, inBatch); !ok {
				s.done <- r
				continue
			}
			if err := x.served.Session.Receive(s.rep); err != nil {
				x.count(func(c *counters) { c.invalid++ })
				s.done <- refusal(err)
				continue
			}
			if err := x.publish(); err != nil {
				x.fail(err)
			}
			inBatch[s.user] = s
			accepted = append(accepted, s)
			recs = append(recs, &store.Record{User: s.user, Idem: s.idem, Regret: s.regret, Report: s.raw})
		}
		if len(accepted) == 0 {
			continue
		}
		x.mu.RLock()
		next := uint64(x.users) + 1
		x.mu.RUnlock()
		if err := st.Append(x.def.ID, next, recs); err != nil {
			x.fail(fmt.Errorf("commit: %w", err))
			for _, s := range accepted {
				s.done <- result{http.StatusServiceUnavailable, apiError{Code: "unavailable", Message: "the report was not stored; the experiment stopped accepting reports until the server restarts"}}
			}
			continue
		}
		for i, s := range accepted {
			x.mu.Lock()
			x.users++
			seq := x.users
			x.stats.accepted++
			if i == 0 {
				x.stats.batches++
			}
			x.stats.batched++
			v := x.pub.version
			x.mu.Unlock()
			x.addRegret(s.regret)
			s.done <- result{http.StatusCreated, ack{Experiment: x.def.ID, Sequence: uint64(seq), IdempotencyKey: s.idem, PolicyVersion: v}}
		}
	}
}

// admit checks a submission's participation (only reached with the user's own credential) and
// the capacity. A retry of an acknowledged report (same user, same idempotency key) returns
// its original acknowledgement.
func (x *experiment) admit(st *store.Store, s *submission, inBatch map[[32]byte]*submission) (result, bool) {
	if x.failed != nil {
		return result{http.StatusServiceUnavailable, apiError{Code: "unavailable", Message: "the experiment stopped accepting reports after a storage error; restart the server"}}, false
	}
	if prev, ok := inBatch[s.user]; ok {
		return x.repeat(s, prev.idem, 0)
	}
	seq, err := st.Contribution(x.def.ID, s.user)
	if err != nil {
		return result{http.StatusInternalServerError, apiError{Code: "internal", Message: err.Error()}}, false
	}
	if seq != 0 {
		r, err := st.Record(x.def.ID, seq)
		if err != nil {
			return result{http.StatusInternalServerError, apiError{Code: "internal", Message: err.Error()}}, false
		}
		return x.repeat(s, r.Idem, seq)
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

func (x *experiment) fail(err error) {
	if x.failed == nil {
		x.failed = err
	}
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
	if g, ok := x.served.Privacy.(ledger.Report); ok {
		l.Mu, l.Guarantee = g.Mu, g
		if g.Epsilon > 0 {
			l.AchievedEpsilon = g.Epsilon
		}
	}
	return l
}
