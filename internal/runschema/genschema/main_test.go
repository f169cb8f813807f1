package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dprl/dprl/docs"
	"github.com/dprl/dprl/internal/runschema"
)

// TestGenerateWritesTheCommittedSchema: `go generate ./docs` (docs/schema.go's directive, which
// runs this command) writes the committed schema, and the directive is the command the
// up-to-date check names.
func TestGenerateWritesTheCommittedSchema(t *testing.T) {
	dir := t.TempDir()
	out, page := filepath.Join(dir, "run-directory.schema.json"), filepath.Join(dir, "run-directory.md")
	committedPage, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "run-directory.md"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(page, committedPage, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := run([]string{out, page}); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(page); err != nil || !bytes.Equal(got, committedPage) {
		t.Errorf("genschema rewrote docs/run-directory.md's key tables (%v); run `%s`", err, runschema.RegenerateCommand)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, docs.RunDirectorySchema) {
		t.Errorf("genschema wrote a schema other than the committed one; run `%s`", runschema.RegenerateCommand)
	}
	src, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "schema.go"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(src), "\n//go:generate go run github.com/dprl/dprl/internal/runschema/genschema run-directory.schema.json run-directory.md\n") {
		t.Error("docs/schema.go has no go:generate directive running genschema")
	}
	if runschema.RegenerateCommand != "go generate ./docs" {
		t.Errorf("RegenerateCommand = %q", runschema.RegenerateCommand)
	}
	if err := run(nil); err == nil || !strings.Contains(err.Error(), "usage") {
		t.Errorf("no argument: %v", err)
	}
}
