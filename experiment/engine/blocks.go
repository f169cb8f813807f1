package engine

import (
	"fmt"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/dprl/dprl/experiment/calibration"
)

// The helpers below are the pieces of a family's configuration-block handling that every
// family shares (its Catalogue, Optioner, Resizer and Plan methods and its PlanConfig), so
// that the families differ only in their schemas.

// EnvEntries returns the environment lines of a Listing: one per environment of envs (a
// SpecEnvLister's SpecEnvs), with its parameters and description.
func EnvEntries(envs []SpecEnv) []Entry {
	out := make([]Entry, 0, len(envs))
	for _, e := range envs {
		out = append(out, Entry{Name: e.Name, Params: strings.Join(e.Params, ", "), Desc: e.Desc})
	}
	return out
}

// LongOption returns the boolean option --long of a reproduction (Optioner.Options) that
// runs longer or more seeds, with its help text.
func LongOption(usage string) Option {
	return Option{Name: "long", Bool: true, Default: "false", Usage: usage}
}

// Repro is what `dprl list` and `dprl reproduce --help` say about one embedded reproduction:
// its one-line description and its options.
type Repro struct {
	Describe string
	Options  []Option
}

// Repros is a family's (or a suite's) table of its reproductions by name: its methods are the
// family's Describer and the Options half of its Optioner.
type Repros map[string]Repro

// Describe returns the description of reproduction repro ("" for another name).
func (r Repros) Describe(repro string) string { return r[repro].Describe }

// Options returns the options of reproduction repro (nil for none).
func (r Repros) Options(repro string) []Option { return r[repro].Options }

// ApplyBool applies the boolean option name of set (Optioner.ApplyOptions) to block with
// apply; block is returned unchanged when the command line does not give the option, and a
// value that is not a boolean is an error naming the option as its flag (--name: …).
func ApplyBool(block []byte, set map[string]string, name string, apply func(block []byte, v bool) ([]byte, error)) ([]byte, error) {
	v, ok := set[name]
	if !ok {
		return block, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return nil, fmt.Errorf("--%s: %w", name, err)
	}
	return apply(block, b)
}

// ResizeFields sets every K of ks to episodes (unless 0) and *seeds to newSeeds (unless nil):
// what a Resizer changes in a configuration.
func ResizeFields(episodes int, newSeeds []uint64, seeds *[]uint64, ks ...*int) {
	if episodes != 0 {
		for _, k := range ks {
			*k = episodes
		}
	}
	if newSeeds != nil {
		*seeds = newSeeds
	}
}

// Validator is a configuration that checks its fields.
type Validator interface{ Validate() error }

// MarshalValid validates a configuration and returns it as a YAML block (the result of a
// Resizer or an Optioner that edits the decoded configuration).
func MarshalValid(cfg Validator) ([]byte, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return yaml.Marshal(cfg)
}

// PlanBlock decodes a configuration block with parse and plans it with plan (Family.Plan of a
// family, or of a suite, whose block is one configuration).
func PlanBlock[C any, P Plan](block []byte, parse func([]byte) (C, error), plan func(C) (P, error)) (Plan, error) {
	cfg, err := parse(block)
	if err != nil {
		return nil, err
	}
	return plan(cfg)
}

// PlanWith plans an already parsed and validated configuration with plan and stamps it with
// the family (NewPlanned): a family's PlanConfig.
func PlanWith[C any, P Plan](family string, plan func(C) (P, error), cfg C) (*Planned, error) {
	p, err := plan(cfg)
	if err != nil {
		return nil, err
	}
	return NewPlanned(family, p)
}

// NamedSuite is a family's second configuration schema, selected by `suite: <Name>` in a block
// (SuiteKey); a block without the key is the family's default schema (the papers' suite).
type NamedSuite struct {
	// Family is the family's name and Name the suite's.
	Family, Name string
	// Default describes the default schema in errors ("the papers' suite").
	Default string
}

// Split reports whether block selects the suite and returns the block without the key (block
// itself when it has none); another suite name is an error naming the allowed one.
func (n NamedSuite) Split(block []byte) (bool, []byte, error) {
	suite, rest, err := SplitSuite(block)
	switch {
	case err != nil:
		return false, nil, err
	case suite == "":
		return false, block, nil
	case suite == n.Name:
		return true, rest, nil
	}
	return false, nil, fmt.Errorf("suite: unknown suite %q of family %s (allowed: %s, or omit it for %s)", suite, n.Family, n.Name, n.Default)
}

// Edit returns block edited by suite when it selects the suite (the block without the key in,
// the key put back on the result) and by other otherwise (an Optioner's or Resizer's edit).
func (n NamedSuite) Edit(block []byte, suite, other func([]byte) ([]byte, error)) ([]byte, error) {
	is, rest, err := n.Split(block)
	if err != nil {
		return nil, err
	}
	if is {
		b, err := suite(rest)
		return WithSuite(n.Name, b), err
	}
	return other(block)
}

// Plan plans block with suite when it selects the suite (the block without the key) and with
// other otherwise.
func (n NamedSuite) Plan(block []byte, suite, other func([]byte) (Plan, error)) (Plan, error) {
	is, rest, err := n.Split(block)
	if err != nil {
		return nil, err
	}
	if is {
		return suite(rest)
	}
	return other(block)
}

// AddReproductions adds the suite's reproductions to out, each block preceded by the suite's
// key, and returns out.
func (n NamedSuite) AddReproductions(out, suite map[string][]byte) map[string][]byte {
	for name, block := range suite {
		out[name] = WithSuite(n.Name, block)
	}
	return out
}

// SeededSpec is how a family whose experiments build their agents' seeded noise translates the
// common part of a RunSpec (SeededPrelude).
type SeededSpec struct {
	// Family names the family in errors; MinEpisodes is its least K.
	Family      string
	MinEpisodes int
	// Why says, in the family's words, why it runs only with the seeded source (SeededOnly).
	Why string
	// Calibrations are the privacy.calibration names the family accepts; Note is added to the
	// error of another one, after the family's name.
	Calibrations []string
	Note         string
}

// SeededPrelude checks the common part of a RunSpec for family f, in this order: K (at least
// f.MinEpisodes), the environment (translated by env), the noise source (seeded only) and
// privacy.calibration, returned in its canonical name ("" when omitted).
func SeededPrelude[E any](s *RunSpec, f SeededSpec, env func(*RunSpec) (E, error)) (e E, calib string, err error) {
	if err = s.MinEpisodes(f.Family, f.MinEpisodes); err != nil {
		return e, "", err
	}
	if e, err = env(s); err != nil {
		return e, "", err
	}
	if err = s.SeededOnly(f.Family, f.Why); err != nil {
		return e, "", err
	}
	if calib = s.Privacy.Calibration; calib != "" {
		if calib, err = calibration.Canonical("privacy.calibration", calib, f.Calibrations...); err != nil {
			return e, "", fmt.Errorf("%w (family %s%s)", err, f.Family, f.Note)
		}
	}
	return e, calib, nil
}
