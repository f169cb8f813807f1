package lq

import (
	"strings"
	"testing"
)

// TestSizeLimits: a system whose per-step Riccati tables ((H+2)·(2n² + nd) entries) exceed
// MaxEntries, or whose Riccati recursion (H·(n+d)³ operations) exceeds MaxWork, is refused
// before they are allocated or run, with the product and the limit named.
func TestSizeLimits(t *testing.T) {
	diag := func(n, m int, v float64) [][]float64 {
		a := make([][]float64, n)
		for i := range a {
			a[i] = make([]float64, m)
			if i < m {
				a[i][i] = v
			}
		}
		return a
	}
	sys := func(n, d, H int) Config {
		return Config{Name: "big", A: diag(n, n, 0.01), B: diag(n, d, 0.01), Q: diag(n, n, 1), R: diag(d, d, 1),
			Horizon: H, Cw: 0.2, Gamma: 0}
	}
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{sys(64, 64, 5000), "exceeds the limit 2^32 operations"},
		{sys(64, 64, 100000), "exceeds the limit 2^26 entries"},
	} {
		if _, err := NewSystem(c.cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("n = %d, d = %d, H = %d: error %v, want one mentioning %q", len(c.cfg.A), len(c.cfg.B[0]), c.cfg.Horizon, err, c.want)
		}
	}
	if _, err := NewSystem(sys(8, 8, 1000)); err != nil {
		t.Errorf("a small system was refused: %v", err)
	}
}
