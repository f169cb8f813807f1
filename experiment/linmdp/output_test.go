package linmdp

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	agents "github.com/dprl/dprl/agents/linmdp"
	model "github.com/dprl/dprl/model/linmdp"
)

// fileOf returns the file form of m.
func fileOf(m *model.MDP) model.File {
	return model.File{Name: m.Name, Horizon: m.H, Features: m.Phi, Mu: m.Mu, Theta: m.Theta, Init: m.Init}
}

func readJSON(t *testing.T, path string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	return m
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
	for _, seeds := range []int{1, 2} {
		r := zeroResult(t, seeds)
		dir := t.TempDir()
		_, summary, err := r.Write(dir, nil)
		if err != nil {
			t.Fatalf("%d seeds: %v", seeds, err)
		}
		m := readJSON(t, filepath.Join(dir, "manifest.json"))
		c0 := m["cells"].([]any)[0].(map[string]any)
		u, _ := c0["undefined"].(map[string]any)
		if c0["growth_exponent_last_decade"] != nil || u["growth_exponent_last_decade"] == nil {
			t.Errorf("%d seeds: growth %v, undefined %v: want null with a reason", seeds, c0["growth_exponent_last_decade"], u)
		}
		if seeds == 1 {
			if c0["final_regret_ci95_lo"] != nil || u["final_regret_ci95_lo"] == nil {
				t.Errorf("one seed: CI lo %v, want null with a reason", c0["final_regret_ci95_lo"])
			}
			if !strings.Contains(summary, "n=1, no CI") || strings.Contains(summary, "95% CI]") {
				t.Errorf("one-seed summary claims a CI")
			}
		}
	}
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
	data, err := json.Marshal(fileOf(m))
	if err != nil {
		t.Fatal(err)
	}
	envPath := filepath.Join(tmp, "rs.json")
	if err := os.WriteFile(envPath, data, 0o644); err != nil {
		t.Fatal(err)
	}
	cfgText := strings.NewReplacer(
		"{name: E2s, kind: latentriver, m: 3, copies: 10, horizon: 6}", "{name: F, kind: file, path: "+envPath+", horizon: 9}",
		"agents: [lsvi-ucb, rare-switch, ngo, ngo-printed, rare-switch-reg, luyo-batched, luyo-zcdp, batch-twin, luyo-nonbatched]", "agents: [lsvi-ucb]",
		"episodes: 300", "episodes: 20",
	).Replace(smallConfig)
	cfgPath := filepath.Join(tmp, "c.yaml")
	if err := os.WriteFile(cfgPath, []byte(cfgText), 0o644); err != nil {
		t.Fatal(err)
	}
	suite, err := LoadSuite(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	if _, _, err := RunSuite(context.Background(), suite, Options{Workers: 1}, out, nil); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{filepath.Join(out, "manifest.json"), filepath.Join(out, "small", "manifest.json")} {
		man := readJSON(t, path)
		if man["git_commit"] != "unknown" || man["dprl_version"] == nil || man["go_version"] == nil {
			t.Errorf("%s: provenance %v %v %v", path, man["git_commit"], man["dprl_version"], man["go_version"])
		}
		roles := map[string]bool{}
		inputs, _ := man["inputs"].([]any)
		for _, x := range inputs {
			e := x.(map[string]any)
			if len(e["sha256"].(string)) == 64 {
				roles[e["role"].(string)] = true
			}
		}
		if !roles["config"] || !roles["env"] {
			t.Errorf("%s: inputs %v lack the config or env file hash", path, man["inputs"])
		}
		files, _ := man["files"].([]any)
		mst, _ := os.Stat(path)
		for _, f := range files {
			st, err := os.Stat(filepath.Join(filepath.Dir(path), f.(string)))
			if err != nil || st.ModTime().After(mst.ModTime()) {
				t.Errorf("%s: file %v missing or newer than the manifest", path, f)
			}
		}
		if len(files) == 0 {
			t.Errorf("%s lists no files", path)
		}
	}
	bm := readJSON(t, filepath.Join(out, "small", "manifest.json"))
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
