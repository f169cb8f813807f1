// Package runschema generates the published schema of dprl's one run directory layout
// (docs/run-directory.schema.json, engine.RunSchema) from the Go types that write it
// (Generate, Schema; go generate ./docs writes the file) and validates run directories against
// it: the manifest against the JSON Schema, and the files it names against the layout (every
// curve's CSV under curves/<env>/, summary.md, meta.json, config.resolved.yaml,
// regret_long.csv, every listed figure and file present).
package runschema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/dprl/dprl/docs"
)

// SchemaURL is the $id of the published schema.
const SchemaURL = "https://github.com/dprl/dprl/docs/run-directory.schema.json"

// maxManifest bounds the manifest read (a run with 10⁴ curves stays far below).
const maxManifest = 64 << 20

// Compile compiles the published schema.
func Compile() (*jsonschema.Schema, error) {
	return CompileBytes(docs.RunDirectorySchema)
}

// CompileBytes compiles a run-directory schema given as JSON (the published one, or one
// Generate returned).
func CompileBytes(schema []byte) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		return nil, fmt.Errorf("run-directory schema: %w", err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(SchemaURL, doc); err != nil {
		return nil, fmt.Errorf("run-directory schema: %w", err)
	}
	return c.Compile(SchemaURL)
}

// ValidateManifest validates manifest bytes against the schema.
func ValidateManifest(s *jsonschema.Schema, data []byte) error {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return fmt.Errorf("manifest.json: %w", err)
	}
	if err := s.Validate(v); err != nil {
		return fmt.Errorf("manifest.json: %w", err)
	}
	return nil
}

// Files every run directory holds besides the curves and figures.
var Files = []string{"manifest.json", "summary.md", "meta.json", "config.resolved.yaml", "regret_long.csv"}

// ValidateDir validates the run directory dir: its manifest against the schema, and the layout
// (Files, every curve's CSV, every figure as .png/.svg, every listed file).
func ValidateDir(s *jsonschema.Schema, dir string) error {
	for _, f := range Files {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			return fmt.Errorf("%s: %w", dir, err)
		}
	}
	st, err := os.Stat(filepath.Join(dir, "manifest.json"))
	if err != nil {
		return err
	}
	if st.Size() > maxManifest {
		return fmt.Errorf("%s: manifest.json: %d bytes, above %d", dir, st.Size(), maxManifest)
	}
	data, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		return err
	}
	if err := ValidateManifest(s, data); err != nil {
		return fmt.Errorf("%s: %w", dir, err)
	}
	var m struct {
		Curves []struct {
			CSV string `json:"csv"`
			Env string `json:"env"`
		} `json:"curves"`
		Figures []string `json:"figures"`
		Files   []string `json:"files"`
	}
	if err := json.Unmarshal(data, &m); err != nil {
		return fmt.Errorf("%s: manifest.json: %w", dir, err)
	}
	for i, c := range m.Curves {
		if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(c.CSV))); err != nil {
			return fmt.Errorf("%s: curves[%d].csv: %w", dir, i, err)
		}
	}
	for _, f := range m.Figures {
		if !strings.HasSuffix(f, ".png") && !strings.HasSuffix(f, ".svg") {
			return fmt.Errorf("%s: figures: %q is neither .png nor .svg", dir, f)
		}
	}
	for _, f := range append(m.Figures, m.Files...) {
		if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(f))); err != nil {
			return fmt.Errorf("%s: files: %w", dir, err)
		}
	}
	return nil
}
