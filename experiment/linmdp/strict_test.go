package linmdp

import (
	"strings"
	"testing"

	"github.com/dprl/dprl/experiment/internal/cfgfile/cfgfiletest"
)

// TestParseStrictAndExplicitZeros: a second YAML document is rejected (the block form used to
// be probed non-strictly), and an explicit zero multiplier or empty tie-break (read as unset)
// is refused with the allowed range, in a single configuration and in a suite's blocks.
// parseSuite is ParseSuite's error (cfgfiletest.Refused).
func parseSuite(b []byte) error { _, err := ParseSuite(b); return err }

func TestParseStrictAndExplicitZeros(t *testing.T) {
	suite := "name: s\nblocks:\n" + indent(smallConfig)
	for _, c := range []struct{ doc, from, to, want string }{
		{smallConfig, "{name: theory, c_beta: 1}", "{name: theory, c_beta: 1, match_c_beta: 0}", "beta_modes[0].match_c_beta: must be a finite number > 0"},
		{smallConfig, "{name: tuned, match_c_beta: 0.2}", "{name: tuned, c_beta: 0, match_c_beta: 0.2}", "beta_modes[1].c_beta"},
		{smallConfig, "tie_break: bonus", "tie_break: ''", "tie_break: must be one of"},
		{suite, "{name: tuned, match_c_beta: 0.2}", "{name: tuned, c_beta: 0, match_c_beta: 0.2}", "blocks[0].beta_modes[1].c_beta"},
		{smallConfig, "p: 0.05", "p: 0.05\np: 0.05", "already defined"},
	} {
		cfgfiletest.Refused(t, parseSuite, c.doc, c.from, c.to, c.want)
	}
	for _, doc := range []string{smallConfig + "---\n" + smallConfig, suite + "---\nname: t\n"} {
		if _, err := ParseSuite([]byte(doc)); err == nil || !strings.Contains(err.Error(), "more than one YAML document") {
			t.Errorf("two documents: %v", err)
		}
	}
	if _, err := ParseSuite([]byte(suite)); err != nil {
		t.Errorf("suite: %v", err)
	}
	if _, err := LoadSuite("/dev/zero"); err == nil || !strings.Contains(err.Error(), "64 MiB") {
		t.Errorf("LoadSuite(/dev/zero): %v, want the 64 MiB limit", err)
	}
}

// indent turns a configuration into the first item of a YAML sequence.
func indent(s string) string {
	lines := strings.Split(strings.TrimPrefix(s, "\n"), "\n")
	for i, l := range lines {
		switch {
		case l == "":
		case i == 0:
			lines[i] = "  - " + l
		default:
			lines[i] = "    " + l
		}
	}
	return strings.Join(lines, "\n")
}

// TestCellCalibration: every cell records its agent's calibration in the common vocabulary
// (exact for ngo's corrected constants, paper for the printed ones and Luyo's App. E.1, zcdp
// for the §4.6 recalibration, none for non-private agents).
func TestCellCalibration(t *testing.T) {
	cfg, err := ParseConfig([]byte(smallConfig))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"lsvi-ucb": "", "rare-switch": "", "ngo": "exact", "ngo-printed": "paper", "rare-switch-reg": "",
		"luyo-batched": "paper", "luyo-zcdp": "zcdp", "batch-twin": "", "luyo-nonbatched": "paper"}
	for _, c := range cfg.Cells() {
		if w, ok := want[c.Agent]; !ok || c.Calibration != w {
			t.Errorf("cell %s: calibration %q, want %q", c.Label, c.Calibration, w)
		}
	}
	for _, n := range AgentNames() {
		if strings.HasPrefix(n, "practical-lsvi") && n != "practical-lsvi-noiseoff" && AgentCalibration(n) != "exact" {
			t.Errorf("%s: calibration %q, want exact", n, AgentCalibration(n))
		}
	}
}
