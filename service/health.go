package service

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"syscall"
	"time"

	"github.com/dprl/dprl/service/store"
)

// health is the server's storage health. A failed commit makes the server not ready (readyz
// 503) until a commit succeeds again; the prober (probe) tries a tiny commit every second
// meanwhile, so the server becomes ready again when the disk accepts commits even if no report
// arrives (a load balancer sends none to a server that is not ready).
type health struct {
	mu       sync.Mutex
	err      error     // the last commit failure, nil once a commit succeeded
	since    time.Time // when the current failure began
	failures uint64    // commits failed since start
	// damaged is set when the database was found damaged (store.ErrCorrupt): no commit can
	// succeed again without the operator, so /healthz fails too.
	damaged bool
	// logf receives the transitions (failing, recovered); nil logs nothing.
	logf func(string, ...any)
}

// commitFailed records a failed commit.
func (h *health) commitFailed(err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.err == nil {
		h.since = time.Now()
		if h.logf != nil {
			h.logf("storage: commits are failing (%s): %v; reports are refused (503) and /readyz answers 503 until a commit succeeds", storageProblem(err), err)
		}
	}
	h.err = err
	h.failures++
	if errors.Is(err, store.ErrCorrupt) {
		h.damaged = true
	}
}

// commitOK records a successful commit.
func (h *health) commitOK() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.err != nil && h.logf != nil {
		h.logf("storage: commits succeed again after %s of failures", time.Since(h.since).Round(time.Millisecond))
	}
	h.err = nil
}

// failing reports whether commits are failing (cheap: taken by the prober every tick).
func (h *health) failing() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.err != nil
}

// isDamaged reports whether the database was found damaged.
func (h *health) isDamaged() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.damaged
}

// probe runs until ctx ends: every period while commits are failing it commits a tiny
// transaction (store.Probe) and records the outcome, so that the failure clears as soon as
// the disk accepts commits again. A damaged database is not probed (it never heals); damage
// that a read found (the store refuses everything after it) is recorded at the next tick.
func (h *health) probe(ctx context.Context, st store.Backend, period time.Duration) {
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if err := st.Damaged(); err != nil && !h.isDamaged() {
			h.commitFailed(err) // found by a read (a participation check), not by a commit
			continue
		}
		if !h.failing() || h.isDamaged() {
			continue
		}
		if err := st.Probe(); err != nil {
			h.mu.Lock()
			h.err = err
			h.damaged = h.damaged || errors.Is(err, store.ErrCorrupt)
			h.mu.Unlock()
			continue
		}
		h.commitOK()
	}
}

// storageProblem names the class of a commit failure in words an operator acts on (the page
// shows it; the log has the whole error).
func storageProblem(err error) string {
	if err == nil {
		return ""
	}
	for _, c := range [...]struct {
		class error
		words string
	}{
		{store.ErrCorrupt, "the database is damaged"},
		{store.ErrNotLeader, "this server is no longer the leader"},
		{syscall.ENOSPC, "the disk is full"},
		{syscall.EDQUOT, "the disk quota is exhausted"},
		{syscall.EIO, "an I/O error"},
		{syscall.EROFS, "the file system is read-only"},
	} {
		if errors.Is(err, c.class) {
			return c.words
		}
	}
	return "commits fail"
}

// state returns since when the current failure lasts, the failures counted, and the current
// failure (nil when healthy).
func (h *health) state() (time.Time, uint64, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.since, h.failures, h.err
}

// hookPoint is a step of the commit path where the crash-point harness may inject a fault.
type hookPoint int

// The commit path's steps, in order.
const (
	hookAfterReceive hookPoint = iota // a report was received into the curator
	hookAfterStage                    // its policy was computed (not visible)
	hookBeforeAppend                  // the batch is about to be appended
	hookAfterAppend                   // the append transaction committed (fsync done)
	hookAfterPublish                  // the staged policy became visible (before the acks)
	hookBeforeCommit                  // inside the append transaction, just before its commit (store)
	hookAfterCommit                   // inside Append, just after the commit and its fsync (store)
)

// faultHooks injects faults on the commit path (tests only; nil in production).
type faultHooks struct {
	f func(hookPoint) error
}

// at calls the hook at p; nil hooks do nothing.
func (h *faultHooks) at(p hookPoint) error {
	if h == nil || h.f == nil {
		return nil
	}
	return h.f(p)
}

// healthz answers /healthz (liveness): 200 while the process serves, with the storage state
// in the body; 503 only when the database was found damaged — no commit can succeed again
// without the operator, and a restart then stops with the damage named (exit 2). A full disk
// does not fail liveness: the server recovers by itself when space returns (/readyz is 503
// meanwhile).
func (s *Server) healthz(w http.ResponseWriter) {
	since, failures, err := s.storage.state()
	if s.storage.isDamaged() {
		fail(w, http.StatusServiceUnavailable, "storage_damaged", "", "the database is damaged (since %s): %v", since.UTC().Format(time.RFC3339), err)
		return
	}
	body := map[string]any{"status": "ok", "storage": "ok", "commit_failures": failures}
	if err != nil {
		body["storage"] = storageProblem(err)
		body["storage_failing_since"] = since.UTC().Format(time.RFC3339)
	}
	writeJSON(w, http.StatusOK, body)
}

// storageLine is the status page's storage line: empty when commits succeed, else what fails
// and since when.
func (s *Server) storageLine() string {
	since, failures, err := s.storage.state()
	if err == nil {
		return ""
	}
	return fmt.Sprintf("STORAGE FAILING since %s (%s; %d failed commits): reports are refused (503) and nothing new is published until commits succeed again; see the server's log.",
		since.UTC().Format("2006-01-02 15:04:05 MST"), storageProblem(err), failures)
}
