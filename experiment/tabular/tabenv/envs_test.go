package tabenv

import (
	"maps"
	"strings"
	"testing"
)

// TestConfigure: an environment is configured by name and params through the registry; the
// errors name the caller's field (unknown name, unknown or out-of-range parameter, a file for
// an environment that takes none), and Params reads back exactly the environment's parameters.
func TestConfigure(t *testing.T) {
	r := New()
	for _, c := range []struct {
		name, file string
		params     map[string]float64
		want       map[string]float64 // nil: an error is expected
		err        string
	}{
		{"riverswim", "", nil, map[string]float64{"horizon": 20}, ""},
		{"garnet", "", map[string]float64{"states": 4, "env_seed": 7}, map[string]float64{"horizon": 20, "states": 4, "actions": 3,
			"branching": 3, "reward_density": 0.3, "env_seed": 7}, ""},
		{"taxi", "", nil, nil, ""},
		{"chain", "", nil, nil, "curves[2].name: unknown environment \"chain\""},
		{"riverswim", "", map[string]float64{"states": 3}, nil, "curves[2].params.states"},
		{"garnet", "", map[string]float64{"branching": 11}, nil, "curves[2].params.branching"},
		{"garnet", "m.json", nil, nil, "curves[2].file"},
		{"file", "", nil, nil, "curves[2].file"},
	} {
		cfg, _, err := Configure(r, "curves[2]", c.name, c.file, c.params)
		if c.err != "" {
			if err == nil || !strings.HasPrefix(err.Error(), c.err) {
				t.Errorf("%s %v: error %v, want one starting %q", c.name, c.params, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s %v: %v", c.name, c.params, err)
			continue
		}
		if got := Params(r, cfg); cfg.Name != c.name || !maps.Equal(got, c.want) {
			t.Errorf("%s %v: config %+v, params %v; want %v", c.name, c.params, cfg, got, c.want)
		}
	}
}
