package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dprl/dprl/internal/auditregistry"
)

func TestAuditCLI(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"audit"}, "name targets"},
		{[]string{"audit", "nope/none"}, "unknown target"},
		{[]string{"audit", "--family", "nope"}, "--family"},
		{[]string{"audit", "--all", "mechanism/laplace"}, "--all"},
		{[]string{"audit", "mechanism/laplace", "--runs", "10"}, "--runs"},
		{[]string{"audit", "mechanism/laplace", "--confidence", "1"}, "--confidence"},
		{[]string{"audit", "mechanism/laplace", "--workers", "-1"}, "--workers"},
	} {
		code, _, stderr := runCLI(t, append(c.args, "--out", filepath.Join(dir, "bad"))...)
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 mentioning %q", c.args, code, stderr, c.want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "bad")); !os.IsNotExist(err) {
		t.Errorf("bad input left an output directory")
	}

	code, stdout, _ := runCLI(t, "audit", "--list")
	if code != 0 || !strings.Contains(stdout, "tabular/dp-ucbvi-jdp/noise-div4") || !strings.Contains(stdout, "mechanism/tree-gaussian/redrawn-per-release") {
		t.Fatalf("audit --list: exit %d, output %q", code, stdout)
	}

	out := filepath.Join(dir, "ok")
	code, stdout, stderr := runCLI(t, "audit", "mechanism/laplace", "mechanism/laplace/*", "--runs", "2000", "--out", out, "--quiet")
	if code != 0 {
		t.Fatalf("audit: exit %d, stderr %q", code, stderr)
	}
	if !strings.Contains(stdout, "flagged (broken variant)") || !strings.Contains(stdout, "| pass |") {
		t.Errorf("audit table lacks verdicts:\n%s", stdout)
	}
	var rep struct {
		OK      bool
		Results []struct {
			Target    string  `json:"target"`
			EpsilonLB float64 `json:"epsilon_lower_bound"`
		}
	}
	data, err := os.ReadFile(filepath.Join(out, "audit.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &rep); err != nil || !rep.OK || len(rep.Results) != 2 {
		t.Errorf("audit.json: %v, %+v", err, rep)
	}
	if _, err := os.Stat(filepath.Join(out, "audit.md")); err != nil {
		t.Error(err)
	}

	// Without --quiet, stderr (not a terminal here) shows the runs done across every target
	// with an ETA, ending at the total: 2 targets × 2 sides × 2000 runs.
	code, _, stderr = runCLI(t, "audit", "mechanism/laplace", "mechanism/laplace/*", "--runs", "2000", "--out", out, "--force")
	if code != 0 {
		t.Fatalf("audit: exit %d, stderr %q", code, stderr)
	}
	for _, want := range []string{"dprl: audit: 1/8000 runs (0%)", "dprl: audit: 8000/8000 runs (100%)", "eta "} {
		if !strings.Contains(stderr, want) {
			t.Errorf("audit progress lacks %q:\n%s", want, stderr)
		}
	}
}

// TestAuditRegistry: the CLI sees every family's targets (the statistical check that correct
// targets pass and broken variants are flagged is TestAuditEveryFamily in
// internal/auditregistry): unique names, and at least one correct target and one broken
// variant in each family.
func TestAuditRegistry(t *testing.T) {
	names := map[string]bool{}
	correct, broken := map[string]int{}, map[string]int{}
	for _, tg := range auditregistry.All() {
		if names[tg.Name] {
			t.Errorf("duplicate target %s", tg.Name)
		}
		names[tg.Name] = true
		if tg.Broken {
			broken[tg.Family]++
		} else {
			correct[tg.Family]++
		}
	}
	for _, f := range []string{"mechanism", "tabular", "linear-mdp", "linear-mixture", "lq"} {
		if correct[f] == 0 || broken[f] == 0 {
			t.Errorf("family %s: %d correct targets, %d broken variants; want at least one of each", f, correct[f], broken[f])
		}
	}
}

// TestAuditFamilyNames: `dprl audit --family` takes the family names of `dprl run` (linmdp,
// linmix) as well as the audit targets' own prefixes.
func TestAuditFamilyNames(t *testing.T) {
	for _, fam := range []string{"linmix", "linear-mixture"} {
		code, _, stderr := runCLI(t, "audit", "--family", fam, "--runs", "1", "--out", t.TempDir())
		if code != 2 || strings.Contains(stderr, "has no targets") || !strings.Contains(stderr, "--runs") {
			t.Errorf("audit --family %s: exit %d, %s (want the --runs refusal, not an unknown family)", fam, code, stderr)
		}
	}
}
