package tabular

import (
	"strings"
	"testing"
)

// TestParseConfigStrictAndExplicitZeros: a second YAML document and duplicate keys are
// rejected, and a field whose zero means "default" is refused when set to zero explicitly
// (beta: 0 and multiplier: 0 used to become 0.1 and 1 silently), with the allowed range.
func TestParseConfigStrictAndExplicitZeros(t *testing.T) {
	const base = "name: x\nepisodes: 10\nseeds: [1]\n"
	const curves = "curves: [{agent: ucbvi}]\n"
	for _, c := range []struct{ yaml, want string }{
		{base + curves, ""},
		{base + curves + "beta: 0.2\nbonus: {multiplier: 2}\n", ""},
		{base + curves + "beta: 0\n", "beta: must be in (0, 1), got 0"},
		{base + curves + "bonus: {multiplier: 0}\n", "bonus.multiplier: must be in (0, 1e6]"},
		{base + "curves: [{agent: ucbvi, bonus: {multiplier: 0}}]\n", "curves[0].bonus.multiplier"},
		{base + curves + "env: {name: riverswim, horizon: 0}\n", "env.horizon: must be in [1, 10000]"},
		{base + curves + "noise: ''\n", "noise: must be seeded or secure"},
		{base + "curves: [{agent: dp-ucbvi-jdp, epsilon: 1, calibration: ''}]\n", "curves[0].calibration"},
		{base + curves + "bonus: {multiplier: 2e6}\n", "multiplier: must be in (0, 1e6]"},
		{base + curves + "---\nname: y\n", "more than one YAML document"},
		{base + curves + "beta: 0.1\nbeta: 0.2\n", "already defined"},
	} {
		_, err := ParseConfig([]byte(c.yaml))
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%q: %v", c.yaml, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%q: error %v, want one containing %q", c.yaml, err, c.want)
		}
	}
}

// TestLoadConfigBounded: a config file is read with a size bound (a device is not read
// without end).
func TestLoadConfigBounded(t *testing.T) {
	if _, err := LoadConfig("/dev/zero"); err == nil || !strings.Contains(err.Error(), "64 MiB") {
		t.Fatalf("LoadConfig(/dev/zero): %v, want the 64 MiB limit", err)
	}
}

// TestCalibrationNames: the tabular calibrations use the common vocabulary (exact, paper,
// unit); the old name strict is accepted as an alias and every output carries "exact".
func TestCalibrationNames(t *testing.T) {
	for _, c := range []struct{ in, want string }{{"", "exact"}, {"strict", "exact"}, {"exact", "exact"}, {"paper", "paper"}, {"unit", "unit"}} {
		y := "name: x\nepisodes: 10\nseeds: [1]\ncurves: [{agent: dp-ucbvi-jdp, epsilon: 1"
		if c.in != "" {
			y += ", calibration: " + c.in
		}
		cfg, err := ParseConfig([]byte(y + "}]\n"))
		if err != nil {
			t.Fatalf("%q: %v", c.in, err)
		}
		cv := cfg.Curves[0]
		if cv.Calibration != c.want || !strings.HasSuffix(cv.Label, " "+c.want) {
			t.Errorf("calibration %q: got %q, label %q; want %q", c.in, cv.Calibration, cv.Label, c.want)
		}
		ac, err := cfg.agentConfig(cv)
		if err != nil || ac.Privacy.Calibration.String() != c.want {
			t.Errorf("calibration %q: agent calibration %v (%v), want %q", c.in, ac.Privacy.Calibration, err, c.want)
		}
	}
	if _, err := ParseConfig([]byte("name: x\nepisodes: 10\nseeds: [1]\ncurves: [{agent: dp-ucbvi-jdp, epsilon: 1, calibration: loose}]\n")); err == nil ||
		!strings.Contains(err.Error(), "exact (alias strict), paper, unit") {
		t.Errorf("unknown calibration: %v, want the allowed names", err)
	}
	for _, f := range []string{"strict", "exact"} {
		c, err := QiaoFig1Config(f)
		if err != nil || c.Curves[1].Calibration != "exact" || strings.Contains(c.Curves[1].Label, "strict") {
			t.Errorf("QiaoFig1Config(%q): %v, curve %+v", f, err, c.Curves[1])
		}
	}
}
