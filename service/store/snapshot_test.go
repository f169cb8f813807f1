package store

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// fillLog creates experiment "e" in a store on dir with n records (user i's digest starts with
// byte i, idempotency key "k<i>", report of size bytes).
func fillLog(t *testing.T, dir string, n, size int) *Store {
	t.Helper()
	s := mustOpen(t, dir)
	fillExperiment(t, s, "e", n, func(i int) *Record {
		return &Record{User: user(i), Idem: fmt.Sprint("k", i), Report: make([]byte, size)}
	})
	return s
}

func user(i int) [32]byte { return [32]byte{byte(i), byte(i >> 8), byte(i >> 16), 1} }

// replayed returns the sequence numbers ReplayAfter(after) visits.
func replayed(t *testing.T, s *Store, after uint64) ([]uint64, error) {
	var got []uint64
	err := s.ReplayAfter("e", after, func(seq uint64, r *Record) error {
		if r.Idem != fmt.Sprint("k", seq) {
			t.Errorf("record %d holds key %q", seq, r.Idem)
		}
		got = append(got, seq)
		return nil
	})
	return got, err
}

// TestSnapshotTrims: a snapshot at report 5 of a 10-record log deletes exactly records 1..5
// (retained with retain), the replay after it gives 6..10, every user's sequence number and
// idempotency key survive the deletion, a failed snapshot transaction changes nothing, and a
// snapshot beyond the log or behind the stored one is refused.
func TestSnapshotTrims(t *testing.T) {
	for _, c := range []struct{ retain, old bool }{{false, false}, {true, false}, {false, true}} {
		retain := c.retain
		t.Run(fmt.Sprintf("retain=%v,old=%v", c.retain, c.old), func(t *testing.T) {
			dir := t.TempDir()
			s := fillLog(t, dir, 10, 3)
			if c.old { // a database written before snapshots: participation entries hold seq only
				err := s.db.Update(func(tx *bolt.Tx) error {
					ub := tx.Bucket(usersBucket("e"))
					for i := 1; i <= 10; i++ {
						u := user(i)
						if err := ub.Put(u[:], seqKey(uint64(i))); err != nil {
							return err
						}
					}
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
			}
			if _, err := s.SaveSnapshot("e", &Snapshot{Seq: 11, State: []byte("x")}, retain, nil); err == nil {
				t.Error("a snapshot beyond the log was accepted")
			}
			if _, err := s.SaveSnapshot("e", &Snapshot{Seq: 5, State: []byte("x")}, retain, func() error { return errors.New("crash") }); err == nil {
				t.Fatal("the hook's error was not returned")
			}
			if snap, _ := s.LatestSnapshot("e"); snap != nil {
				t.Fatalf("a failed snapshot left %+v", snap)
			}
			if _, stored, _ := s.LogLength("e"); stored != 10 {
				t.Fatalf("a failed snapshot deleted records: %d stored", stored)
			}
			n, err := s.SaveSnapshot("e", &Snapshot{Seq: 5, State: []byte("state5")}, retain, nil)
			if err != nil {
				t.Fatal(err)
			}
			s.Close()
			if s, err = Open(dir, time.Second); err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			wantDeleted, wantStored := 5, 5
			if retain {
				wantDeleted, wantStored = 0, 10
			}
			appended, stored, err := s.LogLength("e")
			if err != nil || n != wantDeleted || appended != 10 || stored != wantStored {
				t.Fatalf("deleted %d, log %d appended %d stored (%v); want %d deleted, 10, %d", n, appended, stored, err, wantDeleted, wantStored)
			}
			snap, err := s.LatestSnapshot("e")
			if err != nil || snap == nil || snap.Seq != 5 || string(snap.State) != "state5" {
				t.Fatalf("snapshot %+v, %v", snap, err)
			}
			got, err := replayed(t, s, 5)
			if err != nil || fmt.Sprint(got) != "[6 7 8 9 10]" {
				t.Fatalf("replay after 5: %v, %v", got, err)
			}
			for i := 1; i <= 10; i++ {
				seq, idem, err := s.Contributed("e", user(i))
				if err != nil || seq != uint64(i) || idem != fmt.Sprint("k", i) {
					t.Errorf("user %d: seq %d key %q, %v", i, seq, idem, err)
				}
			}
			if seq, _, err := s.Contributed("e", user(11)); seq != 0 || err != nil {
				t.Errorf("user 11: seq %d, %v", seq, err)
			}
			if _, err := s.SaveSnapshot("e", &Snapshot{Seq: 4, State: []byte("x")}, retain, nil); err == nil {
				t.Error("a snapshot behind the stored one was accepted")
			}
			// The log goes on after the deletion.
			if err := s.Append("e", 11, []*Record{{User: user(11), Idem: "k11"}}); err != nil {
				t.Fatal(err)
			}
			if got, err := replayed(t, s, 5); err != nil || len(got) != 6 {
				t.Fatalf("replay after 5: %v, %v", got, err)
			}
			if !retain {
				if _, err := replayed(t, s, 3); err == nil {
					t.Error("a replay from before the deleted records did not fail")
				}
			}
		})
	}
}

// TestCompact: after a snapshot deleted most of a large log, Compact shrinks the file to a
// fraction, keeps every bucket (the experiment, the user key, the snapshot, the participation
// index, the remaining records), replaces a leftover temporary of a crashed compaction, and
// leaves no other file.
func TestCompact(t *testing.T) {
	dir := t.TempDir()
	s := fillLog(t, dir, 3000, 2000)
	defer func() { s.Close() }()
	if err := s.indexAll("e"); err != nil { // else the snapshot keeps the records not yet indexed
		t.Fatal(err)
	}
	key := s.UserKey()
	if _, err := s.SaveSnapshot("e", &Snapshot{Seq: 2990, State: []byte("state")}, false, nil); err != nil {
		t.Fatal(err)
	}
	size, free, err := s.Sparse()
	if err != nil || 2*free <= size {
		t.Fatalf("size %d, free %d (%v): want more than half free", size, free, err)
	}
	if err := os.WriteFile(filepath.Join(dir, compactName), []byte("leftover"), 0o600); err != nil {
		t.Fatal(err)
	}
	before, after, err := s.Compact()
	if err != nil {
		t.Fatal(err)
	}
	if before != size || after*4 > before {
		t.Fatalf("compaction %d → %d bytes (file was %d)", before, after, size)
	}
	if s.UserKey() != key {
		t.Error("the user key changed")
	}
	got, err := replayed(t, s, 2990)
	if err != nil || len(got) != 10 {
		t.Fatalf("replay after compaction: %v, %v", got, err)
	}
	if seq, idem, err := s.Contributed("e", user(7)); seq != 7 || idem != "k7" || err != nil {
		t.Errorf("user 7 after compaction: %d %q %v", seq, idem, err)
	}
	if snap, err := s.LatestSnapshot("e"); err != nil || snap == nil || snap.Seq != 2990 {
		t.Errorf("snapshot after compaction: %+v %v", snap, err)
	}
	if err := s.Append("e", 3001, []*Record{{User: user(3001), Idem: "k3001"}}); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if strings.Join(names, ",") != FileName {
		t.Errorf("data directory holds %v, want only %s", names, FileName)
	}
	// The lock is held on the compacted file.
	if _, err := Open(dir, 50*time.Millisecond); !errors.Is(err, ErrLocked) {
		t.Errorf("a second Open after compaction: %v, want ErrLocked", err)
	}
}
