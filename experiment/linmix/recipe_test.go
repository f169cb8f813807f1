package linmix

import (
	"bytes"
	"context"
	"github.com/dprl/dprl/experiment/engine/enginetest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	agents "github.com/dprl/dprl/agents/linmix"
	"github.com/dprl/dprl/experiment/calibration"
	"github.com/dprl/dprl/experiment/engine"
	"github.com/dprl/dprl/experiment/engine/servetest"
	"github.com/dprl/dprl/experiment/rundir/rundirtest"
)

// withAgent makes the family's agent table the current one plus a (replacing a row of its
// name), for the test only (the table is restored when it ends; tests using it do not run in
// parallel).
func withAgent(t *testing.T, a Agent) { enginetest.WithRow(t, &agentTable, a, agentName) }

// fakeAgent is the recipe's new agent: UCRL-VTR under another name, non-private and JDP only,
// with a theory exponent for its non-private mode and none under JDP.
func fakeAgent(mem Layout) Agent {
	a := paperAgent("fake-vtr", agents.UCRLVTR, "a test agent (UCRL-VTR under another name)", mem, calibration.Paper)
	a.Modes = []agents.Mode{agents.None, agents.JDP}
	a.Theory = [3]engine.Exponent{agents.None: engine.Theory(0.5)}
	a.Work = "test work"
	return a
}

// TestRecipeNewAgent is ARCHITECTURE.md's "A new agent" recipe for the linear-mixture family:
// one table row and its constructor, and the configuration check, the curves, the runner, the
// run directory, `dprl list`, the memory estimate and the service all take it (each reads the
// table; a place with its own list of names would refuse or mislabel it).
func TestRecipeNewAgent(t *testing.T) {
	withAgent(t, fakeAgent(Regressions))

	var list bytes.Buffer
	Family{}.Catalogue(&list)
	l := list.String()
	if !strings.Contains(l, "fake-vtr/jdp") || !strings.Contains(l, "a test agent (UCRL-VTR under another name), (ε,δ)-JDP (central noise); calibrations paper — test work; theory exponent none") ||
		strings.Contains(l, "fake-vtr/ldp") {
		t.Errorf("dprl list does not show the new agent's row (two modes, no ldp):\n%s", l)
	}

	doc := strings.Replace(tinyConfig, "  - {algorithm: ucrl-vtr, mode: none}\n  - {algorithm: ucrl-vtr, mode: jdp, epsilons: [0.5]}",
		"  - {algorithm: fake-vtr, mode: none}\n  - {algorithm: fake-vtr, mode: jdp, epsilons: [0.5]}", 1)
	if doc == tinyConfig {
		t.Fatal("tinyConfig changed: update the test")
	}
	if _, err := ParseConfig([]byte(strings.Replace(doc, "fake-vtr, mode: jdp", "fake-vtr, mode: ldp", 1))); err == nil || !strings.Contains(err.Error(), "curves[1].mode: fake-vtr does not run in mode ldp") {
		t.Errorf("a mode the row does not list: %v", err)
	}
	cfg, err := ParseConfig([]byte(doc))
	if err != nil {
		t.Fatalf("configuration check: %v", err)
	}
	res, err := Run(context.Background(), cfg, Options{Workers: 2})
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	dir := filepath.Join(t.TempDir(), "run")
	if _, _, err := res.Write(dir, []string{"test"}); err != nil {
		t.Fatal(err)
	}
	var man struct {
		Curves []struct {
			Agent  string `json:"agent"`
			CSV    string `json:"csv"`
			Extras struct {
				Linmix struct {
					Label string `json:"label"`
				} `json:"linmix"`
			} `json:"extras"`
		} `json:"curves"`
	}
	rundirtest.DecodeManifest(t, dir, &man)
	var got []string
	for _, c := range man.Curves {
		got = append(got, c.Agent+": "+c.Extras.Linmix.Label)
		if _, err := os.Stat(filepath.Join(dir, c.CSV)); err != nil {
			t.Errorf("run directory: %v", err)
		}
	}
	enginetest.CheckTheory(t, dir, FamilyName, map[string]float64{"fake-vtr/none": 0.5, "fake-vtr/jdp": 0})
	if s := strings.Join(got, "; "); s != "fake-vtr/none: fake-vtr/none cβ=1; fake-vtr/jdp: fake-vtr/jdp ε=0.5 cβ=1" {
		t.Errorf("curves %s", s)
	}

	// The memory estimate reads the row: the pooled layout adds the BLT counter.
	unit := func(mem Layout) int64 {
		withAgent(t, fakeAgent(mem))
		p, err := newPlan(cfg)
		if err != nil {
			t.Fatal(err)
		}
		return p.memoryEstimate().Unit[1].Bytes
	}
	if r, pooled := unit(Regressions), unit(Pooled); pooled <= r {
		t.Errorf("memory estimate pooled %d, regressions %d: the estimate does not read the row", pooled, r)
	}
	withAgent(t, fakeAgent(Regressions))

	// The service (and dprl run's RunSpec path) serve it like its unit.
	served.MatchesRun(t, servetest.Run{Agent: "fake-vtr/jdp", K: 200})
}
