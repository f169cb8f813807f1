package store

import (
	"math"
	"strings"
	"testing"
	"time"
)

func TestRecordRoundTrip(t *testing.T) {
	for _, r := range []*Record{
		{Idem: "k", Regret: 0.25, Report: []byte("DPRL\x01abc")},
		{Idem: strings.Repeat("x", 128), Regret: math.NaN(), Report: nil},
		{User: [32]byte{1, 2, 3}, Idem: "é", Regret: math.Inf(1), Report: []byte{0}},
	} {
		got, err := decodeRecord(encodeRecord(r))
		if err != nil {
			t.Fatal(err)
		}
		if got.User != r.User || got.Idem != r.Idem || math.Float64bits(got.Regret) != math.Float64bits(r.Regret) || string(got.Report) != string(r.Report) {
			t.Errorf("%+v round-tripped to %+v", r, got)
		}
	}
	for _, bad := range [][]byte{nil, make([]byte, 32), append(make([]byte, 32), 0xff, 0xff)} {
		if _, err := decodeRecord(bad); err == nil {
			t.Errorf("decodeRecord(%x) accepted", bad)
		}
	}
}

// mustOpen opens the store in dir (a second's wait for its lock).
func mustOpen(t *testing.T, dir string) *Store {
	t.Helper()
	s, err := Open(dir, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// mustCreate creates the experiment id (an empty spec) in s.
func mustCreate(t *testing.T, s *Store, id string) {
	t.Helper()
	if err := s.Create(&Experiment{ID: id, Spec: []byte(`{}`)}); err != nil {
		t.Fatal(err)
	}
}

// fillExperiment creates the experiment id in s and appends its records 1..n (rec(i)) in
// batches of 100.
func fillExperiment(t *testing.T, s *Store, id string, n int, rec func(i int) *Record) {
	t.Helper()
	mustCreate(t, s, id)
	for lo := 1; lo <= n; lo += 100 {
		var recs []*Record
		for i := lo; i < lo+100 && i <= n; i++ {
			recs = append(recs, rec(i))
		}
		if err := s.Append(id, uint64(lo), recs); err != nil {
			t.Fatal(err)
		}
	}
}

// TestAppendReplay: the log keeps its order across reopenings, refuses a stale sequence number
// and a second record of the same user, and a failed Append writes nothing.
func TestAppendReplay(t *testing.T) {
	dir := t.TempDir()
	s := mustOpen(t, dir)
	key := s.UserKey()
	mustCreate(t, s, "e")
	if err := s.Create(&Experiment{ID: "e", Spec: []byte(`{}`)}); err == nil {
		t.Error("a second experiment e was created")
	}
	rec := func(u byte) *Record { return &Record{User: [32]byte{u}, Idem: "k", Report: []byte{u}} }
	if err := s.Append("e", 1, []*Record{rec(1), rec(2)}); err != nil {
		t.Fatal(err)
	}
	if err := s.Append("e", 2, []*Record{rec(3)}); err == nil {
		t.Error("a stale sequence number was accepted")
	}
	if err := s.Append("e", 3, []*Record{rec(3), rec(1)}); err == nil {
		t.Error("a second record of user 1 was accepted")
	}
	s.Close()
	s = mustOpen(t, dir)
	defer s.Close()
	if s.UserKey() != key {
		t.Error("the user key changed across reopenings")
	}
	var got []byte
	if err := s.Replay("e", func(seq uint64, r *Record) error { got = append(got, r.Report...); return nil }); err != nil {
		t.Fatal(err)
	}
	if string(got) != "\x01\x02" {
		t.Errorf("log %x, want 0102 (the failed appends wrote nothing)", got)
	}
	if seq, _ := s.Contribution("e", [32]byte{2}); seq != 2 {
		t.Errorf("user 2's record: %d", seq)
	}
	if seq, _ := s.Contribution("e", [32]byte{3}); seq != 0 {
		t.Errorf("user 3 has record %d", seq)
	}
}
