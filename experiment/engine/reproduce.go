package engine

import (
	"fmt"
	"sort"
)

// ReproductionNames returns the names of the registry's reproductions, sorted.
func (r *Registry) ReproductionNames() []string {
	var names []string
	for n := range r.Reproductions() {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// ReproductionBlock returns the configuration block `dprl reproduce name` runs and its family:
// the reproduction's embedded block or, when user is not nil, the block of a user's
// configuration document (a --config file: `family:` and `suite:` may be omitted, and must
// otherwise be the reproduction's), with the options in set applied (Optioner; option name →
// value, only the options given) and resized to episodes and seeds when given (Resizer; 0 and
// nil keep them). The result is the same run as a sweep of the block. Errors are the user's to
// fix and name the option or field.
func (r *Registry) ReproductionBlock(name string, user []byte, set map[string]string, episodes int, seeds []uint64) (string, []byte, error) {
	e, ok := r.Reproductions()[name]
	if !ok {
		return "", nil, fmt.Errorf("unknown reproduction %q (available: %v)", name, r.ReproductionNames())
	}
	f, err := r.Lookup(e.Family)
	if err != nil {
		return "", nil, err
	}
	op, _ := f.(Optioner)
	if len(set) > 0 && op == nil {
		return "", nil, fmt.Errorf("reproduction %s takes no options", name)
	}
	for _, o := range optionsOf(op, name) {
		if _, given := set[o.Name]; given && o.EmbeddedOnly && user != nil {
			return "", nil, fmt.Errorf("--%s: has no effect beside --config (it selects another embedded configuration; set what it changes in the configuration file); remove it", o.Name)
		}
	}
	block := e.Block
	if user != nil {
		if block, err = userBlock(name, e, user); err != nil {
			return "", nil, err
		}
	}
	if len(set) > 0 {
		if block, err = op.ApplyOptions(name, block, set); err != nil {
			return "", nil, err
		}
	}
	if episodes != 0 || seeds != nil {
		rs, ok := f.(Resizer)
		if !ok {
			return "", nil, fmt.Errorf("--episodes, --seeds: family %s cannot resize its configurations; use --config", e.Family)
		}
		if block, err = rs.Resize(block, episodes, seeds); err != nil {
			return "", nil, err
		}
	}
	return e.Family, block, nil
}

// userBlock returns the block of a user's configuration document replacing reproduction
// name's: of its family (`family:` may be omitted) and suite (`suite:` may be omitted), and a
// sweep block rather than a RunSpec.
func userBlock(name string, e Embedded, data []byte) ([]byte, error) {
	fam, block, err := SplitFamily(data, e.Family)
	if err != nil {
		return nil, err
	}
	if fam != e.Family {
		return nil, fmt.Errorf("--config: a configuration of family %s, but %s is a reproduction of family %s (run it with dprl run --config)", fam, name, e.Family)
	}
	if IsRunSpec(block) {
		return nil, fmt.Errorf("--config: a run specification (agents: …), not a configuration block of %s (run it with dprl run --config)", name)
	}
	want, _, err := SplitSuite(e.Block)
	if err != nil {
		return nil, err
	}
	suite, _, err := SplitSuite(block)
	switch {
	case err != nil:
		return nil, err
	case suite == "":
		return WithSuite(want, block), nil
	case suite != want:
		return nil, fmt.Errorf("--config: a configuration of suite %q, but %s runs suite %q (run it with dprl run --config)", suite, name, want)
	}
	return block, nil
}

// optionsOf returns the options of reproduction name (nil when op is nil).
func optionsOf(op Optioner, name string) []Option {
	if op == nil {
		return nil
	}
	return op.Options(name)
}

// ReproductionOptions returns the options of reproduction name that its family declares
// (Optioner), and its one-line description (Describer; "" when it has none).
func (r *Registry) ReproductionOptions(name string) (opts []Option, describe string) {
	e, ok := r.Reproductions()[name]
	if !ok {
		return nil, ""
	}
	f, _ := r.Lookup(e.Family)
	op, _ := f.(Optioner)
	if d, ok := f.(Describer); ok {
		describe = d.Describe(name)
	}
	return optionsOf(op, name), describe
}
