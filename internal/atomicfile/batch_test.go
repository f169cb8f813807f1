package atomicfile

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// TestBatch: a Batch's write fsyncs the temporary file before renaming it (at the fsync the
// destination still holds the old contents, or nothing), the new file is at its path as soon
// as the write returns, no directory is fsynced before Sync, and Sync fsyncs each directory
// renamed into exactly once (and nothing on a second Sync). A failed write leaves nothing to
// sync. Files written concurrently all are synced.
func TestBatch(t *testing.T) {
	root := t.TempDir()
	sub := filepath.Join(root, "curves")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "summary.md"), []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var fileSyncs, dirSyncs []string
	var errs []string
	b := &Batch{
		fsyncFile: func(f *os.File) error {
			// f is the temporary ".NAME.tmp-*"; its destination must not hold the new contents yet.
			name := strings.SplitN(strings.TrimPrefix(filepath.Base(f.Name()), "."), ".tmp-", 2)[0]
			dst := filepath.Join(filepath.Dir(f.Name()), name)
			got, err := os.ReadFile(dst)
			mu.Lock()
			defer mu.Unlock()
			if err == nil && strings.HasPrefix(string(got), "new ") {
				errs = append(errs, "renamed before its fsync: "+dst)
			}
			fileSyncs = append(fileSyncs, dst)
			return f.Sync()
		},
		fsyncDir: func(dir string) {
			mu.Lock()
			defer mu.Unlock()
			dirSyncs = append(dirSyncs, dir)
		},
	}
	write := func(path string) error { return b.WriteBytes(path, []byte("new "+filepath.Base(path)), 0o644) }
	paths := []string{filepath.Join(root, "summary.md"), filepath.Join(root, "regret.png"), filepath.Join(sub, "a.csv")}
	for _, p := range paths {
		if err := write(p); err != nil {
			t.Fatal(err)
		}
		if got, err := os.ReadFile(p); err != nil || string(got) != "new "+filepath.Base(p) {
			t.Errorf("%s after its write: %q, %v", p, got, err)
		}
	}
	// Concurrent writes, one of them into a directory already noted.
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			if err := write(filepath.Join(sub, fmt.Sprintf("c%d.csv", i))); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if err := b.WriteFile(filepath.Join(root, "failed.txt"), func(io.Writer) error { return errors.New("boom") }, 0o644); err == nil {
		t.Error("a failing write returned nil")
	}
	if len(dirSyncs) != 0 {
		t.Errorf("directories fsynced before Sync: %v", dirSyncs)
	}
	if len(fileSyncs) != len(paths)+8 {
		t.Errorf("%d file fsyncs for %d files written", len(fileSyncs), len(paths)+8)
	}
	for _, e := range errs {
		t.Error(e)
	}
	b.Sync()
	slices.Sort(dirSyncs)
	if want := []string{root, sub}; !slices.Equal(dirSyncs, want) {
		t.Errorf("Sync fsynced %v, want %v once each", dirSyncs, want)
	}
	dirSyncs = nil
	b.Sync()
	if len(dirSyncs) != 0 {
		t.Errorf("second Sync fsynced %v, want nothing", dirSyncs)
	}
	if _, err := os.Stat(filepath.Join(root, "failed.txt")); !os.IsNotExist(err) {
		t.Errorf("failed write left a file: %v", err)
	}
}

// TestBatchRealSync: with the real fsyncs a Batch writes, replaces and syncs without error
// and leaves no temporary file; the zero Batch is ready to use.
func TestBatchRealSync(t *testing.T) {
	dir := t.TempDir()
	var b Batch
	for _, s := range []string{"one", "two"} {
		if err := b.WriteBytes(filepath.Join(dir, "f"), []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	b.Sync()
	if got, err := os.ReadFile(filepath.Join(dir, "f")); err != nil || string(got) != "two" {
		t.Errorf("f = %q, %v", got, err)
	}
	if names := listDir(t, dir); len(names) != 1 {
		t.Errorf("directory holds %v, want only f", names)
	}
}
