// Package cfgfile reads and decodes the experiment configurations of every family the same
// way: files are read with a size bound (strictdecode.ReadFile), documents are decoded strictly
// (strictdecode.Decode: unknown fields, duplicate keys and a second document are errors), and
// a field whose zero value means "use the default" is told apart from one set explicitly to
// zero, so an explicit zero is rejected with the allowed range instead of being silently
// replaced (issue 10, "never silently replace an explicit value").
package cfgfile

import (
	"fmt"
	"reflect"
	"strconv"

	"go.yaml.in/yaml/v3"

	"github.com/dprl/dprl/experiment/rundir"
	"github.com/dprl/dprl/internal/membudget"
	"github.com/dprl/dprl/internal/strictdecode"
)

// Read reads a configuration file of at most strictdecode.MaxFileSize bytes.
func Read(path string) ([]byte, error) { return strictdecode.ReadFile(path) }

// Load reads the configuration file path (Read; a read error is prefixed with what) and
// parses it with parse, then records the file, with the SHA-256 of the bytes parsed, as an
// input of the run (role "config") with record.
func Load[C any](path, what string, parse func([]byte) (C, error), record func(C, rundir.Input)) (C, error) {
	var zero C
	data, err := Read(path)
	if err != nil {
		return zero, fmt.Errorf("%s: %w", what, err)
	}
	c, err := parse(data)
	if err != nil {
		return zero, err
	}
	record(c, rundir.HashBytes("config", path, data))
	return c, nil
}

// Decode decodes one YAML (or JSON, which is YAML) document strictly into v and returns the
// key paths present in the document (see Keys).
func Decode(data []byte, v any) (Keys, error) {
	if err := membudget.CheckConfigYAML(data); err != nil {
		return nil, err // before the node tree is built (a list of millions of seeds)
	}
	if err := strictdecode.Decode(data, "yaml", v); err != nil {
		return nil, err
	}
	return keys(data)
}

// Keys is the set of key paths present in a document: "beta", "bonus.multiplier",
// "curves[0].bonus.multiplier", … (mapping keys joined by dots, sequence indices in brackets).
type Keys map[string]bool

func keys(data []byte) (Keys, error) {
	var n yaml.Node
	if err := yaml.Unmarshal(data, &n); err != nil {
		return nil, err
	}
	k := Keys{}
	walk(&n, "", k)
	return k, nil
}

func walk(n *yaml.Node, path string, k Keys) {
	switch n.Kind {
	case yaml.DocumentNode:
		for _, c := range n.Content {
			walk(c, path, k)
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			p := n.Content[i].Value
			if path != "" {
				p = path + "." + p
			}
			k[p] = true
			walk(n.Content[i+1], p, k)
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			walk(c, path+"["+strconv.Itoa(i)+"]", k)
		}
	case yaml.AliasNode:
		if n.Alias != nil {
			walk(n.Alias, path, k)
		}
	}
}

// Default is a field whose zero value means "the default": Path is its key path, Value the
// decoded value (a number, string or bool), Allowed the allowed range for the error message.
type Default struct {
	Path    string
	Value   any
	Allowed string
}

// RejectExplicitZeros returns an error naming the first field of fields that is present in
// the document with its zero value (which the configuration would otherwise read as absent
// and replace by the default), with the allowed range.
func (k Keys) RejectExplicitZeros(fields ...Default) error {
	for _, f := range fields {
		if !k[f.Path] {
			continue
		}
		if v := reflect.ValueOf(f.Value); v.IsValid() && v.IsZero() {
			return fmt.Errorf("%s: must be %s, got %v (omit the field to use the default)", f.Path, f.Allowed, zeroText(f.Value))
		}
	}
	return nil
}

func zeroText(v any) string {
	if s, ok := v.(string); ok {
		return strconv.Quote(s)
	}
	return fmt.Sprint(v)
}
