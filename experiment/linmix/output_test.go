package linmix

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dprl/dprl/experiment/rundir/rundirtest"
	model "github.com/dprl/dprl/model/linmix"
)

const tinyConfig = `
name: tiny
episodes: 20
seeds: [1, 2]
delta: 1.0e-5
p: 0.05
points: 10
beta_mults: [1]
envs:
  - {kind: two-state-hard, dim: 3, horizon: 3, q: 0.1, rho: 0.5}
curves:
  - {algorithm: ucrl-vtr, mode: none}
  - {algorithm: ucrl-vtr, mode: jdp, epsilons: [0.5]}
`

// zeroResult is a result whose curves have zero regret at every checkpoint.
func zeroResult(t *testing.T, seeds int) *Result {
	t.Helper()
	c, err := ParseConfig([]byte(tinyConfig))
	if err != nil {
		t.Fatal(err)
	}
	c.Seeds = c.Seeds[:seeds]
	curves, err := c.curves()
	if err != nil {
		t.Fatal(err)
	}
	r := &Result{Config: c, Checkpoints: Checkpoints(c.Episodes, c.Points), Curves: curves, Workers: 1}
	for _, cv := range curves {
		for s := range cv.Runs {
			cv.Runs[s] = make([]float64, len(r.Checkpoints))
		}
	}
	return r
}

// TestZeroRegretNoNaN: zero-regret curves write valid JSON (growth exponent null with a
// reason) and one seed claims no confidence interval.
func TestZeroRegretNoNaN(t *testing.T) {
	rundirtest.CheckZeroRegret(t, zeroResult, "curves", "extras.linmix.growth_exponent", "final_ci95_lo")
}

// TestManifestHonestLinMix: provenance, input hashes (config, model file), the file's H, no
// calibration/ε on non-private curves, files listed and older than the manifest, refusal of
// an earlier run, and the manifest last.
func TestManifestHonestLinMix(t *testing.T) {
	tmp := t.TempDir()
	var psi []model.FileEntry
	for s := range 2 {
		for a := range 2 {
			for next := range 2 {
				psi = append(psi, model.FileEntry{S: s, A: a, Next: next, Vec: []float64{0.5}})
			}
		}
	}
	envPath := rundirtest.WriteJSON(t, tmp, "m.json", model.File{States: 2, Actions: 2, Horizon: 4, Dim: 1, Psi: psi, W: [][]float64{{1}},
		Reward: [][]float64{{0, 0.5}, {1, 0.2}}})
	text := strings.Replace(tinyConfig, "{kind: two-state-hard, dim: 3, horizon: 3, q: 0.1, rho: 0.5}", "{kind: file, file: "+envPath+", horizon: 9, dim: 7, q: 0.3}", 1)
	text = strings.Replace(text, "{algorithm: ucrl-vtr, mode: none}", "{algorithm: ucrl-vtr, mode: none, calibration: laplace, epsilons: [3]}", 1)
	cfgPath := rundirtest.WriteFile(t, tmp, "c.yaml", []byte(text))
	cfg, err := LoadConfig(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), cfg, Options{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if _, _, err := res.Write(dir, nil); err != nil {
		t.Fatal(err)
	}
	man := rundirtest.ReadManifest(t, dir)
	rundirtest.CheckProvenance(t, man)
	if roles := rundirtest.HashedRoles(man); !roles["config"] || !roles["env"] {
		t.Errorf("inputs %v lack the config or env hash", man["inputs"])
	}
	c := man["config"].(map[string]any)
	env := c["envs"].([]any)[0].(map[string]any)
	if env["horizon"] != 4.0 || env["dim"] != nil {
		t.Errorf("file env recorded as %v, want the file's H = 4 and no dim", env)
	}
	np := c["curves"].([]any)[0].(map[string]any)
	if np["calibration"] != nil || np["epsilons"] != nil {
		t.Errorf("non-private curve records %v", np)
	}
	if has := rundirtest.CheckFiles(t, dir, man); !has["summary.md"] || !has["summary.claims.json"] {
		t.Errorf("files %v lack the summaries", man["files"])
	}
	if _, _, err := res.Write(dir, nil); err == nil || !strings.Contains(err.Error(), "--force") {
		t.Errorf("rewrite into an earlier run: err = %v", err)
	}
	res.Output.Force = true
	if _, _, err := res.Write(dir, nil); err != nil {
		t.Errorf("forced rewrite: %v", err)
	}
	dir2 := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir2, "summary.claims.json"), 0o755); err != nil {
		t.Fatal(err)
	}
	res.Output.Force = false
	if _, _, err := res.Write(dir2, nil); err == nil {
		t.Fatal("unwritable summary.claims.json: no error")
	}
	if _, err := os.Stat(filepath.Join(dir2, "manifest.json")); err == nil {
		t.Error("manifest written although a summary failed")
	}
}

// TestOutputNamesLinMix: the experiment name cannot escape.
func TestOutputNamesLinMix(t *testing.T) {
	for _, name := range []string{"../x", "/abs", `a\b`} {
		_, err := ParseConfig([]byte(strings.Replace(tinyConfig, "name: tiny", "name: "+name, 1)))
		if err == nil || !strings.HasPrefix(err.Error(), "name") {
			t.Errorf("name %q: err = %v", name, err)
		}
	}
}
