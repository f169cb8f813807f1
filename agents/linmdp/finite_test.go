package linmdp

import (
	"strings"
	"testing"

	"github.com/dprl/dprl/rng"
)

// TestTinyEpsilonRefused: Luyo et al.'s constants at an ε so small that σ_Λ (∝ 1/ε)
// overflows are refused by NewLuyoConstants with an error naming ε and the range (it used to
// fail deep inside the counter with "gaussian scale must be finite").
func TestTinyEpsilonRefused(t *testing.T) {
	env := river(t, 10, 6)
	for _, c := range []struct {
		cal LuyoCalibration
		eps float64
		ok  bool
	}{{LuyoPaper, 1, true}, {LuyoPaper, 1e-320, false}, {LuyoZCDP, 1, true}, {LuyoZCDP, 1e-320, false}} {
		_, err := NewLuyo(env, LuyoConfig{Common: Common{K: 300, Seed: &rng.Seed{}}, Epsilon: c.eps, Delta: 1e-5, Calibration: c.cal})
		switch {
		case c.ok && err != nil:
			t.Errorf("%v at ε = %g: %v", c.cal, c.eps, err)
		case !c.ok && (err == nil || !strings.Contains(err.Error(), "epsilon")):
			t.Errorf("%v at ε = %g: %v, want an error naming epsilon", c.cal, c.eps, err)
		}
	}
	if _, err := NewLuyoConstants(300, 6, 3, 1e-320, 1e-5, 0.05, 0, LuyoPaper); err == nil || !strings.Contains(err.Error(), "[1e-9, 1e9]") {
		t.Errorf("NewLuyoConstants at ε = 1e-320: %v, want the allowed range", err)
	}
}
