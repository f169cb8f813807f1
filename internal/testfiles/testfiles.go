// Package testfiles writes trees of files for tests.
package testfiles

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
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

// ArgvFiles returns the argument lists recorded in the files dir/prefix* (in the order of
// their names), each file NUL-separated arguments as a stub's `printf '%s\0' "$@"` writes
// them. An error fails the test.
func ArgvFiles(t testing.TB, dir, prefix string) [][]string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, prefix+"*"))
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(m)
	var out [][]string
	for _, f := range m {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00"))
	}
	return out
}
