package tabular

import (
	"fmt"
	"strings"
	"testing"
)

// TestSizeLimits: a file or a Garnet configuration whose tables (H·S·A·S entries, what every
// agent allocates per run) exceed MaxEntries is refused before anything is allocated, with
// the product and the limit named; the largest sizes within the limit are accepted.
func TestSizeLimits(t *testing.T) {
	file := func(S, A, H int, homog bool) string {
		return fmt.Sprintf(`{"states":%d,"actions":%d,"horizon":%d,"homogeneous":%v,"init":[1],"transitions":[],"reward":[]}`, S, A, H, homog)
	}
	for _, c := range []struct {
		name, data, want string
	}{
		{"homogeneous, long H", file(8192, 1, 65536, true), "states*actions*states*horizon = 4398046511104 exceeds the limit 2^24"},
		{"per-step tables", file(64, 16, 65536, false), "exceeds the limit 2^24"},
		{"just over", file(64, 64, 65, true), "exceeds the limit 2^24"},
		{"wide", file(4096, 4096, 1, true), "exceeds the limit 2^24"},
		{"S at its bound", file(65537, 1, 1, true), "states: must be in [1, 65536]"},
		{"negative", file(-1, 1, 1, true), "states: must be in"},
	} {
		_, err := Parse([]byte(c.data), "json")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one mentioning %q", c.name, err, c.want)
		}
	}
	// Within the limit the size check passes and the next error is about the contents.
	if _, err := Parse([]byte(file(64, 64, 64, true)), "json"); err == nil || strings.Contains(err.Error(), "limit") {
		t.Errorf("64·64·64·64 = 2^24 entries: error %v, want a contents error", err)
	}

	for _, c := range []struct {
		cfg  GarnetConfig
		want string
	}{
		{GarnetConfig{S: 5000, A: 1, H: 1, Branching: 1}, "exceeds the limit 2^24"},
		{GarnetConfig{S: 10, A: 3, H: 60000, Branching: 2, Homogeneous: true}, "exceeds the limit 2^24"},
		{GarnetConfig{S: 1 << 40, A: 1 << 40, H: 1, Branching: 1}, "garnet.states: must be in [1, 65536]"},
		{GarnetConfig{S: 10, A: 1 << 40, H: 1, Branching: 1}, "garnet.actions: must be in [1, 65536]"},
		{GarnetConfig{S: 10, A: 2, H: 1 << 40, Branching: 1}, "garnet.horizon: must be in [1, 65536]"},
		{GarnetConfig{S: 10, A: 2, H: 3, Branching: 11}, "garnet.branching"},
	} {
		_, err := Garnet(c.cfg)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Garnet(%+v): error %v, want one mentioning %q", c.cfg, err, c.want)
		}
	}
	if _, err := RiverSwim(1 << 40); err == nil || !strings.Contains(err.Error(), "horizon: must be in [1, 65536]") {
		t.Errorf("RiverSwim(2^40): error %v, want the horizon bound", err)
	}
	if _, err := Garnet(GarnetConfig{S: 64, A: 16, H: 256, Branching: 3, Homogeneous: true}); err != nil {
		t.Errorf("Garnet at the limit (2^24 entries): %v", err)
	}
}
