package engine

import (
	"fmt"
	"sort"

	"github.com/dprl/dprl/experiment/rundir"
	"github.com/dprl/dprl/internal/bounds"
	"github.com/dprl/dprl/internal/inputerr"
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

// Reproduction returns the embedded reproduction name (`dprl sweep config name`); an
// unknown name is bad input naming the available ones.
func (r *Registry) Reproduction(name string) (Embedded, error) {
	e, ok := r.Reproductions()[name]
	if !ok {
		return Embedded{}, inputerr.New("unknown reproduction %q on the engine (available: %v)", name, r.ReproductionNames())
	}
	return e, nil
}

// ReproduceFlags are the flags of `dprl reproduce NAME` that choose what it runs.
type ReproduceFlags struct {
	// Name is the reproduction; Config is --config (a user's configuration replacing the
	// embedded one), Seeds is --seeds and Episodes is --episodes, each used when Changed
	// reports it was given.
	Name, Config, Seeds string
	Episodes            int
	Changed             func(flag string) bool
	// Set are the reproduction's own options given (Optioner: option name → value).
	Set map[string]string
}

// ReproduceBlock checks the flags of `dprl reproduce NAME` (--config as ReadConfigFile does,
// --seeds, --episodes) and returns the family and the configuration block it runs
// (ReproductionBlock), where the block comes from ("embedded:NAME" or the --config file) and
// the --config file as the run's input. Errors are bad input naming the flag or field.
func (r *Registry) ReproduceBlock(f ReproduceFlags) (family string, block []byte, source string, inputs []rundir.Input, err error) {
	var user []byte
	source = "embedded:" + f.Name
	if f.Changed("config") {
		if user, err = ReadConfigFile("--config", f.Config); err != nil {
			return "", nil, "", nil, err
		}
		source, inputs = f.Config, []rundir.Input{rundir.HashBytes("config", f.Config, user)}
	}
	var seeds []uint64
	if f.Changed("seeds") {
		if seeds, err = SeedsFlag(f.Seeds); err != nil {
			return "", nil, "", nil, err
		}
	}
	episodes := 0
	if f.Changed("episodes") {
		if episodes = f.Episodes; episodes < 1 || episodes > bounds.MaxEpisodes {
			return "", nil, "", nil, inputerr.New("--episodes: must be in [1, %d], got %d", bounds.MaxEpisodes, episodes)
		}
	}
	family, block, err = r.ReproductionBlock(f.Name, user, f.Set, episodes, seeds)
	return family, block, source, inputs, inputerr.Wrap(err)
}
