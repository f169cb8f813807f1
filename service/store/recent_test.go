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
// reopened (rebuilt from the log), after a failed append, after every key range was written once
// (IndexChunks appends), after an append that finds more than RecentMax users waiting (it writes
// them all), after a snapshot that deletes the indexed records and keeps the others — and a
// second record of hers is refused at every stage.
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
			mustCreate(t, s, "e")
			// Digests spread over the key ranges (chunkOf reads the first bytes).
			user := func(u int) (k [32]byte) { binary.BigEndian.PutUint64(k[:], uint64(u)*0x9e3779b97f4a7c15); return k }
			next := uint64(1)
			appendUsers := func(from, to int) {
				t.Helper()
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
				for _, u := range []int{1, 2, 3, 7, upTo / 2, upTo - 1, upTo} {
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
			waiting := func(from, to int) (n int) {
				for u := from; u <= to; u++ {
					if !indexed(t, s, "e", user(u)) {
						n++
					}
				}
				return n
			}
			appendUsers(1, 10)
			check("right after the append", 10)
			if waiting(1, 10) == 0 {
				t.Error("the append wrote every user's index entry (most should wait in the log)")
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
			for u := 11; u < 11+IndexChunks; u++ {
				appendUsers(u, u)
			}
			if n := waiting(1, 10); n != 0 {
				t.Errorf("%d of the first users still wait after every key range was written", n)
			}
			check("after every range was written", 10+IndexChunks)
			s.Close()
			s = open()
			check("after every range was written and reopening", 10+IndexChunks)
			n := 10 + IndexChunks
			for n+4096 <= RecentMax+5000 {
				appendUsers(n+1, n+4096)
				n += 4096
			}
			if w := waiting(1, n); w != 0 {
				t.Errorf("%d users wait after an append found more than RecentMax waiting", w)
			}
			check("after the index was brought up to date", n)
			appendUsers(n+1, n+500)
			appendUsers(n+501, n+1000)
			n += 1000
			deleted, err := s.SaveSnapshot("e", &Snapshot{Seq: uint64(n), State: []byte("state")}, retain, nil)
			if err != nil {
				t.Fatal(err)
			}
			_, stored, err := s.LogLength("e")
			if err != nil {
				t.Fatal(err)
			}
			if retain && (deleted != 0 || stored != n) || !retain && (deleted == 0 || stored == 0 || deleted+stored != n) {
				t.Errorf("a snapshot with 1000 entries waiting deleted %d records and kept %d (retain %v)", deleted, stored, retain)
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

// TestConcurrentAppendsSeeEachOther: an append that starts while another is inside its
// transaction still sees that one's users once it commits. The second append is started from
// inside the first one's transaction (its commit hook) with the first's user at the next
// sequence number: it must be refused as a second record of that user, never accepted because
// it planned against the set before the first one's commit (appendMu serialises them).
func TestConcurrentAppendsSeeEachOther(t *testing.T) {
	s, err := OpenWith(t.TempDir(), Options{Wait: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	mustCreate(t, s, "e")
	u := [32]byte{7}
	second := make(chan error, 1)
	started := false
	s.SetCommitHooks(&CommitHooks{Before: func() error {
		if !started {
			started = true
			go func() { second <- s.Append("e", 2, []*Record{{User: u, Idem: "b", Report: []byte{2}}}) }()
			time.Sleep(300 * time.Millisecond) // let it plan, if it can, before this commit
		}
		return nil
	}})
	if err := s.Append("e", 1, []*Record{{User: u, Idem: "a", Report: []byte{1}}}); err != nil {
		t.Fatal(err)
	}
	if err := <-second; err == nil {
		t.Fatal("a second record of the same user was accepted by a concurrent append")
	}
	if seq, idem, err := s.Contributed("e", u); err != nil || seq != 1 || idem != "a" {
		t.Fatalf("participation: seq %d, key %q, %v", seq, idem, err)
	}
}
