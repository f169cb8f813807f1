//go:build unix

// Package boundedreadtest is the shared test of every loader of user-supplied files: a FIFO
// without a writer, a directory and a (sparse) file over the loader's limit are refused at
// once, naming the file, and a valid file loads.
package boundedreadtest

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// CheckLoader runs load on a FIFO, a directory, a 1 TiB sparse file (each must be refused: the
// FIFO "named pipe", the directory "directory", the large file naming limit, e.g. "64 MiB") and
// on valid (which must load). load must return within 30 s each time: a reader stuck on the
// FIFO is unblocked by opening its write end, so that a regression fails instead of hanging.
func CheckLoader(t *testing.T, load func(path string) error, limit, valid string) {
	t.Helper()
	dir := t.TempDir()
	fifo := FIFO(t, filepath.Join(dir, "model.yaml"))
	if err := within(t, load, fifo); err == nil || !strings.Contains(err.Error(), "named pipe") || !strings.Contains(err.Error(), fifo) {
		t.Errorf("FIFO: err = %v, want a refusal naming the file as a named pipe", err)
	}
	sub := filepath.Join(dir, "sub.yaml")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := within(t, load, sub); err == nil || !strings.Contains(err.Error(), "directory") {
		t.Errorf("directory: err = %v, want a refusal naming a directory", err)
	}
	big := Sparse(t, filepath.Join(dir, "big.yaml"))
	if err := within(t, load, big); err == nil || !strings.Contains(err.Error(), limit) {
		t.Errorf("1 TiB file: err = %v, want a refusal naming the %s limit", err, limit)
	}
	if err := within(t, load, valid); err != nil {
		t.Errorf("%s: %v", valid, err)
	}
}

// FIFO makes a named pipe at path (no writer: a reader that opens it blocks) and returns path.
func FIFO(t *testing.T, path string) string {
	t.Helper()
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// Sparse makes the file at path (created if need be) a 1 TiB sparse file, which uses no disk,
// and returns path; it skips the test where the file system has no sparse files.
func Sparse(t *testing.T, path string) string {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, 1<<40); err != nil {
		t.Skipf("no sparse files here: %v", err)
	}
	return path
}

func within(t *testing.T, load func(string) error, path string) error {
	t.Helper()
	var err error
	Within(t, "load("+path+")", 30*time.Second, path, func() { err = load(path) })
	return err
}

// Within runs f and fails the test (naming what) if it has not returned within d. On a timeout
// it first releases fifo (Release), so that a reader stuck opening it returns and the
// regression fails instead of hanging the test binary.
func Within(t testing.TB, what string, d time.Duration, fifo string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(d):
		Release(fifo)
		t.Fatalf("%s blocked for %v", what, d)
	}
}

// Release opens the write end of the FIFO at path without blocking and closes it at once, so
// that a reader blocked opening it for reading returns. It does nothing for path "" or when
// nothing can be opened there.
func Release(path string) {
	if path == "" {
		return
	}
	if w, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
		w.Close()
	}
}
