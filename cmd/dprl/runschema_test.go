package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/dprl/dprl/experiment/engine"
	"github.com/dprl/dprl/internal/runschema"
	"github.com/dprl/dprl/privacy/ledger"
)

// fiveSuites are one tiny dprl run of an agent of each suite (tabular papers', tabular
// practical, linear MDP, linear mixture, LQ), private where the suite has a private agent.
var fiveSuites = []struct {
	name string
	args []string
}{
	{"tabular-papers", []string{"--agent", "dp-ucbvi-jdp", "--epsilon", "1"}},
	{"tabular-practical", []string{"--agent", "practical-jdp", "--epsilon", "1"}},
	{"linmdp", []string{"--family", "linmdp", "--agent", "ngo", "--epsilon", "1"}},
	{"linmix", []string{"--family", "linmix", "--agent", "ucrl-vtr/jdp", "--epsilon", "1"}},
	{"lq", []string{"--family", "lq", "--agent", "private-ofu-rl", "--epsilon", "1"}},
}

// TestRunDirectorySchemaEverySuite: one agent of each of the five suites writes a run
// directory that validates against the published schema (docs/run-directory.schema.json) with
// summary.md and curves/<env>/<curve>.csv; their manifests have identical top-level keys and
// identical per-curve keys; every curve's privacy object decodes as the ledger's report type
// and is composed by the ledger from the agent's registered mechanisms (every family's papers'
// agent and the practical agent); and the
// validator refuses a manifest with a family-specific key at the top level.
func TestRunDirectorySchemaEverySuite(t *testing.T) {
	if testing.Short() {
		t.Skip("runs five tiny experiments")
	}
	s, err := runschema.Compile()
	if err != nil {
		t.Fatal(err)
	}
	var topKeys, curveKeys []string
	for _, c := range fiveSuites {
		dir := filepath.Join(t.TempDir(), c.name)
		args := append([]string{"run", "--episodes", "40", "--seeds", "1-2", "--workers", "2", "--quiet", "--out", dir}, c.args...)
		if code, _, stderr := runCLI(t, args...); code != 0 {
			t.Fatalf("%s: exit %d: %s", c.name, code, stderr)
		}
		if err := runschema.ValidateDir(s, dir); err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
		if err != nil {
			t.Fatal(err)
		}
		var raw map[string]json.RawMessage
		if err := json.Unmarshal(data, &raw); err != nil {
			t.Fatal(err)
		}
		var curves []map[string]json.RawMessage
		if err := json.Unmarshal(raw["curves"], &curves); err != nil || len(curves) == 0 {
			t.Fatalf("%s: curves %s: %v", c.name, raw["curves"], err)
		}
		tk, ck := keys(raw), keys(curves[0])
		if topKeys == nil {
			topKeys, curveKeys = tk, ck
		} else if !slices.Equal(tk, topKeys) || !slices.Equal(ck, curveKeys) {
			t.Errorf("%s: keys %v / curve keys %v, want %v / %v", c.name, tk, ck, topKeys, curveKeys)
		}
		var man engine.RunManifest
		if err := json.Unmarshal(data, &man); err != nil {
			t.Fatal(err)
		}
		for i, cv := range man.Curves {
			if ok, _ := filepath.Match("curves/*/*.csv", cv.CSV); !ok {
				t.Errorf("%s: curve %s at %s, not curves/<env>/<curve>.csv", c.name, cv.Label, cv.CSV)
			}
			var rep ledger.Report
			if err := json.Unmarshal(curves[i]["privacy"], &rep); err != nil || !reflect.DeepEqual(rep, cv.Privacy) {
				t.Errorf("%s: privacy %s does not round-trip as ledger.Report: %v", c.name, curves[i]["privacy"], err)
			}
		}
		t.Logf("%s: %d curves, %s: %s", c.name, len(man.Curves), man.Curves[0].CSV, man.Curves[0].Privacy)
		// Every suite's agent — the papers' as the practical ones — has the ledger's composed
		// report: a guarantee with its registered mechanisms, private at ε = 1.
		p := man.Curves[0].Privacy
		if !p.Private() || len(p.Entries) == 0 || p.Guarantee == ledger.Declared || p.Guarantee == "" || !p.PrivateAtNominal || !(p.Epsilon > 0 && p.Epsilon <= 1+1e-9) {
			t.Errorf("%s: privacy %+v, want the ledger's composed report", c.name, p)
		}
	}
	// The schema is closed: a family-specific key at the top level or in a curve is refused.
	for _, bad := range []string{`{"schema":"dprl.run/v1","goals":[]}`, `{"curves":[{"label":"x","bonus":{}}]}`} {
		if err := runschema.ValidateManifest(s, []byte(bad)); err == nil {
			t.Errorf("manifest %s validated", bad)
		}
	}
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
