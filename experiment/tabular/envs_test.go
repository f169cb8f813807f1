package tabular

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dprl/dprl/experiment/engine"
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
	data, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &man); err != nil {
		t.Fatal(err)
	}
	if want := (EnvConfig{Name: "chain", Horizon: 6, States: 4}); man.Curves[0].Env != "chain" || man.Config.Env != want {
		t.Errorf("manifest env %q, config env %+v; want %+v", man.Curves[0].Env, man.Config.Env, want)
	}
	for _, f := range []string{"curves/chain/ucbvi.csv", "regret_long.csv", "config.resolved.yaml"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}

	// A configuration block names it too; a family without it refuses it.
	block := []byte("env: {name: chain, horizon: 4, states: 3}\nepisodes: 30\nseeds: [1]\ncurves: [{agent: ucbvi}]\n")
	if _, err := r.PlanBlock(FamilyName, block, "test"); err != nil {
		t.Errorf("configuration block: %v", err)
	}
	if _, err := (Family{}).Plan(block, "test"); err == nil || !strings.Contains(err.Error(), `unknown environment "chain" (allowed: riverswim, garnet, frozenlake4x4, frozenlake8x8, cliffwalking, taxi, file)`) {
		t.Errorf("default registry: %v", err)
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
