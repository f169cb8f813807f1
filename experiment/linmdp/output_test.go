package linmdp

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	agents "github.com/dprl/dprl/agents/linmdp"
	"github.com/dprl/dprl/experiment/rundir/rundirtest"
	model "github.com/dprl/dprl/model/linmdp"
)

// fileOf returns the file form of m.
func fileOf(m *model.MDP) model.File {
	return model.File{Name: m.Name, Horizon: m.H, Features: m.Phi, Mu: m.Mu, Theta: m.Theta, Init: m.Init}
}

// zeroResult is a result whose every curve has zero regret at every checkpoint.
func zeroResult(t *testing.T, seeds int) *Result {
	t.Helper()
	cfg, err := ParseConfig([]byte(smallConfig))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Seeds = cfg.Seeds[:0]
	for s := range seeds {
		cfg.Seeds = append(cfg.Seeds, uint64(s+1))
	}
	r := &Result{Config: cfg, Checkpoints: Checkpoints(cfg.Episodes, cfg.Checkpoints), VStar: map[string]float64{"E2s": 1}, Workers: 1}
	for _, c := range cfg.Cells() {
		cr := CellResult{Cell: c}
		for _, s := range cfg.Seeds {
			cr.Runs = append(cr.Runs, SeedResult{Seed: s, Cum: make([]float64, len(r.Checkpoints)), Info: agents.Info{Agent: c.Agent}})
		}
		r.Cells = append(r.Cells, cr)
	}
	return r
}

// TestZeroRegretNoNaN: a zero-regret curve has no growth exponent; the manifest says null with
// a reason instead of failing on NaN (today `reproduce linear-mdp` crashes), and a one-seed run
// claims no confidence interval anywhere.
func TestZeroRegretNoNaN(t *testing.T) {
	rundirtest.CheckZeroRegret(t, zeroResult, "curves", "extras.linmdp.growth_exponent_last_decade", "final_ci95_lo")
}

// TestManifestHonestLinMDP: provenance (commit "unknown" under go test), the SHA-256 of the
// config and model files, the file's own H, no ε/δ without a private agent, every file listed
// and written before the manifest.
func TestManifestHonestLinMDP(t *testing.T) {
	tmp := t.TempDir()
	// A model file with H = 4, given a horizon of 9 in the config (ignored for kind file).
	envCfg := "name: f\nkind: riverswim\nn: 3\nhorizon: 4\n"
	spec, err := func() (EnvSpec, error) {
		var e EnvSpec
		cfg, err := ParseConfig([]byte(strings.Replace(smallConfig, "{name: E2s, kind: latentriver, m: 3, copies: 10, horizon: 6}", "{name: f, kind: riverswim, n: 3, horizon: 4}", 1)))
		if err != nil {
			return e, err
		}
		return cfg.Envs[0], nil
	}()
	if err != nil {
		t.Fatal(err, envCfg)
	}
	m, err := spec.Build()
	if err != nil {
		t.Fatal(err)
	}
	envPath := rundirtest.WriteJSON(t, tmp, "rs.json", fileOf(m))
	cfgText := strings.NewReplacer(
		"{name: E2s, kind: latentriver, m: 3, copies: 10, horizon: 6}", "{name: F, kind: file, path: "+envPath+", horizon: 9}",
		"agents: [lsvi-ucb, rare-switch, ngo, ngo-printed, rare-switch-reg, luyo-batched, luyo-zcdp, batch-twin, luyo-nonbatched]", "agents: [lsvi-ucb]",
		"episodes: 300", "episodes: 20",
	).Replace(smallConfig)
	cfgPath := rundirtest.WriteFile(t, tmp, "c.yaml", []byte(cfgText))
	suite, err := LoadSuite(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	if _, _, err := RunSuite(context.Background(), suite, Options{Workers: 1}, out, nil); err != nil {
		t.Fatal(err)
	}
	// A one-block suite is written at the run directory itself (the one layout).
	for _, dir := range []string{out} {
		man := rundirtest.ReadManifest(t, dir)
		rundirtest.CheckProvenance(t, man)
		if roles := rundirtest.HashedRoles(man); !roles["config"] || !roles["env"] {
			t.Errorf("%s: inputs %v lack the config or env file hash", dir, man["inputs"])
		}
		rundirtest.CheckFiles(t, dir, man)
	}
	bm := rundirtest.ReadJSON(t, filepath.Join(out, "manifest.json"))
	c := bm["config"].(map[string]any)
	env := c["envs"].([]any)[0].(map[string]any)
	if env["horizon"] != 4.0 {
		t.Errorf("env horizon %v, want the file's 4", env["horizon"])
	}
	if c["epsilons"] != nil || c["delta"] != nil {
		t.Errorf("non-private block records ε %v / δ %v", c["epsilons"], c["delta"])
	}
	// A second run into the same directory is refused.
	if _, _, err := RunSuite(context.Background(), suite, Options{Workers: 1}, out, nil); err == nil || !strings.Contains(err.Error(), "--force") {
		t.Errorf("rerun into an earlier run: err = %v", err)
	}
	// The manifest comes last: a summary that cannot be written leaves no manifest.
	out2 := t.TempDir()
	if err := os.MkdirAll(filepath.Join(out2, "summary.md"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, _, err := RunSuite(context.Background(), suite, Options{Workers: 1}, out2, nil); err == nil {
		t.Fatal("unwritable summary.md: no error")
	}
	if _, err := os.Stat(filepath.Join(out2, "manifest.json")); err == nil {
		t.Error("manifest written although the summary failed")
	}
}

// TestNonPrivateDiagnosticLabelled: the exact-Gram switching diagnostic is computed from raw
// statistics; every place it is written says so (JSON keys, summary column and sentence).
func TestNonPrivateDiagnosticLabelled(t *testing.T) {
	r := zeroResult(t, 2)
	for i := range r.Cells {
		for j := range r.Cells[i].Runs {
			r.Cells[i].Runs[j].Spurious = 3
		}
	}
	dir := t.TempDir()
	_, summary, err := r.Write(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if strings.Contains(string(data), `"spurious_updates`) || !strings.Contains(string(data), `"nonprivate_diag_spurious_updates`) {
		t.Error("manifest writes the exact-Gram diagnostic under a key without the nonprivate_diag_ prefix")
	}
	if low := strings.ToLower(summary); !strings.Contains(low, "non-private diagnostic") || !strings.Contains(low, "raw") ||
		!strings.Contains(summary, "non-private diag.: spurious") {
		t.Error("summary does not label the exact-Gram diagnostic as non-private")
	}
}

// TestOutputNamesLinMDP: names that become file or directory names cannot escape.
func TestOutputNamesLinMDP(t *testing.T) {
	for _, tc := range []struct{ from, to, field string }{
		{"name: small", "name: ../x", "name"},
		{"{name: E2s,", "{name: ../../E,", "envs[0].name"},
		{"{name: E2s,", `{name: "a\\0b",`, "envs[0].name"},
		{"{name: theory,", "{name: /abs,", "beta_modes[0].name"},
	} {
		_, err := ParseConfig([]byte(strings.Replace(smallConfig, tc.from, tc.to, 1)))
		if err == nil || !strings.HasPrefix(err.Error(), tc.field) {
			t.Errorf("%s: err = %v, want an error naming %s", tc.to, err, tc.field)
		}
	}
	if _, err := ParseSuite([]byte("name: s\nblocks:\n  - name: ..\n    episodes: 10\n")); err == nil || !strings.Contains(err.Error(), "blocks[0].name") {
		t.Errorf("block name ..: err = %v", err)
	}
}
