package strictdecode

import (
	"strings"
	"testing"
)

func TestDecode(t *testing.T) {
	type T struct {
		A int `json:"a" yaml:"a"`
	}
	for _, c := range []struct {
		data, format, want string
	}{
		{`{"a": 1}`, "json", ""},
		{"a: 1\n", "yaml", ""},
		{"a: 1\n", "yml", ""},
		{`{"a": 1, "b": 2}`, "json", "unknown field"},
		{"a: 1\nb: 2\n", "yaml", "not found"},
		{`{"a": 1} {"a": 2}`, "json", "trailing data"},
		{`{"a": "x"}`, "json", "cannot unmarshal"},
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
