package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const lmTestConfig = `name: lm-test
episodes: 60
seeds: [1, 2]
delta: 1.0e-5
p: 0.05
points: 20
beta_mults: [1, 0.01]
shift_mult: 0.01
envs:
  - {kind: two-state-hard, dim: 3, horizon: 3, q: 0.2, rho: 0.5}
  - {kind: hard-to-learn, dim: 3, horizon: 3}
curves:
  - {algorithm: ucrl-vtr, mode: none}
  - {algorithm: ucrl-vtr, mode: jdp, epsilons: [0.5]}
  - {algorithm: ucrl-vtr, mode: ldp, epsilons: [0.5]}
  - {algorithm: ucrl-vtr+, mode: jdp, epsilons: [0.5]}
  - {algorithm: linopt-po, mode: ldp, epsilons: [0.5]}
`

// TestLinearMixtureReproduce runs a tiny configuration with 1 and 2 workers: both write a
// complete run directory and bit-identical CSVs.
func TestLinearMixtureReproduce(t *testing.T) {
	dir := t.TempDir()
	cfg := putFile(t, dir, "lm.yaml", lmTestConfig)
	var first map[string][]byte
	for _, w := range []string{"1", "2"} {
		out := filepath.Join(dir, "w"+w)
		code, stdout, stderr := runCLI(t, "reproduce", "linear-mixture", "--config", cfg, "--workers", w, "--out", out, "--quiet")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		if !strings.Contains(stdout, "## Claims") {
			t.Errorf("summary without claims: %s", stdout)
		}
		for _, f := range []string{"manifest.json", "summary.md", "summary.claims.json"} {
			if st, err := os.Stat(filepath.Join(out, f)); err != nil || st.Size() == 0 {
				t.Fatalf("missing %s", f)
			}
		}
		csvs, _ := filepath.Glob(filepath.Join(out, "curves", "*", "*.csv"))
		if len(csvs) != 2*2*5 {
			t.Fatalf("%d CSVs, want 20", len(csvs))
		}
		got := map[string][]byte{}
		for _, c := range csvs {
			rel, _ := filepath.Rel(out, c)
			got[rel], _ = os.ReadFile(c)
		}
		if first == nil {
			first = got
			continue
		}
		for k, v := range first {
			if !bytes.Equal(v, got[k]) {
				t.Fatalf("%s differs between 1 and 2 workers", k)
			}
		}
	}
}

func TestLinearMixtureBadInput(t *testing.T) {
	dir := t.TempDir()
	bad := putFile(t, dir, "bad.yaml", lmTestConfig+"bogus: 1\n")
	badEps := putFile(t, dir, "eps.yaml", strings.Replace(lmTestConfig, "epsilons: [0.5]}\n  - {algorithm: ucrl-vtr, mode: ldp", "epsilons: [-1]}\n  - {algorithm: ucrl-vtr, mode: ldp", 1))
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"reproduce", "linear-mixture", "--episodes", "5"}, "episodes"},
		{[]string{"reproduce", "linear-mixture", "--config", bad}, "bogus"},
		{[]string{"reproduce", "linear-mixture", "--config", badEps}, "epsilon"},
		{[]string{"reproduce", "linear-mixture", "--config", cfgMissing(dir)}, "no such file"},
		{[]string{"reproduce", "linear-mixture", "--seeds", "x"}, "--seeds"},
		{[]string{"reproduce", "linear-mixture", "--workers", "-1", "--episodes", "10"}, "--workers"},
	} {
		out := filepath.Join(dir, "out")
		code, _, stderr := runCLI(t, append(c.args, "--out", out, "--quiet")...)
		if code != 2 {
			t.Errorf("%v: exit %d, want 2 (stderr %q)", c.args, code, stderr)
		}
		if !strings.Contains(stderr, c.want) {
			t.Errorf("%v: stderr %q does not mention %q", c.args, stderr, c.want)
		}
		if _, err := os.Stat(filepath.Join(out, "manifest.json")); err == nil {
			t.Errorf("%v: wrote a manifest", c.args)
		}
	}
}

func cfgMissing(dir string) string { return filepath.Join(dir, "missing.yaml") }

func TestListLinearMixture(t *testing.T) {
	var b bytes.Buffer
	writeList(&b)
	for _, w := range []string{"two-state-hard", "hard-to-learn", "ucrl-vtr/jdp", "ucrl-vtr/ldp", "laplace, zcdp", "linopt-po", "ucrl-vtr+"} {
		if !strings.Contains(b.String(), w) {
			t.Errorf("list lacks %q", w)
		}
	}
}
