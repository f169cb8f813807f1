package linmdp

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/dprl/dprl/experiment/engine"
	"github.com/dprl/dprl/experiment/internal/cfgfile"
	"github.com/dprl/dprl/experiment/rundir"
	"github.com/dprl/dprl/internal/atomicfile"
	"github.com/dprl/dprl/internal/strictdecode"
)

// Suite is a named list of experiment blocks run one after the other.
type Suite struct {
	Name   string    `yaml:"name" json:"name"`
	Blocks []*Config `yaml:"blocks" json:"blocks"`
	// Goals selects the goal checks appended to the summary: "" (none) or "practical"
	// (issue 13's goals, PracticalGoals; set in configs/practical-linear-mdp.yaml).
	Goals string `yaml:"goals,omitempty" json:"goals,omitempty"`
	// Inputs are the files the suite was read from (LoadSuite).
	Inputs []rundir.Input `yaml:"-" json:"-"`
}

// DefaultSuite returns the embedded suite of `dprl reproduce linear-mdp`.
func DefaultSuite() (*Suite, error) { return ParseSuite(defaultConfig) }

// LoadSuite reads a suite (or a single Config) from a file of at most 64 MiB and records the
// file, with the SHA-256 of the bytes parsed, as an input of every block.
func LoadSuite(path string) (*Suite, error) {
	return cfgfile.Load(path, "config", ParseSuite, func(s *Suite, in rundir.Input) {
		s.Inputs = []rundir.Input{in}
		for _, b := range s.Blocks {
			b.Inputs = []rundir.Input{in}
		}
	})
}

// ParseSuite parses a suite (name + blocks) or, if the document has no blocks field, a single
// Config as a one-block suite. Decoding is strict (unknown fields, duplicate keys and a second
// document are errors) and explicit zeros are rejected as in ParseConfig.
func ParseSuite(data []byte) (*Suite, error) {
	var probe yaml.Node
	if err := strictdecode.Decode(data, "yaml", &probe); err != nil {
		return nil, fmt.Errorf("linear-mdp config: %w", err)
	}
	if !hasKey(&probe, "blocks") {
		c, err := ParseConfig(data)
		if err != nil {
			return nil, err
		}
		return &Suite{Name: c.Name, Blocks: []*Config{c}}, nil
	}
	var s Suite
	keys, err := cfgfile.Decode(data, &s)
	if err != nil {
		return nil, fmt.Errorf("linear-mdp config: %w", err)
	}
	for i, b := range s.Blocks {
		if b == nil {
			continue
		}
		if err := b.rejectExplicitZeros(keys, fmt.Sprintf("blocks[%d].", i)); err != nil {
			return nil, err
		}
	}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return &s, nil
}

// hasKey reports whether the document n is a mapping with the given top-level key.
func hasKey(n *yaml.Node, key string) bool {
	if n.Kind == yaml.DocumentNode && len(n.Content) == 1 {
		n = n.Content[0]
	}
	if n.Kind != yaml.MappingNode {
		return false
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return true
		}
	}
	return false
}

// Validate checks the suite and every block.
func (s *Suite) Validate() error {
	if err := rundir.CheckName("name", s.Name); err != nil {
		return err
	}
	if len(s.Blocks) == 0 {
		return fmt.Errorf("blocks: need at least one block")
	}
	if s.Goals != "" && s.Goals != "practical" {
		return fmt.Errorf("goals: must be empty or practical, got %q", s.Goals)
	}
	seen := map[string]bool{}
	for i, b := range s.Blocks {
		if b == nil {
			return fmt.Errorf("blocks[%d]: empty block", i)
		}
		if err := rundir.CheckName(fmt.Sprintf("blocks[%d].name", i), b.Name); err != nil {
			return err
		}
		if seen[b.Name] {
			return fmt.Errorf("blocks[%d].name: must be unique, got %q twice", i, b.Name)
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
	rundir.Provenance
	Name    string   `json:"name"`
	Command []string `json:"command,omitempty"`
	Blocks  []string `json:"blocks"`
	Seconds float64  `json:"wall_seconds"`
	Workers int      `json:"workers"`
	Figures []string `json:"figures"`
	// Files lists every file of the run directory other than this manifest.
	Files []string `json:"files"`
}

// RunSuite runs every block and writes <out>/<block>/ (each with its own manifest), then
// <out>/summary.md and <out>/manifest.json (last).
func RunSuite(ctx context.Context, s *Suite, opts Options, out string, command []string) (*SuiteManifest, string, error) {
	return runSuite(ctx, s, opts, out, command, nil)
}

// runSuite is RunSuite; extra, if non-nil, appends a section computed from every block's
// results to the summary. The units run in memory through the engine (not resumable).
func runSuite(ctx context.Context, s *Suite, opts Options, out string, command []string, extra func([]*Result) string) (*SuiteManifest, string, error) {
	if err := s.Validate(); err != nil {
		return nil, "", err
	}
	if opts.Workers < 1 {
		return nil, "", fmt.Errorf("workers: must be >= 1, got %d", opts.Workers)
	}
	if err := opts.Output.Validate(); err != nil {
		return nil, "", err
	}
	// The output directory is checked before any compute.
	if err := rundir.Prepare(out, opts.Output.Force); err != nil {
		return nil, "", err
	}
	p, err := newSuitePlan(s, extra)
	if err != nil {
		return nil, "", err
	}
	col, err := p.runInMemory(ctx, opts)
	if err != nil {
		return nil, "", err
	}
	col.Options = opts.Output
	return p.write(col, out, command, opts.Output.Inputs)
}

// write writes every block's directory <out>/<block>/ (each with its own manifest), then
// <out>/summary.md and <out>/manifest.json (last). Every block records the run's wall time.
func (p *suitePlan) write(c *engine.Collection, out string, command []string, extraInputs []rundir.Input) (*SuiteManifest, string, error) {
	results, err := p.results(c, extraInputs)
	if err != nil {
		return nil, "", err
	}
	s := p.suite
	inputs := append([]rundir.Input(nil), s.Inputs...)
	var sum strings.Builder
	var blocks []string
	var figures, files []string
	for i, r := range results {
		r.Output = c.Options
		bm, text, err := r.Write(filepath.Join(out, s.Blocks[i].Name), command)
		if err != nil {
			return nil, "", err
		}
		blocks = append(blocks, s.Blocks[i].Name)
		inputs = append(inputs, bm.Inputs...)
		for _, f := range bm.Figures {
			figures = append(figures, filepath.Join(s.Blocks[i].Name, f))
		}
		for _, f := range append(bm.Files, "manifest.json") {
			files = append(files, filepath.Join(s.Blocks[i].Name, f))
		}
		fmt.Fprintf(&sum, "<!-- block %s: %s/%s -->\n", s.Blocks[i].Name, out, s.Blocks[i].Name)
		sum.WriteString(strings.Replace(text, "# ", fmt.Sprintf("# [%s] ", s.Blocks[i].Name), 1))
		// The blocks' units run interleaved: only the run's wall time (manifest) is measured.
		sum.WriteString("\n\n")
	}
	if p.extra != nil {
		sum.WriteString(p.extra(results))
	}
	if err := atomicfile.WriteBytes(filepath.Join(out, "summary.md"), []byte(sum.String()), 0o644); err != nil {
		return nil, "", err
	}
	man := &SuiteManifest{Provenance: rundir.NewProvenance(inputs), Name: s.Name, Command: command, Workers: c.Workers,
		Blocks: blocks, Seconds: c.Seconds, Figures: figures, Files: append(files, "summary.md")}
	if err := rundir.WriteManifest(out, c.Options, man); err != nil {
		return nil, "", err
	}
	return man, sum.String(), nil
}
