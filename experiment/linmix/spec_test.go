package linmix

import (
	"testing"

	"github.com/dprl/dprl/experiment/engine"
	"github.com/dprl/dprl/experiment/engine/enginetest"
)

// specCase is a case of TestPlanSpec (enginetest.CheckSpecCases).
type specCase enginetest.SpecCase

// TestPlanSpec: valid specs plan agents × ε × seeds units; bad inputs give errors naming the
// RunSpec field.
func TestPlanSpec(t *testing.T) {
	const base = "episodes: 200\nseeds: [1, 2, 3]\n"
	enginetest.CheckSpecCases(t, Family{}, FamilyName, []specCase{
		{"reference env, mixed agents", base + "agents: [ucrl-vtr/none, ucrl-vtr/jdp, practical-vtr/ldp]\nprivacy: {epsilons: [0.5, 1]}\n", (1 + 2 + 2) * 3, ""},
		{"non-private only, no ε needed", base + "agents: [ucrl-vtr/none, linopt-vi/none, practical-vtr/none]\n", 3 * 3, ""},
		{"every algorithm", base + "agents: [ucrl-vtr/ldp, ucrl-vtr+/jdp, linopt-vi/jdp, linopt-po/ldp, practical-vtr/jdp]\nprivacy: {epsilons: [100]}\nmultipliers: {bonus: 0.01}\n", 5 * 3, ""},
		{"laplace for ucrl-vtr", base + "agents: [ucrl-vtr/jdp, ucrl-vtr/none]\nprivacy: {epsilons: [1, 2], calibration: laplace}\n", (2 + 1) * 3, ""},
		{"paper with practical-vtr", base + "agents: [practical-vtr/jdp]\nprivacy: {epsilons: [1], calibration: paper}\n", 3, ""},
		{"hard-to-learn", base + "env: {name: hard-to-learn, params: {dim: 4, horizon: 5}}\nagents: [ucrl-vtr/none]\n", 3, ""},
		{"riverswim", base + "env: {name: riverswim, params: {states: 4}}\nagents: [ucrl-vtr/none]\n", 3, ""},
		{"base-mixture", base + "env: {name: base-mixture, params: {states: 5, actions: 2, dim: 3, horizon: 4}}\nagents: [linopt-po/none]\n", 3, ""},
		{"two-state-hard params", base + "env: {name: two-state-hard, params: {dim: 3, horizon: 4, q: 0.2, rho: 0}}\nagents: [ucrl-vtr/none]\n", 3, ""},
		{"file", base + "env: {name: file, file: ../../model/linmix/testdata/tiny.yaml}\nagents: [ucrl-vtr/none]\n", 3, ""},

		{"unknown agent", base + "agents: [ucrl-vtr/none, ucrl-vtr/cdp]\n", 0, "agents[1]: unknown agent"},
		{"bare algorithm", base + "agents: [ucrl-vtr]\n", 0, "agents[0]: unknown agent"},
		{"unknown env param", base + "env: {params: {states: 4}}\nagents: [ucrl-vtr/none]\n", 0, "env.params.states"},
		{"file takes no params", base + "env: {name: file, file: x.yaml, params: {horizon: 4}}\nagents: [ucrl-vtr/none]\n", 0, "env.params.horizon"},
		{"dim out of range", base + "env: {params: {dim: 17}}\nagents: [ucrl-vtr/none]\n", 0, "env.params.dim"},
		{"q zero", base + "env: {params: {q: 0}}\nagents: [ucrl-vtr/none]\n", 0, "env.params.q"},
		{"fractional horizon", base + "env: {name: riverswim, params: {horizon: 2.5}}\nagents: [ucrl-vtr/none]\n", 0, "env.params.horizon"},
		{"unknown env", base + "env: {name: garnet}\nagents: [ucrl-vtr/none]\n", 0, "env.name"},
		{"missing file", base + "env: {name: file, file: does-not-exist.yaml}\nagents: [ucrl-vtr/none]\n", 0, "env.file"},
		{"private without ε", base + "agents: [ucrl-vtr/none, ucrl-vtr/jdp]\n", 0, "privacy.epsilons"},
		{"bad calibration", base + "agents: [ucrl-vtr/jdp]\nprivacy: {epsilons: [1], calibration: unit}\n", 0, "privacy.calibration"},
		{"laplace not for ucrl-vtr+", base + "agents: [ucrl-vtr+/jdp]\nprivacy: {epsilons: [1], calibration: laplace}\n", 0, "privacy.calibration"},
		{"zcdp not for practical-vtr", base + "agents: [practical-vtr/ldp]\nprivacy: {epsilons: [1], calibration: zcdp}\n", 0, "privacy.calibration"},
		{"secure noise", base + "agents: [ucrl-vtr/none]\nprivacy: {noise: secure}\n", 0, "privacy.noise"},
		{"too few episodes", "episodes: 5\nseeds: [1]\nagents: [ucrl-vtr/none]\n", 0, "episodes"},
	})
}

// TestPlanSpecReproduction: with bonus 0.01 the spec's cells of the reference environment are
// the reproduction's tuned cells (same unit IDs: the same resolved configuration and seed).
func TestPlanSpecReproduction(t *testing.T) {
	p, err := enginetest.PlanSpecYAML(t, Family{}, FamilyName, "episodes: 20000\nseeds: [1]\nagents: [ucrl-vtr/jdp]\nprivacy: {epsilons: [0.5]}\nmultipliers: {bonus: 0.01}\n")
	if err != nil {
		t.Fatal(err)
	}
	ps, err := engine.NewPlanned(FamilyName, p)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Family{}.Plan(DefaultConfigYAML(), "embedded")
	if err != nil {
		t.Fatal(err)
	}
	pr, err := engine.NewPlanned(FamilyName, rep)
	if err != nil {
		t.Fatal(err)
	}
	want := ps.Units()[0].ID()
	for _, u := range pr.Units() {
		if u.ID() == want {
			return
		}
	}
	t.Fatalf("unit %s (%s) is not a unit of the linear-mixture reproduction", want, ps.Units()[0].Cell)
}

// TestPlanSpecRun: a tiny spec (K = 200, seeds 1 and 2, one non-private and one private agent)
// plans, runs on this machine and writes its curves.
func TestPlanSpecRun(t *testing.T) {
	enginetest.RunSpecYAML(t, Family{}, FamilyName, "name: tiny\nepisodes: 200\nseeds: [1, 2]\nagents: [ucrl-vtr/none, practical-vtr/jdp]\nprivacy: {epsilons: [1]}\n", 4, "curves", "*", "*.csv")
}

// TestPlanSpecFileDigest: a file environment's units are named by its file's digest.
func TestPlanSpecFileDigest(t *testing.T) {
	enginetest.CheckFileDigest(t, Family{}, FamilyName, "episodes: 200\nseeds: [1, 2]\nenv: {name: file, file: %s}\nagents: [ucrl-vtr/none]\n", "../../model/linmix/testdata/tiny.yaml")
}
