package tabular

import (
	"fmt"
	"strings"
	"testing"
)

// TestSizeLimits: a file or a Garnet configuration whose tables exceed MaxEntries (dense
// per-step tables H·S·A·S, a dense homogeneous table S·A·S, sparse entries, and H·S·A) is
// refused before anything is allocated, with the product and the limit named; the largest
// sizes within the limit are accepted.
func TestSizeLimits(t *testing.T) {
	file := func(S, A, H int, homog bool) string {
		return fmt.Sprintf(`{"states":%d,"actions":%d,"horizon":%d,"homogeneous":%v,"init":[1],"transitions":[],"reward":[]}`, S, A, H, homog)
	}
	sparse := func(S, A, H int, homog bool) string {
		return fmt.Sprintf(`{"states":%d,"actions":%d,"horizon":%d,"homogeneous":%v,"init":[1],"transitions_sparse":[],"reward":[]}`, S, A, H, homog)
	}
	for _, c := range []struct {
		name, data, want string
	}{
		{"homogeneous, wide", file(8192, 1, 65536, true), "states*actions*states = 67108864 exceeds the limit 2^24"},
		{"homogeneous, long H", file(64, 64, 4097, true), "horizon*states*actions = 16781312 exceeds the limit 2^24"},
		{"per-step tables", file(64, 16, 65536, false), "states*actions*states*horizon = 4294967296 exceeds the limit 2^24"},
		{"per-step tables, just over", file(64, 64, 65, false), "exceeds the limit 2^24"},
		{"homogeneous, just over", file(4097, 1, 1, true), "states*actions*states = 16785409 exceeds the limit 2^24"},
		{"wide", file(4096, 4096, 1, true), "exceeds the limit 2^24"},
		{"S at its bound", file(65537, 1, 1, true), "states: must be in [1, 65536]"},
		{"negative", file(-1, 1, 1, true), "states: must be in"},
		{"sparse, H·S·A", sparse(65536, 16, 17, true), "horizon*states*actions = 17825792 exceeds the limit 2^24"},
		{"sparse per-step, H·S·A", sparse(65536, 256, 2, false), "horizon*states*actions = 33554432 exceeds the limit 2^24"},
		{"sparse, S at its bound", sparse(65537, 1, 1, true), "states: must be in [1, 65536]"},
		{"sparse, H at its bound", sparse(2, 1, 65537, true), "horizon: must be in [1, 65536]"},
	} {
		_, err := Parse([]byte(c.data), "json")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one mentioning %q", c.name, err, c.want)
		}
	}
	// Within the limits the size check passes and the next error is about the contents.
	for _, c := range []struct{ name, data string }{
		{"per-step 64·64·64·64 = 2^24", file(64, 64, 64, false)},
		{"homogeneous 4096·1·4096 = 2^24, H = 4096", file(4096, 1, 4096, true)},
		{"homogeneous 64·64·64, H·S·A = 2^24", file(64, 64, 4096, true)},
		{"Taxi-sized homogeneous 500·6·500, H = 200", file(500, 6, 200, true)},
		{"sparse S = 65536", sparse(65536, 1, 1, true)},
		{"sparse H·S·A = 2^24", sparse(65536, 16, 16, false)},
	} {
		if _, err := Parse([]byte(c.data), "json"); err == nil || strings.Contains(err.Error(), "limit") {
			t.Errorf("%s: error %v, want a contents error", c.name, err)
		}
	}
	// The length of transitions_sparse is bounded before it is converted.
	f := File{States: 2, Actions: 1, Horizon: 1, Homogeneous: true, TransitionsSparse: [][]float64{}}
	if err := f.checkFileSize(MaxEntries + 1); err == nil || !strings.Contains(err.Error(), "transitions_sparse: 16777217 entries exceed the limit 2^24") {
		t.Errorf("2^24+1 sparse entries: error %v", err)
	}
	if err := f.checkFileSize(MaxEntries); err != nil {
		t.Errorf("2^24 sparse entries: %v", err)
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
