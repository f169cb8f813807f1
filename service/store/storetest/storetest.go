// Package storetest is the conformance suite of the service's stores (store.Backend): one set
// of tests, run on every implementation (the bbolt store in package store's tests, the
// PostgreSQL store in package pgstore's), so that each gives the same guarantees: atomic
// appends that refuse a stale sequence number and a second report of a user, a participation
// index that keeps each user's sequence number and idempotency key after her raw record was
// deleted, snapshots written with the deletion of the records they cover in one transaction,
// keys that survive reopening, a rotation that changes only the credential key, durable
// revocations, and crash hooks inside the append transaction.
package storetest

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/dprl/dprl/service/store"
)

// Open returns a fresh, empty store for a test and a function that reopens the same storage
// (after the caller closed the previous handle): a restart.
type Open func(t *testing.T) (s store.Backend, reopen func() store.Backend)

// Run runs the suite on the implementation open makes.
func Run(t *testing.T, open Open) {
	for _, c := range []struct {
		name string
		f    func(*testing.T, Open)
	}{
		{"AppendReplay", appendReplay},
		{"Snapshots", snapshots},
		{"Keys", keys},
		{"Revocations", revocations},
		{"CommitHooks", commitHooks},
	} {
		t.Run(c.name, func(t *testing.T) { c.f(t, open) })
	}
}

func user(i int) [32]byte { return [32]byte{byte(i), byte(i >> 8), 7} }

func rec(i int) *store.Record {
	return &store.Record{User: user(i), Idem: fmt.Sprint("k", i), Regret: float64(i) / 4, Report: []byte{byte(i), 1, 2}}
}

func recs(lo, hi int) []*store.Record {
	var out []*store.Record
	for i := lo; i <= hi; i++ {
		out = append(out, rec(i))
	}
	return out
}

// log returns the users (i of rec(i)) of the records after `after`, checking each record.
func log(t *testing.T, s store.Backend, id string, after uint64) []int {
	t.Helper()
	var got []int
	err := s.ReplayAfter(id, after, func(seq uint64, r *store.Record) error {
		w := rec(int(seq))
		if r.User != w.User || r.Idem != w.Idem || r.Regret != w.Regret || string(r.Report) != string(w.Report) {
			return fmt.Errorf("record %d is %+v, want %+v", seq, r, w)
		}
		got = append(got, int(seq))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func appendReplay(t *testing.T, open Open) {
	s, reopen := open(t)
	key := s.UserKey()
	must(t, s.Create(&store.Experiment{ID: "e", Spec: []byte(`{}`), Key: []byte("k")}))
	must(t, s.Create(&store.Experiment{ID: "d", Spec: []byte(`{"a":1}`)}))
	if err := s.Create(&store.Experiment{ID: "e", Spec: []byte(`{}`)}); err == nil {
		t.Error("a second experiment e was created")
	}
	must(t, s.Append("e", 1, recs(1, 2)))
	if err := s.Append("e", 2, recs(3, 3)); err == nil {
		t.Error("a stale sequence number was accepted")
	}
	if err := s.Append("e", 4, recs(4, 4)); err == nil {
		t.Error("a sequence number beyond the log was accepted")
	}
	if err := s.Append("e", 3, []*store.Record{rec(3), {User: user(1), Idem: "x", Report: []byte{1}}}); err == nil {
		t.Error("a second record of user 1 was accepted")
	}
	if err := s.Append("e", 3, []*store.Record{rec(3), {User: user(3), Idem: "y", Report: []byte{1}}}); err == nil {
		t.Error("two records of user 3 in one append were accepted")
	}
	if err := s.Append("nope", 1, recs(1, 1)); err == nil {
		t.Error("an append to an unknown experiment was accepted")
	}
	must(t, s.Append("e", 3, recs(3, 3)))
	// Participation is known at once (before any reopening).
	for i, want := range []uint64{0, 1, 2, 3, 0} {
		if seq, _, err := s.Contributed("e", user(i)); err != nil || seq != want {
			t.Errorf("before reopening: user %d has record %d (%v), want %d", i, seq, err, want)
		}
	}
	must(t, s.Close())
	s = reopen()
	defer s.Close()
	if s.UserKey() != key {
		t.Error("the participation key changed across reopenings")
	}
	es, err := s.Experiments()
	must(t, err)
	if len(es) != 2 || es[0].ID != "d" || es[1].ID != "e" || string(es[1].Key) != "k" || string(es[0].Spec) != `{"a":1}` {
		t.Errorf("experiments %+v", es)
	}
	if got := log(t, s, "e", 0); !slices.Equal(got, []int{1, 2, 3}) {
		t.Errorf("log %v, want [1 2 3] (the failed appends wrote nothing)", got)
	}
	for i, want := range []uint64{0, 1, 2, 3, 0} {
		seq, idem, err := s.Contributed("e", user(i))
		must(t, err)
		if seq != want || (want != 0 && idem != fmt.Sprint("k", i)) {
			t.Errorf("user %d: record %d key %q, want %d", i, seq, idem, want)
		}
	}
	if _, _, err := s.Contributed("nope", user(1)); err == nil {
		t.Error("Contributed of an unknown experiment: no error")
	}
	if n, stored, err := s.LogLength("e"); err != nil || n != 3 || stored != 3 {
		t.Errorf("LogLength: %d %d %v", n, stored, err)
	}
}

func snapshots(t *testing.T, open Open) {
	for _, retain := range []bool{false, true} {
		t.Run(fmt.Sprint("retain=", retain), func(t *testing.T) {
			s, reopen := open(t)
			must(t, s.Create(&store.Experiment{ID: "e", Spec: []byte(`{}`)}))
			must(t, s.Append("e", 1, recs(1, 6)))
			if sn, err := s.LatestSnapshot("e"); err != nil || sn != nil {
				t.Fatalf("a new experiment's snapshot: %v %v", sn, err)
			}
			// A failing snapshot transaction changes nothing.
			boom := errors.New("boom")
			if _, err := s.SaveSnapshot("e", &store.Snapshot{Seq: 4, State: []byte("s4")}, retain, func() error { return boom }); !errors.Is(err, boom) {
				t.Fatalf("the hook's error: %v", err)
			}
			if sn, _ := s.LatestSnapshot("e"); sn != nil {
				t.Error("a failed snapshot was stored")
			}
			// Reopened: a deletion in the background (PostgreSQL) is finished by Close.
			must(t, s.Close())
			s = reopen()
			if got := log(t, s, "e", 0); len(got) != 6 {
				t.Errorf("a failed snapshot deleted records: %v", got)
			}
			if _, err := s.SaveSnapshot("e", &store.Snapshot{Seq: 7, State: []byte("x")}, retain, nil); err == nil {
				t.Error("a snapshot beyond the log was stored")
			}
			n, err := s.SaveSnapshot("e", &store.Snapshot{Seq: 4, State: []byte("s4")}, retain, nil)
			must(t, err)
			if want := map[bool]int{false: 4, true: 0}[retain]; n != want {
				t.Errorf("%d records deleted, want %d", n, want)
			}
			if _, err := s.SaveSnapshot("e", &store.Snapshot{Seq: 3, State: []byte("x")}, retain, nil); err == nil {
				t.Error("a snapshot behind the stored one was stored")
			}
			must(t, s.Append("e", 7, recs(7, 7)))
			must(t, s.Close())
			s = reopen()
			defer s.Close()
			sn, err := s.LatestSnapshot("e")
			must(t, err)
			if sn == nil || sn.Seq != 4 || string(sn.State) != "s4" {
				t.Fatalf("snapshot %+v", sn)
			}
			if got := log(t, s, "e", 4); !slices.Equal(got, []int{5, 6, 7}) {
				t.Errorf("replay after the snapshot: %v", got)
			}
			// Every user's sequence number and key survive the deletion of her record.
			for i := 1; i <= 7; i++ {
				seq, idem, err := s.Contributed("e", user(i))
				must(t, err)
				if seq != uint64(i) || idem != fmt.Sprint("k", i) {
					t.Errorf("user %d: record %d key %q", i, seq, idem)
				}
			}
			if err := s.Append("e", 8, []*store.Record{{User: user(2), Idem: "again", Report: []byte{0}}}); err == nil {
				t.Error("a user whose record was deleted contributed again")
			}
			appended, stored, err := s.LogLength("e")
			must(t, err)
			if want := map[bool]int{false: 3, true: 7}[retain]; appended != 7 || stored != want {
				t.Errorf("LogLength %d %d, want 7 %d", appended, stored, want)
			}
			if retain {
				if got := log(t, s, "e", 0); len(got) != 7 {
					t.Errorf("retained log: %v", got)
				}
			} else if err := s.ReplayAfter("e", 0, func(uint64, *store.Record) error { return nil }); err == nil {
				t.Error("a replay from the start of a trimmed log succeeded")
			}
			if err := s.ReplayAfter("e", 8, func(uint64, *store.Record) error { return nil }); err == nil {
				t.Error("a replay after a snapshot beyond the log succeeded")
			}
		})
	}
}

func keys(t *testing.T, open Open) {
	s, reopen := open(t)
	uk, ck := s.UserKey(), s.CredentialKey()
	if uk == ([32]byte{}) || ck.Key == ([32]byte{}) || ck.Version != 1 || uk == ck.Key {
		t.Fatalf("keys of a new store: user %x, credential %+v", uk, ck)
	}
	must(t, s.Close())
	s = reopen()
	if s.UserKey() != uk || s.CredentialKey() != ck {
		t.Fatal("the keys changed across reopenings")
	}
	nk, err := s.RotateCredentialKey()
	must(t, err)
	if nk.Version != 2 || nk.Key == ck.Key || s.CredentialKey() != nk || s.UserKey() != uk {
		t.Fatalf("rotation: %+v (was %+v)", nk, ck)
	}
	must(t, s.Close())
	s = reopen()
	defer s.Close()
	if s.CredentialKey() != nk || s.UserKey() != uk {
		t.Fatal("the rotated key did not survive reopening")
	}
}

func revocations(t *testing.T, open Open) {
	s, reopen := open(t)
	must(t, s.Create(&store.Experiment{ID: "e", Spec: []byte(`{}`)}))
	must(t, s.Create(&store.Experiment{ID: "f", Spec: []byte(`{}`)}))
	if has, err := s.HasRevocations("e"); err != nil || has {
		t.Errorf("HasRevocations before any revocation: %v (%v)", has, err)
	}
	n, err := s.Revoke("e", [][32]byte{user(1), user(2), user(1)})
	must(t, err)
	if n != 2 {
		t.Errorf("%d new revocations, want 2", n)
	}
	if n, err := s.Revoke("e", [][32]byte{user(2), user(3)}); err != nil || n != 1 {
		t.Errorf("revoking again: %d %v", n, err)
	}
	if _, err := s.Revoke("nope", [][32]byte{user(1)}); err == nil {
		t.Error("a revocation for an unknown experiment was stored")
	}
	if got, err := s.Revoked("e", user(3)); err != nil || !got {
		t.Errorf("before reopening: user 3 revoked %v (%v)", got, err)
	}
	must(t, s.Close())
	s = reopen()
	defer s.Close()
	for exp, want := range map[string]bool{"e": true, "f": false} {
		if has, err := s.HasRevocations(exp); err != nil || has != want {
			t.Errorf("HasRevocations(%s) after reopening = %v (%v), want %v", exp, has, err, want)
		}
	}
	for _, c := range []struct {
		exp  string
		u    int
		want bool
	}{{"e", 1, true}, {"e", 2, true}, {"e", 3, true}, {"e", 4, false}, {"f", 1, false}} {
		got, err := s.Revoked(c.exp, user(c.u))
		must(t, err)
		if got != c.want {
			t.Errorf("Revoked(%s, %d) = %v", c.exp, c.u, got)
		}
	}
}

func commitHooks(t *testing.T, open Open) {
	s, reopen := open(t)
	must(t, s.Create(&store.Experiment{ID: "e", Spec: []byte(`{}`)}))
	boom := errors.New("boom")
	var before, after int
	fail := true
	s.SetCommitHooks(&store.CommitHooks{
		Before: func() error {
			before++
			if fail {
				return boom
			}
			return nil
		},
		After: func() { after++ },
	})
	if err := s.Append("e", 1, recs(1, 2)); !errors.Is(err, boom) {
		t.Fatalf("the Before hook's error: %v", err)
	}
	if before != 1 || after != 0 {
		t.Errorf("hooks called %d, %d times", before, after)
	}
	fail = false
	must(t, s.Append("e", 1, recs(1, 2)))
	if before != 2 || after != 1 {
		t.Errorf("hooks called %d, %d times", before, after)
	}
	must(t, s.Close())
	s = reopen()
	defer s.Close()
	if got := log(t, s, "e", 0); !slices.Equal(got, []int{1, 2}) {
		t.Errorf("log %v: the aborted append wrote something", got)
	}
}
