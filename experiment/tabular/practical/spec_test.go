package practical

import (
	"context"
	"strings"
	"testing"

	"github.com/dprl/dprl/experiment/engine"
	"github.com/dprl/dprl/experiment/engine/enginetest"
	"github.com/dprl/dprl/experiment/tabular/tabenv"
)

// specOf returns a validated RunSpec (the defaults applied, as ParseRunSpec does; K = 40).
func specOf(t *testing.T, s engine.RunSpec) *engine.RunSpec {
	t.Helper()
	return enginetest.Spec(t, FamilyName, s, 40)
}

// TestPlanSpec: valid RunSpecs plan agents × ε × seeds units; bad inputs are refused with an
// error naming the RunSpec field.
func TestPlanSpec(t *testing.T) {
	eps := engine.PrivacySpec{Epsilons: []float64{0.5, 1}}
	for _, c := range []struct {
		name  string
		spec  engine.RunSpec
		units int    // expected units (0: an error is expected)
		field string // the field the error names
	}{
		{"riverswim all agents", engine.RunSpec{Agents: []string{"practical-jdp", "practical-jdp-theory", "practical-jdp-plugin", "practical-ldp",
			"practical-ldp-plugin", "practical-psrl-jdp", "practical-ucbvi", "practical-psrl", "ucbvi", "dp-ucbvi-jdp", "dp-ucbvi-ldp"}, Privacy: eps},
			(8*2 + 3) * 2, ""},
		{"riverswim horizon", engine.RunSpec{Env: engine.EnvSpec{Name: "riverswim", Params: map[string]float64{"horizon": 5}}, Agents: []string{"ucbvi"}}, 2, ""},
		{"garnet params", engine.RunSpec{Env: engine.EnvSpec{Name: "garnet", Params: map[string]float64{"horizon": 5, "states": 4, "actions": 2,
			"branching": 2, "reward_density": 0.5, "env_seed": 9}}, Agents: []string{"practical-jdp", "ucbvi"}, Privacy: eps}, 3 * 2, ""},
		{"secure noise", engine.RunSpec{Agents: []string{"practical-ldp"}, Privacy: engine.PrivacySpec{Epsilons: []float64{1}, Noise: "secure"}}, 2, ""},
		{"calibration exact", engine.RunSpec{Agents: []string{"dp-ucbvi-jdp"}, Privacy: engine.PrivacySpec{Epsilons: []float64{1}, Calibration: "strict"}}, 2, ""},
		{"unknown agent", engine.RunSpec{Agents: []string{"ucbvi", "nope"}}, 0, "agents[1]"},
		{"papers' other agent", engine.RunSpec{Agents: []string{"private-ucbvi"}}, 0, "agents[0]"},
		{"no epsilons", engine.RunSpec{Agents: []string{"ucbvi", "practical-jdp"}}, 0, "privacy.epsilons"},
		{"unknown env param", engine.RunSpec{Env: engine.EnvSpec{Params: map[string]float64{"states": 3}}, Agents: []string{"ucbvi"}}, 0, "env.params.states"},
		{"garnet states range", engine.RunSpec{Env: engine.EnvSpec{Name: "garnet", Params: map[string]float64{"states": 20000}}, Agents: []string{"ucbvi"}}, 0, "env.params.states"},
		{"garnet branching", engine.RunSpec{Env: engine.EnvSpec{Name: "garnet", Params: map[string]float64{"states": 3, "branching": 4}}, Agents: []string{"ucbvi"}}, 0, "env.params.branching"},
		{"garnet density", engine.RunSpec{Env: engine.EnvSpec{Name: "garnet", Params: map[string]float64{"reward_density": 1.5}}, Agents: []string{"ucbvi"}}, 0, "env.params.reward_density"},
		{"garnet env seed", engine.RunSpec{Env: engine.EnvSpec{Name: "garnet", Params: map[string]float64{"env_seed": 0.5}}, Agents: []string{"ucbvi"}}, 0, "env.params.env_seed"},
		{"unknown env", engine.RunSpec{Env: engine.EnvSpec{Name: "chain"}, Agents: []string{"ucbvi"}}, 0, "env.name"},
		{"env file", engine.RunSpec{Env: engine.EnvSpec{Name: "file", File: "../../../model/tabular/testdata/small.json"}, Agents: []string{"practical-jdp", "practical-ldp", "practical-psrl-jdp", "ucbvi"}, Privacy: eps}, (3*2 + 1) * 2, ""},
		{"env file missing", engine.RunSpec{Env: engine.EnvSpec{Name: "file", File: "m.yaml"}, Agents: []string{"ucbvi"}}, 0, "env.file"},
		{"bad calibration", engine.RunSpec{Agents: []string{"dp-ucbvi-jdp"}, Privacy: engine.PrivacySpec{Epsilons: []float64{1}, Calibration: "paper"}}, 0, "privacy.calibration"},
		{"bonus multiplier", engine.RunSpec{Agents: []string{"practical-jdp"}, Privacy: eps, Multipliers: engine.MultiplierSpec{Bonus: 2}}, 0, "multipliers.bonus"},
		{"too few episodes", engine.RunSpec{Agents: []string{"ucbvi"}, Runs: engine.Runs{Episodes: 5}}, 0, "episodes"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, err := Suite{}.PlanSpec(specOf(t, c.spec), "test")
			enginetest.CheckPlan(t, p, err, c.units, c.field, strings.HasPrefix)
		})
	}
}

// TestPlanSpecNoiseInUnits: the secure source reaches the unit specifications (a secure
// run never shares a unit with a seeded one), the seeded one leaves them as the reproduction's.
func TestPlanSpecNoiseInUnits(t *testing.T) {
	seeded, err := Suite{}.PlanSpec(specOf(t, engine.RunSpec{Agents: []string{"practical-jdp"}, Privacy: engine.PrivacySpec{Epsilons: []float64{1}}}), "test")
	if err != nil {
		t.Fatal(err)
	}
	secure, err := Suite{}.PlanSpec(specOf(t, engine.RunSpec{Agents: []string{"practical-jdp"}, Privacy: engine.PrivacySpec{Epsilons: []float64{1}, Noise: "secure"}}), "test")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(seeded.Units()[0].Spec), "noise") || !strings.Contains(string(secure.Units()[0].Spec), `"noise":"secure"`) {
		t.Errorf("unit specs: seeded %s, secure %s", seeded.Units()[0].Spec, secure.Units()[0].Spec)
	}
}

// TestPlanSpecRuns: a planned RunSpec runs (seeded and secure), its curves are the requested
// agents at the requested ε, and the summary has no goals of the reproduction.
func TestPlanSpecRuns(t *testing.T) {
	for _, noise := range []string{"seeded", "secure"} {
		s := specOf(t, engine.RunSpec{Env: engine.EnvSpec{Name: "garnet", Params: map[string]float64{"horizon": 4, "states": 3, "actions": 2}},
			Agents: []string{"practical-jdp", "ucbvi", "dp-ucbvi-ldp"}, Privacy: engine.PrivacySpec{Epsilons: []float64{2}, Noise: noise}, Runs: engine.Runs{Seeds: []uint64{3}}})
		cfg, err := specConfig(s, tabenv.New())
		if err != nil {
			t.Fatal(err)
		}
		res, err := Run(context.Background(), cfg, Options{Workers: 2})
		if err != nil {
			t.Fatal(err)
		}
		var labels []string
		for _, cv := range res.Curves {
			labels = append(labels, cv.Group+"/"+cv.Label)
			if len(cv.Runs) != 1 || cv.Runs[0].Seed != 3 || len(cv.Runs[0].Cum) != 40 {
				t.Errorf("%s: runs %+v", cv.Label, cv.Runs)
			}
		}
		if got := strings.Join(labels, ","); got != "garnet-1/practical-jdp eps=2,garnet-1/ucbvi,garnet-1/dp-ucbvi-ldp eps=2" {
			t.Errorf("curves %s", got)
		}
		sum, err := res.Summary()
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Goals()) != 0 || strings.Contains(sum, "Goals") || !strings.Contains(sum, "noise "+noise) {
			t.Errorf("summary:\n%s", sum)
		}
	}
}

// TestCurvesConfigBad: explicit curves are validated field by field.
func TestCurvesConfigBad(t *testing.T) {
	base := "name: c\nhorizon: 4\nepisodes: 20\nseeds: [1]\ndelta: 1.0e-5\n"
	if _, err := ParseConfig([]byte(base + "curves: [{env: riverswim, agent: ucbvi}]\n")); err != nil {
		t.Fatalf("minimal curves config rejected: %v", err)
	}
	for _, c := range []struct{ curves, field string }{
		{"[{env: chain, agent: ucbvi}]", "curves[0].env"},
		{"[{env: riverswim, agent: ucbvi, env_seed: 2}]", "curves[0].env_seed"},
		{"[{env: riverswim, agent: ucbvi, params: {states: 3}}]", "curves[0].params.states"},
		{"[{env: garnet, agent: ucbvi, params: {states: 20000}}]", "curves[0].params.states"},
		{"[{env: garnet, agent: ucbvi, env_seed: 2, params: {env_seed: 2}}]", "curves[0].env_seed"},
		{"[{env: garnet, agent: ucbvi, file: m.json}]", "curves[0].file"},
		{"[{env: file, agent: ucbvi}]", "curves[0].file"},
		{"[{env: garnet, agent: ucbvi}, {env: garnet, agent: practical-ucbvi, params: {states: 4}}]", "curves[1].params"},
		{"[{env: riverswim, agent: nope}]", "curves[0].agent"},
		{"[{env: riverswim, agent: practical-jdp}]", "curves[0].epsilon"},
		{"[{env: riverswim, agent: ucbvi, epsilon: 1}]", "curves[0].epsilon"},
		{"[{env: riverswim, agent: ucbvi}, {env: riverswim, agent: ucbvi}]", "curves[1]"},
	} {
		_, err := ParseConfig([]byte(base + "curves: " + c.curves + "\n"))
		if err == nil || !strings.HasPrefix(err.Error(), c.field) {
			t.Errorf("%s: error %v, want one naming %s", c.curves, err, c.field)
		}
	}
	// The old spelling env_seed and params.env_seed are one parameter; the garnet block and the
	// horizon are the defaults of the curves' parameters.
	oldc, err := ParseConfig([]byte(base + "garnet: {states: 4, actions: 2, branching: 2, reward_density: 0.5}\ncurves: [{env: garnet, env_seed: 3, agent: ucbvi}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	newc, err := ParseConfig([]byte(base + "curves: [{env: garnet, params: {env_seed: 3, horizon: 4, states: 4, actions: 2, branching: 2, reward_density: 0.5}, agent: ucbvi}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	oc, err := oldc.curves()
	if err != nil {
		t.Fatal(err)
	}
	nc, err := newc.curves()
	if err != nil {
		t.Fatal(err)
	}
	if oc[0].Env != nc[0].Env || oc[0].Group != "garnet-3" || nc[0].Group != "garnet-3" {
		t.Errorf("old spelling %+v (group %s), new %+v (group %s)", oc[0].Env, oc[0].Group, nc[0].Env, nc[0].Group)
	}
	if _, err := ParseConfig([]byte(base + "noise: loud\ncurves: [{env: riverswim, agent: ucbvi}]\n")); err == nil || !strings.HasPrefix(err.Error(), "noise") {
		t.Errorf("noise: error %v", err)
	}
}
