package service

import (
	"bytes"
	"errors"
	"net/http"
	"strconv"
	"sync"
	"testing"
)

// TestFailedCommitRefusesTheGroupBehind: the committer receives the next reports into the
// curator while a group's append runs (committer.go). When that append fails — before its
// commit, or after a commit that is then reported failed — the group received behind it is
// refused with it (503, nothing stored): it was staged on top of reports the log may not hold.
// When it succeeds, only its own group is published, never what the group behind it staged.
// For the practical agent of every servable family, user 2's append waits inside the store
// until user 3 (a release) was received into the curator; then either it fails (both
// refused) or it succeeds and user 3's own append fails (user 2 acknowledged, user 3 refused). Nothing of a
// refused user is ever visible, the retried users are taken, every version seen is the log's
// curator's (checkLog), and a restart shows the same.
func TestFailedCommitRefusesTheGroupBehind(t *testing.T) {
	for _, f := range crashFamilies {
		reps := crashReports(t, f)
		for _, c := range []struct {
			name   string
			block  hookPoint // where user 2's append waits for user 3
			fail   hookPoint // where an append then fails
			second bool      // user 3's append fails (user 2's succeeds)
		}{
			{"before-commit", hookBeforeCommit, hookBeforeCommit, false},
			{"durable-reported-failed", hookAfterCommit, hookAfterAppend, false},
			{"next-group-fails", hookBeforeCommit, hookBeforeCommit, true},
		} {
			t.Run(f.name+"/"+c.name, func(t *testing.T) {
				dir := t.TempDir()
				var mu sync.Mutex
				armed, blocked, signaled, failed, passed := false, false, false, false, false
				inAppend, received, release := make(chan struct{}), make(chan struct{}), make(chan struct{})
				hooks := &faultHooks{f: func(p hookPoint) error {
					mu.Lock()
					if !armed {
						mu.Unlock()
						return nil
					}
					first := p == c.block && !blocked
					blocked = blocked || first
					signal := p == hookAfterReceive && blocked && !failed && !signaled
					signaled = signaled || signal
					fail := p == c.fail && blocked && !failed && (!c.second || passed)
					if p == c.fail && blocked && c.second && !passed {
						passed = true // user 2's append, after user 3 was received: it succeeds
						fail = false
					}
					mu.Unlock()
					if first {
						close(inAppend)
						<-release
					}
					if signal {
						close(received)
					}
					if fail {
						mu.Lock()
						failed = true
						mu.Unlock()
						return errors.New("injected fault at " + strconv.Itoa(int(p)))
					}
					return nil
				}}
				base, s, stop := inProcess(t, dir, hooks)
				o := newObserver(t)
				creds := o.create(base, f)
				o.observe(base, "after creation")
				if left := o.submit(base, reps, creds, []int{1}); len(left) > 0 {
					t.Fatalf("users %v refused", left)
				}
				o.observe(base, "after user 1")
				v, body, users := o.version, o.bodies[`"`+strconv.FormatUint(o.version, 10)+`"`], o.users
				mu.Lock()
				armed = true
				mu.Unlock()
				status := make(chan [2]int, 2)
				post := func(u int) {
					code, err := postOne(base, o.exp, reps, creds, u)
					if err != nil {
						code = -1
					}
					status <- [2]int{u, code}
				}
				go post(2)
				<-inAppend
				go post(3)
				<-received // user 3 is in the curator, user 2 not yet committed
				close(release)
				want := map[int]int{2: http.StatusServiceUnavailable, 3: http.StatusServiceUnavailable}
				refused := []int{2, 3}
				if c.second {
					want[2], refused = http.StatusCreated, []int{3}
				}
				for range 2 {
					if r := <-status; r[1] != want[r[0]] {
						t.Fatalf("user %d: status %d, want %d", r[0], r[1], want[r[0]])
					}
				}
				mu.Lock()
				armed = false
				mu.Unlock()
				if c.second {
					o.acks["u2"] = 2
					o.observe(base, "after user 2, user 3's commit failed")
					if o.users != 2 {
						t.Fatalf("%d users served after user 2 (user 3's commit failed)", o.users)
					}
				} else {
					o.observe(base, "after the failed commit")
					if o.version != v || o.users != users || !bytes.Equal(o.bodies[`"`+strconv.FormatUint(v, 10)+`"`], body) {
						t.Fatalf("a failed commit changed what is visible: version %d → %d, users %d → %d", v, o.version, users, o.users)
					}
				}
				o.finish(base, s, reps, creds, 4, refused)
				stop()
				base, _, _ = inProcess(t, dir, nil)
				o.observe(base, "after a restart")
			})
		}
	}
}

// postOne submits user u's report alone (a batch of one) and returns the item's status.
func postOne(base, exp string, reports [][]byte, creds map[string]string, u int) (int, error) {
	code, results, err := postBatch(base, exp, reports, creds, []int{u})
	if code == 0 {
		return 0, err
	}
	if err != nil || len(results) != 1 {
		return 0, errors.New("bad batch answer")
	}
	return results[0].Status, nil
}
