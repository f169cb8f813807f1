package pgstore

import (
	"context"
	"testing"

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

// TestConformance runs the stores' shared conformance suite on PostgreSQL.
func TestConformance(t *testing.T) {
	c := pgtest.Start(t)
	storetest.Run(t, func(t *testing.T) (store.Backend, func() store.Backend) {
		url := c.NewDB(t)
		open := func() store.Backend { return leader(t, url, Options{Name: "test"}) }
		return open(), open
	})
}
