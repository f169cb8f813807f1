package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// TestGuard: an installed guard sees the destination of every kind of write before anything
// is created; its error refuses the write unchanged, leaving no temporary file and the
// destination as it was; SetGuard returns the previous guard and nil removes it.
func TestGuard(t *testing.T) {
	dir := t.TempDir()
	dst := filepath.Join(dir, "f.txt")
	if err := os.WriteFile(dst, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	errNo := errors.New("refused")
	var mu sync.Mutex
	var seen []string
	prev := SetGuard(func(p string) error {
		mu.Lock()
		seen = append(seen, p)
		mu.Unlock()
		if filepath.Base(p) == "f.txt" {
			return errNo
		}
		return nil
	})
	defer func() { SetGuard(prev) }()
	if err := WriteBytes(dst, []byte("new"), 0o644); !errors.Is(err, errNo) {
		t.Errorf("WriteBytes: %v, want the guard's error", err)
	}
	if err := WriteBytesNoSync(dst, []byte("new"), 0o644); !errors.Is(err, errNo) {
		t.Errorf("WriteBytesNoSync: %v, want the guard's error", err)
	}
	if b, _ := os.ReadFile(dst); string(b) != "old" {
		t.Errorf("refused write changed the file: %q", b)
	}
	if names := listDir(t, dir); len(names) != 1 {
		t.Errorf("refused write left files: %v", names)
	}
	other := filepath.Join(dir, "g.txt")
	if err := WriteBytes(other, []byte("g"), 0o644); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 3 || seen[0] != dst || seen[2] != other {
		t.Errorf("guard saw %v", seen)
	}
	if g := SetGuard(nil); g == nil {
		t.Error("SetGuard did not return the installed guard")
	}
	if err := WriteBytes(dst, []byte("new"), 0o644); err != nil {
		t.Errorf("without a guard: %v", err)
	}
}
