package store_test

import (
	"testing"
	"time"

	"github.com/dprl/dprl/service/store"
	"github.com/dprl/dprl/service/store/storetest"
)

// TestConformance runs the stores' shared conformance suite on the bbolt store.
func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) (store.Backend, func() store.Backend) {
		dir := t.TempDir()
		open := func() store.Backend {
			s, err := store.Open(dir, time.Second)
			if err != nil {
				t.Fatal(err)
			}
			return s
		}
		return open(), open
	})
}
