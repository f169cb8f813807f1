// Package enginetest holds the checks the families' tests share about how a family plans the
// shared run schema (engine.RunSpec) and runs a plan through the engine.
package enginetest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dprl/dprl/experiment/engine"
)

// PlanSpecYAML parses a RunSpec document of family and plans it with f.
func PlanSpecYAML(t *testing.T, f engine.SpecPlanner, family, doc string) (engine.Plan, error) {
	t.Helper()
	s, err := engine.ParseRunSpec([]byte(doc), family)
	if err != nil {
		return nil, err
	}
	return f.PlanSpec(s, "test")
}

// Spec returns s of family, validated, with the defaults of a test: K = episodes when s has
// none, and seeds 1 and 2 when s has none.
func Spec(t *testing.T, family string, s engine.RunSpec, episodes int) *engine.RunSpec {
	t.Helper()
	s.Family = family
	if s.Episodes == 0 {
		s.Episodes = episodes
	}
	if s.Seeds == nil {
		s.Seeds = []uint64{1, 2}
	}
	if err := s.Validate(); err != nil {
		t.Fatalf("spec %+v: %v", s, err)
	}
	return &s
}

// CheckPlan checks one case of a table of RunSpecs: with want empty, planning succeeded with
// units units; otherwise it failed with an error whose text matches want (match is
// strings.Contains or strings.HasPrefix, to name the field).
func CheckPlan(t *testing.T, p engine.Plan, err error, units int, want string, match func(s, want string) bool) {
	t.Helper()
	if want != "" {
		t.Log(err)
		if err == nil || !match(err.Error(), want) {
			t.Fatalf("error %v, want one matching %q", err, want)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	if n := len(p.Units()); n != units {
		t.Fatalf("%d units, want %d", n, units)
	}
}

// RunLocal plans p for family, checks it has units units, runs it on this machine (two
// workers) into a new directory and checks the directory holds the curves (csvGlob, relative
// to it) and the manifest. It returns the directory.
func RunLocal(t *testing.T, family string, p engine.Plan, units int, csvGlob string) string {
	t.Helper()
	pl, err := engine.NewPlanned(family, p)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(pl.Units()); n != units {
		t.Fatalf("%d units, want %d", n, units)
	}
	dir := t.TempDir()
	if _, err := engine.Execute(context.Background(), pl, engine.Local{Workers: 2}, engine.RunOptions{Dir: dir}); err != nil {
		t.Fatal(err)
	}
	csvs, err := filepath.Glob(filepath.Join(dir, csvGlob))
	if err != nil {
		t.Fatal(err)
	}
	if len(csvs) == 0 {
		t.Fatalf("no %s in %s", csvGlob, dir)
	}
	if _, err := os.Stat(filepath.Join(dir, "manifest.json")); err != nil {
		t.Fatal(err)
	}
	return dir
}

// RunWorkers runs one configuration with each worker count (run(workers)) and returns the
// results in order (to compare them: results must not depend on the number of workers); an
// error fails the test.
func RunWorkers[R any](t *testing.T, run func(workers int) (R, error), workers ...int) []R {
	t.Helper()
	out := make([]R, len(workers))
	for i, w := range workers {
		r, err := run(w)
		if err != nil {
			t.Fatalf("%d workers: %v", w, err)
		}
		out[i] = r
	}
	return out
}

// SpecCase is one case of a table of RunSpec documents: with Want empty the document plans
// Units units; otherwise planning fails with an error containing Want (naming the field). A
// test declares its own type with this underlying type, to write its table unkeyed.
type SpecCase = struct {
	Name, Doc string
	Units     int
	Want      string
}

// CheckSpecCases plans every case's document of family with f (PlanSpecYAML) as a subtest
// and checks it (CheckPlan, errors matched with strings.Contains).
func CheckSpecCases[C ~SpecCase](t *testing.T, f engine.SpecPlanner, family string, cases []C) {
	t.Helper()
	for _, tc := range cases {
		c := SpecCase(tc)
		t.Run(c.Name, func(t *testing.T) {
			p, err := PlanSpecYAML(t, f, family, c.Doc)
			CheckPlan(t, p, err, c.Units, c.Want, strings.Contains)
		})
	}
}

// CheckFileDigest checks that the units f plans for a RunSpec reading an environment file
// name IDs that change with the file's bytes (so a resumed run never reuses the units of
// another file at the same path): src is copied into a temporary directory, doc (a RunSpec
// document with one %s for the copy's path) is planned, a comment is appended to the copy and
// doc is planned again; every unit ID must differ.
func CheckFileDigest(t *testing.T, f engine.SpecPlanner, family, doc, src string) {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), filepath.Base(src))
	ids := func(data []byte) []string {
		t.Helper()
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		p, err := PlanSpecYAML(t, f, family, fmt.Sprintf(doc, path))
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, u := range p.Units() {
			out = append(out, u.ID())
		}
		return out
	}
	before, after := ids(data), ids(append(append([]byte(nil), data...), "\n# another file at the same path\n"...))
	if len(before) == 0 || len(after) != len(before) {
		t.Fatalf("%d units, then %d", len(before), len(after))
	}
	for i := range before {
		if before[i] == after[i] {
			t.Errorf("unit %d keeps its ID %s when the environment file changes", i, before[i])
		}
	}
}
