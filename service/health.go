package service

import (
	"sync"
	"time"
)

// health is the server's storage health. A failed commit makes the server not ready (readyz
// 503) until a commit succeeds again.
type health struct {
	mu       sync.Mutex
	err      error     // the last commit failure, nil once a commit succeeded
	since    time.Time // when the current failure began
	failures uint64    // commits failed since start
}

// commitFailed records a failed commit.
func (h *health) commitFailed(err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.err == nil {
		h.since = time.Now()
	}
	h.err = err
	h.failures++
}

// commitOK records a successful commit.
func (h *health) commitOK() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.err = nil
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
