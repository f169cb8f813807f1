package service

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/dprl/dprl/service/store"
)

// The committer (docs/serve.md, "Durability") serialises an experiment's reports into its
// curator in the order of the durable log and commits them in groups. It is pipelined one
// group deep: while a group's append (its write and fsync) runs, the committer goes on
// receiving the next reports into the curator and staging what they produce — nothing of
// which is visible — so the next group is ready to be appended the moment the previous one is
// durable. Only then is the previous group's staged policy applied and its reports
// acknowledged (commit before publish): a group's reports are published and answered after
// their own commit and every earlier one, never before. If a commit fails, the group behind it
// (received into the curator on top of the failed one) is refused with it (503, nothing
// stored) and the curator is rebuilt from the durable log.

// commitGroup is a group commit: the accepted submissions in log order, their records, what
// the curator staged from them, and the result of their append once it started.
type commitGroup struct {
	subs    []*submission
	recs    []*store.Record
	pending staged
	done    chan error // the append's result (buffered: the appender never blocks)
	start   time.Time  // when the append started
}

func newCommitGroup(maxBatch int) *commitGroup {
	return &commitGroup{subs: make([]*submission, 0, maxBatch), recs: make([]*store.Record, 0, maxBatch), done: make(chan error, 1)}
}

// reset empties g for reuse (its append, if any, has returned).
func (g *commitGroup) reset() {
	clear(g.subs)
	clear(g.recs)
	g.subs, g.recs = g.subs[:0], g.recs[:0]
	g.pending = staged{versions: g.pending.versions[:0]}
}

// committer is the state of an experiment's committer goroutine (run).
type committer struct {
	x        *experiment
	st       store.Backend
	maxBatch int
	open     *commitGroup // received into the curator, not yet appended
	fly      *commitGroup // being appended (nil: none)
	spare    *commitGroup
	// inBatch holds the users of open and fly: reports not yet committed, whose users the
	// store does not know yet.
	inBatch map[[32]byte]*submission
	// Linger (lingerWait): the size of the last group appended, the duration of the last
	// append, and the timer of a wait in progress (fired: the wait is over).
	prev       int
	lastCommit time.Duration
	linger     *time.Timer
	lingered   bool
}

// run is the committer: it takes the submissions in arrival order, checks participation and
// capacity, hands each to the curator (which validates and clips it as its sensitivity proof
// requires; a refused report changes no state), stages what the curator publishes after each
// accepted one, appends each group to the durable log in one transaction, and only once it
// is durable publishes what the group staged and answers its reports. If a commit fails, the
// curator's state is ahead of the log: the experiment refuses reports until the curator is
// rebuilt from the log (recover).
func (x *experiment) run(ctx context.Context, st store.Backend, maxBatch int) {
	c := &committer{x: x, st: st, maxBatch: maxBatch, open: newCommitGroup(maxBatch), spare: newCommitGroup(maxBatch),
		inBatch: make(map[[32]byte]*submission, 2*maxBatch)}
	defer func() {
		if c.linger != nil {
			c.linger.Stop()
		}
	}()
	closed := false
	for {
		c.maybeStart(closed)
		if closed && c.fly == nil && len(c.open.subs) == 0 {
			x.maybeSnapshot(st, true) // stopping: a restart then replays nothing
			return
		}
		var queue <-chan *submission
		if !closed && len(c.open.subs) < maxBatch && !c.snapshotDue() {
			queue = x.queue
		}
		var done <-chan error
		if c.fly != nil {
			done = c.fly.done
		}
		var lingerC <-chan time.Time
		if c.linger != nil {
			lingerC = c.linger.C
		}
		select {
		case s, ok := <-queue:
			if !ok {
				closed = true
				continue
			}
			c.take(s)
			// Take what else is waiting (a group commits every report queued so far).
		fill:
			for len(c.open.subs) < maxBatch && !c.snapshotDue() {
				select {
				case s, ok := <-x.queue:
					if !ok {
						closed = true
						break fill
					}
					c.take(s)
				default:
					break fill
				}
			}
		case err := <-done:
			c.finish(err, true)
		case <-lingerC:
			c.linger, c.lingered = nil, true
		case <-ctx.Done():
			if c.fly != nil {
				<-c.fly.done // the store is closed after the committers return
			}
			return
		}
	}
}

// snapshotDue reports whether a snapshot is due once the group in flight is committed: the
// committer then takes no report before it (a snapshot is taken only when the curator is
// exactly in step with the committed log).
func (c *committer) snapshotDue() bool {
	x := c.x
	if c.fly == nil || x.stale != nil || x.snapDisabled {
		return false
	}
	p := x.snapPolicy
	return (p.every > 0 && x.sinceSnap+len(c.fly.subs) >= p.every) || (p.interval > 0 && time.Since(x.lastSnap) >= p.interval)
}

// take admits s and receives it into the curator as the open group's next report, or answers
// it (refused, or 503 while the curator is not in step with the log).
func (c *committer) take(s *submission) {
	x, g := c.x, c.open
	if x.stale != nil && !x.recover(c.st) { // stale: no group is in flight or open
		s.done <- unavailable(x.stale)
		return
	}
	if r, ok := x.admit(c.st, s, c.inBatch); !ok {
		s.done <- r
		return
	}
	panicked, err := safeReceive(x.served.Session, s.rep)
	if err == nil {
		g.pending.received++
		if herr := x.hooks.at(hookAfterReceive); herr != nil {
			x.logf("experiment %s: %v", x.def.ID, herr)
		}
		err = x.stage(&g.pending)
		if herr := x.hooks.at(hookAfterStage); herr != nil {
			x.logf("experiment %s: %v", x.def.ID, herr)
		}
		var pp *planPanic
		if panicked = errors.As(err, &pp); !panicked && err != nil {
			// The planner could not plan on the released statistics: the report is kept,
			// the last policy stays published.
			x.logf("experiment %s: %v (the last policy stays published)", x.def.ID, err)
			err = nil
		}
	}
	if panicked {
		// A bug the boundary should have excluded: refuse the report and rebuild the curator
		// from the durable log — once the group in flight is committed or refused — and the
		// open group's accepted reports.
		x.count(func(c *counters) { c.invalid++ })
		x.logf("experiment %s: %v; the report is refused and the curator rebuilt", x.def.ID, err)
		s.done <- result{http.StatusBadRequest, apiError{Code: "invalid_report", Field: "report", Message: "the curator cannot use this report; nothing was stored"}}
		if c.fly != nil {
			c.finish(<-c.fly.done, false) // no snapshot: the curator's state is unknown
			if x.stale != nil {
				return // the commit failed: the open group was refused with it
			}
		}
		if err := x.rebuild(c.st, g.subs, &g.pending); err != nil {
			x.stale = fmt.Errorf("rebuilding the curator: %w", err)
			c.refuseOpen(x.stale)
		}
		return
	}
	if err != nil {
		x.count(func(c *counters) { c.invalid++ })
		s.done <- refusal(err)
		return
	}
	c.inBatch[s.user] = s
	g.subs = append(g.subs, s)
	g.recs = append(g.recs, &store.Record{User: s.user, Idem: s.idem, Regret: s.regret, Report: s.raw})
}

// maybeStart starts appending the open group when no append is in flight, unless it lingers
// (lingerWait) for more reports first.
func (c *committer) maybeStart(closed bool) {
	if c.fly != nil || len(c.open.subs) == 0 {
		return
	}
	n := len(c.open.subs)
	switch {
	case c.linger != nil: // waiting: until the group is large enough or the timer fires
		if !closed && lingerWait(n, c.maxBatch, c.prev, c.lastCommit) > 0 {
			return
		}
		c.linger.Stop()
		c.linger = nil
	case !c.lingered && !closed:
		if w := lingerWait(n, c.maxBatch, c.prev, c.lastCommit); w > 0 {
			c.linger = time.NewTimer(w)
			return
		}
	}
	c.lingered = false
	c.start()
}

// start appends the open group in the background; the next reports go to a new open group,
// staged on top of it.
func (c *committer) start() {
	x, g := c.x, c.open
	c.open, c.spare, c.fly = c.spare, nil, g
	c.prev = len(g.subs)
	c.open.pending.ahead, c.open.pending.base = len(g.subs), g.pending.pub
	if err := x.hooks.at(hookBeforeAppend); err != nil {
		g.done <- err
		return
	}
	x.mu.RLock()
	next := uint64(x.users) + 1
	x.mu.RUnlock()
	g.start = time.Now()
	go func(recs []*store.Record) { g.done <- c.st.Append(x.def.ID, next, recs) }(g.recs)
}

// finish ends the group in flight with its append's result: once it is durable, publishes
// what it staged and acknowledges its reports, then (if snap and nothing is open) snapshots
// when due; if the commit failed, refuses it and the open group (503) and marks the curator
// stale.
func (c *committer) finish(err error, snap bool) {
	x, g := c.x, c.fly
	c.fly = nil
	defer func() {
		g.reset()
		c.spare = g
	}()
	if err == nil {
		c.lastCommit = time.Since(g.start)
		x.health.commitOK()
		err = x.hooks.at(hookAfterAppend)
	}
	if err != nil {
		x.commitFailed(err, g.subs, &g.pending)
		for _, s := range g.subs {
			delete(c.inBatch, s.user)
		}
		c.refuseOpen(x.stale)
		return
	}
	// Durable: publish what these reports produced, then acknowledge.
	x.mu.Lock()
	x.applyLocked(&g.pending)
	first := x.users + 1
	x.users += len(g.subs)
	x.stats.accepted += uint64(len(g.subs))
	x.stats.batches++
	x.stats.batched += uint64(len(g.subs))
	v := x.pub.version
	x.mu.Unlock()
	// The open group was staged on top of this one, which is now published.
	c.open.pending.ahead, c.open.pending.base = 0, published{}
	if err := x.hooks.at(hookAfterPublish); err != nil {
		x.logf("experiment %s: %v", x.def.ID, err)
	}
	for i, s := range g.subs {
		delete(c.inBatch, s.user)
		x.addRegret(s.regret)
		s.done <- result{http.StatusCreated, ack{Experiment: x.def.ID, Sequence: uint64(first + i), IdempotencyKey: s.idem, PolicyVersion: v}}
	}
	x.sinceSnap += len(g.subs)
	if snap && len(c.open.subs) == 0 {
		x.maybeSnapshot(c.st, false)
	}
}

// refuseOpen answers the open group 503 (nothing of it was stored) and empties it: the
// curator received it on top of a commit that failed, or could not be rebuilt.
func (c *committer) refuseOpen(err error) {
	g := c.open
	for _, s := range g.subs {
		delete(c.inBatch, s.user)
		s.done <- unavailable(err)
	}
	g.reset()
}

// maxLinger bounds how long the committer waits for more reports before a group commit.
const maxLinger = 2 * time.Millisecond

// lingerWait is how long the committer waits for more reports before appending a group of n
// (prev: the size of the last group appended; lastCommit: how long its append took). Users
// whose reports a commit acknowledged often come back together (a client playing many users,
// a gateway): the first of them would otherwise be committed almost alone — one fsync for a
// handful of reports — while the rest queue behind it for a whole commit. So a group holding
// less than half as many reports as the last one waits, until it holds half as many or is
// full, for at most half the last commit (at most maxLinger). A lone user (groups of one)
// never waits; nothing changes but where groups are cut.
func lingerWait(n, maxBatch, prev int, lastCommit time.Duration) time.Duration {
	if n >= maxBatch || 2*n >= prev {
		return 0
	}
	return min(lastCommit/2, maxLinger)
}
