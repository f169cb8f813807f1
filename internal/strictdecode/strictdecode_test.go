package strictdecode

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDecode: the JSON and YAML decoders agree on what is rejected: unknown fields, duplicate
// keys (at any depth), more than one document or value, and type errors.
func TestDecode(t *testing.T) {
	type In struct {
		B int `json:"b" yaml:"b"`
	}
	type T struct {
		A  int            `json:"a" yaml:"a"`
		N  *In            `json:"n,omitempty" yaml:"n,omitempty"`
		M  map[string]int `json:"m,omitempty" yaml:"m,omitempty"`
		Xs []In           `json:"xs,omitempty" yaml:"xs,omitempty"`
	}
	for _, c := range []struct {
		data, format, want string
	}{
		{`{"a": 1}`, "json", ""},
		{"a: 1\n", "yaml", ""},
		{"a: 1\n", "yml", ""},
		{"---\na: 1\n", "yaml", ""},
		{"---\na: 1\n...\n", "yaml", ""},
		{`{"a": 1, "n": {"b": 2}, "m": {"x": 1, "y": 2}, "xs": [{"b": 1}, {"b": 1}]}`, "json", ""},
		{"a: 1\nn: {b: 2}\nm: {x: 1, y: 2}\nxs: [{b: 1}, {b: 1}]\n", "yaml", ""},
		{`{"a": 1} `, "json", ""},

		{`{"a": 1, "b": 2}`, "json", "unknown field"},
		{"a: 1\nb: 2\n", "yaml", "not found"},

		{`{"a": 1, "a": 1}`, "json", `duplicate key "a"`},
		{"a: 1\na: 1\n", "yaml", `"a" already defined`},
		{`{"a": 1, "n": {"b": 1, "b": 2}}`, "json", `duplicate key "b"`},
		{"a: 1\nn: {b: 1, b: 2}\n", "yaml", `"b" already defined`},
		{`{"a": 1, "m": {"x": 1, "x": 2}}`, "json", `duplicate key "x"`},
		{"a: 1\nm: {x: 1, x: 2}\n", "yaml", `"x" already defined`},
		{`{"a": 1, "xs": [{"b": 1, "b": 1}]}`, "json", `duplicate key "b"`},
		{"a: 1\nxs: [{b: 1, b: 1}]\n", "yaml", `"b" already defined`},

		{`{"a": 1} {"a": 2}`, "json", "more than one"},
		{`{"a": 1} x`, "json", "more than one"},
		{"a: 1\n---\na: 2\n", "yaml", "more than one"},
		{"a: 1\n---\nb: 2\n", "yaml", "more than one"},
		{"a: 1\n--- x\n", "yaml", "more than one"},

		{`{"a": "x"}`, "json", "cannot unmarshal"},
		{"a: x\n", "yaml", "cannot unmarshal"},
		{"", "json", "empty"},
		{"", "yaml", "empty"},
		{"a: 1", "toml", "unknown format"},
	} {
		var v T
		err := Decode([]byte(c.data), c.format, &v)
		switch {
		case c.want == "" && (err != nil || v.A != 1):
			t.Errorf("%q (%s): got %+v, %v", c.data, c.format, v, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%q (%s): error %v, want one mentioning %q", c.data, c.format, err, c.want)
		}
	}
}

// TestDecodeDeep: deeply nested input is an error in both formats, not a stack overflow.
func TestDecodeDeep(t *testing.T) {
	for _, data := range []string{strings.Repeat("[", 1e6) + strings.Repeat("]", 1e6), strings.Repeat("{a: ", 1e5) + "1" + strings.Repeat("}", 1e5)} {
		for _, format := range []string{"json", "yaml"} {
			var v struct{ A int }
			if err := Decode([]byte(data), format, &v); err == nil {
				t.Errorf("%s: %d bytes of nesting accepted", format, len(data))
			}
		}
	}
}

// TestReadFile: files are read up to MaxFileSize; a larger file or an endless device is
// refused without reading it all.
func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	small := filepath.Join(dir, "small.yaml")
	if err := os.WriteFile(small, []byte("a: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if data, err := ReadFile(small); err != nil || string(data) != "a: 1\n" {
		t.Errorf("small file: %q, %v", data, err)
	}
	big := filepath.Join(dir, "big.yaml")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(MaxFileSize + 1); err != nil { // sparse: no disk used
		t.Fatal(err)
	}
	f.Close()
	for _, p := range []string{big, "/dev/zero"} {
		if _, err := os.Stat(p); err != nil {
			continue
		}
		if _, err := ReadFile(p); err == nil || !strings.Contains(err.Error(), "larger than the limit of 64 MiB") {
			t.Errorf("%s: error %v, want the size limit", p, err)
		}
	}
	if _, err := ReadFile(dir); err == nil {
		t.Errorf("a directory was read")
	}
}

// TestTypeErrorsNameTheField: a value of the wrong type is reported under its field path, not
// only its line.
func TestTypeErrorsNameTheField(t *testing.T) {
	var v struct {
		Name     string `yaml:"name"`
		Episodes int    `yaml:"episodes"`
		Curves   []struct {
			Epsilon float64 `yaml:"epsilon"`
		} `yaml:"curves"`
	}
	err := Decode([]byte("name: x\nepisodes: ten\ncurves:\n  - epsilon: 1\n  - epsilon: big\n"), "yaml", &v)
	if err == nil || !strings.Contains(err.Error(), "episodes: cannot unmarshal") || !strings.Contains(err.Error(), "curves[1].epsilon: cannot unmarshal") {
		t.Errorf("err = %v, want messages naming episodes and curves[1].epsilon", err)
	}
}

// TestUnknownKeysNameTheirPath: an unknown key is reported under its own path, also when it
// shares a line with other keys (a flow mapping).
func TestUnknownKeysNameTheirPath(t *testing.T) {
	var v struct {
		Privacy struct {
			Epsilons []float64 `yaml:"epsilons"`
		} `yaml:"privacy"`
		Curves []struct {
			Agent string `yaml:"agent"`
		} `yaml:"curves"`
	}
	for doc, want := range map[string]string{
		"privacy: {epsilons: [1], bogus: 1}\n":  "privacy.bogus: field bogus not found",
		"curves:\n  - agent: u\n    bogus: 2\n": "curves[0].bogus: field bogus not found",
	} {
		if err := Decode([]byte(doc), "yaml", &v); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: err = %v, want %q", doc, err, want)
		}
	}
}

// TestJSONExact: what encoding/json accepts silently is refused, naming the field: a null
// where the target holds no pointer (it would leave a zero: a null reward decodes as 0), and a
// key in another case than its field's (encoding/json matches keys case-insensitively). A null
// for a pointer or an interface, and the fields of an embedded struct, stay accepted.
func TestJSONExact(t *testing.T) {
	type Head struct {
		Kind string `json:"kind"`
	}
	type Base struct {
		ID string `json:"id"`
	}
	type T struct {
		Base
		Head    Head               `json:"header"`
		Rewards []float64          `json:"rewards"`
		Rows    [][]float64        `json:"rows,omitempty"`
		Params  map[string]float64 `json:"params,omitempty"`
		Seed    *uint64            `json:"seed,omitempty"`
		Any     any                `json:"any,omitempty"`
		Raw     json.RawMessage    `json:"raw,omitempty"`
		Name    string             `json:"name,omitempty"`
		Untaged int
	}
	for _, c := range []struct{ data, field, msg string }{
		{`{"id": "a", "header": {"kind": "k"}, "rewards": [1, 0.5]}`, "", ""},
		{`{"rewards": [], "seed": null, "any": null, "raw": null, "Untaged": 1}`, "", ""},
		{`{"rewards": [1, null, 0]}`, "rewards[1]", "null is not a number"},
		{`{"rewards": null}`, "rewards", "null is not an array"},
		{`{"rows": [[1], [2, null]]}`, "rows[1][1]", "null is not a number"},
		{`{"rows": [null]}`, "rows[0]", "null is not an array"},
		{`{"params": {"p": null}}`, "params.p", "null is not a number"},
		{`{"params": null}`, "params", "null is not an object"},
		{`{"header": null}`, "header", "null is not an object"},
		{`{"header": {"kind": null}}`, "header.kind", "null is not a string"},
		{`{"name": null}`, "name", "null is not a string"},
		{`{"id": null}`, "id", "null is not a string"},
		{`null`, "", "null is not an object"},
		{`{"Rewards": [1]}`, "Rewards", `keys are case-sensitive: "rewards"`},
		{`{"REWARDS": [1]}`, "REWARDS", `keys are case-sensitive: "rewards"`},
		{`{"header": {"Kind": "k"}}`, "header.Kind", `keys are case-sensitive: "kind"`},
		{`{"ID": "a"}`, "ID", `keys are case-sensitive: "id"`},
		{`{"untaged": 1}`, "untaged", `keys are case-sensitive: "Untaged"`},
		{`{"rewards": [1], "rewards": [2]}`, "rewards", `duplicate key "rewards"`},
		{`{"any": {"a": 1, "a": 2}}`, "any.a", `duplicate key "a"`},
	} {
		var v T
		err := Decode([]byte(c.data), "json", &v)
		if c.msg == "" {
			if err != nil {
				t.Errorf("%s: %v", c.data, err)
			}
			continue
		}
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != c.field || !strings.Contains(fe.Msg, c.msg) {
			t.Errorf("%s: error %v, want field %q and %q", c.data, err, c.field, c.msg)
		}
	}
}
