package engine

import (
	"bytes"
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"
)

// jsonToYAML returns the JSON document data as block-style YAML with its keys in the same
// order and every scalar's text unchanged (a number keeps its shortest round-trip form; a
// string is quoted only where YAML would otherwise read it as another type). config.resolved.yaml
// is written this way: it reads as YAML, and a YAML reader recovers exactly the JSON values.
func jsonToYAML(data []byte) ([]byte, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	blockStyle(&doc)
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// blockStyle clears the flow and quoting styles the JSON parse gave every node, so that the
// encoder writes block collections, and writes a string plain only when every YAML reader
// (YAML 1.1 ones such as PyYAML included, which read yes, on, n or 1_000 as other types)
// reads it back as that string (plainSafe); any other string is double-quoted.
func blockStyle(n *yaml.Node) {
	n.Style = 0
	if n.Kind == yaml.ScalarNode && n.Tag == "!!str" && !plainSafe(n.Value) {
		n.Style = yaml.DoubleQuotedStyle
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!float" {
		// YAML 1.1 reads 1e-07 as a string: its floats need a point in the mantissa.
		if i := strings.IndexAny(n.Value, "eE"); i >= 0 && !strings.Contains(n.Value[:i], ".") {
			n.Value = n.Value[:i] + ".0" + n.Value[i:]
		}
	}
	for _, c := range n.Content {
		blockStyle(c)
	}
}

// plainSafe reports whether s reads as the string s in plain style under YAML 1.1 and 1.2:
// it starts with an ASCII letter, holds only letters, digits and " _./=+()-", does not end in
// a space and is not one of the words those versions read as a boolean or null.
func plainSafe(s string) bool {
	if s == "" || !isLetter(s[0]) || s[len(s)-1] == ' ' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !isLetter(c) && !(c >= '0' && c <= '9') && !strings.ContainsRune(" _./=+()-", rune(c)) {
			return false
		}
	}
	switch strings.ToLower(s) {
	case "y", "n", "yes", "no", "on", "off", "true", "false", "null":
		return false
	}
	return true
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// resolvedYAML is config.resolved.yaml's bytes for the JSON document doc.
func resolvedYAML(doc []byte) ([]byte, error) {
	y, err := jsonToYAML(doc)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ResolvedConfigFile, err)
	}
	return y, nil
}
