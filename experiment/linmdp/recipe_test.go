package linmdp

import (
	"bytes"
	"context"
	"github.com/dprl/dprl/experiment/engine/enginetest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	agents "github.com/dprl/dprl/agents/linmdp"
	"github.com/dprl/dprl/experiment/engine/servetest"
	"github.com/dprl/dprl/experiment/rundir/rundirtest"
	model "github.com/dprl/dprl/model/linmdp"
)

// withAgent makes the family's agent table the current one plus a (replacing a row of its
// name), for the test only (the table is restored when it ends; tests using it do not run in
// parallel).
func withAgent(t *testing.T, a Agent) { enginetest.WithRow(t, &agentTable, a, agentName) }

// fakeAgent is the recipe's new agent: LSVI-UCB with twice the bonus, declared as an ε-dependent
// twin of nothing private, with no regret theorem, measured against lsvi-ucb (Twins).
func fakeAgent(probes int) Agent {
	return Agent{Name: "fake-lsvi", Desc: "a test agent (LSVI-UCB, twice the bonus)", Privacy: Twin, Work: Batch,
		Memory: Stats, Probes: probes, Twins: []string{"lsvi-ucb"},
		New: func(env *model.MDP, cfg *Config, cell Cell, com agents.Common) (agents.Agent, error) {
			com.CBeta *= 2
			return agents.NewLSVIUCB(env, com)
		}}
}

// TestRecipeNewAgent is ARCHITECTURE.md's "A new agent" recipe for the linear-MDP family: one
// table row and its constructor, and the configuration check, the runner, the run directory,
// `dprl list`, the memory estimate and the service all take it (each reads the table; a place
// with its own list of names would refuse or mislabel it).
func TestRecipeNewAgent(t *testing.T) {
	withAgent(t, fakeAgent(0))

	var list bytes.Buffer
	Family{}.Catalogue(&list)
	if !strings.Contains(list.String(), "fake-lsvi") || !strings.Contains(list.String(), "a test agent (LSVI-UCB, twice the bonus) — non-private twin (run at every ε); refit at batch ends; theory exponent none") {
		t.Errorf("dprl list does not show the new agent's row:\n%s", list.String())
	}

	doc := strings.Replace(smallConfig, "agents: [lsvi-ucb, rare-switch, ngo, ngo-printed, rare-switch-reg, luyo-batched, luyo-zcdp, batch-twin, luyo-nonbatched]",
		"agents: [lsvi-ucb, fake-lsvi]", 1)
	s, err := ParseSuite([]byte(doc))
	if err != nil {
		t.Fatalf("configuration check: %v", err)
	}
	var labels []string
	for _, c := range s.Blocks[0].Cells() {
		labels = append(labels, c.Beta+"/"+c.Label)
	}
	if got := strings.Join(labels, ","); got != "theory/lsvi-ucb,theory/fake-lsvi eps=10,theory/fake-lsvi eps=100,tuned/lsvi-ucb,tuned/fake-lsvi eps=10,tuned/fake-lsvi eps=100" {
		t.Errorf("cells %s (a Twin runs at every ε)", got)
	}

	dir := filepath.Join(t.TempDir(), "run")
	if _, _, err := RunSuite(context.Background(), s, Options{Workers: 2}, dir, []string{"test"}); err != nil {
		t.Fatalf("run: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "curves", "E2s", "E2s_theory_fake-lsvi_eps10.csv")); err != nil {
		t.Errorf("run directory: %v", err)
	}
	if seen := enginetest.CheckTheory(t, dir, FamilyName, map[string]float64{"fake-lsvi": 0, "lsvi-ucb": 0.5})["fake-lsvi"]; seen != 4 {
		t.Errorf("%d curves of fake-lsvi in the manifest, want 4", seen)
	}
	var man struct {
		Curves []struct {
			Agent  string `json:"agent"`
			Extras struct {
				Linmdp struct {
					Runs []SeedResult `json:"runs"`
				} `json:"linmdp"`
			} `json:"extras"`
		} `json:"curves"`
	}
	rundirtest.DecodeManifest(t, dir, &man)
	for _, c := range man.Curves {
		if x := c.Extras.Linmdp; c.Agent == "fake-lsvi" && (len(x.Runs) == 0 || len(x.Runs[0].UpdateEpisodes) == 0) {
			t.Errorf("a Batch agent's update episodes are not recorded")
		}
	}
	sum, err := os.ReadFile(filepath.Join(dir, "summary.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(strings.Fields(string(sum)), " "), "| E2s | theory | fake-lsvi | lsvi-ucb | 10 |") || !strings.Contains(string(sum), "(none)") {
		t.Errorf("summary lacks the new agent's privacy cost against its twin or its \"none\" exponent:\n%s", sum)
	}

	// The memory estimate reads the row: two probes make the unit three agents' tables.
	unit := func(probes int) int64 {
		withAgent(t, fakeAgent(probes))
		p, err := planSuite(&Suite{Name: "m", Blocks: []*Config{{Name: "m", Runs: s.Blocks[0].Runs, Delta: 1e-5, P: 0.05, Checkpoints: 10,
			Epsilons: []float64{1}, Agents: []string{"fake-lsvi"}, Envs: s.Blocks[0].Envs, BetaModes: []BetaMode{{Name: "t", CBeta: 1}}}}})
		if err != nil {
			t.Fatal(err)
		}
		return p.memoryEstimate().Unit[0].Bytes
	}
	if u0, u2 := unit(0), unit(2); u2 <= 2*u0 {
		t.Errorf("memory estimate with 2 probes %d, without %d: the estimate does not read the row", u2, u0)
	}
	withAgent(t, fakeAgent(0))

	// The service (and dprl run's RunSpec path) serve it like its unit.
	served.MatchesRun(t, servetest.Run{Agent: "fake-lsvi", K: 200})
}

// TestTunedBetaZero: a tuned β mode divides the target β by the agent's β at c_β = 1; an agent
// whose β is 0 is refused at planning naming the field, instead of running with c_β = +Inf.
func TestTunedBetaZero(t *testing.T) {
	a := fakeAgent(0)
	a.Name = "zero-beta"
	a.New = func(env *model.MDP, cfg *Config, cell Cell, com agents.Common) (agents.Agent, error) {
		ag, err := agents.NewLSVIUCB(env, com)
		return zeroBeta{ag}, err
	}
	withAgent(t, a)
	doc := strings.Replace(smallConfig, "agents: [lsvi-ucb, rare-switch, ngo, ngo-printed, rare-switch-reg, luyo-batched, luyo-zcdp, batch-twin, luyo-nonbatched]",
		"agents: [zero-beta]", 1)
	s, err := ParseSuite([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	_, err = planSuite(s)
	if err == nil || !strings.Contains(err.Error(), "beta_modes[tuned].match_c_beta: agent zero-beta on E2s has β = 0") {
		t.Fatalf("tuned β with an agent of β = 0: %v", err)
	}
	s.Blocks[0].BetaModes = s.Blocks[0].BetaModes[:1] // theory: a fixed c_β needs no division
	if _, err := planSuite(s); err != nil {
		t.Fatal(err)
	}
}

// zeroBeta reports β = 0.
type zeroBeta struct{ agents.Agent }

func (z zeroBeta) Info() agents.Info {
	in := z.Agent.Info()
	in.Beta = 0
	return in
}
