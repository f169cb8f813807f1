package lq

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Parse decodes a system description (the fields of Config) from YAML or JSON (JSON is valid
// YAML; a leading '{' selects the strict JSON decoder) and validates it with NewSystem.
// Unknown fields are rejected.
func Parse(data []byte) (*System, error) {
	var cfg Config
	trim := bytes.TrimSpace(data)
	if len(trim) > 0 && trim[0] == '{' {
		dec := json.NewDecoder(bytes.NewReader(trim))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&cfg); err != nil {
			return nil, fmt.Errorf("lq: parsing JSON system: %w", err)
		}
	} else {
		dec := yaml.NewDecoder(bytes.NewReader(data))
		dec.KnownFields(true)
		if err := dec.Decode(&cfg); err != nil {
			return nil, fmt.Errorf("lq: parsing YAML system: %w", err)
		}
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
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("lq: %w", err)
	}
	s, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}
