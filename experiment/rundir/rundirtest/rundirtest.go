// Package rundirtest holds the checks the families' tests share about a run directory: its
// manifest's provenance, the inputs it records and the files it lists, written before it.
package rundirtest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// ReadJSON decodes a JSON file generically (so that a test names the JSON keys).
func ReadJSON(t *testing.T, path string) map[string]any {
	t.Helper()
	var m map[string]any
	DecodeJSON(t, path, &m)
	return m
}

// DecodeJSON decodes a JSON file into v (a test's own struct naming the keys it checks); a
// file that cannot be read or decoded fails the test.
func DecodeJSON(t *testing.T, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatal(err)
	}
}

// CheckProvenance checks the provenance of a manifest written under go test: the git commit
// "unknown" (no stamped build), the dprl and Go versions.
func CheckProvenance(t *testing.T, man map[string]any) {
	t.Helper()
	if man["git_commit"] != "unknown" || man["dprl_version"] == nil || man["go_version"] == nil {
		t.Errorf("provenance: commit %v, dprl %v, go %v", man["git_commit"], man["dprl_version"], man["go_version"])
	}
}

// HashedRoles returns the roles of a manifest's inputs whose every input of that role records
// a SHA-256 (64 hex digits).
func HashedRoles(man map[string]any) map[string]bool {
	roles := map[string]bool{}
	inputs, _ := man["inputs"].([]any)
	for _, x := range inputs {
		e, _ := x.(map[string]any)
		role, _ := e["role"].(string)
		sha, _ := e["sha256"].(string)
		ok, seen := roles[role]
		roles[role] = (ok || !seen) && len(sha) == 64
	}
	return roles
}

// CheckFiles checks the files the manifest of dir lists: each exists and was written no later
// than the manifest, and there is at least one. It returns them as a set.
func CheckFiles(t *testing.T, dir string, man map[string]any) map[string]bool {
	t.Helper()
	mst, err := os.Stat(filepath.Join(dir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	files, _ := man["files"].([]any)
	if len(files) == 0 {
		t.Errorf("%s: the manifest lists no files", dir)
	}
	has := map[string]bool{}
	for _, f := range files {
		name, _ := f.(string)
		has[name] = true
		st, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Errorf("%s: listed file %v missing", dir, f)
		} else if st.ModTime().After(mst.ModTime()) {
			t.Errorf("%s: %s written after the manifest", dir, name)
		}
	}
	return has
}

// ReadManifest decodes dir/manifest.json (ReadJSON).
func ReadManifest(t *testing.T, dir string) map[string]any {
	t.Helper()
	return ReadJSON(t, filepath.Join(dir, "manifest.json"))
}

// DecodeManifest decodes dir/manifest.json into v (DecodeJSON).
func DecodeManifest(t *testing.T, dir string, v any) {
	t.Helper()
	DecodeJSON(t, filepath.Join(dir, "manifest.json"), v)
}

// Entry returns object i of the list obj[key] (a manifest's curves or cells, a curve's runs).
func Entry(t *testing.T, obj map[string]any, key string, i int) map[string]any {
	t.Helper()
	list, _ := obj[key].([]any)
	if i >= len(list) {
		t.Fatalf("%s: %d entries, want entry %d", key, len(list), i)
	}
	e, ok := list[i].(map[string]any)
	if !ok {
		t.Fatalf("%s[%d] = %v, want an object", key, i, list[i])
	}
	return e
}

// CheckUndefined checks that each key of entry is null and that entry["undefined"] gives the
// reason (rundir.Undefined: a statistic that cannot be computed is not written as a number).
func CheckUndefined(t *testing.T, what string, entry map[string]any, keys ...string) {
	t.Helper()
	u, _ := entry["undefined"].(map[string]any)
	for _, k := range keys {
		if entry[k] != nil || u[k] == nil {
			t.Errorf("%s: %s = %v, undefined %v: want null with a reason", what, k, entry[k], u)
		}
	}
}

// WriteEach writes, for each seed count of seeds, a result into a new directory with write
// (which returns the summary) and calls check with the seed count, the manifest and the
// summary.
func WriteEach(t *testing.T, seeds []int, write func(seeds int, dir string) (string, error), check func(seeds int, man map[string]any, summary string)) {
	t.Helper()
	for _, n := range seeds {
		dir := t.TempDir()
		summary, err := write(n, dir)
		if err != nil {
			t.Fatalf("%d seeds: %v", n, err)
		}
		check(n, ReadManifest(t, dir), summary)
	}
}

// WriteFile writes data to dir/name (a configuration or model file of a test) and returns its
// path.
func WriteFile(t *testing.T, dir, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
