package testfiles

import (
	"os"
	"path/filepath"
	"testing"
)

// TestWrite: files at any depth get their contents and permission.
func TestWrite(t *testing.T) {
	dir := t.TempDir()
	Write(t, dir, map[string]string{"a.txt": "a", "b/c/d.txt": "d"}, 0o640)
	for name, want := range map[string]string{"a.txt": "a", "b/c/d.txt": "d"} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		got, err := os.ReadFile(p)
		if err != nil || string(got) != want {
			t.Errorf("%s: %q, %v; want %q", name, got, err, want)
		}
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o640 {
			t.Errorf("%s: mode %v, %v; want 0640", name, fi.Mode(), err)
		}
	}
}
