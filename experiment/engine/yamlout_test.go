package engine

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// TestJSONToYAML: config.resolved.yaml is block YAML from which a YAML reader recovers exactly
// the JSON values, whatever a string looks like (numbers, booleans, null, empty, ': ', '#',
// leading spaces) and with numbers' text unchanged.
func TestJSONToYAML(t *testing.T) {
	for _, doc := range []string{
		`{"family":"tabular","experiment":"run","cells":[{"cell":"riverswim/practical-jdp eps=1","spec":{"epsilon":1,"delta":0.00001,"c2":1.4142135623730951},"seeds":[1,18446744073709551615]}]}`,
		`{"s":["1","true","null","","a: b","# x"," lead","ε = 1","- x","0x1F","1e5","~","yes","On","1_000","1:20","Null","riverswim/practical-jdp eps=1"],"n":null,"b":false,"e":[],"o":{}}`,
		`{"spec":"a family whose spec is not JSON\nsecond line"}`,
	} {
		y, err := jsonToYAML([]byte(doc))
		if err != nil {
			t.Fatalf("%s: %v", doc, err)
		}
		if strings.Contains(string(y), "{\"") || strings.HasPrefix(string(y), "{") {
			t.Errorf("%s: not block YAML:\n%s", doc, y)
		}
		back, err := yaml.YAMLToJSON(y)
		if err != nil {
			t.Fatalf("%s: reading back %s: %v", doc, y, err)
		}
		var want, got any
		if err := json.Unmarshal([]byte(doc), &want); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(back, &got); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(want, got) {
			t.Errorf("round trip changed the document:\n json %s\n yaml %s\n back %s", doc, y, back)
		}
	}
	y, _ := jsonToYAML([]byte(`{"delta":0.00001,"c2":1.4142135623730951,"big":18446744073709551615,"tiny":1e-07,"huge":2.5e+300}`))
	for _, s := range []string{"delta: 0.00001\n", "c2: 1.4142135623730951\n", "big: 18446744073709551615\n", "tiny: 1.0e-07\n", "huge: 2.5e+300\n"} {
		if !strings.Contains(string(y), s) {
			t.Errorf("number text changed: want %q in\n%s", s, y)
		}
	}
}
