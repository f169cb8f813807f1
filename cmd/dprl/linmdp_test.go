package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const linSmall = `
name: lin-small
episodes: 200
seeds: [1, 2]
delta: 1.0e-5
p: 0.05
checkpoints: 8
epsilons: [10]
agents: [lsvi-ucb, rare-switch, ngo, luyo-batched, batch-twin, luyo-nonbatched]
envs:
  - {name: E1s, kind: riverswim, n: 4, horizon: 5}
beta_modes:
  - {name: theory, c_beta: 1}
`

func TestLinearMDPReproduce(t *testing.T) {
	dir := t.TempDir()
	cfg := putFile(t, dir, "c.yaml", linSmall)
	out := filepath.Join(dir, "out")
	code, stdout, stderr := runCLI(t, "reproduce", "linear-mdp", "--config", cfg, "--out", out, "--quiet", "--workers", "2")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "Privacy cost") {
		t.Errorf("summary missing: %s", stdout)
	}
	for _, f := range []string{"manifest.json", "summary.md", "regret-E1s.png", "privacy_cost_E1s.svg", "curves/E1s"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("missing %s", f)
		}
	}
	bad := filepath.Join(dir, "bad.yaml")
	_ = os.WriteFile(bad, []byte(strings.Replace(linSmall, "delta: 1.0e-5", "delta: 5", 1)), 0o644)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"reproduce", "linear-mdp", "--config", bad, "--out", filepath.Join(dir, "x")}, "delta"},
		{[]string{"reproduce", "linear-mdp", "--episodes", "1", "--out", filepath.Join(dir, "y")}, "episodes"},
		{[]string{"reproduce", "linear-mdp", "--seeds", "z", "--out", filepath.Join(dir, "z")}, "--seeds"},
		{[]string{"reproduce", "linear-mdp", "--workers", "-1", "--config", cfg, "--out", filepath.Join(dir, "w")}, "--workers"},
		{[]string{"reproduce", "linear-mdp", "--config", filepath.Join(dir, "none.yaml")}, "--config"},
	} {
		code, _, stderr := runCLI(t, c.args...)
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 mentioning %q", c.args, code, stderr, c.want)
		}
		if _, err := os.Stat(filepath.Join(c.args[len(c.args)-1], "manifest.json")); err == nil {
			t.Errorf("%v: manifest written despite bad input", c.args)
		}
	}
	var b strings.Builder
	writeList(&b)
	if !strings.Contains(b.String(), "luyo-nonbatched") || !strings.Contains(b.String(), "twostate100") {
		t.Error("dprl list: linear-MDP part incomplete")
	}
}
