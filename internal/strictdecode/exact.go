package strictdecode

import (
	"bytes"
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
)

// FieldError is a JSON value Decode refused, with the path of the offending field
// (rewards[3], env.params, reports[0].user).
type FieldError struct {
	Field string
	Msg   string
}

func (e *FieldError) Error() string {
	if e.Field == "" {
		return e.Msg
	}
	return e.Field + ": " + e.Msg
}

var (
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// checkJSON walks the well-formed JSON value data against t, the type it decoded into, and
// refuses, naming the field, what encoding/json accepts silently: a key that occurs twice in
// one object (it keeps the last), a key that names a struct field in another case ("Rewards"
// for "rewards": it matches keys case-insensitively), and a null where t holds no pointer or
// interface (it leaves the zero value: a null reward would be a reward of 0). Inside a type
// that decodes itself (json.Unmarshaler) and under an interface only duplicate keys are
// checked. It walks the tokens with the decoder's own state, so its memory is linear in the
// input, and its recursion depth is that of the value (at most encoding/json's maximum).
func checkJSON(data []byte, t reflect.Type) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	w := walker{dec: dec}
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	return w.value(tok, t, "")
}

type walker struct{ dec *json.Decoder }

// value checks the value that starts with tok, to be decoded into t (nil: unchecked but for
// duplicate keys), at path.
func (w *walker) value(tok json.Token, t reflect.Type, path string) error {
	nullable := false
	for t != nil && t.Kind() == reflect.Pointer {
		nullable, t = true, t.Elem()
	}
	if t != nil && (t.Kind() == reflect.Interface || reflect.PointerTo(t).Implements(jsonUnmarshaler)) {
		nullable, t = true, nil
	}
	if tok == nil {
		if t != nil && !nullable {
			return &FieldError{Field: path, Msg: "null is not " + describe(t)}
		}
		return nil
	}
	if t != nil && reflect.PointerTo(t).Implements(textUnmarshaler) {
		t = nil // a string the type parses itself
	}
	switch tok {
	case json.Delim('{'):
		return w.object(t, path)
	case json.Delim('['):
		var elem reflect.Type
		if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
			elem = t.Elem()
		}
		for i := 0; ; i++ {
			tok, err := w.dec.Token()
			if err != nil {
				return err
			}
			if tok == json.Delim(']') {
				return nil
			}
			if err := w.value(tok, elem, fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	}
	return nil
}

// object checks an object's members (its '{' read) against t.
func (w *walker) object(t reflect.Type, path string) error {
	var fields map[string]reflect.Type
	var elem reflect.Type
	if t != nil {
		switch t.Kind() {
		case reflect.Struct:
			fields = map[string]reflect.Type{}
			jsonFields(t, fields, 0)
		case reflect.Map:
			elem = t.Elem()
		}
	}
	seen := map[string]bool{}
	for {
		tok, err := w.dec.Token()
		if err != nil {
			return err
		}
		if tok == json.Delim('}') {
			return nil
		}
		key, _ := tok.(string)
		sub := key
		if path != "" {
			sub = path + "." + key
		}
		if seen[key] {
			return &FieldError{Field: sub, Msg: fmt.Sprintf("duplicate key %q in a JSON object (offset %d)", key, w.dec.InputOffset())}
		}
		seen[key] = true
		ft := elem
		if fields != nil {
			var ok bool
			if ft, ok = fields[key]; !ok {
				// encoding/json decoded the object with unknown fields disallowed, so the key
				// named a field in another case.
				for name := range fields {
					if strings.EqualFold(name, key) {
						return &FieldError{Field: sub, Msg: fmt.Sprintf("unknown field %q (keys are case-sensitive: %q)", key, name)}
					}
				}
				return &FieldError{Field: sub, Msg: fmt.Sprintf("unknown field %q (keys are case-sensitive)", key)}
			}
		}
		tok, err = w.dec.Token()
		if err != nil {
			return err
		}
		if err := w.value(tok, ft, sub); err != nil {
			return err
		}
	}
}

// jsonFields collects the JSON names of struct t's fields as encoding/json sees them (tag
// names, else field names; the fields of untagged embedded structs promoted).
func jsonFields(t reflect.Type, out map[string]reflect.Type, depth int) {
	if depth > 8 {
		return
	}
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		ft := f.Type
		if f.Anonymous && name == "" {
			et := ft
			if et.Kind() == reflect.Pointer {
				et = et.Elem()
			}
			if et.Kind() == reflect.Struct {
				jsonFields(et, out, depth+1)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		if _, ok := out[name]; !ok || depth == 0 {
			out[name] = ft
		}
	}
}

// describe names what a JSON value of type t must be.
func describe(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Bool:
		return "true or false"
	case reflect.String:
		return "a string"
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 && t.Kind() == reflect.Slice {
			return "a string"
		}
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return "a number"
}
