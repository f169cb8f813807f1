package runschema

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/dprl/dprl/docs"
)

// Keys returns the properties and the required keys of an object of the published schema:
// def names one of its $defs ("curve", "privacy", …), or "" for the manifest itself.
func Keys(def string) (props, required []string, err error) {
	var obj struct {
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
	}
	var doc struct {
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
		Defs       map[string]json.RawMessage `json:"$defs"`
	}
	if err := json.Unmarshal(docs.RunDirectorySchema, &doc); err != nil {
		return nil, nil, fmt.Errorf("run-directory schema: %w", err)
	}
	obj.Properties, obj.Required = doc.Properties, doc.Required
	if def != "" {
		obj.Properties, obj.Required = nil, nil
		raw, ok := doc.Defs[def]
		if !ok {
			return nil, nil, fmt.Errorf("run-directory schema: no $defs.%s", def)
		}
		if err := json.Unmarshal(raw, &obj); err != nil {
			return nil, nil, fmt.Errorf("run-directory schema: $defs.%s: %w", def, err)
		}
	}
	for k := range obj.Properties {
		props = append(props, k)
	}
	slices.Sort(props)
	required = slices.Sorted(slices.Values(obj.Required))
	return props, required, nil
}

// JSONKeys returns the keys encoding/json writes for the struct type t: every exported
// field's name (its json tag's, or the Go name), the fields of embedded structs without a
// tag promoted, "-" skipped. It reports which are omitempty.
func JSONKeys(t reflect.Type) (keys []string, omitempty map[string]bool) {
	omitempty = map[string]bool{}
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		for f := range t.Fields() {
			tag := f.Tag.Get("json")
			if tag == "-" {
				continue
			}
			name, opts, _ := strings.Cut(tag, ",")
			if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
				walk(f.Type)
				continue
			}
			if !f.IsExported() {
				continue
			}
			if name == "" {
				name = f.Name
			}
			keys = append(keys, name)
			if slices.Contains(strings.Split(opts, ","), "omitempty") {
				omitempty[name] = true
			}
		}
	}
	walk(t)
	slices.Sort(keys)
	return keys, omitempty
}

// CheckType reports how the Go type t (the type dprl writes) and the schema's object def
// (Keys) disagree: a key written but not in the schema's properties, a property the type
// does not write, a key always written (not omitempty) that the schema does not require, or a
// required one the type may omit. A new per-curve field is its line in engine.CurveRecord
// (its json tag) and its property in docs/run-directory.schema.json's $defs.curve, which this
// check names.
func CheckType(t reflect.Type, def string) error {
	props, required, err := Keys(def)
	if err != nil {
		return err
	}
	where := "the manifest"
	if def != "" {
		where = "$defs." + def
	}
	keys, omit := JSONKeys(t)
	var bad []string
	for _, k := range keys {
		switch {
		case !slices.Contains(props, k):
			bad = append(bad, fmt.Sprintf("%s: written by %s but not a property of %s in docs/run-directory.schema.json", k, t, where))
		case !omit[k] && !slices.Contains(required, k):
			bad = append(bad, fmt.Sprintf("%s: always written by %s but not required by %s in docs/run-directory.schema.json", k, t, where))
		case omit[k] && slices.Contains(required, k):
			bad = append(bad, fmt.Sprintf("%s: required by %s but omitempty in %s", k, where, t))
		}
	}
	for _, p := range props {
		if !slices.Contains(keys, p) {
			bad = append(bad, fmt.Sprintf("%s: a property of %s in docs/run-directory.schema.json that %s never writes", p, where, t))
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("schema and Go type disagree:\n  %s", strings.Join(bad, "\n  "))
	}
	return nil
}
