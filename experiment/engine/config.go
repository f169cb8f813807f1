package engine

import (
	"bytes"
	"fmt"
	"os"

	"go.yaml.in/yaml/v3"

	"github.com/dprl/dprl/experiment/rundir"
)

// SplitFamily splits a configuration document into its `family:` value and the rest of the
// document (the family's own block, which the family decodes strictly). A document without
// `family:` belongs to def (the tabular family, for configurations written before the engine);
// def == "" makes `family:` required.
func SplitFamily(data []byte, def string) (family string, block []byte, err error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return "", nil, fmt.Errorf("config: %w", err)
	}
	if len(doc.Content) == 0 {
		return "", nil, fmt.Errorf("config: empty document")
	}
	m := doc.Content[0]
	if m.Kind != yaml.MappingNode {
		return "", nil, fmt.Errorf("config: the document must be a mapping (family: …, then the family's fields)")
	}
	family = def
	found := false
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == "family" {
			if m.Content[i+1].Kind != yaml.ScalarNode {
				return "", nil, fmt.Errorf("config: family: must be a name")
			}
			family = m.Content[i+1].Value
			m.Content = append(m.Content[:i:i], m.Content[i+2:]...)
			found = true
			break
		}
	}
	if family == "" {
		return "", nil, fmt.Errorf("config: family: required (the agent family, see dprl list)")
	}
	if !found {
		return family, data, nil
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(m); err != nil {
		return "", nil, fmt.Errorf("config: %w", err)
	}
	return family, buf.Bytes(), nil
}

// Source is where a configuration came from.
type Source struct {
	// Name is the file path, or "embedded:<reproduction>".
	Name string
	// Inputs are the files read (a configuration file with its SHA-256).
	Inputs []rundir.Input
}

// Load reads a sweep configuration: a file path, or the name of an embedded reproduction
// when no file of that name exists. def is the family of documents without `family:`.
func (r *Registry) Load(arg, def string) (*Planned, Source, error) {
	data, err := os.ReadFile(arg)
	if err != nil {
		if e, ok := r.Reproductions()[arg]; ok {
			p, err := r.PlanBlock(e.Family, e.Block, "embedded:"+arg)
			return p, Source{Name: "embedded:" + arg}, err
		}
		return nil, Source{}, fmt.Errorf("config: %w (not a file, nor an embedded reproduction)", err)
	}
	fam, block, err := SplitFamily(data, def)
	if err != nil {
		return nil, Source{}, err
	}
	p, err := r.PlanBlock(fam, block, arg)
	src := Source{Name: arg, Inputs: []rundir.Input{rundir.HashBytes("config", arg, data)}}
	return p, src, err
}
