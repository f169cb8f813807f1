package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestReproduceHelpAndOptions: every reproduction of the registry is a subcommand whose help
// shows the common flags and the options its family declares (a family's option named like a
// common flag sets that flag's default: practical-lq draws a logarithmic y axis).
func TestReproduceHelpAndOptions(t *testing.T) {
	for name, want := range map[string][]string{
		"qiao-fig1":                {"--calibration", "--preset", "--config", "--episodes", "--seeds", "--force", "--log-y"},
		"lq":                       {"--extended", "--multiplier"},
		"practical-lq":             {"--long", `log or linear (default "log")`},
		"practical-tabular":        {"--long"},
		"practical-linear-mixture": {"--long"},
		"practical-linear-mdp":     {"--long"},
		"linear-mdp":               {"--config"},
		"linear-mixture":           {"--config"},
	} {
		code, out, stderr := runCLI(t, "reproduce", name, "--help")
		if code != 0 {
			t.Fatalf("reproduce %s --help: exit %d: %s", name, code, stderr)
		}
		for _, w := range want {
			if !strings.Contains(out, w) {
				t.Errorf("reproduce %s --help lacks %q:\n%s", name, w, out)
			}
		}
	}
	code, _, stderr := runCLI(t, "reproduce", "nope", "--episodes", "3")
	if code != 2 || !strings.Contains(stderr, "qiao-fig1") || !strings.Contains(stderr, "practical-linear-mixture-long") {
		t.Errorf("unknown reproduction: exit %d, %s; want 2 and the available names", code, stderr)
	}
}

// TestReproduceConfig: --config replaces the embedded block by a configuration of the same
// family and suite (both keys may be omitted); another family or suite, or a run
// specification, is refused (exit status 2), as is an option that selects another embedded
// block.
func TestReproduceConfig(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string { return putFile(t, dir, name, s) }
	code, cfg, stderr := runCLI(t, "sweep", "config", "practical-lq", "--episodes", "40", "--seeds", "1")
	if code != 0 || !strings.HasPrefix(cfg, "family: lq\nsuite: practical\n") {
		t.Fatalf("sweep config: %d %q %s", code, cfg, stderr)
	}
	full := write("full.yaml", cfg)
	bare := write("bare.yaml", strings.TrimPrefix(cfg, "family: lq\nsuite: practical\n"))
	var csv [2]map[string]string
	for i, c := range []string{full, bare} {
		out := filepath.Join(dir, "out", string(rune('a'+i)))
		if code, _, stderr := runCLI(t, "reproduce", "practical-lq", "--config", c, "--out", out, "--quiet", "--workers", "1"); code != 0 {
			t.Fatalf("reproduce practical-lq --config %s: exit %d: %s", c, code, stderr)
		}
		csv[i] = hashCSVs(t, out)
	}
	if len(csv[0]) == 0 || len(csv[0]) != len(csv[1]) {
		t.Fatalf("%d vs %d CSVs", len(csv[0]), len(csv[1]))
	}
	for p, h := range csv[0] {
		if csv[1][p] != h {
			t.Errorf("%s differs between the configuration with and without family:/suite:", p)
		}
	}
	out := filepath.Join(dir, "refused")
	checkBad(t, []badCase{
		{"another family", []string{"reproduce", "lq", "--config", write("tab.yaml", "family: tabular\nname: x\nepisodes: 10\nseeds: [1]\ncurves: [{agent: ucbvi}]\n"), "--out", out}, "family tabular"},
		{"another suite", []string{"reproduce", "lq", "--config", full, "--out", out}, "suite"},
		{"the papers' block for a practical suite", []string{"reproduce", "practical-lq", "--config", write("lq.yaml", "family: lq\nname: x\nepisodes: 10\nseeds: [1]\nepsilons: [1]\n"), "--out", out}, "practical lq"},
		{"run specification", []string{"reproduce", "qiao-fig1", "--config", write("spec.yaml", "agents: [ucbvi]\nepisodes: 10\nseeds: [1]\n"), "--out", out}, "run specification"},
		{"embedded-only option", []string{"reproduce", "practical-linear-mixture", "--config", full, "--long", "--out", out}, "--long"},
		{"lq multiplier", []string{"reproduce", "lq", "--multiplier", "0", "--out", out}, "--multiplier"},
		{"lq extended twice", []string{"reproduce", "lq", "--extended=maybe", "--out", out}, "extended"},
	})
}
