package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/dprl/dprl/model/tabular/tabulartest"
)

// TestPracticalAgentsLearnOnFiles: every practical private agent of every family runs on a
// model file of its family through `dprl run --family F --env file --env-file …` at
// (ε = 1, δ = 1e-5) and learns: over the last tenth of the episodes its mean per-episode regret
// is at most half of what it paid over the first 1 % (when every agent plays with no data).
// The tabular files are the homogeneous RiverSwim the statistics are pooled on and a
// time-inhomogeneous two-state MDP (statistics kept per step).
func TestPracticalAgentsLearnOnFiles(t *testing.T) {
	dir := t.TempDir()
	river := tabulartest.RiverSwimFile(t, dir, "riverswim.yaml", 10, "yaml")
	small := "../../model/tabular/testdata/small.json"
	for _, c := range []struct {
		family, file, agent, episodes string
	}{
		{"tabular", small, "practical-jdp", "5000"},
		{"tabular", small, "practical-psrl-jdp", "5000"},
		{"tabular", small, "practical-ldp", "20000"},
		{"tabular", river, "practical-jdp", "20000"},
		{"linmdp", "../../model/linmdp/testdata/tiny.yaml", "practical-lsvi", "5000"},
		{"linmdp", "../../model/linmdp/testdata/tiny.yaml", "practical-lsvi-batched", "5000"},
		{"linmix", "../../model/linmix/testdata/tiny.yaml", "practical-vtr/jdp", "5000"},
		{"linmix", "../../model/linmix/testdata/tiny.yaml", "practical-vtr/ldp", "5000"},
		{"lq", "../../model/lq/testdata/lqe1.yaml", "practical-ofu-rl", "100000"},
	} {
		name := c.family + "/" + filepath.Base(c.file) + "/" + c.agent
		t.Run(name, func(t *testing.T) {
			out := filepath.Join(dir, strings.NewReplacer("/", "-", ".", "-").Replace(name))
			code, _, stderr := runCLI(t, "run", "--family", c.family, "--env", "file", "--env-file", c.file, "--agent", c.agent,
				"--epsilon", "1", "--delta", "1e-5", "--episodes", c.episodes, "--seeds", "1", "--quiet", "--out", out)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			first, last := learningRatio(t, filepath.Join(out, "regret_long.csv"))
			if !(last <= 0.5*first) {
				t.Errorf("does not learn: per-episode regret %.4g over the last 10 %% vs %.4g over the first 1 %%", last, first)
			}
		})
	}
}

// learningRatio reads the one curve of a regret_long.csv (cumulative regret at checkpoints)
// and returns its mean per-episode regret over the first 1 % and the last 10 % of K.
func learningRatio(t *testing.T, path string) (first, last float64) {
	t.Helper()
	var ep, cum []float64
	for _, r := range readCSV(t, path) {
		k, err1 := strconv.ParseFloat(r[3], 64)
		v, err2 := strconv.ParseFloat(r[4], 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("%s: bad row %q", path, r)
		}
		ep, cum = append(ep, k), append(cum, v)
	}
	if len(ep) < 20 {
		t.Fatalf("%s: %d checkpoints", path, len(ep))
	}
	// at returns the cumulative regret at the last checkpoint ≤ k (linear from 0 before the
	// first) and that checkpoint's episode.
	at := func(k float64) (float64, float64) {
		if k < ep[0] {
			return cum[0] * k / ep[0], k
		}
		i := 0
		for i+1 < len(ep) && ep[i+1] <= k {
			i++
		}
		return cum[i], ep[i]
	}
	K := ep[len(ep)-1]
	r1, k1 := at(K / 100)
	r9, k9 := at(0.9 * K)
	return r1 / k1, (cum[len(cum)-1] - r9) / (K - k9)
}

// TestConfigRelativeEnvFile: a relative env.file (RunSpec) or env.path (the tabular sweep block)
// in a configuration file is resolved against the configuration file's directory, not the
// working directory.
func TestConfigRelativeEnvFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cfg")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	m, err := os.ReadFile("../../model/tabular/testdata/small.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "m.json"), m, 0o644); err != nil {
		t.Fatal(err)
	}
	for name, doc := range map[string]string{
		"spec.yaml":  "family: tabular\nenv: {name: file, file: m.json}\nagents: [practical-jdp]\nprivacy: {epsilons: [1], delta: 1.0e-5}\nepisodes: 200\nseeds: [1]\n",
		"sweep.yaml": "name: s\nenv: {name: file, path: m.json}\nepisodes: 200\nseeds: [1]\ncurves: [{label: u, agent: ucbvi}]\n",
	} {
		p := putFile(t, dir, name, doc)
		if code, _, stderr := runCLI(t, "run", "--config", p, "--quiet", "--out", filepath.Join(t.TempDir(), "out")); code != 0 {
			t.Errorf("%s: exit %d: %s", name, code, stderr)
		}
	}
}
