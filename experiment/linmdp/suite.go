package linmdp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/dprl/dprl/internal/atomicfile"
)

// Suite is a named list of experiment blocks run one after the other.
type Suite struct {
	Name   string    `yaml:"name" json:"name"`
	Blocks []*Config `yaml:"blocks" json:"blocks"`
}

// DefaultSuite returns the embedded suite of `dprl reproduce linear-mdp`.
func DefaultSuite() (*Suite, error) { return ParseSuite(defaultConfig) }

// ParseSuite parses a suite (name + blocks) or, if the document has no blocks field, a single
// Config as a one-block suite. Unknown fields are rejected.
func ParseSuite(data []byte) (*Suite, error) {
	var probe map[string]any
	if err := yaml.Unmarshal(data, &probe); err != nil {
		return nil, fmt.Errorf("linear-mdp config: %w", err)
	}
	if _, ok := probe["blocks"]; !ok {
		c, err := ParseConfig(data)
		if err != nil {
			return nil, err
		}
		return &Suite{Name: c.Name, Blocks: []*Config{c}}, nil
	}
	var s Suite
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("linear-mdp config: %w", err)
	}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return &s, nil
}

// Validate checks the suite and every block.
func (s *Suite) Validate() error {
	if s.Name == "" {
		return fmt.Errorf("name: must be non-empty")
	}
	if len(s.Blocks) == 0 {
		return fmt.Errorf("blocks: need at least one block")
	}
	seen := map[string]bool{}
	for i, b := range s.Blocks {
		if b == nil || b.Name == "" || seen[b.Name] || strings.ContainsAny(b.Name, `/\`) {
			return fmt.Errorf("blocks[%d].name: must be non-empty, unique and without slashes", i)
		}
		seen[b.Name] = true
		if err := b.Validate(); err != nil {
			return fmt.Errorf("blocks[%s].%w", b.Name, err)
		}
	}
	return nil
}

// SuiteManifest is written last as <out>/manifest.json.
type SuiteManifest struct {
	Name    string   `json:"name"`
	Go      string   `json:"go_version"`
	Command []string `json:"command,omitempty"`
	Blocks  []string `json:"blocks"`
	Seconds float64  `json:"wall_seconds"`
	Workers int      `json:"workers"`
	Figures []string `json:"figures"`
}

// RunSuite runs every block and writes <out>/<block>/ (each with its own manifest), then
// <out>/summary.md and <out>/manifest.json (last).
func RunSuite(ctx context.Context, s *Suite, opts Options, out string, command []string) (*SuiteManifest, string, error) {
	if err := s.Validate(); err != nil {
		return nil, "", err
	}
	var results []*Result
	for _, b := range s.Blocks {
		r, err := Run(ctx, b, opts)
		if err != nil {
			return nil, "", fmt.Errorf("block %s: %w", b.Name, err)
		}
		results = append(results, r)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, "", err
	}
	man := &SuiteManifest{Name: s.Name, Go: runtime.Version(), Command: command, Workers: opts.Workers}
	var sum strings.Builder
	for i, r := range results {
		bm, text, err := r.Write(filepath.Join(out, s.Blocks[i].Name), command)
		if err != nil {
			return nil, "", err
		}
		man.Blocks = append(man.Blocks, s.Blocks[i].Name)
		man.Seconds += r.Seconds
		for _, f := range bm.Figures {
			man.Figures = append(man.Figures, filepath.Join(s.Blocks[i].Name, f))
		}
		fmt.Fprintf(&sum, "<!-- block %s: %s/%s -->\n", s.Blocks[i].Name, out, s.Blocks[i].Name)
		sum.WriteString(strings.Replace(text, "# ", fmt.Sprintf("# [%s] ", s.Blocks[i].Name), 1))
		sum.WriteString(fmt.Sprintf("\n(block wall time %.1f s)\n\n", r.Seconds))
	}
	if err := atomicfile.WriteBytes(filepath.Join(out, "summary.md"), []byte(sum.String()), 0o644); err != nil {
		return nil, "", err
	}
	data, err := json.MarshalIndent(man, "", "  ")
	if err != nil {
		return nil, "", err
	}
	if err := atomicfile.WriteBytes(filepath.Join(out, "manifest.json"), append(data, '\n'), 0o644); err != nil {
		return nil, "", err
	}
	return man, sum.String(), nil
}
