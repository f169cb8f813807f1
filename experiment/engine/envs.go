package engine

import (
	"fmt"
	"math"
	"strings"
)

// EnvParam is one numeric parameter of a registered environment: its name in env.params (and
// `dprl run --env-param`), its default and range, and the field of the family's environment
// configuration C that holds it (so that the family's configuration blocks, which name the
// parameter by the same name, and its outputs carry it).
type EnvParam[C any] struct {
	// Name is the parameter's env.params name.
	Name string
	// Int restricts the parameter to integers.
	Int bool
	// Def is the value when env.params omits the parameter; [Lo, Hi] is its range.
	Def, Lo, Hi float64
	// OpenLo refuses Lo itself, after the range check ("must be in (Lo, Hi]").
	OpenLo bool
	// Range, when set, returns Def, Lo and Hi from c with the parameters listed before this one
	// already set (a Garnet's branching is at most its number of states).
	Range func(c *C) (def, lo, hi float64)
	// Field returns the field of c that holds the value: an *int, *uint64 or *float64.
	Field func(c *C) any
}

// Env is one environment of a family: what `dprl list` shows, what env.name and env.params
// select, and how the model is built.
type Env[C, M any] struct {
	// Name is the environment's env.name.
	Name string
	// Desc is its one-line description for `dprl list`.
	Desc string
	// Params are its numeric parameters, in the order they are listed and checked.
	Params []EnvParam[C]
	// File marks the environment of a model file (env.name file): it takes env.file (stored
	// in the field Envs.FilePath names) and no parameters.
	File bool
	// New builds the model from c, the family's environment configuration with this
	// environment's parameters (or file) set.
	New func(c C) (M, error)
}

// Envs is the environment registry of one family: C is the family's environment
// configuration (the environment part of its configuration blocks) and M its model type.
// Every environment of the family registers here (its name, parameters with defaults and
// bounds, description and constructor); the family resolves env.name and env.params through
// it (Set), builds its models through it (Lookup, Env.New) and lists it for `dprl list`
// (SpecEnvs), so that the listing and the code cannot disagree. A family builds its registry
// in a function (no package state), and tests register fake environments in their own copy.
type Envs[C, M any] struct {
	// FilePath returns the field of c holding a model file's path (the File environment's
	// env.file); nil when the family has no file environment.
	FilePath func(c *C) *string
	envs     []Env[C, M]
}

// Register adds e. It panics on an empty name, a name registered twice, a nil constructor or
// a parameter without a field (programming errors, as Registry.Register).
func (r *Envs[C, M]) Register(e Env[C, M]) {
	switch {
	case e.Name == "":
		panic("engine: Envs.Register of an environment with an empty name")
	case e.New == nil:
		panic("engine: Envs.Register of environment " + e.Name + " without a constructor")
	case e.File && (r.FilePath == nil || len(e.Params) > 0):
		panic("engine: Envs.Register of file environment " + e.Name + " without Envs.FilePath, or with parameters")
	}
	if _, dup := r.Lookup(e.Name); dup {
		panic("engine: Envs.Register called twice for environment " + e.Name)
	}
	for _, p := range e.Params {
		if p.Name == "" || p.Field == nil {
			panic("engine: Envs.Register of environment " + e.Name + " with a parameter without a name or a field")
		}
	}
	r.envs = append(r.envs, e)
}

// LoadFile returns the constructor of a File environment: it loads the model file whose path
// FilePath holds with load, and returns a load error as fmt.Errorf(format, path, err) (format
// names the field the path came from, with a %s for the path and a %w for the error).
func (r *Envs[C, M]) LoadFile(format string, load func(path string) (M, error)) func(c C) (M, error) {
	return func(c C) (M, error) {
		path := *r.FilePath(&c)
		m, err := load(path)
		if err != nil {
			var zero M
			return zero, fmt.Errorf(format, path, err)
		}
		return m, nil
	}
}

// Lookup returns the environment called name.
func (r *Envs[C, M]) Lookup(name string) (Env[C, M], bool) {
	for _, e := range r.envs {
		if e.Name == name {
			return e, true
		}
	}
	return Env[C, M]{}, false
}

// Names returns the environments' names in registration order.
func (r *Envs[C, M]) Names() []string {
	out := make([]string, len(r.envs))
	for i, e := range r.envs {
		out[i] = e.Name
	}
	return out
}

// Allowed returns the names joined by ", " (the allowed values in errors).
func (r *Envs[C, M]) Allowed() string { return strings.Join(r.Names(), ", ") }

// AllowedOr returns the names as "a, b or c".
func (r *Envs[C, M]) AllowedOr() string {
	n := r.Names()
	if len(n) < 2 {
		return strings.Join(n, "")
	}
	return strings.Join(n[:len(n)-1], ", ") + " or " + n[len(n)-1]
}

// Default returns the family's reference environment (the first registered), the one a
// RunSpec without env.name runs.
func (r *Envs[C, M]) Default() string {
	if len(r.envs) == 0 {
		return ""
	}
	return r.envs[0].Name
}

// Resolve returns the environment a RunSpec's env.name selects (the reference environment,
// Default, when it is omitted) and its name; an unknown name is an env.name error that names
// family and calls the family's environments what (environment, system).
func (r *Envs[C, M]) Resolve(s *RunSpec, family, what string) (string, Env[C, M], error) {
	name := s.Env.Name
	if name == "" {
		name = r.Default()
	}
	e, ok := r.Lookup(name)
	if !ok {
		return name, e, fmt.Errorf("env.name: unknown %s %q of family %s (allowed: %s)", what, name, family, r.Allowed())
	}
	return name, e, nil
}

// SpecEnvs returns the environments with their parameter names and descriptions, the
// reference environment first (SpecEnvLister; `dprl list`).
func (r *Envs[C, M]) SpecEnvs() []SpecEnv {
	out := make([]SpecEnv, len(r.envs))
	for i, e := range r.envs {
		out[i] = SpecEnv{Name: e.Name, Params: e.ParamNames(), Desc: e.Desc}
	}
	return out
}

// ParamNames returns the names of e's parameters (nil for none).
func (e Env[C, M]) ParamNames() []string {
	var out []string
	for _, p := range e.Params {
		out = append(out, p.Name)
	}
	return out
}

// Set sets e's parameters in c from the env.params of s: it refuses a parameter e does not
// take (the error names the environment as s.Env.Name does), then, in the order of e.Params,
// sets each parameter to its env.params value or its default after checking its range (errors
// name env.params.<name> and the range), and for a File environment sets the file path from
// env.file.
func (r *Envs[C, M]) Set(e Env[C, M], s *RunSpec, c *C) error {
	if err := s.CheckParams(e.ParamNames()...); err != nil {
		return err
	}
	for _, p := range e.Params {
		def, lo, hi := p.Def, p.Lo, p.Hi
		if p.Range != nil {
			def, lo, hi = p.Range(c)
		}
		v := def
		if p.Int {
			n, err := s.IntParam(p.Name, int(def), int(lo), int(hi))
			if err != nil {
				return err
			}
			v = float64(n)
		} else {
			x, err := s.FloatParam(p.Name, def, lo, hi)
			if err != nil {
				return err
			}
			v = x
		}
		if p.OpenLo && v == lo {
			return fmt.Errorf("env.params.%s: must be in (%g, %g], got %g", p.Name, lo, hi, v)
		}
		if err := setField(p.Field(c), v); err != nil {
			return fmt.Errorf("env.params.%s: %w", p.Name, err)
		}
	}
	if e.File {
		*r.FilePath(c) = s.Env.File
	}
	return nil
}

// CopyParams copies the parameters of environment name (or, for the File environment, the
// file path) from src to dst: dst then holds only what the environment uses (the
// configuration a run records as used).
func (r *Envs[C, M]) CopyParams(name string, dst, src *C) {
	e, ok := r.Lookup(name)
	if !ok {
		return
	}
	for _, p := range e.Params {
		switch d := p.Field(dst).(type) {
		case *int:
			*d = *p.Field(src).(*int)
		case *uint64:
			*d = *p.Field(src).(*uint64)
		case *float64:
			*d = *p.Field(src).(*float64)
		}
	}
	if e.File {
		*r.FilePath(dst) = *r.FilePath(src)
	}
}

// setField stores v into the field f (an *int, *uint64 or *float64).
func setField(f any, v float64) error {
	switch d := f.(type) {
	case *int:
		*d = int(v)
	case *uint64:
		if v < 0 || v != math.Trunc(v) {
			return fmt.Errorf("must be a non-negative integer, got %g", v)
		}
		*d = uint64(v)
	case *float64:
		*d = v
	default:
		return fmt.Errorf("field of type %T (want *int, *uint64 or *float64)", f)
	}
	return nil
}
