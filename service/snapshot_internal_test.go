package service

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dprl/dprl/agents/protocol"
	"github.com/dprl/dprl/experiment/engine"
	expfam "github.com/dprl/dprl/experiment/tabular"
	"github.com/dprl/dprl/service/store"
)

const (
	snapAdmin  = "admin-token-0123456789"
	snapClient = "client-token-0123456789"
)

// snapServer opens a server on dir with the snapshot policy every (reports; the interval is
// off) and retain.
func snapServer(t testing.TB, dir string, every int, retain bool) *Server {
	t.Helper()
	r := &engine.Registry{}
	r.Register(expfam.Family{})
	s, err := New(Config{Dir: dir, Registry: r, AdminToken: snapAdmin, ClientToken: snapClient,
		SnapshotEvery: every, SnapshotInterval: -1, RetainReports: retain, MaxBatch: 4096, Queue: 1 << 16})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// snapExperiment is a server of snapServer(dir, every, retain), closed when t ends, with the
// ID and the experiment of a practical-jdp experiment (H = 10, K = 1000) created on it.
func snapExperiment(t *testing.T, dir string, every int, retain bool) (*Server, string, *experiment) {
	t.Helper()
	s := snapServer(t, dir, every, retain)
	t.Cleanup(func() { s.Close() })
	id := snapCreate(t, s, "practical-jdp", 10, 1000)
	return s, id, s.lookup(id)
}

// snapCreate creates an experiment of agent on riverswim (horizon H) with capacity K through
// the API and returns its ID.
func snapCreate(t testing.TB, s *Server, agent string, H, K int) string {
	t.Helper()
	body := fmt.Sprintf(`{"family":"tabular","agent":%q,"env":{"name":"riverswim","params":{"horizon":%d}},"epsilon":1,"delta":1e-5,"capacity":%d}`, agent, H, K)
	req := httptest.NewRequest(http.MethodPost, "/v1/experiments", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+snapAdmin)
	req.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	s.Handler().ServeHTTP(w, req)
	if w.Code != http.StatusCreated {
		t.Fatalf("create: %d %s", w.Code, w.Body)
	}
	var l struct {
		Experiment string `json:"experiment"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &l); err != nil {
		t.Fatal(err)
	}
	return l.Experiment
}

// snapCreated submits users from..to-1 as snapUsers does and fails t unless each is
// acknowledged as new (201).
func snapCreated(t testing.TB, x *experiment, from, to, batch int) {
	t.Helper()
	for _, st := range snapUsers(t, x, from, to, batch) {
		if st != http.StatusCreated {
			t.Fatalf("status %d", st)
		}
	}
}

// snapUsers submits users from..to-1 (user u's deterministic riverswim trajectory, digest u,
// idempotency key "k<u>") straight to the committer, in batches of batch, and returns the
// answers' statuses.
func snapUsers(t testing.TB, x *experiment, from, to, batch int) []int {
	t.Helper()
	H := x.head.Dims.Horizon
	var out []int
	for lo := from; lo < to; lo += batch {
		hi := min(lo+batch, to)
		subs := make([]*submission, 0, hi-lo)
		for u := lo; u < hi; u++ {
			rep := &protocol.Trajectory{Header: x.head, States: make([]int, H+1), Actions: make([]int, H), Rewards: make([]float64, H)}
			for h := range rep.Actions {
				rep.States[h+1], rep.Actions[h] = (u+h)%6, (u*h+u/7)%2
				rep.Rewards[h] = float64((u+h)%3) / 2
			}
			raw, err := protocol.EncodeBinary(rep)
			if err != nil {
				t.Fatal(err)
			}
			s := &submission{idem: fmt.Sprint("k", u), regret: math.NaN(), rep: rep, raw: raw, done: make(chan result, 1)}
			binary.BigEndian.PutUint64(s.user[:], uint64(u))
			subs = append(subs, s)
		}
		for _, r := range x.submitAll(context.Background(), subs) {
			out = append(out, r.status)
		}
	}
	return out
}

// published returns the experiment's published policy body and release history.
func publishedOf(x *experiment) string {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return fmt.Sprintf("%d users, version %d %s, releases %v", x.users, x.pub.version, x.pub.body, x.versions)
}

// TestSnapshotRestartRetention: with snapshots every 64 reports, a crash image of the data
// directory (taken while idle: every committed transaction is durable, as after kill -9) holds
// only the raw reports after the last snapshot; a server restarted on it publishes what the
// uninterrupted server does, now and after 200 more reports; a retry of a report whose raw
// record was deleted gets its original acknowledgement, and another report of that user is
// refused. With --retain-reports every raw report stays.
func TestSnapshotRestartRetention(t *testing.T) {
	for _, retain := range []bool{false, true} {
		t.Run(fmt.Sprint("retain=", retain), func(t *testing.T) {
			dir := t.TempDir()
			s, id, x := snapExperiment(t, dir, 64, retain)
			snapCreated(t, x, 1, 301, 50)
			// A snapshot is taken after each batch that brings the reports since the last one
			// to 64 or more, once the batch is acknowledged; a retry goes through the committer
			// after that.
			snapUsers(t, x, 1, 2, 1)
			snap, err := s.st.LatestSnapshot(id)
			if err != nil || snap == nil {
				t.Fatalf("no snapshot: %v", err)
			}
			appended, stored, err := s.st.LogLength(id)
			if err != nil {
				t.Fatal(err)
			}
			wantStored := int(appended - snap.Seq)
			if retain {
				wantStored = int(appended)
			}
			if appended != 300 || stored != wantStored || snap.Seq < 300-64 {
				t.Fatalf("log: %d appended, %d stored, snapshot at %d; want 300 appended, %d stored", appended, stored, snap.Seq, wantStored)
			}
			crash := t.TempDir()
			if err := os.CopyFS(crash, os.DirFS(dir)); err != nil {
				t.Fatal(err)
			}
			twin := snapServer(t, crash, 64, retain)
			defer twin.Close()
			y := twin.lookup(id)
			if a, b := publishedOf(x), publishedOf(y); a != b {
				t.Fatalf("after the restart:\n%s\nuninterrupted:\n%s", b, a)
			}
			// Retries of the first user (raw record deleted unless retained): the original
			// acknowledgement; another key of that user: already contributed.
			if st := snapUsers(t, y, 1, 2, 1); st[0] != http.StatusOK {
				t.Fatalf("retry of user 1 after the restart: %d, want 200", st[0])
			}
			if st := snapUsers(t, y, 1, 2, 1); st[0] != http.StatusOK {
				t.Fatalf("second retry of user 1: %d, want 200", st[0])
			}
			for _, z := range []*experiment{x, y} {
				snapCreated(t, z, 301, 501, 40)
			}
			if a, b := publishedOf(x), publishedOf(y); a != b {
				t.Fatalf("200 reports after the restart:\n%s\nuninterrupted:\n%s", b, a)
			}
		})
	}
}

// TestSnapshotCrash: a crash at each point around the snapshot transaction (before it; inside
// it, after the covered records were deleted and before the snapshot was written, nothing
// committed; after its commit) leaves a database from which a restart publishes exactly what
// the server had published at that instant, and continues exactly as the uninterrupted server
// does, with every acknowledged report counted once: the old snapshot and the longer log, or
// the new snapshot and the shorter log, never records deleted without their snapshot.
func TestSnapshotCrash(t *testing.T) {
	for _, p := range []hookPoint{hookBeforeSnapshot, hookInSnapshot, hookAfterSnapshot} {
		t.Run(fmt.Sprint("point ", p), func(t *testing.T) {
			dir := t.TempDir()
			_, id, x := snapExperiment(t, dir, 100, false)
			type image struct {
				dir, published string
				users          int
			}
			crashed := make(chan image, 1)
			// The second snapshot (at 200 unless the committer split the batches) crashes at p: the data directory is copied at that
			// instant (inside the transaction the copy holds the last committed state, as the
			// file does after kill -9) and the fault stops the snapshot there.
			n := 0
			x.hooks = &faultHooks{f: func(q hookPoint) error {
				if q != p {
					return nil
				}
				if n++; n != 2 {
					return nil
				}
				c := t.TempDir()
				if err := os.CopyFS(c, os.DirFS(dir)); err != nil {
					t.Error(err)
				}
				x.mu.RLock()
				users := x.users
				x.mu.RUnlock()
				crashed <- image{c, publishedOf(x), users}
				return errors.New("injected crash")
			}}
			snapCreated(t, x, 1, 301, 50) // the second snapshot is at ≤ 298
			var im image
			select { // the committer snapshots after acknowledging the batch
			case im = <-crashed:
			case <-time.After(time.Minute):
				t.Fatal("the hook was not reached")
			}
			y := snapServer(t, im.dir, 100, false)
			defer y.Close()
			got := y.lookup(id)
			if a := publishedOf(got); a != im.published {
				t.Fatalf("restart after a crash at %d:\n%s\nwant\n%s", p, a, im.published)
			}
			// Acknowledged reports are not taken again; new ones continue exactly (the
			// committer may have split the batches: the image holds im.users reports).
			for _, u := range []int{1, im.users / 2, im.users} {
				if st := snapUsers(t, got, u, u+1, 1); st[0] != http.StatusOK {
					t.Fatalf("retry of user %d after the restart: %d, want 200", u, st[0])
				}
			}
			snapCreated(t, got, im.users+1, 301, 50)
			for _, z := range []*experiment{x, got} {
				snapCreated(t, z, 301, 401, 50)
			}
			if a, b := publishedOf(got), publishedOf(x); a != b {
				t.Fatalf("after 100 more reports:\n%s\nuninterrupted:\n%s", a, b)
			}
		})
	}
}

// BenchmarkRestart measures the time from a data directory to a serving server (New returned:
// every experiment restored and its committer running) after DPRL_BENCH_REPORTS (default 10⁶)
// acknowledged reports of tabular practical-jdp on riverswim (H = 20), fed straight to the
// committer in batches of 4096. Its sub-benchmarks: "snapshots" (the defaults: a snapshot
// every 2 000 reports, raw reports deleted) and "retain" (--retain-reports) restart from a
// crash image (the directory copied after the last acknowledgement, as kill -9 leaves it: the
// replay covers the reports after the last snapshot; the first restart also compacts when more
// than half the file is free), "graceful" from a server closed normally (final snapshot,
// nothing to replay), and "no-snapshots" (--snapshot-every -1, the old full replay). Metrics:
// restart seconds, the time the feed took, the database's bytes before and after the restart
// (which compacts when more than half the file is free) and after a full compaction.
// scripts/bench-restart.sh runs it.
func BenchmarkRestart(b *testing.B) {
	n := 1000000
	if v := os.Getenv("DPRL_BENCH_REPORTS"); v != "" {
		if _, err := fmt.Sscan(v, &n); err != nil {
			b.Fatal(err)
		}
	}
	for _, c := range []struct {
		name     string
		every    int
		retain   bool
		graceful bool
	}{{"snapshots", 0, false, false}, {"retain", 0, true, false}, {"graceful", 0, false, true}, {"no-snapshots", -1, true, false}} {
		b.Run(c.name, func(b *testing.B) {
			dir := b.TempDir()
			s := snapServer(b, dir, c.every, c.retain)
			id := snapCreate(b, s, "practical-jdp", 20, n+1)
			x := s.lookup(id)
			t0 := time.Now()
			for lo := 1; lo <= n; lo += 1 << 16 {
				for _, st := range snapUsers(b, x, lo, min(lo+1<<16, n+1), 4096) {
					if st != http.StatusCreated {
						b.Fatalf("status %d", st)
					}
				}
			}
			// A retry goes through the committer after the last batch's snapshot.
			snapUsers(b, x, 1, 2, 1)
			feed := time.Since(t0)
			want := publishedOf(x)
			image := dir
			if c.graceful {
				if err := s.Close(); err != nil {
					b.Fatal(err)
				}
			} else {
				image = b.TempDir()
				if err := os.CopyFS(image, os.DirFS(dir)); err != nil {
					b.Fatal(err)
				}
				s.Close()
			}
			sizeOf := func() float64 {
				fi, err := os.Stat(filepath.Join(image, store.FileName))
				if err != nil {
					b.Fatal(err)
				}
				return float64(fi.Size())
			}
			before := sizeOf()
			var restart time.Duration
			for i := 0; i < b.N; i++ {
				t1 := time.Now()
				y := snapServer(b, image, c.every, c.retain)
				restart = time.Since(t1)
				got := publishedOf(y.lookup(id))
				y.Close()
				if got != want {
					b.Fatalf("the restarted server publishes %.300s, want %.300s", got, want)
				}
			}
			st, err := store.Open(image, time.Second) // the size a full compaction reaches
			if err != nil {
				b.Fatal(err)
			}
			if _, _, err := st.Compact(); err != nil {
				b.Fatal(err)
			}
			st.Close()
			b.ReportMetric(sizeOf(), "db-bytes-compacted")
			b.ReportMetric(restart.Seconds(), "restart-s")
			b.ReportMetric(feed.Seconds(), "feed-s")
			b.ReportMetric(before, "db-bytes-before")
			b.ReportMetric(sizeOf(), "db-bytes-after")
		})
	}
}

// TestSnapshotRebuild: after a failed commit, the curator is rebuilt from the latest snapshot
// and the reports after it (its raw reports before it are deleted); the rebuilt curator then
// continues exactly as a server restarted on the same durable state.
func TestSnapshotRebuild(t *testing.T) {
	dir := t.TempDir()
	s, id, x := snapExperiment(t, dir, 100, false)
	snapUsers(t, x, 1, 151, 50)
	snapUsers(t, x, 1, 2, 1) // through the committer after its last snapshot
	if snap, err := s.st.LatestSnapshot(id); err != nil || snap == nil {
		t.Fatalf("no snapshot: %v", err)
	}
	image := t.TempDir()
	if err := os.CopyFS(image, os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	before := publishedOf(x)
	fail := true
	x.hooks = &faultHooks{f: func(q hookPoint) error {
		if q == hookBeforeAppend && fail {
			fail = false
			return errors.New("injected commit failure")
		}
		return nil
	}}
	if st := snapUsers(t, x, 151, 152, 1); st[0] != http.StatusServiceUnavailable {
		t.Fatalf("status %d, want 503", st[0])
	}
	if a := publishedOf(x); a != before {
		t.Fatalf("a failed commit changed what is published:\n%s\n%s", a, before)
	}
	y := snapServer(t, image, 100, false)
	defer y.Close()
	for _, z := range []*experiment{x, y.lookup(id)} {
		snapCreated(t, z, 151, 251, 25)
	}
	if a, b := publishedOf(x), publishedOf(y.lookup(id)); a != b {
		t.Fatalf("rebuilt after a failed commit:\n%s\nrestarted:\n%s", a, b)
	}
}
