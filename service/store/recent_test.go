package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// indexed reports whether user has an entry in experiment id's participation index (the
// users/<id> bucket itself, not the log).
func indexed(t *testing.T, s *Store, id string, user [32]byte) bool {
	t.Helper()
	var ok bool
	if err := s.view(func(tx *bolt.Tx) error { ok = tx.Bucket(usersBucket(id)).Get(user[:]) != nil; return nil }); err != nil {
		t.Fatal(err)
	}
	return ok
}

// TestDeferredIndex: a user's participation is found with her sequence number and idempotency
// key at every stage — right after her append (her entry waits in the log), after the store is
// reopened (rebuilt from the log), after an append that brings the index up to date (more than
// RecentMax users waiting), after a snapshot that deletes her record or keeps it — and a second
// record of hers is refused at every stage; a failed append changes nothing.
func TestDeferredIndex(t *testing.T) {
	for _, retain := range []bool{false, true} {
		t.Run(fmt.Sprint("retain=", retain), func(t *testing.T) {
			dir := t.TempDir()
			fail := false
			open := func() *Store {
				s, err := OpenWith(dir, Options{Wait: time.Second, BeforeCommit: func() error {
					if fail {
						return errors.New("injected")
					}
					return nil
				}})
				if err != nil {
					t.Fatal(err)
				}
				return s
			}
			s := open()
			if err := s.Create(&Experiment{ID: "e", Spec: []byte(`{}`)}); err != nil {
				t.Fatal(err)
			}
			user := func(u int) (k [32]byte) { binary.BigEndian.PutUint64(k[8:], uint64(u)*0x9e3779b97f4a7c15); return k }
			next := uint64(1)
			appendUsers := func(from, to int) {
				var recs []*Record
				for u := from; u <= to; u++ {
					recs = append(recs, &Record{User: user(u), Idem: fmt.Sprint("k", u), Report: []byte{byte(u)}})
				}
				if err := s.Append("e", next, recs); err != nil {
					t.Fatal(err)
				}
				next += uint64(len(recs))
			}
			check := func(when string, upTo int) {
				t.Helper()
				for _, u := range []int{1, 2, upTo / 2, upTo - 1, upTo} {
					seq, idem, err := s.Contributed("e", user(u))
					if err != nil || seq != uint64(u) || idem != fmt.Sprint("k", u) {
						t.Fatalf("%s: user %d: seq %d, key %q, %v", when, u, seq, idem, err)
					}
					if seq, err := s.Contribution("e", user(u)); err != nil || seq != uint64(u) {
						t.Fatalf("%s: Contribution of user %d: %d %v", when, u, seq, err)
					}
					if err := s.Append("e", next, []*Record{{User: user(u), Idem: "again"}}); err == nil {
						t.Fatalf("%s: a second record of user %d was accepted", when, u)
					}
				}
				if seq, _, err := s.Contributed("e", user(upTo+1)); err != nil || seq != 0 {
					t.Fatalf("%s: a user who never reported: %d %v", when, seq, err)
				}
			}
			appendUsers(1, 10)
			check("right after the append", 10)
			if indexed(t, s, "e", user(3)) {
				t.Error("the append wrote the user's index entry (it should wait in the log)")
			}
			s.Close()
			s = open()
			check("after reopening", 10)
			fail = true
			if err := s.Append("e", next, []*Record{{User: user(11), Idem: "k11"}}); err == nil {
				t.Fatal("the injected failure did not fail the append")
			}
			fail = false
			check("after a failed append", 10)
			for u := 11; u <= RecentMax+50; u += 100 {
				appendUsers(u, min(u+99, RecentMax+50))
			}
			if !indexed(t, s, "e", user(1)) {
				t.Error("the index was not brought up to date with more than RecentMax users waiting")
			}
			check("after the index was brought up to date", RecentMax+50)
			appendUsers(RecentMax+51, RecentMax+60)
			n := RecentMax + 60
			if _, err := s.SaveSnapshot("e", &Snapshot{Seq: uint64(n), State: []byte("state")}, retain, nil); err != nil {
				t.Fatal(err)
			}
			if !indexed(t, s, "e", user(n)) {
				t.Error("the snapshot did not bring the index up to date")
			}
			check("after a snapshot", n)
			s.Close()
			s = open()
			check("after a snapshot and reopening", n)
			appendUsers(n+1, n+5)
			s.Close()
			s = open()
			check("after appends since the snapshot and reopening", n+5)
			s.Close()
		})
	}
}
