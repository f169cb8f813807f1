package linmdp

import (
	"fmt"
	"strings"
	"testing"
)

// TestSizeLimits: models whose tables (features N·A·d, μ steps·N·d, transition tables
// steps·N·A·N, per-step tables H·N·A) exceed MaxEntries, or whose construction would exceed
// MaxWork operations, are refused before those tables are allocated, with the product and the
// limit named.
func TestSizeLimits(t *testing.T) {
	// A file with N = 9000 states, one action, d = 1: N·A·N = 8.1e7 > 2^26 transition entries.
	const N = 9000
	var b strings.Builder
	b.WriteString(`{"horizon": 2, "features": [`)
	for s := 0; s < N; s++ {
		if s > 0 {
			b.WriteByte(',')
		}
		b.WriteString("[[1]]")
	}
	b.WriteString(`], "mu": [[`)
	for s := 0; s < N; s++ {
		if s > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "[%g]", 1.0/N)
	}
	b.WriteString(`]], "theta": [[0.5]], "init": [1`)
	b.WriteString(strings.Repeat(",0", N-1))
	b.WriteString("]}")
	if _, err := Parse([]byte(b.String()), "json"); err == nil || !strings.Contains(err.Error(), "exceeds the limit 2^26") {
		t.Errorf("N = %d file: error %v, want the transition-table limit", N, err)
	}

	for _, c := range []struct {
		name string
		make func() (*MDP, error)
		want string
	}{
		{"randomsimplex features", func() (*MDP, error) { return RandomSimplex(70000, 1000, 1000, 2, 3, 10, 1, true) }, "exceeds the limit 2^26"},
		{"randomsimplex transitions", func() (*MDP, error) { return RandomSimplex(20000, 1, 4, 2, 3, 10, 1, true) }, "exceeds the limit 2^26"},
		{"randomsimplex per-step μ", func() (*MDP, error) { return RandomSimplex(10000, 1, 1000, 100, 3, 10, 1, false) }, "exceeds the limit 2^26"},
		{"latentriver", func() (*MDP, error) { return LatentRiver(100, 1000, 0.1, 0.9, 0.1, 20) }, "exceeds the limit 2^26"},
	} {
		if _, err := c.make(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one mentioning %q", c.name, err, c.want)
		}
	}
	if err := CheckSize(1<<40, 1<<40, 1<<40, 1, 1); err == nil || !strings.Contains(err.Error(), "limit") {
		t.Errorf("huge dimensions (overflowing products): %v", err)
	}
	if err := CheckSize(100, 3, 5, 20, 20); err != nil {
		t.Errorf("small model refused: %v", err)
	}
}
