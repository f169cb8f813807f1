package lq

import (
	"fmt"

	"github.com/dprl/dprl/experiment/engine"
	"github.com/dprl/dprl/experiment/rundir"
	model "github.com/dprl/dprl/model/lq"
)

// Envs returns the family's systems (the reference system first): what a configuration's
// system and a RunSpec's env.name select, what `dprl list` shows and what BuildSystem builds.
// A system is configured by the configuration's system string: a registered name, or the path
// of a system file (env.name file). A new system registers here.
func Envs() *engine.Envs[string, *model.System] {
	r := &engine.Envs[string, *model.System]{FilePath: func(system *string) *string { return system }}
	r.Register(engine.Env[string, *model.System]{Name: "lq-e1",
		Desc: "reference LQ system LQ-E1: n=2, d=1, H=10, Rademacher noise ‖w‖=0.2 (lq spec §5.1); the default",
		New:  func(string) (*model.System, error) { return model.LQE1(), nil }})
	r.Register(engine.Env[string, *model.System]{Name: "file", File: true,
		Desc: "an LQ system from a YAML/JSON file (model/lq Config, e.g. model/lq/testdata/lqe1.yaml; system: PATH in a configuration)",
		New: func(path string) (*model.System, error) {
			s, err := model.Load(path)
			if err != nil {
				return nil, fmt.Errorf("system: %w", err)
			}
			return s, nil
		}})
	return r
}

// specSystem resolves a RunSpec's env.name (the reference system when omitted) and env.file
// into a configuration's system through the registry; family names the family in errors.
func specSystem(s *engine.RunSpec, family string) (system string, file bool, err error) {
	envs := Envs()
	system, e, err := envs.Resolve(s, family, "system")
	if err != nil {
		return "", false, err
	}
	if err := envs.Set(e, s, &system); err != nil {
		return "", false, err
	}
	return system, e.File, nil
}

// systemFile reports whether a configuration's system is a system file (neither omitted nor a
// registered system).
func systemFile(system string) bool {
	e, ok := Envs().Lookup(system)
	return system != "" && !(ok && !e.File)
}

// hashSystem reads a system file (none for a registered system): its input record, which the
// manifest lists, and its SHA-256, which a unit's ID includes.
func hashSystem(system string) ([]rundir.Input, string, error) {
	if !systemFile(system) {
		return nil, "", nil
	}
	in, err := rundir.HashFile("system", system)
	if err != nil {
		return nil, "", fmt.Errorf("system: %w", err)
	}
	return []rundir.Input{in}, in.SHA256, nil
}
