package lq

import (
	"strings"
	"testing"

	"github.com/dprl/dprl/experiment/internal/cfgfile/cfgfiletest"
)

// TestParseStrictAndExplicitZeros: a second YAML document and duplicate keys are rejected,
// explicit zeros that would become defaults (system: "", the practical references: 0 and
// budget: 0) are refused with the allowed range, and calibration names follow the common
// vocabulary (strict is an alias of exact).
func TestParseStrictAndExplicitZeros(t *testing.T) {
	base, prac := string(embedded), string(practicalEmbedded)
	for _, c := range []struct {
		doc, from, to, want string
		parse               func([]byte) error
	}{
		{base, "system: lq-e1", "system: ''", "system: must be lq-e1 or the path", parseLQ},
		{base, "alpha: 0.05", "alpha: 0.05\nalpha: 0.05", "already defined", parseLQ},
		{base, "calibration: exact", "calibration: loose", "allowed: exact (alias strict), paper", parseLQ},
		{prac, "references: 4", "references: 0", "references: must be in [1, 64]", parsePractical},
		{prac, "budget: 4", "budget: 0", "budget: must be in (0,", parsePractical},
	} {
		cfgfiletest.Refused(t, c.parse, c.doc, c.from, c.to, c.want)
	}
	for _, c := range []struct {
		doc   string
		parse func([]byte) error
	}{{base, parseLQ}, {prac, parsePractical}} {
		if err := c.parse([]byte(c.doc + "---\n" + c.doc)); err == nil || !strings.Contains(err.Error(), "more than one YAML document") {
			t.Errorf("two documents: %v", err)
		}
	}
	c, err := ParseConfig([]byte(strings.Replace(base, "calibration: exact", "calibration: strict", 1)))
	if err != nil || c.Calibration != "exact" {
		t.Errorf("alias strict: %v, config %+v, want calibration exact", err, c)
	}
	if _, err := LoadConfig("/dev/zero"); err == nil || !strings.Contains(err.Error(), "64 MiB") {
		t.Errorf("LoadConfig(/dev/zero): %v, want the 64 MiB limit", err)
	}
}

func parseLQ(b []byte) error { _, err := ParseConfig(b); return err }

func parsePractical(b []byte) error { _, err := ParsePracticalExpConfig(b); return err }
