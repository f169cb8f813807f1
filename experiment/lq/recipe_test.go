package lq

import (
	"bytes"
	"context"
	"github.com/dprl/dprl/experiment/engine/enginetest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	agents "github.com/dprl/dprl/agents/lq"
	"github.com/dprl/dprl/experiment/engine"
	"github.com/dprl/dprl/experiment/engine/servetest"
	"github.com/dprl/dprl/experiment/rundir/rundirtest"
)

// withAgent makes the family's agent table the current one plus a (replacing a row of its
// name), for the test only (the table is restored when it ends; tests using it do not run in
// parallel).
func withAgent(t *testing.T, a Agent) { enginetest.WithRow(t, &agentTable, a, agentName) }

// fakeAgent is the recipe's new agent: the practical agent with exact statistics and twice
// the budget, non-private, without a theory exponent, run by the practical suite.
func fakeAgent() Agent {
	return Agent{Name: "fake-ofu", Desc: "a test agent (noise-off practical-ofu-rl, twice the budget)", Work: "test work",
		EpisodesField: "episodes", SharedBLT: true,
		Variant: func(ac *agents.PracticalConfig) { ac.NoiseOff, ac.Budget = true, 2*ac.Budget },
		Label:   func(name, _ string) string { return name + " [test]" }}
}

// TestRecipeNewAgent is ARCHITECTURE.md's "A new agent" recipe for the LQ family: one table
// row (its constructor is the practical agent's variant) and the configuration checks, the
// suite's curves, the runner, the run directory, `dprl list`, the memory estimate and the
// service all take it (each reads the table; a place with its own list of names would refuse
// or mislabel it).
func TestRecipeNewAgent(t *testing.T) {
	withAgent(t, fakeAgent())

	var list bytes.Buffer
	Family{}.Catalogue(&list)
	if !strings.Contains(list.String(), "a test agent (noise-off practical-ofu-rl, twice the budget) — test work; theory exponent none") {
		t.Errorf("dprl list does not show the new agent's row:\n%s", list.String())
	}

	r := &engine.Registry{}
	r.Register(Family{})
	spec := &engine.RunSpec{Family: FamilyName, Env: engine.EnvSpec{Name: "lq-e1"}, Agents: []string{"fake-ofu", "ofu-rl"},
		Runs: engine.Runs{Episodes: 60, Seeds: []uint64{1, 2}}}
	if err := spec.Validate(); err != nil {
		t.Fatal(err)
	}
	p, err := r.PlanSpec(spec, "test")
	if err != nil {
		t.Fatalf("plan: %v", err)
	}
	pp := p.Plan.(*practicalPlan)
	if got := len(pp.curves); got != 2 || pp.curves[1].Label != "fake-ofu [test]" {
		t.Fatalf("curves %+v, want ofu-rl and fake-ofu [test] (the table's order)", pp.curves)
	}
	dir := t.TempDir()
	if _, err := engine.Execute(context.Background(), p, engine.Local{Workers: 2}, engine.RunOptions{Dir: dir}); err != nil {
		t.Fatalf("run: %v", err)
	}
	var man struct {
		Curves []struct {
			Agent string `json:"agent"`
			CSV   string `json:"csv"`
		} `json:"curves"`
	}
	rundirtest.DecodeManifest(t, dir, &man)
	if len(man.Curves) != 2 || man.Curves[0].Agent != "ofu-rl" || man.Curves[1].Agent != "fake-ofu" {
		t.Fatalf("manifest curves %+v", man.Curves)
	}
	for _, c := range man.Curves {
		if _, err := os.Stat(filepath.Join(dir, c.CSV)); err != nil {
			t.Errorf("run directory: %v", err)
		}
	}
	enginetest.CheckTheory(t, dir, FamilyName, map[string]float64{"fake-ofu": 0, "ofu-rl": 0.5})

	// The memory estimate reads the row: as one of the paper's agents (two counters of the
	// paper's kind) the estimate of a run of it alone changes.
	alone := func(a Agent) int64 {
		withAgent(t, a)
		s := &engine.RunSpec{Family: FamilyName, Env: engine.EnvSpec{Name: "lq-e1"}, Agents: []string{"fake-ofu"},
			Runs: engine.Runs{Episodes: 60, Seeds: []uint64{1}}}
		if err := s.Validate(); err != nil {
			t.Fatal(err)
		}
		cfg, err := practicalSpecConfig(s)
		if err != nil {
			t.Fatal(err)
		}
		p, err := newPracticalPlan(cfg)
		if err != nil {
			t.Fatal(err)
		}
		return p.memoryEstimate().Unit[0].Bytes
	}
	paper := fakeAgent()
	paper.Paper = true
	if before, after := alone(fakeAgent()), alone(paper); after == before {
		t.Errorf("memory estimate %d either way: the estimate does not read the row", after)
	}
	withAgent(t, fakeAgent())

	// The service (and dprl run's RunSpec path) serve it like its unit.
	served.MatchesRun(t, servetest.Run{Agent: "fake-ofu", K: 300})
}
