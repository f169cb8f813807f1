package linmix

import (
	"strings"
	"testing"

	model "github.com/dprl/dprl/model/linmix"
	"github.com/dprl/dprl/rng"
)

// TestTinyEpsilonRefused: an ε so small that a noise scale, shift or width is not a finite
// number (1e-320 with the Laplace calibration made every constant +Inf; the run then computed
// and failed writing its manifest) is refused by CheckConstants and by the constructors,
// before any data, with an error naming ε and the allowed range; an ordinary ε is accepted.
func TestTinyEpsilonRefused(t *testing.T) {
	m, err := model.TwoStateHard(5, 10, 0.1, 0.5, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		cfg  Config
		tiny float64
	}{
		{Config{Algorithm: UCRLVTR, Mode: JDP, Calibration: Laplace}, 1e-320},
		{Config{Algorithm: UCRLVTR, Mode: LDP, Calibration: Laplace}, 1e-320},
		{Config{Algorithm: UCRLVTR, Mode: JDP}, 1e-300},
		{Config{Algorithm: UCRLVTR, Mode: LDP, Calibration: ZCDP}, 1e-20},
		{Config{Algorithm: UCRLVTRPlus, Mode: LDP}, 1e-320},
		{Config{Algorithm: LinOptVI, Mode: JDP}, 1e-300},
		{Config{Algorithm: LinOptPO, Mode: LDP}, 1e-320},
	} {
		cfg := c.cfg
		cfg.Episodes = 50
		cfg.Epsilon = 1
		if err := CheckConstants(m, cfg); err != nil {
			t.Errorf("%s at ε = 1: %v", cfg.Name(), err)
		}
		cfg.Epsilon = c.tiny
		err := CheckConstants(m, cfg)
		if err == nil || !strings.Contains(err.Error(), "epsilon") || !strings.Contains(err.Error(), "[1e-9, 1e9]") {
			t.Errorf("%s at ε = %g: CheckConstants: %v, want an error naming epsilon and the range", cfg.Name(), c.tiny, err)
		}
		if _, err := NewSeeded(m, cfg, rng.NewSeed(1)); err == nil || !strings.Contains(err.Error(), "epsilon") {
			t.Errorf("%s at ε = %g: NewSeeded: %v, want an error naming epsilon", cfg.Name(), c.tiny, err)
		}
	}
}
