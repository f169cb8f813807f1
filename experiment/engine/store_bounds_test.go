//go:build unix

package engine

import (
	"bytes"
	"context"
	"crypto/sha256"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dprl/dprl/internal/boundedread/boundedreadtest"
)

// runAll runs every unit of p into dir (one shard).
func runAll(t *testing.T, p *Planned, dir string) {
	t.Helper()
	if _, _, err := RunShard(context.Background(), p, Local{Workers: 2}, dir, Shard{0, 1}); err != nil {
		t.Fatal(err)
	}
}

// TestUnitFileSizeBound: a unit file far larger than its unit's result can be (a 4 GiB sparse
// file) is refused from its size, without being read: Missing counts it missing at once, a
// merge refuses it naming the file and the limit, and a rerun of the shard replaces it.
func TestUnitFileSizeBound(t *testing.T) {
	r := fakeRegistry(nil)
	dir := t.TempDir()
	p := plan(t, r, 2, 2)
	runAll(t, p, dir)
	big := boundedreadtest.Sparse(t, unitPath(dir, p.Units()[1].ID()))
	boundedreadtest.Within(t, "Missing", 30*time.Second, "", func() {
		if miss := Missing(p, dir); len(miss) != 1 || miss[0] != 1 {
			t.Errorf("Missing = %v, want [1] (the oversized unit file)", miss)
		}
	})
	boundedreadtest.Within(t, "Merge", 30*time.Second, "", func() {
		_, err := Merge(p, RunOptions{Dir: dir})
		if err == nil || !strings.Contains(err.Error(), big) || !strings.Contains(err.Error(), "MiB") {
			t.Errorf("merge over a 4 GiB unit file: err = %v, want a refusal naming %s and the limit", err, big)
		}
	})
	var ran int
	boundedreadtest.Within(t, "RunShard", 30*time.Second, "", func() {
		var err error
		if ran, _, err = RunShard(context.Background(), p, Local{}, dir, Shard{0, 1}); err != nil {
			t.Error(err)
		}
	})
	if ran != 1 {
		t.Errorf("the rerun ran %d units, want 1 (the oversized one)", ran)
	}
	if _, err := Merge(p, RunOptions{Dir: dir}); err != nil {
		t.Errorf("merge after the rerun: %v", err)
	}
}

// TestUnitFileNotRegular: a FIFO in the place of a unit file blocks nothing: Missing counts it
// missing at once, a merge refuses it naming the file, and a rerun replaces it.
func TestUnitFileNotRegular(t *testing.T) {
	r := fakeRegistry(nil)
	dir := t.TempDir()
	p := plan(t, r, 2, 2)
	runAll(t, p, dir)
	fifo := unitPath(dir, p.Units()[2].ID())
	if err := os.Remove(fifo); err != nil {
		t.Fatal(err)
	}
	boundedreadtest.FIFO(t, fifo)
	boundedreadtest.Within(t, "Missing", 30*time.Second, fifo, func() {
		if miss := Missing(p, dir); len(miss) != 1 || miss[0] != 2 {
			t.Errorf("Missing = %v, want [2] (the FIFO)", miss)
		}
	})
	boundedreadtest.Within(t, "Merge", 30*time.Second, fifo, func() {
		_, err := Merge(p, RunOptions{Dir: dir})
		if err == nil || !strings.Contains(err.Error(), fifo) || !strings.Contains(err.Error(), "named pipe") {
			t.Errorf("merge over a FIFO unit file: err = %v, want a refusal naming %s as a named pipe", err, fifo)
		}
	})
	boundedreadtest.Within(t, "the rerun", 30*time.Second, fifo, func() { runAll(t, p, dir) })
	if _, err := Merge(p, RunOptions{Dir: dir}); err != nil {
		t.Errorf("merge after the rerun: %v", err)
	}
}

// TestMergeRefusesUnitsOfAnotherPlan: unit files written by the shards of another plan are
// refused by a merge, naming the file, whether the other plan's unit is also one of this
// plan's (same cell and seed) or not; a unit file of this plan in the format without a plan
// record (written before the record existed) is still accepted.
func TestMergeRefusesUnitsOfAnotherPlan(t *testing.T) {
	r := fakeRegistry(nil)
	small, big := plan(t, r, 2, 2), plan(t, r, 3, 2) // big's units include small's

	// Every unit file of small's was written by a sweep of big.
	dir := t.TempDir()
	runAll(t, big, dir)
	if miss := Missing(small, dir); len(miss) != 0 {
		t.Fatalf("Missing = %v; the shared units should verify", miss)
	}
	_, err := Merge(small, RunOptions{Dir: dir})
	if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, UnitsDir)) || !strings.Contains(err.Error(), "another plan") {
		t.Errorf("merge of units written by another plan: err = %v, want a refusal naming a unit file of another plan", err)
	}

	// small's own units, plus one stray unit file of big's.
	dir = t.TempDir()
	runAll(t, small, dir)
	stray := big.Units()[len(big.Units())-1]
	if _, err := os.ReadFile(unitPath(t.TempDir(), stray.ID())); err == nil {
		t.Fatal("unexpected file")
	}
	other := t.TempDir()
	runAll(t, big, other)
	data, err := os.ReadFile(unitPath(other, stray.ID()))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(unitPath(dir, stray.ID()), data, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Merge(small, RunOptions{Dir: dir})
	if err == nil || !strings.Contains(err.Error(), unitPath(dir, stray.ID())) {
		t.Errorf("merge with a stray unit file of another plan: err = %v, want a refusal naming %s", err, unitPath(dir, stray.ID()))
	}
	if err := os.Remove(unitPath(dir, stray.ID())); err != nil {
		t.Fatal(err)
	}

	// A unit file in the format without a plan record is accepted.
	u := small.Units()[0]
	payload, err := readUnit(dir, u)
	if err != nil {
		t.Fatal(err)
	}
	var legacy bytes.Buffer
	legacy.WriteString("dprl-unit 1 " + u.ID() + "\n")
	legacy.Write(payload)
	sum := sha256.Sum256(legacy.Bytes())
	legacy.Write(sum[:])
	if err := os.WriteFile(unitPath(dir, u.ID()), legacy.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Merge(small, RunOptions{Dir: dir}); err != nil {
		t.Errorf("merge with a unit file without a plan record: %v", err)
	}
}
