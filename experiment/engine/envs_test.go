package engine

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// fakeEnvConfig is a family's environment configuration for the registry tests.
type fakeEnvConfig struct {
	Name          string
	Size, Branch  int
	Seed          uint64
	Density       float64
	Path          string
	builtWithSize int
}

func fakeEnvs() *Envs[fakeEnvConfig, string] {
	r := &Envs[fakeEnvConfig, string]{FilePath: func(c *fakeEnvConfig) *string { return &c.Path }}
	r.Register(Env[fakeEnvConfig, string]{Name: "chain", Desc: "a chain",
		Params: []EnvParam[fakeEnvConfig]{
			{Name: "size", Int: true, Def: 4, Lo: 2, Hi: 10, Field: func(c *fakeEnvConfig) any { return &c.Size }},
			{Name: "branch", Int: true, Field: func(c *fakeEnvConfig) any { return &c.Branch },
				Range: func(c *fakeEnvConfig) (float64, float64, float64) { return float64(min(2, c.Size)), 1, float64(c.Size) }},
			{Name: "density", Def: 0.5, Lo: 0, Hi: 1, OpenLo: true, Field: func(c *fakeEnvConfig) any { return &c.Density }},
			{Name: "seed", Int: true, Def: 1, Lo: 0, Hi: 1 << 52, Field: func(c *fakeEnvConfig) any { return &c.Seed }}},
		New: func(c fakeEnvConfig) (string, error) {
			return fmt.Sprintf("chain(%d,%d,%g,%d)", c.Size, c.Branch, c.Density, c.Seed), nil
		}})
	r.Register(Env[fakeEnvConfig, string]{Name: "file", File: true, Desc: "a file",
		New: func(c fakeEnvConfig) (string, error) { return "file " + c.Path, nil }})
	return r
}

// TestEnvsSetDefaultsAndBounds: Set fills every parameter (given or default, a dependent
// range from the parameters before it), refuses unknown parameters and out-of-range values
// naming env.params.<name>, and the file environment takes env.file.
func TestEnvsSetDefaultsAndBounds(t *testing.T) {
	r := fakeEnvs()
	if r.Default() != "chain" || r.Allowed() != "chain, file" || r.AllowedOr() != "chain or file" {
		t.Errorf("Default %q, Allowed %q, AllowedOr %q", r.Default(), r.Allowed(), r.AllowedOr())
	}
	chain, ok := r.Lookup("chain")
	if !ok {
		t.Fatal("chain not registered")
	}
	spec := func(params map[string]float64) *RunSpec {
		return &RunSpec{Env: EnvSpec{Name: "chain", Params: params}}
	}
	var c fakeEnvConfig
	if err := r.Set(chain, spec(map[string]float64{"size": 6}), &c); err != nil {
		t.Fatal(err)
	}
	if c.Size != 6 || c.Branch != 2 || c.Density != 0.5 || c.Seed != 1 {
		t.Errorf("Set: %+v", c)
	}
	if m, err := chain.New(c); err != nil || m != "chain(6,2,0.5,1)" {
		t.Errorf("New: %q, %v", m, err)
	}
	for _, bad := range []struct {
		params map[string]float64
		want   string
	}{
		{map[string]float64{"bogus": 1}, `env.params.bogus: unknown parameter of environment "chain" (allowed: size, branch, density, seed)`},
		{map[string]float64{"size": 1}, "env.params.size: must be an integer in [2, 10], got 1"},
		{map[string]float64{"size": 2.5}, "env.params.size: must be an integer in [2, 10], got 2.5"},
		{map[string]float64{"size": 3, "branch": 4}, "env.params.branch: must be an integer in [1, 3], got 4"},
		{map[string]float64{"density": 2}, "env.params.density: must be in [0, 1], got 2"},
		{map[string]float64{"density": 0}, "env.params.density: must be in (0, 1], got 0"},
	} {
		var c fakeEnvConfig
		if err := r.Set(chain, spec(bad.params), &c); err == nil || err.Error() != bad.want {
			t.Errorf("%v: error %v, want %q", bad.params, err, bad.want)
		}
	}
	file, _ := r.Lookup("file")
	c = fakeEnvConfig{}
	s := &RunSpec{Env: EnvSpec{Name: "file", File: "m.yaml"}}
	if err := r.Set(file, s, &c); err != nil || c.Path != "m.yaml" {
		t.Errorf("file: %+v, %v", c, err)
	}
	s.Env.Params = map[string]float64{"size": 3}
	if err := r.Set(file, s, &c); err == nil || !strings.Contains(err.Error(), "takes no parameters") {
		t.Errorf("file with a parameter: %v", err)
	}
}

// TestEnvsListAndCopy: SpecEnvs lists every environment with its parameters and description
// (what `dprl list` shows), and CopyParams keeps exactly the environment's parameters.
func TestEnvsListAndCopy(t *testing.T) {
	r := fakeEnvs()
	got := r.SpecEnvs()
	if len(got) != 2 || got[0].Name != "chain" || !slices.Equal(got[0].Params, []string{"size", "branch", "density", "seed"}) ||
		got[0].Desc != "a chain" || got[1].Name != "file" || got[1].Params != nil {
		t.Errorf("SpecEnvs: %+v", got)
	}
	src := fakeEnvConfig{Name: "chain", Size: 5, Branch: 2, Seed: 7, Density: 0.25, Path: "stale", builtWithSize: 9}
	var dst fakeEnvConfig
	r.CopyParams("chain", &dst, &src)
	if want := (fakeEnvConfig{Size: 5, Branch: 2, Seed: 7, Density: 0.25}); dst != want {
		t.Errorf("CopyParams chain: %+v, want %+v", dst, want)
	}
	dst = fakeEnvConfig{}
	r.CopyParams("file", &dst, &src)
	if dst != (fakeEnvConfig{Path: "stale"}) {
		t.Errorf("CopyParams file: %+v", dst)
	}
}

// TestEnvsRegisterPanics: registration errors are programming errors.
func TestEnvsRegisterPanics(t *testing.T) {
	for name, e := range map[string]Env[fakeEnvConfig, string]{
		"empty name":     {New: func(fakeEnvConfig) (string, error) { return "", nil }},
		"no constructor": {Name: "x"},
		"duplicate":      {Name: "chain", New: func(fakeEnvConfig) (string, error) { return "", nil }},
		"param no field": {Name: "y", Params: []EnvParam[fakeEnvConfig]{{Name: "p"}}, New: func(fakeEnvConfig) (string, error) { return "", nil }},
		"file params": {Name: "z", File: true, Params: []EnvParam[fakeEnvConfig]{{Name: "p", Field: func(c *fakeEnvConfig) any { return &c.Size }}},
			New: func(fakeEnvConfig) (string, error) { return "", nil }},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: Register did not panic", name)
				}
			}()
			fakeEnvs().Register(e)
		}()
	}
}

// TestEnvsLoadFile: the File constructor loads the path FilePath holds and wraps a load error
// with the path as the format says.
func TestEnvsLoadFile(t *testing.T) {
	r := fakeEnvs()
	load := r.LoadFile("env.file: %s: %w", func(path string) (string, error) {
		if path == "bad" {
			return "", fmt.Errorf("no such model")
		}
		return "model " + path, nil
	})
	if m, err := load(fakeEnvConfig{Path: "m.yaml"}); err != nil || m != "model m.yaml" {
		t.Errorf("load(m.yaml) = %q, %v; want \"model m.yaml\"", m, err)
	}
	if _, err := load(fakeEnvConfig{Path: "bad"}); err == nil || err.Error() != "env.file: bad: no such model" {
		t.Errorf("load(bad): error %v, want \"env.file: bad: no such model\"", err)
	}
}
