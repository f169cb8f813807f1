package tabular

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dprl/dprl/experiment/engine"
	"github.com/dprl/dprl/experiment/rundir/rundirtest"
	model "github.com/dprl/dprl/model/tabular"
)

// chainEnv is a fake environment registered by the test the way a new environment registers
// in Envs: a deterministic chain of `states` states (action 1 moves right, action 0 back to the
// start; reward 1 for moving right at the end), parameters horizon and states.
func chainEnv() engine.Env[EnvConfig, *model.MDP] {
	return engine.Env[EnvConfig, *model.MDP]{Name: "chain", Desc: "a deterministic chain (test)",
		Params: []engine.EnvParam[EnvConfig]{
			{Name: "horizon", Int: true, Def: 6, Lo: 1, Hi: 100, Field: func(e *EnvConfig) any { return &e.Horizon }},
			{Name: "states", Int: true, Def: 3, Lo: 2, Hi: 20, Field: func(e *EnvConfig) any { return &e.States }}},
		New: func(e EnvConfig) (*model.MDP, error) {
			S, A := e.States, 2
			p, r := make([]float64, S*A*S), make([]float64, S*A)
			for s := 0; s < S; s++ {
				p[(s*A+0)*S+0] = 1
				p[(s*A+1)*S+min(s+1, S-1)] = 1
			}
			r[(S-1)*A+1] = 1
			init := make([]float64, S)
			init[0] = 1
			return model.NewHomogeneous("chain", S, A, e.Horizon, p, r, init, model.Deterministic)
		}}
}

// TestRegisteredEnvRunsEndToEnd: an environment registered in the family's registry (and
// nowhere else) is listed by the family's Catalogue with its parameters, selected by a RunSpec's
// env.name and env.params (bounds checked) and by a configuration block's env.name, and runs
// through the engine into a complete run directory that records its parameters.
func TestRegisteredEnvRunsEndToEnd(t *testing.T) {
	envs := Envs()
	envs.Register(chainEnv())
	r := &engine.Registry{}
	r.Register(Family{Envs: envs})

	var list bytes.Buffer
	r.List(&list)
	if !strings.Contains(list.String(), "  chain            a deterministic chain (test) [params: horizon, states]") {
		t.Errorf("dprl list does not show the registered environment:\n%s", list.String())
	}

	spec := func(params map[string]float64) *engine.RunSpec {
		s := &engine.RunSpec{Family: FamilyName, Env: engine.EnvSpec{Name: "chain", Params: params},
			Agents: []string{"ucbvi", "dp-ucbvi-jdp"}, Privacy: engine.PrivacySpec{Epsilons: []float64{1}}, Runs: engine.Runs{Episodes: 60, Seeds: []uint64{1, 2}}}
		if err := s.Validate(); err != nil {
			t.Fatal(err)
		}
		return s
	}
	if _, err := r.PlanSpec(spec(map[string]float64{"states": 1}), "test"); err == nil || err.Error() != "env.params.states: must be an integer in [2, 20], got 1" {
		t.Errorf("out-of-range parameter: %v", err)
	}
	if _, err := r.PlanSpec(spec(map[string]float64{"actions": 2}), "test"); err == nil || !strings.Contains(err.Error(), "(allowed: horizon, states)") {
		t.Errorf("unknown parameter: %v", err)
	}
	p, err := r.PlanSpec(spec(map[string]float64{"states": 4}), "test")
	if err != nil {
		t.Fatal(err)
	}
	if n := len(p.Units()); n != 4 {
		t.Fatalf("%d units, want 4 (2 agents × 2 seeds)", n)
	}
	dir := t.TempDir()
	text, err := engine.Execute(context.Background(), p, engine.Local{Workers: 2}, engine.RunOptions{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text, "dp-ucbvi-jdp eps=1 exact") {
		t.Errorf("run output %q", text)
	}
	var man struct {
		Config *Config `json:"config"`
		Curves []struct {
			Env string `json:"env"`
		} `json:"curves"`
	}
	rundirtest.DecodeManifest(t, dir, &man)
	if want := (EnvConfig{Name: "chain", Horizon: 6, States: 4}); man.Curves[0].Env != "chain" || man.Config.Env != want {
		t.Errorf("manifest env %q, config env %+v; want %+v", man.Curves[0].Env, man.Config.Env, want)
	}
	for _, f := range []string{"curves/chain/ucbvi.csv", "regret_long.csv", "config.resolved.yaml"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}

	// A configuration block of either suite names it too; a family without it refuses it.
	unknown := `unknown environment "chain" (allowed: riverswim, garnet, frozenlake4x4, frozenlake8x8, cliffwalking, taxi, cliffwalking-private-support, taxi-private-support, file)`
	for _, block := range []string{"env: {name: chain, horizon: 4, states: 3}\nepisodes: 30\nseeds: [1]\ncurves: [{agent: ucbvi}]\n",
		"suite: practical\nname: c\nhorizon: 4\nepisodes: 30\nseeds: [1]\ndelta: 1.0e-5\ncurves: [{env: chain, params: {states: 3}, agent: practical-jdp, epsilon: 1}]\n"} {
		if _, err := r.PlanBlock(FamilyName, []byte(block), "test"); err != nil {
			t.Errorf("configuration block %q: %v", block, err)
		}
		if _, err := (Family{}).Plan([]byte(block), "test"); err == nil || !strings.Contains(err.Error(), unknown) {
			t.Errorf("default registry, block %q: %v", block, err)
		}
	}
}

// TestRegisteredEnvRunsInBothSuites: the recipe of a new tabular environment (its model
// constructor and one registration, chainEnv) reaches both suites of the family: a papers'
// agent (ucbvi, dp-ucbvi-jdp; the papers' suite) and dprl's practical agents (practical-jdp and
// practical-ucbvi; the practical suite) run on it through the same registry, with its
// parameters, into complete run directories. Either suite building its models from any other
// registry fails here (the default registry has no "chain").
func TestRegisteredEnvRunsInBothSuites(t *testing.T) {
	envs := Envs()
	envs.Register(chainEnv())
	r := &engine.Registry{}
	r.Register(Family{Envs: envs})
	m, err := chainEnv().New(EnvConfig{Name: "chain", States: 5, Horizon: 7})
	if err != nil {
		t.Fatal(err)
	}
	uniform := &model.Policy{Prob: make([][]float64, m.H)}
	for h := range uniform.Prob {
		uniform.Prob[h] = make([]float64, m.S*m.A)
		for i := range uniform.Prob[h] {
			uniform.Prob[h][i] = 1 / float64(m.A)
		}
	}
	want := model.NewRegret(m).Of(uniform)
	for _, c := range []struct {
		suite  string
		agents []string
		csv    string
	}{
		{"papers'", []string{"ucbvi", "dp-ucbvi-jdp"}, "curves/chain/dp-ucbvi-jdp_eps_1_exact.csv"},
		{"practical", []string{"practical-jdp", "practical-ucbvi"}, "curves/chain/practical-jdp_eps_1.csv"},
	} {
		s := &engine.RunSpec{Family: FamilyName, Env: engine.EnvSpec{Name: "chain", Params: map[string]float64{"states": 5, "horizon": 7}},
			Agents: c.agents, Privacy: engine.PrivacySpec{Epsilons: []float64{1}, Delta: 1e-5}, Runs: engine.Runs{Episodes: 40, Seeds: []uint64{1}}}
		if err := s.Validate(); err != nil {
			t.Fatal(err)
		}
		if _, err := r.PlanSpec(&engine.RunSpec{Family: FamilyName, Env: engine.EnvSpec{Name: "chain", Params: map[string]float64{"states": 30}},
			Agents: c.agents, Privacy: s.Privacy, Runs: s.Runs}, "test"); err == nil || !strings.Contains(err.Error(), "env.params.states: must be an integer in [2, 20], got 30") {
			t.Errorf("%s suite: the registered bounds are not applied: %v", c.suite, err)
		}
		p, err := r.PlanSpec(s, "test")
		if err != nil {
			t.Fatalf("%s suite: %v", c.suite, err)
		}
		dir := t.TempDir()
		if _, err := engine.Execute(context.Background(), p, engine.Local{Workers: 2}, engine.RunOptions{Dir: dir}); err != nil {
			t.Fatalf("%s suite: %v", c.suite, err)
		}
		var man struct {
			Curves []struct {
				Env       string `json:"env"`
				Reference struct {
					Regret float64 `json:"regret_per_episode"`
				} `json:"reference"`
			} `json:"curves"`
		}
		rundirtest.DecodeManifest(t, dir, &man)
		if len(man.Curves) != 2 || man.Curves[0].Env != "chain" || man.Curves[1].Env != "chain" {
			t.Errorf("%s suite: manifest curves %+v, want 2 on chain", c.suite, man.Curves)
		}
		for _, f := range []string{c.csv, "regret_long.csv", "config.resolved.yaml", "summary.md"} {
			if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
				t.Errorf("%s suite: %v", c.suite, err)
			}
		}
		// The chain's model, with the spec's parameters, is what ran: the uniform policy's
		// regret the manifest reports is the chain's (S = 5, H = 7).
		if got := man.Curves[0].Reference.Regret; math.Abs(got-want) > 1e-9 {
			t.Errorf("%s suite: uniform-policy regret %g, want the chain's %g", c.suite, got, want)
		}
	}
}

// TestEnvsBuildEveryEnvironment: every registered environment builds with its default
// parameters (a file environment from a model file), so a registration cannot list an
// environment the family cannot build.
func TestEnvsBuildEveryEnvironment(t *testing.T) {
	envs := Envs()
	for _, name := range envs.Names() {
		e, _ := envs.Lookup(name)
		s := &engine.RunSpec{Env: engine.EnvSpec{Name: name}}
		if e.File {
			s.Env.File = filepath.Join("..", "..", "model", "tabular", "testdata", "riverswim.yaml")
		}
		c := EnvConfig{Name: name}
		if err := envs.Set(e, s, &c); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if m, err := e.New(c); err != nil || m == nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestBaselinesDoNotDependOnTheirNeighbours: the papers' ucbvi and dp-ucbvi-jdp give the same
// regret, seed by seed and episode by episode, whether a RunSpec lists them alone (the papers'
// suite) or beside a practical agent (the practical suite, which hosts them as its baselines):
// their bonus, calibration and streams are the same in both suites. (Their curve records still
// differ by suite: label "dp-ucbvi-jdp eps=1 exact" against "dp-ucbvi-jdp eps=1", the
// environment's directory, garnet-S4-A2-b3-seed1 against garnet-1, and the suite's extras.)
func TestBaselinesDoNotDependOnTheirNeighbours(t *testing.T) {
	r := &engine.Registry{}
	r.Register(Family{})
	run := func(agents ...string) string {
		s := &engine.RunSpec{Family: FamilyName, Env: engine.EnvSpec{Name: "garnet", Params: map[string]float64{"horizon": 5, "states": 4, "actions": 2}},
			Agents: agents, Privacy: engine.PrivacySpec{Epsilons: []float64{1}, Delta: 1e-5}, Runs: engine.Runs{Episodes: 60, Seeds: []uint64{1, 2}}}
		if err := s.Validate(); err != nil {
			t.Fatal(err)
		}
		p, err := r.PlanSpec(s, "test")
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		if _, err := engine.Execute(context.Background(), p, engine.Local{Workers: 2}, engine.RunOptions{Dir: dir}); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	alone, beside := run("ucbvi", "dp-ucbvi-jdp"), run("ucbvi", "dp-ucbvi-jdp", "practical-jdp")
	for _, f := range [][2]string{{"curves/garnet-S4-A2-b3-seed1/ucbvi.csv", "curves/garnet-1/ucbvi.csv"},
		{"curves/garnet-S4-A2-b3-seed1/dp-ucbvi-jdp_eps_1_exact.csv", "curves/garnet-1/dp-ucbvi-jdp_eps_1.csv"}} {
		a, err := os.ReadFile(filepath.Join(alone, f[0]))
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(beside, f[1]))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, b) {
			t.Errorf("%s alone and %s beside practical-jdp differ", f[0], f[1])
		}
	}
}

// TestPracticalAgentsRunOnEveryEnvironment: dprl's practical agents plan on every registered
// environment (the practical suite builds each model through the family's registry, with its
// defaults; a file environment from a model file), and run end to end on the small ones.
func TestPracticalAgentsRunOnEveryEnvironment(t *testing.T) {
	r := &engine.Registry{}
	r.Register(Family{})
	envs := Envs()
	for _, name := range envs.Names() {
		e, _ := envs.Lookup(name)
		s := &engine.RunSpec{Family: FamilyName, Env: engine.EnvSpec{Name: name}, Agents: []string{"practical-jdp", "practical-ucbvi"},
			Privacy: engine.PrivacySpec{Epsilons: []float64{1}, Delta: 1e-5}, Runs: engine.Runs{Episodes: 20, Seeds: []uint64{1}}}
		if e.File {
			s.Env.File = filepath.Join("..", "..", "model", "tabular", "testdata", "riverswim.yaml")
		}
		if err := s.Validate(); err != nil {
			t.Fatal(err)
		}
		p, err := r.PlanSpec(s, "test")
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if n := len(p.Units()); n != 2 {
			t.Errorf("%s: %d units, want 2", name, n)
		}
		c := EnvConfig{Name: name}
		if err := envs.Set(e, s, &c); err != nil {
			t.Fatal(err)
		}
		if m, err := e.New(c); err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		} else if m.S*m.A > 100 {
			continue // planned; too large to run in the quick suite
		}
		dir := t.TempDir()
		if _, err := engine.Execute(context.Background(), p, engine.Local{Workers: 2}, engine.RunOptions{Dir: dir}); err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		var man struct {
			Curves []struct {
				Agent string `json:"agent"`
				CSV   string `json:"csv"`
			} `json:"curves"`
		}
		data, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
		if err == nil {
			err = json.Unmarshal(data, &man)
		}
		if err != nil || len(man.Curves) != 2 || man.Curves[0].Agent != "practical-jdp" {
			t.Errorf("%s: manifest curves %+v (%v)", name, man.Curves, err)
		}
	}
}
