package linmix

import (
	"strings"
	"testing"

	"github.com/dprl/dprl/experiment/internal/cfgfile/cfgfiletest"
)

// TestParseConfigStrictAndExplicitZeros: a second YAML document and duplicate keys are
// rejected, and a field whose zero means "default" (shift_mult: 0 used to become 1, a
// practical curve's budget: 0 the agent's 1, states: 0 RiverSwim's 5) is refused when set to
// zero explicitly, with the allowed range; an unknown calibration names the vocabulary.
// parseConfig is ParseConfig's error (cfgfiletest.Refused).
func parseConfig(b []byte) error { _, err := ParseConfig(b); return err }

func TestParseConfigStrictAndExplicitZeros(t *testing.T) {
	base := string(DefaultConfigYAML())
	prac := "  - {algorithm: practical-vtr, mode: jdp, epsilons: [1], practical: {budget: 0}}\n"
	for _, c := range []struct{ from, to, want string }{
		{"shift_mult: 0.01", "shift_mult: 0", "shift_mult: must be a finite number > 0, got 0"},
		{"points: 400", "points: 0", "points: must be in [10, 100000]"},
		{"  - {algorithm: ucrl-vtr, mode: none}\n", "  - {algorithm: ucrl-vtr, mode: none}\n" + prac, "curves[1].practical.budget: must be in (0, 1]"},
		{"  - {kind: hard-to-learn, dim: 5, horizon: 6}", "  - {kind: riverswim, states: 0, horizon: 6}", "envs[1].states"},
		{"  - {kind: hard-to-learn, dim: 5, horizon: 6}", "  - {kind: riverswim, states: 2, horizon: 6}", "states = 2"},
		{"calibration: laplace", "calibration: strict", "allowed: paper, laplace, zcdp"},
		{"points: 400", "points: 400\npoints: 400", "already defined"},
	} {
		cfgfiletest.Refused(t, parseConfig, base, c.from, c.to, c.want)
	}
	if _, err := ParseConfig([]byte(base + "---\n" + base)); err == nil || !strings.Contains(err.Error(), "more than one YAML document") {
		t.Errorf("two documents: %v", err)
	}
	if _, err := LoadConfig("/dev/zero"); err == nil || !strings.Contains(err.Error(), "64 MiB") {
		t.Errorf("LoadConfig(/dev/zero): %v, want the 64 MiB limit", err)
	}
}
