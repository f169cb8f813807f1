// Package strictdecode decodes the JSON and YAML files dprl reads (models, systems,
// experiment configurations) strictly, and the same way in both formats: unknown fields,
// duplicate keys (at any depth) and anything after the first document or value are errors, and
// so is an empty input.
package strictdecode

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"go.yaml.in/yaml/v3"

	"github.com/dprl/dprl/internal/boundedread"
)

// Decode decodes data in the given format ("json", "yaml" or "yml") into v, rejecting unknown
// fields, duplicate keys, a second document (YAML "---") or trailing JSON value, and empty
// input.
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
		return duplicateJSONKeys(data)
	case "yaml", "yml":
		dec := yaml.NewDecoder(bytes.NewReader(data))
		dec.KnownFields(true)
		if err := dec.Decode(v); err != nil {
			if err == io.EOF {
				return errors.New("empty YAML document")
			}
			return err
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

// duplicateJSONKeys reports the first object key that occurs twice in one object of the
// well-formed JSON value data (encoding/json silently keeps the last one). It walks the
// tokens with an explicit stack, so its memory is linear in the input.
func duplicateJSONKeys(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	type frame struct {
		keys      map[string]bool // nil for an array
		expectKey bool
	}
	var stack []frame
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		var top *frame
		if len(stack) > 0 {
			top = &stack[len(stack)-1]
		}
		if top != nil && top.keys != nil && top.expectKey {
			if d, ok := tok.(json.Delim); ok && d == '}' {
				stack = stack[:len(stack)-1]
				continue
			}
			key, _ := tok.(string)
			if top.keys[key] {
				return fmt.Errorf("duplicate key %q in a JSON object (offset %d)", key, dec.InputOffset())
			}
			top.keys[key] = true
			top.expectKey = false
			continue
		}
		if top != nil && top.keys != nil {
			top.expectKey = true // this token starts the value; the next one is a key or '}'
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, frame{keys: map[string]bool{}, expectKey: true})
		case json.Delim('['):
			stack = append(stack, frame{})
		case json.Delim(']'):
			stack = stack[:len(stack)-1]
		}
	}
}

// MaxFileSize bounds the files ReadFile reads (64 MiB): far above any model or configuration
// dprl uses, and small enough that decoding cannot exhaust memory.
const MaxFileSize = boundedread.DefaultLimit

// ReadFile reads a whole file of at most MaxFileSize bytes through boundedread (the one reader
// of user-supplied files): anything but a regular file (a FIFO, which would block the open, a
// device such as /dev/zero, a directory) is refused before it is opened, and so is a larger
// file; at most MaxFileSize+1 bytes are read.
func ReadFile(path string) ([]byte, error) { return boundedread.ReadFile(path, MaxFileSize) }
