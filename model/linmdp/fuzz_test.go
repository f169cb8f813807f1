package linmdp

import (
	"testing"

	"github.com/dprl/dprl/model/internal/modeltest"
)

// FuzzParse: Parse never panics or exhausts memory, in either format, and whatever it accepts
// is within the size limits and has optimal values in [0, H] (rewards in [0, 1]).
func FuzzParse(f *testing.F) {
	modeltest.AddFile(f, "testdata/tiny.yaml", "yaml")
	// Homogeneous and per-step μ, θ, in both formats.
	f.Add([]byte(`{"name": "tiny", "horizon": 3, "features": [[[1, 0], [0, 1]], [[1, 0], [0.5, 0.5]]],
		"mu": [[[1, 0], [0, 1]]], "theta": [[0, 1]], "init": [1, 0]}`), "json")
	f.Add([]byte(`{"horizon": 2, "features": [[[1, 0], [0, 1]], [[1, 0], [0.5, 0.5]]],
		"mu": [[[1, 0], [0, 1]], [[0.5, 0.5], [0.5, 0.5]]], "theta": [[0, 1], [1, 0]], "init": [0.5, 0.5]}`), "json")
	f.Add([]byte("horizon: 2\nfeatures: [[[1]], [[1]]]\nmu: [[[0.5], [0.5]], [[1], [0]]]\ntheta: [[0.25], [1]]\ninit: [0, 1]\n"), "yaml")
	f.Fuzz(func(t *testing.T, data []byte, format string) {
		m, err := Parse(data, format)
		if err != nil {
			return
		}
		steps := muSteps(m)
		if err := CheckSize(m.N, m.A, m.D, steps, m.H); err != nil {
			t.Fatalf("accepted a model beyond the limits: %v", err)
		}
		V, _ := m.OptimalValues()
		if v := V[0]; len(v) != m.N {
			t.Fatalf("V_1 has %d entries, want %d", len(v), m.N)
		}
		for _, v := range V[0] {
			modeltest.CheckValue(t, v, m.H)
		}
	})
}

// muSteps returns the number of distinct μ_h of m (1 if homogeneous, else H).
func muSteps(m *MDP) int {
	if m.Homogeneous() {
		return 1
	}
	return m.H
}
