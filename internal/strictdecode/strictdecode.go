// Package strictdecode decodes the JSON and YAML files dprl reads (models, systems,
// experiment configurations) and the service's request bodies strictly, and the same way in
// both formats: unknown fields, duplicate keys (at any depth) and anything after the first
// document or value are errors, and so is an empty input. JSON keys must match the field names
// exactly (encoding/json alone matches them case-insensitively), and null is refused where the
// target holds no pointer (encoding/json alone leaves the zero value).
package strictdecode

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/dprl/dprl/internal/boundedread"
	"github.com/dprl/dprl/internal/membudget"
)

// Decode decodes data in the given format ("json", "yaml" or "yml") into v, rejecting unknown
// fields, duplicate keys, a second document (YAML "---") or trailing JSON value, and empty
// input; in JSON also a key in another case than its field's and a null where v holds no
// pointer or interface (a *FieldError naming the field).
func Decode(data []byte, format string, v any) error {
	switch format {
	case "json":
		if len(bytes.TrimSpace(data)) == 0 {
			return errors.New("empty JSON input")
		}
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		if err := dec.Decode(v); err != nil {
			return err
		}
		if _, err := dec.Token(); err != io.EOF {
			return errors.New("more than one JSON value (trailing data after the first)")
		}
		// The value decoded, so it is well-formed and at most encoding/json's maximum depth.
		t := reflect.TypeOf(v)
		if t != nil && t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		return checkJSON(data, t)
	case "yaml", "yml":
		// yaml.v3 builds the whole node tree before it decodes: bound it first.
		if err := membudget.CheckYAML(data); err != nil {
			return err
		}
		dec := yaml.NewDecoder(bytes.NewReader(data))
		dec.KnownFields(true)
		if err := dec.Decode(v); err != nil {
			if err == io.EOF {
				return errors.New("empty YAML document")
			}
			return nameFields(err, data)
		}
		// yaml.v3 rejects duplicate mapping keys itself ("mapping key ... already defined").
		var rest yaml.Node
		if err := dec.Decode(&rest); err != io.EOF {
			return errors.New("more than one YAML document (a second document after ---)")
		}
		return nil
	}
	return fmt.Errorf("unknown format %q (allowed: json, yaml, yml)", format)
}

// MaxFileSize bounds the files ReadFile reads (64 MiB): far above any model or configuration
// dprl uses, and small enough that decoding cannot exhaust memory.
const MaxFileSize = boundedread.DefaultLimit

// ReadFile reads a whole file of at most MaxFileSize bytes through boundedread (the one reader
// of user-supplied files): anything but a regular file (a FIFO, which would block the open, a
// device such as /dev/zero, a directory) is refused before it is opened, and so is a larger
// file; at most MaxFileSize+1 bytes are read.
func ReadFile(path string) ([]byte, error) { return boundedread.ReadFile(path, MaxFileSize) }

// yamlLine matches the "line N: " prefix yaml.v3 puts on each decoding error.
var yamlLine = regexp.MustCompile(`^line (\d+): (.*)$`)

// nameFields rewrites the messages of a yaml.v3 decoding error so that each names the field it
// is about ("episodes: cannot unmarshal !!str `ten` into int (line 2)") instead of only its
// line: the field path is the deepest key of the document whose value starts on that line.
func nameFields(err error, data []byte) error {
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		return err
	}
	var doc yaml.Node
	if yaml.Unmarshal(data, &doc) != nil {
		return err
	}
	var msgs []string
	seen := map[string]bool{}
	for _, m := range te.Errors {
		if sm := yamlLine.FindStringSubmatch(m); sm != nil {
			line, _ := strconv.Atoi(sm[1])
			path := ""
			if fm := unknownField.FindStringSubmatch(sm[2]); fm != nil {
				path = keyAtLine(&doc, line, fm[1], "")
			}
			if path == "" {
				path = pathAtLine(&doc, line, "")
			}
			if path != "" {
				if len(path) > 60 {
					path = path[:60] + "…"
				}
				m = fmt.Sprintf("%s: %s (line %d)", path, sm[2], line)
			}
		}
		if !seen[m] {
			seen[m] = true
			msgs = append(msgs, m)
		}
	}
	if len(msgs) > 3 {
		msgs = append(msgs[:3], fmt.Sprintf("and %d more", len(msgs)-3))
	}
	return errors.New(strings.Join(msgs, "; "))
}

// unknownField matches yaml.v3's message for a key the target type does not have.
var unknownField = regexp.MustCompile(`^field (\S+) not found in type`)

// keyAtLine returns the path of the mapping key called key on line, or "".
func keyAtLine(n *yaml.Node, line int, key, prefix string) string {
	for _, e := range children(n, prefix) {
		if e.key != nil && e.key.Value == key && e.key.Line == line {
			return e.path
		}
		if p := keyAtLine(e.value, line, key, e.path); p != "" {
			return p
		}
	}
	return ""
}

// pathAtLine returns the path (a.b[2].c) of the deepest value of n that starts on line, or "".
func pathAtLine(n *yaml.Node, line int, prefix string) string {
	for _, e := range children(n, prefix) {
		if deeper := pathAtLine(e.value, line, e.path); deeper != "" {
			return deeper
		}
		switch {
		case e.key != nil && (e.value.Line == line || e.key.Line == line),
			n.Kind == yaml.SequenceNode && e.value.Line == line && e.value.Kind == yaml.ScalarNode:
			return e.path
		}
	}
	return ""
}

// entry is a node under a document, mapping or sequence, with its path.
type entry struct {
	path       string
	key, value *yaml.Node // key is nil but in a mapping
}

// children returns the nodes directly under n in order: a document's content (path prefix), a
// mapping's values (path prefix.key, or key when prefix is "") and a sequence's elements
// (prefix[i]); none for a scalar or an alias.
func children(n *yaml.Node, prefix string) []entry {
	var out []entry
	switch n.Kind {
	case yaml.DocumentNode:
		for _, c := range n.Content {
			out = append(out, entry{path: prefix, value: c})
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			p := k.Value
			if prefix != "" {
				p = prefix + "." + k.Value
			}
			out = append(out, entry{path: p, key: k, value: n.Content[i+1]})
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			out = append(out, entry{path: fmt.Sprintf("%s[%d]", prefix, i), value: c})
		}
	}
	return out
}
