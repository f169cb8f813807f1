package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dprl/dprl/experiment/engine"
)

// TestRunSpecFlagsEveryFamily: `dprl run` flags fill the shared run schema for every family
// that plans it, and the run writes the one result layout.
func TestRunSpecFlagsEveryFamily(t *testing.T) {
	for _, c := range []struct {
		name, family string
		args         []string
	}{
		{"tabular", "tabular", []string{"--agent", "dp-ucbvi-jdp", "--epsilon", "1", "--env", "garnet", "--env-param", "states=4", "--env-param", "horizon=5"}},
		{"lq", "lq", []string{"--agent", "private-ofu-rl", "--epsilon", "1", "--delta", "1e-6"}},
		{"tabular practical", "tabular", []string{"--agent", "practical-jdp", "--epsilon", "1", "--env", "garnet", "--env-param", "states=4", "--env-param", "horizon=5", "--noise", "secure"}},
		{"tabular practical named flags", "tabular", []string{"--agent", "practical-jdp", "--epsilon", "1", "--env", "garnet", "--states", "4", "--horizon", "5"}},
		{"lq practical", "lq", []string{"--agent", "practical-ofu-rl", "--epsilon", "1", "--delta", "1e-6"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "run")
			args := append([]string{"run", "--family", c.family, "--episodes", "120", "--seeds", "1,2", "--quiet", "--out", out, "--workers", "2"}, c.args...)
			code, stdout, stderr := runCLI(t, args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if !strings.Contains(stdout, "Wrote") {
				t.Errorf("stdout %q", stdout)
			}
			for _, f := range []string{"manifest.json", "meta.json", "config.resolved.yaml", "regret_long.csv"} {
				if _, err := os.Stat(filepath.Join(out, f)); err != nil {
					t.Errorf("%s: %v", f, err)
				}
			}
		})
	}
}

// TestRunSpecConfigFile: a configuration file in the shared run schema runs for the families
// that plan it, with the same result as the same run described by flags.
func TestRunSpecConfigFile(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "run.yaml")
	doc := "family: lq\nname: spec-lq\nenv: {name: lq-e1}\nagents: [private-ofu-rl]\nprivacy: {epsilons: [1], delta: 1.0e-6, calibration: exact}\nepisodes: 120\nseeds: [1, 2]\n"
	if err := os.WriteFile(cfg, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	if code, _, stderr := runCLI(t, "run", "--config", cfg, "--out", a, "--quiet"); code != 0 {
		t.Fatalf("config: exit %d: %s", code, stderr)
	}
	if code, _, stderr := runCLI(t, "run", "--family", "lq", "--agent", "private-ofu-rl", "--epsilon", "1", "--delta", "1e-6",
		"--episodes", "120", "--seeds", "1,2", "--out", b, "--quiet"); code != 0 {
		t.Fatalf("flags: exit %d: %s", code, stderr)
	}
	for _, f := range []string{"regret_long.csv", "config.resolved.yaml"} {
		x, err1 := os.ReadFile(filepath.Join(a, f))
		y, err2 := os.ReadFile(filepath.Join(b, f))
		if err1 != nil || err2 != nil || string(x) != string(y) {
			t.Errorf("%s differs between the config file and the flags (%v, %v)", f, err1, err2)
		}
	}
}

// TestRunSpecBadInput: the shared schema's bad inputs exit 2 naming the flag or field.
func TestRunSpecBadInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name, doc string) string { return putFile(t, dir, name, doc) }
	base := "agents: [dp-ucbvi-jdp]\nepisodes: 100\nseeds: [1]\n"
	lq := []string{"run", "--family", "lq", "--episodes", "100", "--seeds", "1"}
	checkBad(t, []badCase{
		{"lq without agent", lq, "--agent"},
		{"lq unknown agent", append(lq, "--agent", "nope"), "--agent"},
		{"lq private without epsilon", append(lq, "--agent", "private-ofu-rl"), "--epsilon"},
		{"lq practical agent without epsilon", append(lq, "--agent", "practical-ofu-rl"), "--epsilon"},
		{"old family practical-tabular", []string{"run", "--family", "practical-tabular", "--agent", "practical-jdp", "--epsilon", "1"}, `family "tabular"`},
		{"old family practical-lq", []string{"run", "--family", "practical-lq", "--agent", "practical-ofu-rl", "--epsilon", "1"}, `family "lq"`},
		{"practical tabular agent with a papers' flag", []string{"run", "--agent", "practical-jdp", "--epsilon", "1", "--beta", "0.2"}, "--beta"},
		{"lq tabular flag", append(lq, "--agent", "ofu-rl", "--horizon", "5"), "--horizon"},
		{"lq env param", append(lq, "--agent", "ofu-rl", "--env-param", "horizon=5"), "--env-param horizon"},
		{"lq bad env", append(lq, "--agent", "ofu-rl", "--env", "riverswim"), "--env"},
		{"lq delta", append(lq, "--agent", "private-ofu-rl", "--epsilon", "1", "--delta", "2"), "--delta"},
		{"lq calibration", append(lq, "--agent", "private-ofu-rl", "--epsilon", "1", "--calibration", "unit"), "--calibration"},
		{"lq secure", append(lq, "--agent", "private-ofu-rl", "--epsilon", "1", "--noise", "secure"), "--noise"},
		{"lq epsilon NaN", append(lq, "--agent", "private-ofu-rl", "--epsilon", "NaN"), "--epsilon"},
		{"env-param syntax", []string{"run", "--env-param", "horizon"}, "NAME=NUMBER"},
		{"env-param twice", []string{"run", "--env-param", "horizon=3", "--env-param", "horizon=4"}, "twice"},
		{"env-param and flag", []string{"run", "--env-param", "horizon=3", "--horizon", "4"}, "--horizon"},
		{"env-param unknown tabular", []string{"run", "--env-param", "dim=3"}, "dim"},
		{"tabular delta", []string{"run", "--agent", "dp-ucbvi-jdp", "--epsilon", "1", "--delta", "1e-6"}, "--delta"},
		{"unknown family", []string{"run", "--family", "nope", "--agent", "x"}, "family"},
		{"spec unknown key", []string{"run", "--config", write("k.yaml", base+"privacy: {epsilons: [1], bogus: 2}\n")}, "bogus"},
		{"spec unknown param", []string{"run", "--config", write("p.yaml", base+"privacy: {epsilons: [1]}\nenv: {name: riverswim, params: {states: 3}}\n")}, "env.params.states"},
		{"spec param range", []string{"run", "--config", write("r.yaml", base+"privacy: {epsilons: [1]}\nenv: {name: riverswim, params: {horizon: 0.5}}\n")}, "env.params.horizon"},
		{"spec no epsilon", []string{"run", "--config", write("e.yaml", base)}, "privacy.epsilons"},
		{"spec epsilon twice", []string{"run", "--config", write("e2.yaml", base+"privacy: {epsilons: [1, 1]}\n")}, "privacy.epsilons[1]"},
		{"spec delta zero", []string{"run", "--config", write("d.yaml", base+"privacy: {epsilons: [1], delta: 0}\n")}, "privacy.delta"},
		{"spec seeds twice", []string{"run", "--config", write("s.yaml", "agents: [ucbvi]\nepisodes: 100\nseeds: [1, 1]\n")}, "seeds[1]"},
		{"spec episodes", []string{"run", "--config", write("n.yaml", "agents: [ucbvi]\nepisodes: 1000000000\nseeds: [1]\n")}, "episodes"},
		{"spec env file missing", []string{"run", "--config", write("f.yaml", "agents: [ucbvi]\nepisodes: 10\nseeds: [1]\nenv: {name: file}\n")}, "env.file"},
		{"spec practical tabular agent", []string{"run", "--config", write("pt.yaml", "agents: [practical-jdp]\nepisodes: 10\nseeds: [1]\n")}, "agents[0]"},
		{"spec calibration", []string{"run", "--config", write("c.yaml", base+"privacy: {epsilons: [1], calibration: zcdp}\n")}, "privacy.calibration"},
	})
}

// TestSpecEnvsMatchPlanSpec: the environments and parameters a family lists for `dprl list`
// are exactly those its PlanSpec accepts — an unknown parameter is refused with the listed ones
// as the allowed values, a listed environment without parameters takes none, and an unlisted
// environment is refused.
func TestSpecEnvsMatchPlanSpec(t *testing.T) {
	r := newRegistry()
	n := 0
	for _, name := range r.Names() {
		f, _ := r.Lookup(name)
		l, ok := f.(engine.SpecEnvLister)
		if !ok {
			if _, plans := f.(engine.SpecPlanner); plans {
				t.Errorf("family %s plans RunSpecs but does not list its environments", name)
			}
			continue
		}
		n++
		for _, e := range l.SpecEnvs() {
			s := &engine.RunSpec{Family: name, Agents: []string{"no-such-agent"}, Runs: engine.Runs{Episodes: 100, Seeds: []uint64{1}},
				Env: engine.EnvSpec{Name: e.Name, Params: map[string]float64{"zz_unknown": 1}}}
			if e.Name == "file" {
				s.Env.File = "no-such-file.yaml"
			}
			if err := s.Validate(); err != nil {
				t.Fatal(err)
			}
			_, err := r.PlanSpec(s, "test")
			want := "takes no parameters"
			if len(e.Params) > 0 {
				want = "(allowed: " + strings.Join(e.Params, ", ") + ")"
			}
			if err == nil || !strings.Contains(err.Error(), "env.params.zz_unknown") || !strings.Contains(err.Error(), want) {
				t.Errorf("%s/%s: PlanSpec error %v, want one naming env.params.zz_unknown and %q", name, e.Name, err, want)
			}
		}
		s := &engine.RunSpec{Family: name, Agents: []string{"x"}, Runs: engine.Runs{Episodes: 100, Seeds: []uint64{1}}, Env: engine.EnvSpec{Name: "no-such-env"}}
		_ = s.Validate()
		if _, err := r.PlanSpec(s, "test"); err == nil || !strings.Contains(err.Error(), "env.name") {
			t.Errorf("%s: unknown environment: %v", name, err)
		}
	}
	if n < 4 {
		t.Errorf("only %d families list their environments", n)
	}
}
