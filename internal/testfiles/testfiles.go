// Package testfiles writes trees of files for tests.
package testfiles

import (
	"os"
	"path/filepath"
	"testing"
)

// Write writes every file of files (its slash-separated path, relative to dir or absolute when
// dir is "", → its contents) with permission perm, creating the directories it needs (0o755).
// An error fails the test.
func Write(t testing.TB, dir string, files map[string]string, perm os.FileMode) {
	t.Helper()
	for name, contents := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(contents), perm); err != nil {
			t.Fatal(err)
		}
	}
}
