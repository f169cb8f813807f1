package linmix

import (
	"testing"

	"github.com/dprl/dprl/model/internal/modeltest"
)

// FuzzParse: Parse never panics or exhausts memory, in either format and with either reward
// form, and whatever it accepts is within the size limits and has V*_1(s_1) in [0, H].
func FuzzParse(f *testing.F) {
	modeltest.AddFile(f, "testdata/tiny.yaml", "yaml")
	// The reward form and the reward-feature form, one or H vectors, Bernoulli rewards, JSON.
	f.Add([]byte(`{"states": 2, "actions": 1, "horizon": 2, "dim": 1, "start": 1,
		"psi": [{"s": 0, "a": 0, "next": 1, "vec": [1]}, {"s": 1, "a": 0, "next": 0, "vec": [1]}],
		"w": [[1], [1]], "reward": [[0.5], [1]], "bernoulli": true}`), "json")
	f.Add([]byte(`{"states": 2, "actions": 2, "horizon": 2, "dim": 2, "start": 0,
		"psi": [{"s": 0, "a": 0, "next": 0, "vec": [0.5, 0]}, {"s": 0, "a": 0, "next": 1, "vec": [0, 0.5]},
		        {"s": 0, "a": 1, "next": 1, "vec": [0.5, 0.5]}, {"s": 1, "a": 0, "next": 1, "vec": [0.5, 0.5]},
		        {"s": 1, "a": 1, "next": 1, "vec": [0.5, 0.5]}],
		"w": [[1, 1]], "phi": [[1, 0], [0, 1], [0.6, 0.8], [0, 0]], "theta_r": [[0.5, 0.25], [1, 0]]}`), "json")
	f.Add([]byte("states: 1\nactions: 1\nhorizon: 1\ndim: 1\nstart: 0\npsi: [{s: 0, a: 0, next: 0, vec: [1]}]\nw: [[1]]\nphi: [[1]]\ntheta_r: [[0.5]]\n"), "yaml")
	f.Fuzz(func(t *testing.T, data []byte, format string) {
		m, err := Parse(data, format)
		if err != nil {
			return
		}
		if err := CheckSize(m.NumStates(), m.NumActions(), m.Horizon(), m.Dim(), m.RewardDim(), len(m.next)); err != nil {
			t.Fatalf("accepted a model beyond the limits: %v", err)
		}
		modeltest.CheckValue(t, m.VStar(), m.Horizon())
	})
}
