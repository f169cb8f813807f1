package pgstore

import (
	"crypto/rand"
	"testing"

	"github.com/dprl/dprl/service/store"
)

// TestBloom: the participation filter never forgets a digest it was given (no false
// negative), refuses most others (about 1 % false positives at its sizing), and says when it
// outgrew its sizing.
func TestBloom(t *testing.T) {
	var f filters
	f.set("e", newBloom(0))
	n := filterMinUsers
	var in []*store.Record
	for i := 0; i < n; i++ {
		r := &store.Record{}
		rand.Read(r.User[:])
		in = append(in, r)
	}
	if f.add("e", in) {
		t.Fatal("the filter outgrew its sizing at its sizing")
	}
	for _, r := range in {
		if !f.mayHold("e", r.User) {
			t.Fatal("a digest added to the filter is reported absent")
		}
	}
	fp := 0
	const trials = 100000
	for i := 0; i < trials; i++ {
		var u [32]byte
		rand.Read(u[:])
		if f.mayHold("e", u) {
			fp++
		}
	}
	if rate := float64(fp) / trials; rate > 0.02 {
		t.Errorf("false positive rate %.3f at the filter's sizing, want about 0.01", rate)
	}
	if !f.add("e", []*store.Record{{User: [32]byte{1}}}) {
		t.Error("the filter does not say it outgrew its sizing")
	}
	if !f.mayHold("other", [32]byte{}) {
		t.Error("an experiment without a filter must be looked up in the database")
	}
}

// TestFilterRebuild: a filter that outgrew its sizing asks once for a rebuild; the digests
// added while the rebuild reads the database go into the new filter with what it read; a
// failed rebuild keeps the old filter and is asked for again.
func TestFilterRebuild(t *testing.T) {
	var f filters
	b := newBloom(0)
	b.sized = 2
	f.set("e", b)
	d := func(i byte) *store.Record {
		return &store.Record{User: [32]byte{i, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, i}}
	}
	if f.add("e", []*store.Record{d(1), d(2)}) {
		t.Fatal("a rebuild asked for at the sizing")
	}
	if !f.add("e", []*store.Record{d(3)}) {
		t.Fatal("no rebuild asked for past the sizing")
	}
	if f.add("e", []*store.Record{d(4)}) {
		t.Fatal("a second rebuild asked for while one runs")
	}
	f.finish("e", nil) // failed: the old filter stays
	for i := byte(1); i <= 4; i++ {
		if !f.mayHold("e", d(i).User) {
			t.Fatalf("digest %d lost by a failed rebuild", i)
		}
	}
	if !f.add("e", []*store.Record{d(5)}) {
		t.Fatal("no rebuild asked for again after a failed one")
	}
	f.add("e", []*store.Record{d(6)}) // added while the database is read
	nb := newBloom(0)
	for i := byte(1); i <= 5; i++ { // what the database held when read
		nb.add(d(i).User[:])
	}
	f.finish("e", nb)
	for i := byte(1); i <= 6; i++ {
		if !f.mayHold("e", d(i).User) {
			t.Errorf("digest %d missing from the rebuilt filter", i)
		}
	}
	if f.by["e"] != nb || nb.sized != filterMinUsers {
		t.Error("the rebuilt filter was not installed")
	}
}
