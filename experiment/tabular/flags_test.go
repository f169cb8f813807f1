package tabular

import (
	"slices"
	"strings"
	"testing"

	"github.com/dprl/dprl/experiment/engine"
	"github.com/dprl/dprl/internal/inputerr"
)

// paperFlags returns the `dprl run` defaults of the papers' tabular agents with the given
// flags marked as given.
func paperFlags(changed ...string) Flags {
	return Flags{RunFlags: engine.RunFlags{Family: FamilyName, Env: "riverswim", Agent: "ucbvi", Calibration: "exact", Seeds: "1-2",
		Noise: "seeded", Episodes: 100, Multiplier: 1, Changed: func(n string) bool { return slices.Contains(changed, n) }},
		Preset: "practical", Horizon: 20, States: 10, Actions: 3, Branching: 3, Beta: 0.1, Density: 0.3, EnvSeed: 1}
}

// TestFlagsConfig: the papers' agents' flags build the configuration a file would (through
// ParseConfig); a flag without effect for the environment (its registered parameters) or the
// agent, and a value a default would replace, are bad input naming the flag.
func TestFlagsConfig(t *testing.T) {
	f := paperFlags("agent", "epsilon", "env", "states")
	f.Agent, f.Epsilon, f.Env, f.States = "dp-ucbvi-jdp", 1, "garnet", 4
	cfg, err := f.Config()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Env.Name != "garnet" || cfg.Env.States != 4 || cfg.Curves[0].Label != "dp-ucbvi-jdp eps=1 exact" || !slices.Equal(cfg.Seeds, []uint64{1, 2}) {
		t.Errorf("config %+v", cfg)
	}
	for _, c := range []struct {
		f    Flags
		want string
	}{
		{paperFlags("states"), "--states: has no effect with --env riverswim (RiverSwim has S = 6, A = 2); remove it"},
		{func() Flags { f := paperFlags("env", "horizon"); f.Env = "file"; return f }(), "--horizon: has no effect with --env file (the file sets the MDP"},
		{func() Flags { f := paperFlags("env"); f.Env = "file"; return f }(), "--env-file: required with --env file"},
		{func() Flags { f := paperFlags("env", "env-file"); f.Env = "garnet"; return f }(), "--env-file: has no effect with --env garnet; remove it"},
		{paperFlags("epsilon"), "--epsilon: has no effect for the non-private agent ucbvi"},
		{func() Flags { f := paperFlags("beta"); f.Beta = 1; return f }(), "--beta: must be in (0, 1), got 1"},
		{func() Flags { f := paperFlags("horizon"); f.Horizon = 0; return f }(), "env.horizon (--horizon): must be in [1, 10000], got 0"},
		{func() Flags { f := paperFlags("env"); f.Env = "nowhere"; return f }(), `env.name: unknown environment "nowhere" (allowed: riverswim, garnet, frozenlake4x4, frozenlake8x8, cliffwalking, taxi, cliffwalking-private-support, taxi-private-support, file)`},
	} {
		_, err := c.f.Config()
		if !inputerr.Is(err) || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("error %v, want bad input starting with %q", err, c.want)
		}
	}
}

// TestFlagsRecordOnlyTheEnvironmentsParameters: the flags' configuration holds only the
// parameters its environment takes (RiverSwim: its horizon, not the Garnet flags' defaults; a
// Gymnasium table: none), as the RunSpec path does, so config.resolved.yaml and the unit IDs
// record the environment as run.
func TestFlagsRecordOnlyTheEnvironmentsParameters(t *testing.T) {
	for _, c := range []struct {
		env  string
		want EnvConfig
	}{
		{"riverswim", EnvConfig{Name: "riverswim", Horizon: 20}},
		{"frozenlake4x4", EnvConfig{Name: "frozenlake4x4"}},
		{"garnet", EnvConfig{Name: "garnet", Horizon: 20, States: 10, Actions: 3, Branching: 3, Density: 0.3, EnvSeed: 1}},
	} {
		f := paperFlags("env")
		f.Env = c.env
		cfg, err := f.Config()
		if err != nil {
			t.Fatalf("%s: %v", c.env, err)
		}
		if cfg.Env != c.want {
			t.Errorf("--env %s: configuration env %+v, want %+v", c.env, cfg.Env, c.want)
		}
		if s, err := specConfig(&engine.RunSpec{Name: "run", Env: engine.EnvSpec{Name: c.env}, Agents: []string{"ucbvi"},
			Runs: engine.Runs{Episodes: 100, Seeds: []uint64{1, 2}}, Multipliers: engine.MultiplierSpec{Bonus: 1}}, Envs()); err != nil || s.Env != cfg.Env {
			t.Errorf("--env %s: RunSpec env %+v (%v), flags %+v", c.env, s.Env, err, cfg.Env)
		}
	}
}

// TestApplyParamFlags: --env-param sets the named flags; unknown names and a parameter given
// both ways are refused.
func TestApplyParamFlags(t *testing.T) {
	set := map[string]string{}
	setter := func(flag, v string) error { set[flag] = v; return nil }
	none := func(string) bool { return false }
	if err := ApplyParamFlags(map[string]float64{"reward_density": 0.5, "env_seed": 3}, none, setter); err != nil ||
		set["reward-density"] != "0.5" || set["env-seed"] != "3" {
		t.Errorf("%v, %v", set, err)
	}
	if err := ApplyParamFlags(map[string]float64{"dim": 3}, none, setter); !inputerr.Is(err) || !strings.Contains(err.Error(), "--env-param dim: unknown parameter of family tabular") {
		t.Errorf("unknown: %v", err)
	}
	both := func(n string) bool { return n == "horizon" }
	if err := ApplyParamFlags(map[string]float64{"horizon": 3}, both, setter); !inputerr.Is(err) || err.Error() != "--env-param horizon: also given as --horizon" {
		t.Errorf("both ways: %v", err)
	}
	if got := OnlyFlags(); !slices.Equal(got, []string{"horizon", "states", "actions", "branching", "reward-density", "env-seed", "beta", "preset", "e-mode"}) {
		t.Errorf("OnlyFlags %v", got)
	}
}
