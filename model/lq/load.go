package lq

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/dprl/dprl/internal/boundedread"
	"github.com/dprl/dprl/internal/strictdecode"
)

// Parse decodes a system description (the fields of Config) from YAML or JSON (JSON is valid
// YAML; a leading '{' selects the strict JSON decoder) and validates it with NewSystem.
// Unknown fields are rejected.
func Parse(data []byte) (*System, error) {
	var cfg Config
	format, what := "yaml", "YAML"
	if trim := bytes.TrimSpace(data); len(trim) > 0 && trim[0] == '{' {
		format, what = "json", "JSON"
	}
	if err := strictdecode.Decode(data, format, &cfg); err != nil {
		return nil, fmt.Errorf("lq: parsing %s system: %w", what, err)
	}
	return NewSystem(cfg)
}

// Load reads a system from a .yaml, .yml or .json file (format: Config; example in
// model/lq/testdata/lqe1.yaml).
func Load(path string) (*System, error) {
	ext := strings.ToLower(filepath.Ext(path))
	if ext != ".yaml" && ext != ".yml" && ext != ".json" {
		return nil, fmt.Errorf("lq: system file %q: extension must be .yaml, .yml or .json", path)
	}
	data, err := boundedread.ReadFile(path, boundedread.DefaultLimit)
	if err != nil {
		return nil, fmt.Errorf("lq: %w", err)
	}
	s, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}
