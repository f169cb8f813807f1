package linmix

import (
	"testing"

	"github.com/dprl/dprl/experiment/internal/cfgfile/cfgfiletest"
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
		cfgfiletest.Refused(t, parseConfig, base, c.from, c.to, "epsilon", "[1e-9, 1e9]")
	}
}
