package engine

import (
	"bytes"
	"fmt"

	"go.yaml.in/yaml/v3"

	"github.com/dprl/dprl/internal/membudget"
)

// SuiteKey is the top-level key of a family's configuration block that selects one of the
// family's configuration schemas when it has several: a family is a model class (tabular,
// linear MDP, linear mixture, LQ), and its papers' reproduction and dprl's practical suite may
// need different per-curve settings. A block without the key is the family's default schema.
const SuiteKey = "suite"

// SplitSuite splits a family's configuration block into its `suite:` value ("" when absent)
// and the rest of the block, which the suite decodes strictly.
func SplitSuite(block []byte) (suite string, rest []byte, err error) {
	return splitKey(block, SuiteKey, "", "")
}

// WithSuite returns block preceded by `suite: <suite>` (block unchanged when suite is "").
func WithSuite(suite string, block []byte) []byte {
	if suite == "" {
		return block
	}
	return append([]byte(SuiteKey+": "+suite+"\n"), block...)
}

// splitKey removes the top-level scalar key from a YAML mapping document and returns its value
// (def when absent; when def is "" and missing is not, an error "<key>: <missing>") and the re-encoded rest (data itself
// when the key is absent, so comments and layout survive).
func splitKey(data []byte, key, def, missing string) (value string, rest []byte, err error) {
	if err := membudget.CheckConfigYAML(data); err != nil {
		return "", nil, fmt.Errorf("config: %w", err) // before the node tree is built
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return "", nil, fmt.Errorf("config: %w", err)
	}
	if len(doc.Content) == 0 {
		return "", nil, fmt.Errorf("config: empty document")
	}
	m := doc.Content[0]
	if m.Kind != yaml.MappingNode {
		return "", nil, fmt.Errorf("config: the document must be a mapping (%s: …, then the fields)", key)
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value != key {
			continue
		}
		if m.Content[i+1].Kind != yaml.ScalarNode || m.Content[i+1].Value == "" {
			return "", nil, fmt.Errorf("config: %s: must be a name", key)
		}
		value = m.Content[i+1].Value
		m.Content = append(m.Content[:i:i], m.Content[i+2:]...)
		var buf bytes.Buffer
		enc := yaml.NewEncoder(&buf)
		enc.SetIndent(2)
		if err := enc.Encode(m); err != nil {
			return "", nil, fmt.Errorf("config: %w", err)
		}
		return value, buf.Bytes(), nil
	}
	if def == "" && missing != "" {
		return "", nil, fmt.Errorf("config: %s: %s", key, missing)
	}
	return def, data, nil
}
