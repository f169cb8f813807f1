package linmdp

import (
	"math"
	"testing"

	"github.com/dprl/dprl/experiment/engine"
	"github.com/dprl/dprl/experiment/engine/enginetest"
)

// specCase is a case of TestPlanSpec (enginetest.CheckSpecCases).
type specCase enginetest.SpecCase

// TestPlanSpec: valid specs plan agents × ε × seeds units (ε-free agents once); bad inputs give
// errors naming the RunSpec field.
func TestPlanSpec(t *testing.T) {
	const base = "episodes: 200\nseeds: [1, 2, 3]\n"
	enginetest.CheckSpecCases(t, Family{}, FamilyName, []specCase{
		{"reference env, mixed agents", base + "agents: [lsvi-ucb, rare-switch, ngo, luyo-batched, practical-lsvi]\nprivacy: {epsilons: [1, 10]}\n", (1 + 1 + 2 + 2 + 2) * 3, ""},
		{"non-private only, no ε needed", base + "agents: [lsvi-ucb, practical-rare-switch, practical-batch-twin]\n", 3 * 3, ""},
		{"ε-dependent twins run at every ε", base + "agents: [batch-twin, rare-switch-reg, practical-lsvi-noiseoff]\nprivacy: {epsilons: [10, 100]}\n", 3 * 2 * 3, ""},
		{"paper calibration", base + "agents: [ngo-printed, luyo-batched, luyo-nonbatched, rare-switch]\nprivacy: {epsilons: [100], calibration: paper}\nmultipliers: {bonus: 2}\n", (3 + 1) * 3, ""},
		{"exact calibration", base + "agents: [ngo, practical-lsvi-batched, practical-lsvi-theory, batch-twin]\nprivacy: {epsilons: [1], calibration: exact}\n", 4 * 3, ""},
		{"zcdp calibration", base + "agents: [luyo-zcdp]\nprivacy: {epsilons: [1, 2, 5], calibration: zcdp}\n", 3 * 3, ""},
		{"riverswim", base + "env: {name: riverswim, params: {n: 4, horizon: 10}}\nagents: [lsvi-ucb]\n", 3, ""},
		{"randomsimplex", base + "env: {name: randomsimplex, params: {n: 20, a: 3, d: 5, horizon: 4, seed: 7}}\nagents: [rare-switch]\n", 3, ""},
		{"twostate100", base + "env: {name: twostate100, params: {seed: 3}}\nagents: [rare-switch]\n", 3, ""},
		{"latentriver params", base + "env: {name: latentriver, params: {m: 3, copies: 4, horizon: 5}}\nagents: [rare-switch]\n", 3, ""},
		{"file", base + "env: {name: file, file: ../../model/linmdp/testdata/tiny.yaml}\nagents: [rare-switch]\n", 3, ""},

		{"unknown agent", base + "agents: [lsvi-ucb, lsvi]\n", 0, "agents[1]: unknown agent"},
		{"unknown env param", base + "env: {params: {n: 4}}\nagents: [lsvi-ucb]\n", 0, "env.params.n"},
		{"seed not a latentriver param", base + "env: {name: latentriver, params: {seed: 4}}\nagents: [lsvi-ucb]\n", 0, "env.params.seed"},
		{"file takes no params", base + "env: {name: file, file: x.yaml, params: {horizon: 4}}\nagents: [lsvi-ucb]\n", 0, "env.params.horizon"},
		{"m out of range", base + "env: {params: {m: 1}}\nagents: [lsvi-ucb]\n", 0, "env.params.m"},
		{"horizon out of range", base + "env: {name: riverswim, params: {horizon: 1001}}\nagents: [lsvi-ucb]\n", 0, "env.params.horizon"},
		{"unknown env", base + "env: {name: garnet}\nagents: [lsvi-ucb]\n", 0, "env.name"},
		{"missing file", base + "env: {name: file, file: does-not-exist.yaml}\nagents: [lsvi-ucb]\n", 0, "env.file"},
		{"private without ε", base + "agents: [lsvi-ucb, ngo]\n", 0, "privacy.epsilons"},
		{"twin without ε", base + "agents: [batch-twin]\n", 0, "privacy.epsilons"},
		{"unsupported calibration", base + "agents: [ngo]\nprivacy: {epsilons: [1], calibration: laplace}\n", 0, "privacy.calibration"},
		{"calibration not the agent's", base + "agents: [rare-switch, ngo]\nprivacy: {epsilons: [1], calibration: paper}\n", 0, "privacy.calibration"},
		{"secure noise", base + "agents: [lsvi-ucb]\nprivacy: {noise: secure}\n", 0, "privacy.noise"},
		{"too few episodes", "episodes: 5\nseeds: [1]\nagents: [lsvi-ucb]\n", 0, "episodes"},
	})
}

// TestPlanSpecTuned: with bonus 1 a cell's resolved c_β is the reproduction's tuned one (same
// agent, ε, environment, K); bonus scales it.
func TestPlanSpecTuned(t *testing.T) {
	rep, err := DefaultSuite()
	if err != nil {
		t.Fatal(err)
	}
	main := rep.Blocks[0]
	tmpl, _, err := prepare(main)
	if err != nil {
		t.Fatal(err)
	}
	want := 0.0
	for _, cr := range tmpl.Cells {
		if c := cr.Cell; c.Env == "E2" && c.Beta == "tuned" && c.Agent == "ngo" && c.Epsilon == 10 {
			want = c.CBeta
		}
	}
	if want == 0 {
		t.Fatal("the reproduction has no E2/tuned/ngo ε=10 cell")
	}
	for _, bonus := range []float64{1, 0.5} {
		s, err := engine.ParseRunSpec([]byte("episodes: 20000\nseeds: [1]\nagents: [ngo]\nprivacy: {epsilons: [10]}\n"), FamilyName)
		if err != nil {
			t.Fatal(err)
		}
		s.Multipliers.Bonus = bonus
		cfg, err := specConfig(s)
		if err != nil {
			t.Fatal(err)
		}
		got, _, err := prepare(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if cb := got.Cells[0].Cell.CBeta; math.Abs(cb-bonus*want) > 1e-12*want {
			t.Errorf("bonus %g: c_β = %g, want %g", bonus, cb, bonus*want)
		}
	}
}

// TestPlanSpecRun: a tiny spec (K = 200, seeds 1 and 2, one non-private and one private agent)
// plans, runs on this machine and writes its curves.
func TestPlanSpecRun(t *testing.T) {
	enginetest.RunSpecYAML(t, Family{}, FamilyName, "name: tiny\nepisodes: 200\nseeds: [1, 2]\nagents: [rare-switch, practical-lsvi]\nprivacy: {epsilons: [1]}\n", 4, "curves", "*", "*.csv")
}

// TestPlanSpecFileDigest: a file environment's units are named by its file's digest.
func TestPlanSpecFileDigest(t *testing.T) {
	enginetest.CheckFileDigest(t, Family{}, FamilyName, "episodes: 200\nseeds: [1, 2]\nenv: {name: file, file: %s}\nagents: [rare-switch]\n", "../../model/linmdp/testdata/tiny.yaml")
}
