package linmix

import (
	"strings"
	"testing"
)

// TestTinyEpsilonRefusedByValidate: a configuration whose ε makes a noise scale non-finite is
// refused by ParseConfig/Validate (before any compute), naming the curve, ε and the range.
func TestTinyEpsilonRefusedByValidate(t *testing.T) {
	base := string(DefaultConfigYAML())
	for _, c := range []struct{ from, to string }{
		{"{algorithm: ucrl-vtr, mode: jdp, calibration: laplace, epsilons: [0.5, 100]}", "{algorithm: ucrl-vtr, mode: jdp, calibration: laplace, epsilons: [1e-320]}"},
		{"{algorithm: ucrl-vtr, mode: jdp, epsilons: [0.5, 100]}", "{algorithm: ucrl-vtr, mode: jdp, epsilons: [1e-300]}"},
		{"{algorithm: linopt-vi, mode: jdp, epsilons: [0.5, 100]}", "{algorithm: linopt-vi, mode: jdp, epsilons: [1e-300]}"},
	} {
		if !strings.Contains(base, c.from) {
			t.Fatalf("embedded config lacks %q", c.from)
		}
		_, err := ParseConfig([]byte(strings.Replace(base, c.from, c.to, 1)))
		if err == nil || !strings.Contains(err.Error(), "epsilon") || !strings.Contains(err.Error(), "[1e-9, 1e9]") {
			t.Errorf("%s: %v, want an error naming epsilon and the range", c.to, err)
		}
	}
}
