package pgstore

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/dprl/dprl/internal/pgtest"
	"github.com/dprl/dprl/service/store"
	"github.com/dprl/dprl/service/store/storetest"
)

// leader opens url and takes the leadership; closing the store closes its DB too.
func leader(t *testing.T, url string, o Options) *testStore {
	t.Helper()
	d, err := Open(context.Background(), url, o)
	if err != nil {
		t.Fatal(err)
	}
	s, err := d.TryLead(context.Background())
	if err != nil || s == nil {
		d.Close()
		t.Fatalf("taking the leadership: %v %v", s, err)
	}
	return &testStore{Store: s, db: d}
}

type testStore struct {
	*Store
	db *DB
}

func (s *testStore) Close() error {
	err := s.Store.Close()
	s.db.Close()
	return err
}

// TestPostgres runs this package's tests on one throw-away PostgreSQL cluster (starting one
// takes seconds): the conformance suite, the fence, durability across a crash of the
// database.
func TestPostgres(t *testing.T) {
	c := pgtest.Start(t)
	t.Run("Conformance", func(t *testing.T) { testConformance(t, c) })
	t.Run("Fence", func(t *testing.T) { testFence(t, c) })
	t.Run("AppendDurable", func(t *testing.T) { testAppendDurable(t, c) })
}

// testConformance runs the stores' shared conformance suite on PostgreSQL.
func testConformance(t *testing.T, c *pgtest.Cluster) {
	storetest.Run(t, func(t *testing.T) (store.Backend, func() store.Backend) {
		url := c.NewDB(t)
		open := func() store.Backend { return leader(t, url, Options{Name: "test"}) }
		return open(), open
	})
}

// lockPID is the backend of the connection holding the leader's lock.
func lockPID(s *Store) uint32 { return s.pid }

// testFence: a leader whose lock connection is terminated commits nothing from its very next
// write on (the monitor, which would notice within 250 ms, is slowed to an hour here: the
// fence alone stops it); a new leader's epoch bump waits for a write of the old leader that
// passed the fence, and sees it; and a deposed leader stays deposed.
func testFence(t *testing.T, c *pgtest.Cluster) {
	rec := func(i byte) []*store.Record {
		return []*store.Record{{User: [32]byte{i}, Idem: "k", Report: []byte{i}}}
	}
	// leaderA is the first leader, a, of a new database (its monitor slowed to an hour), closed
	// when t ends, holding experiment e.
	leaderA := func(t *testing.T) (url string, a *testStore) {
		t.Helper()
		url = c.NewDB(t)
		a = leader(t, url, Options{Name: "a", monitorEvery: time.Hour})
		t.Cleanup(func() { a.Close() })
		if err := a.Create(&store.Experiment{ID: "e", Spec: []byte(`{}`)}); err != nil {
			t.Fatal(err)
		}
		return url, a
	}
	t.Run("lock lost", func(t *testing.T) {
		url, a := leaderA(t)
		if err := a.Append("e", 1, rec(1)); err != nil {
			t.Fatal(err)
		}
		pgtest.Terminate(t, url, "pid = $1", int32(lockPID(a.Store)))
		if err := a.Append("e", 2, rec(2)); !errors.Is(err, store.ErrNotLeader) {
			t.Fatalf("a leader that lost its lock appended: %v", err)
		}
		if _, err := a.Revoke("e", [][32]byte{{9}}); !errors.Is(err, store.ErrNotLeader) {
			t.Errorf("a leader that lost its lock revoked: %v", err)
		}
		if err := a.Probe(); !errors.Is(err, store.ErrNotLeader) {
			t.Errorf("a leader that lost its lock probed: %v", err)
		}
		select {
		case <-a.Lost():
		default:
			t.Error("Lost is not closed")
		}
		b := leader(t, url, Options{Name: "b"})
		defer b.Close()
		if n, _, _ := b.LogLength("e"); n != 1 {
			t.Errorf("the new leader sees %d records, want 1", n)
		}
	})
	t.Run("deposed", func(t *testing.T) {
		// The old leader's lock is gone and another server leads: its writes fail even if
		// it somehow kept believing it leads (the epoch changed).
		url, a := leaderA(t)
		pgtest.Terminate(t, url, "pid = $1", int32(lockPID(a.Store)))
		b := leader(t, url, Options{Name: "b"})
		defer b.Close()
		if b.Epoch() != a.Epoch()+1 {
			t.Errorf("epochs %d then %d", a.Epoch(), b.Epoch())
		}
		err := a.Append("e", 1, rec(1))
		if !errors.Is(err, store.ErrNotLeader) || !strings.Contains(err.Error(), "the leader is now b") {
			t.Fatalf("the deposed leader appended: %v", err)
		}
		if err := b.Append("e", 1, rec(1)); err != nil {
			t.Fatal(err)
		}
		name, epoch, held, err := b.db.Leader(context.Background())
		if err != nil || name != "b" || epoch != b.Epoch() || !held {
			t.Errorf("Leader: %q %d %v %v", name, epoch, held, err)
		}
	})
	t.Run("takeover waits", func(t *testing.T) {
		url, a := leaderA(t)
		in, release := make(chan struct{}), make(chan struct{})
		a.SetCommitHooks(&store.CommitHooks{Before: func() error { close(in); <-release; return nil }})
		appended := make(chan error, 1)
		go func() { appended <- a.Append("e", 1, rec(1)) }()
		<-in // a's append passed the fence and wrote its record, uncommitted
		pgtest.Terminate(t, url, "pid = $1", int32(lockPID(a.Store)))
		led := make(chan *testStore, 1)
		go func() { led <- leader(t, url, Options{Name: "b"}) }()
		select {
		case <-led:
			t.Fatal("the new leader took over while the old leader's fenced write was open")
		case <-time.After(500 * time.Millisecond):
		}
		close(release)
		if err := <-appended; err != nil {
			t.Fatalf("the write that passed the fence: %v", err)
		}
		b := <-led
		defer b.Close()
		if n, _, _ := b.LogLength("e"); n != 1 {
			t.Errorf("the new leader sees %d records, want the 1 the old leader committed", n)
		}
	})
}

// testAppendDurable: every Append that returned is in the database after PostgreSQL crashes
// (immediate stop, recovery from the WAL) right after it: a report acknowledged after
// Append returned is never lost.
func testAppendDurable(t *testing.T, c *pgtest.Cluster) {
	url := c.NewDB(t)
	a := leader(t, url, Options{Name: "a"})
	if err := a.Create(&store.Experiment{ID: "e", Spec: []byte(`{}`)}); err != nil {
		t.Fatal(err)
	}
	const groups, size = 40, 5
	for g := 0; g < groups; g++ {
		var recs []*store.Record
		for i := 0; i < size; i++ {
			u := g*size + i + 1
			recs = append(recs, &store.Record{User: [32]byte{byte(u), byte(u >> 8)}, Idem: "k", Report: []byte{1}})
		}
		if err := a.Append("e", uint64(g*size+1), recs); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Stop("immediate"); err != nil {
		t.Fatal(err)
	}
	a.Close()
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	b := leader(t, url, Options{Name: "b"})
	defer b.Close()
	n, stored, err := b.LogLength("e")
	if err != nil || n != groups*size || stored != groups*size {
		t.Fatalf("after a crash of the database: %d records appended, %d stored (%v); %d were acknowledged", n, stored, err, groups*size)
	}
}
