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
