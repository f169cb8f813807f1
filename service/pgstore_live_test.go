package service_test

import (
	"context"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/dprl/dprl/internal/pgtest"
	"github.com/dprl/dprl/service"
	"github.com/dprl/dprl/service/store"
	"github.com/dprl/dprl/service/store/pgstore"
)

// StoreEnv chooses the store the service's tests run on (through live): unset or "bbolt" for
// the bbolt database in the test's directory, "postgres" for a database of a throw-away
// PostgreSQL cluster shared by the test binary, one database per test directory (a restart on
// the same directory reopens the same database). .ci/run runs the service tests that do not
// depend on bbolt's file (crash children, storage faults, compaction) both ways.
const storeEnv = "DPRL_SERVICE_STORE"

var pgShared struct {
	once sync.Once
	c    *pgtest.Cluster
	err  error
	mu   sync.Mutex
	dbs  map[string]string // test directory → database URL
}

// testStore returns the store live serves dir from: nil (bbolt in dir) unless
// DPRL_SERVICE_STORE=postgres.
func testStore(t *testing.T, dir string) store.Backend {
	t.Helper()
	if os.Getenv(storeEnv) != "postgres" {
		return nil
	}
	if pgtest.Bin() == "" {
		pgtest.Absent(t)
	}
	pgShared.once.Do(func() {
		pgShared.c, pgShared.err = pgtest.StartShared()
		if pgShared.c != nil {
			service.AtExit(pgShared.c.Remove)
		}
		pgShared.dbs = map[string]string{}
	})
	if pgShared.err != nil {
		t.Fatal(pgShared.err)
	}
	pgShared.mu.Lock()
	url, ok := pgShared.dbs[dir]
	if !ok {
		url = pgShared.c.NewDB(t)
		pgShared.dbs[dir] = url
	}
	pgShared.mu.Unlock()
	d, err := pgstore.Open(context.Background(), url, pgstore.Options{Name: "test"})
	if err != nil {
		t.Fatal(err)
	}
	// The previous server on dir may still be releasing the lock.
	for deadline := time.Now().Add(10 * time.Second); ; {
		s, err := d.TryLead(context.Background())
		if err != nil {
			d.Close()
			t.Fatal(err)
		}
		if s != nil {
			return &ownedStore{Store: s, db: d}
		}
		if time.Now().After(deadline) {
			d.Close()
			t.Fatalf("another server on %s holds the leadership", dir)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// ownedStore is a leader's store that closes its DB with it.
type ownedStore struct {
	*pgstore.Store
	db *pgstore.DB
}

func (s *ownedStore) Close() error {
	err := s.Store.Close()
	s.db.Close()
	return err
}
