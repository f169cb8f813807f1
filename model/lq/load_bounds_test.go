//go:build unix

package lq

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// loadWithin runs Load(path) and fails the test if it has not returned within 5 s (unblocking a
// reader stuck on a FIFO by opening its write end, so that a regression fails instead of
// hanging the test binary).
func loadWithin(t *testing.T, path string) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { _, err := Load(path); done <- err }()
	select {
	case err := <-done:
		return err
	case <-time.After(5 * time.Second):
		if w, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
		t.Fatalf("Load(%s) blocked for 5 s", path)
		return nil
	}
}

// TestLoadRefusesNonRegularAndLarge: a FIFO without a writer is refused at once (it used to
// block the open forever), as is a directory, and a (sparse) file over the 64 MiB limit is
// refused from its size, without reading it.
func TestLoadRefusesNonRegularAndLarge(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "model.yaml")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := loadWithin(t, fifo); err == nil || !strings.Contains(err.Error(), "named pipe") || !strings.Contains(err.Error(), fifo) {
		t.Errorf("FIFO: err = %v, want a refusal naming the file as a named pipe", err)
	}
	sub := filepath.Join(dir, "sub.yaml")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := loadWithin(t, sub); err == nil || !strings.Contains(err.Error(), "directory") {
		t.Errorf("directory: err = %v, want a refusal naming a directory", err)
	}
	big := filepath.Join(dir, "big.yaml")
	if err := os.WriteFile(big, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, 4<<30); err != nil {
		t.Skipf("no sparse files here: %v", err)
	}
	start := time.Now()
	if err := loadWithin(t, big); err == nil || !strings.Contains(err.Error(), "64 MiB") {
		t.Errorf("4 GiB file: err = %v, want a refusal naming the 64 MiB limit", err)
	}
	if el := time.Since(start); el > time.Second {
		t.Errorf("4 GiB file: refused after %v; it must be refused from its size, unread", el)
	}
	if err := loadWithin(t, "testdata/lqe1.yaml"); err != nil {
		t.Errorf("testdata/lqe1.yaml: %v", err)
	}
}
