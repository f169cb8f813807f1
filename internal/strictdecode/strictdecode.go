// Package strictdecode decodes the JSON and YAML files dprl reads (models, systems,
// experiment configurations) strictly: unknown fields are errors, and so is anything after
// the first JSON value.
package strictdecode

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"go.yaml.in/yaml/v3"
)

// Decode decodes data in the given format ("json", "yaml" or "yml") into v, rejecting unknown
// fields and trailing JSON data.
func Decode(data []byte, format string, v any) error {
	switch format {
	case "json":
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		if err := dec.Decode(v); err != nil {
			return err
		}
		if _, err := dec.Token(); err != io.EOF {
			return errors.New("trailing data after the JSON object")
		}
		return nil
	case "yaml", "yml":
		dec := yaml.NewDecoder(bytes.NewReader(data))
		dec.KnownFields(true)
		return dec.Decode(v)
	}
	return fmt.Errorf("unknown format %q (allowed: json, yaml, yml)", format)
}
