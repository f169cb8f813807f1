//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dprl/dprl/internal/boundedread/boundedreadtest"
)

// TestSweepMergeRefusesForeignAndCorruptUnits: `sweep merge` exits 2 naming the file when the
// sweep directory holds unit files written by a sweep of another configuration, or a unit
// file far larger than a unit's result (a 4 GiB sparse file, refused without being read).
func TestSweepMergeRefusesForeignAndCorruptUnits(t *testing.T) {
	dir := t.TempDir()
	small, big := qiaoConfigFile(t, dir, "small.yaml", "30", "1-2"), qiaoConfigFile(t, dir, "big.yaml", "30", "1-3") // big's units include small's
	out := filepath.Join(dir, "out")
	if code, _, stderr := runCLI(t, "sweep", "run", big, "--out", out, "--shard", "0/1", "--quiet"); code != 0 {
		t.Fatalf("sweep run: exit %d: %s", code, stderr)
	}
	code, _, stderr := runCLI(t, "sweep", "merge", small, "--out", out)
	if code != 2 || !strings.Contains(stderr, filepath.Join(out, "units")) || !strings.Contains(stderr, "another plan") {
		t.Errorf("merge of another plan's units: exit %d, stderr %q; want 2 naming a unit file of another plan", code, stderr)
	}

	out = filepath.Join(dir, "out2")
	if code, _, stderr := runCLI(t, "sweep", "run", small, "--out", out, "--shard", "0/1", "--quiet"); code != 0 {
		t.Fatalf("sweep run: exit %d: %s", code, stderr)
	}
	ents, err := os.ReadDir(filepath.Join(out, "units"))
	if err != nil || len(ents) == 0 {
		t.Fatalf("no unit files: %v", err)
	}
	big4 := boundedreadtest.Sparse(t, filepath.Join(out, "units", ents[0].Name()))
	start := time.Now()
	code, _, stderr = runCLI(t, "sweep", "merge", small, "--out", out)
	if code != 2 || !strings.Contains(stderr, big4) || !strings.Contains(stderr, "MiB") {
		t.Errorf("merge over a 4 GiB unit file: exit %d, stderr %q; want 2 naming %s and the limit", code, stderr, big4)
	}
	if el := time.Since(start); el > 30*time.Second {
		t.Errorf("merge took %v: the oversized unit file was read", el)
	}
}
