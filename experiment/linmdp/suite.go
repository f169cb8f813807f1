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
	s := &Suite{}
	return cfgfile.Parse(data, s, "linear-mdp config", func(keys cfgfile.Keys) error {
		for i, b := range s.Blocks {
			if b == nil {
				continue
			}
			if err := b.rejectExplicitZeros(keys, fmt.Sprintf("blocks[%d].", i)); err != nil {
				return err
			}
		}
		return nil
	}, s.Validate)
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

// RunSuite runs every block and writes the run directory out (suitePlan.write).
func RunSuite(ctx context.Context, s *Suite, opts Options, out string, command []string) (*engine.RunManifest, string, error) {
	return runSuite(ctx, s, opts, out, command, nil)
}

// runSuite is RunSuite; extra, if non-nil, appends a section computed from every block's
// results to the summary. The units run in memory through the engine (not resumable).
func runSuite(ctx context.Context, s *Suite, opts Options, out string, command []string, extra func([]*Result) string) (*engine.RunManifest, string, error) {
	if err := s.Validate(); err != nil {
		return nil, "", err
	}
	if opts.Workers < 1 {
		return nil, "", fmt.Errorf("workers: must be >= 1, got %d", opts.Workers)
	}
	// The output directory is checked before any compute.
	if err := opts.Output.Prepare(out); err != nil {
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

// write writes the run directory out in the one layout (engine.RunSchema). A suite of one
// block (every dprl run, a configuration without blocks) is written by the block's Write at
// out itself; a suite of several blocks writes every block's directory <out>/<block>/ (each a
// run directory with its own manifest), then <out>/summary.md and <out>/manifest.json (last,
// engine.WriteSuite: every block's curves, their CSVs below <block>/). Every block records the
// run's wall time.
func (p *suitePlan) write(c *engine.Collection, out string, command []string, extraInputs []rundir.Input) (*engine.RunManifest, string, error) {
	results, err := p.results(c, extraInputs)
	if err != nil {
		return nil, "", err
	}
	s := p.suite
	if len(results) == 1 {
		r := results[0]
		r.Output = c.Options
		if p.extra != nil {
			r.extra = p.extra(results)
		}
		return r.Write(out, command)
	}
	inputs := append([]rundir.Input(nil), s.Inputs...)
	var sum strings.Builder
	var blocks []engine.Block
	for i, r := range results {
		r.Output = c.Options
		r.Output.BeforeManifest = nil // the engine's files describe the whole suite, at out
		bm, text, err := r.Write(filepath.Join(out, s.Blocks[i].Name), command)
		if err != nil {
			return nil, "", err
		}
		blocks = append(blocks, engine.Block{Dir: s.Blocks[i].Name, Manifest: bm})
		inputs = append(inputs, bm.Inputs...)
		fmt.Fprintf(&sum, "<!-- block %s: %s/%s -->\n", s.Blocks[i].Name, out, s.Blocks[i].Name)
		sum.WriteString(strings.Replace(text, "# ", fmt.Sprintf("# [%s] ", s.Blocks[i].Name), 1))
		// The blocks' units run interleaved: only the run's wall time (manifest) is measured.
		sum.WriteString("\n\n")
	}
	if p.extra != nil {
		sum.WriteString(p.extra(results))
	}
	names := make([]string, len(blocks))
	for i, b := range blocks {
		names[i] = b.Dir
	}
	man, err := engine.WriteSuite(out, &engine.RunOutput{Family: "linmdp", Experiment: s.Name, Provenance: rundir.NewProvenance(inputs),
		Command: command, Config: map[string]any{"name": s.Name, "blocks": names, "goals": s.Goals}, Workers: c.Workers,
		WallSeconds: c.Seconds, Summary: sum.String(), Output: c.Options}, blocks)
	if err != nil {
		return nil, "", err
	}
	return man, sum.String(), nil
}
