// Package engine is the one experiment core every agent family plugs into (issue 11).
//
// A family (tabular, practical tabular, linear MDP, …) registers with a Registry built
// explicitly by the caller (cmd/dprl); there is no init() side effect and tests register fake
// families. A family plans a configuration block into units of work; the engine runs the units
// through a launcher (Local{Workers}, or one shard of a sweep on a cluster), writes each unit's
// result into one file atomically, skips units whose file is already complete (so a run killed
// at any moment loses nothing and duplicates nothing when rerun), and finally asks the plan to
// collect the unit files into the run directory (CSVs, figures, summary, manifest last).
//
// A unit is (cell, seed): its ID is a digest of the family name, the resolved cell configuration
// and the seed, so it is stable across machines and runs; its randomness comes from Streams,
// derived in one place (this package) from the seed through package rng.
//
// Design: style guide §Registration and §Experiments (database/sql registration; rlberry's
// specs-not-objects units; Hydra's launcher plug-ins).
package engine

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"

	"github.com/dprl/dprl/rng"
)

// Family is an agent family plugged into the engine. Optional abilities (Reproducer) are
// separate interfaces found by type assertion.
type Family interface {
	// Name is the family's name in configurations (`family: <name>`) and on the command line.
	Name() string
	// Catalogue writes the family's environments and agents for `dprl list`.
	Catalogue(w io.Writer)
	// Plan decodes the family's configuration block strictly (unknown fields are errors),
	// validates it, and returns its plan. Errors name the field path. source names where the
	// block came from (a file path, or "embedded:<name>") and is recorded as an input.
	Plan(block []byte, source string) (Plan, error)
}

// Reproducer is a family that embeds reproductions (`dprl reproduce <name>`): each is a
// configuration block of the family, in the same schema a user writes.
type Reproducer interface {
	// Reproductions returns the family's embedded configuration blocks by reproduction name.
	Reproductions() map[string][]byte
}

// Option is a command-line option of one reproduction (`dprl reproduce NAME --<Name> …`),
// declared by the family that embeds the reproduction (Optioner), so that the command line
// holds no reproduction-specific code.
type Option struct {
	// Name is the flag's name without "--" (long, extended, calibration, …).
	Name string
	// Usage is the flag's one-line help.
	Usage string
	// Bool makes a boolean flag (--long); otherwise the flag takes a value (--preset theory).
	Bool bool
	// Default is the value --help shows ("" for none). An option not given on the command line
	// is not passed to ApplyOptions: the configuration's own value stands.
	Default string
	// EmbeddedOnly marks an option that selects another embedded configuration: it is refused
	// beside --config (a user's configuration says what it runs).
	EmbeddedOnly bool
}

// Optioner is a Reproducer whose reproductions take options beyond the common ones (--config,
// --episodes, --seeds, --out, …). An option changes the configuration block, so the run is
// the same as a run of the changed block (for example by `dprl sweep`).
type Optioner interface {
	// Options returns the options of reproduction repro (nil for none).
	Options(repro string) []Option
	// ApplyOptions returns block — the reproduction's embedded block, or a user's block of the
	// same family and suite given with --config — with the options in set applied (option
	// name → value as given on the command line; only the options given). Errors name the
	// option as its flag (--name: …).
	ApplyOptions(repro string, block []byte, set map[string]string) ([]byte, error)
}

// Describer is a Reproducer that describes each reproduction in one line (the help of
// `dprl reproduce NAME` and `dprl list`).
type Describer interface {
	Describe(repro string) string
}

// Plan is a planned experiment: an ordered list of units and how to run and collect them.
// A Plan must not keep results of Run in memory: every result goes through the Recorder, so
// that units can run on other machines.
type Plan interface {
	// Name is the experiment's name (the default run directory is runs/<Name>).
	Name() string
	// Units lists the units in a fixed order.
	Units() []Unit
	// Run runs unit i with the given streams and records its result with rec.Record (once).
	Run(ctx context.Context, i int, st Streams, rec *Recorder) error
	// Collect turns the results of all units (read with c.Load) into the run directory
	// c.Dir: CSVs, figures, summary, and the manifest last. It returns the text to print.
	Collect(c *Collection) (string, error)
}

// Unit is one unit of work: a cell of the configuration and one seed.
type Unit struct {
	// Cell is a human-readable name of the cell (label of a curve, block/label, …).
	Cell string
	// Spec is the canonical encoding of the resolved cell configuration (everything that
	// determines the unit's result apart from the seed); the ID is a digest of it.
	Spec []byte
	// Seed is the unit's run seed.
	Seed uint64
	// Cost is the unit's size for progress reports (for example its number of episodes).
	Cost int64
	// Family is the name of the family that planned the unit (set by the Registry).
	Family string
}

// ID returns the unit's stable identifier: the first 20 hex digits of
// SHA-256(family, 0, spec, 0, seed as 8 little-endian bytes).
func (u Unit) ID() string {
	h := sha256.New()
	h.Write([]byte(u.Family))
	h.Write([]byte{0})
	h.Write(u.Spec)
	h.Write([]byte{0})
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], u.Seed)
	h.Write(b[:])
	return hex.EncodeToString(h.Sum(nil))[:20]
}

// CellUnits returns the units of one cell: its resolved configuration spec, encoded as JSON (with
// the seed, its digest is each unit's ID), run at every seed of seeds, each unit of size cost.
// Every family plans its cells' units through it.
func CellUnits(cell string, spec any, seeds []uint64, cost int) ([]Unit, error) {
	b, err := json.Marshal(spec)
	if err != nil {
		return nil, err
	}
	units := make([]Unit, len(seeds))
	for i, seed := range seeds {
		units[i] = Unit{Cell: cell, Spec: b, Seed: seed, Cost: int64(cost)}
	}
	return units, nil
}

// Streams are the random streams of one unit, all derived from its seed through package rng.
// Every family takes its randomness from here: the paths are those the families have always
// used, so results are unchanged (users, agent, env, noise/<name>).
type Streams struct {
	// Seed is the unit's run seed. Units of different cells share it (common random numbers:
	// all agents of one seed face the same users and environments).
	Seed uint64
	// Key, if non-nil, keys the unit's secure noise sources (SecureNoise): a service's
	// persisted secret. Experiments leave it nil (crypto-seeded secure noise).
	Key *[32]byte
	// Trace, if non-nil, receives the name of every secure noise source requested
	// (SecureNoise): tests check that each mechanism of a served agent has its own name, so
	// its own key and independent noise.
	Trace func(name string)
}

// Root returns the root of the unit's stream tree.
func (s Streams) Root() rng.Seed { return rng.NewSeed(s.Seed) }

// Users returns the stream tree of the users (index it by episode).
func (s Streams) Users() rng.Seed { return s.Root().Child("users") }

// Agent returns the agent's stream tree (tie-breaking and internal randomness).
func (s Streams) Agent() rng.Seed { return s.Root().Child("agent") }

// Env returns the environment's stream tree.
func (s Streams) Env() rng.Seed { return s.Root().Child("env") }

// Noise returns the stream of the noise mechanism called name.
func (s Streams) Noise(name string) rng.Seed { return s.Root().Child("noise").Child(name) }

// Registry holds the families known to one program. Its zero value is empty and ready to use.
type Registry struct {
	families map[string]Family
	renamed  map[string]string // old family name → message naming the new one
}

// Renamed records that the family old is now part of the family called now (families are model
// classes: tabular, linear MDP, linear mixture, LQ); looking old up fails with an error naming
// now and how, so that old configurations and command lines get a clear exit 2.
func (r *Registry) Renamed(old, now, how string) {
	if r.renamed == nil {
		r.renamed = map[string]string{}
	}
	r.renamed[old] = fmt.Sprintf("family %q is now part of family %q: %s", old, now, how)
}

// Register adds f. It panics on a nil family, an empty name or a name registered twice
// (programming errors, as database/sql.Register).
func (r *Registry) Register(f Family) {
	if f == nil {
		panic("engine: Register of a nil family")
	}
	name := f.Name()
	if name == "" {
		panic("engine: Register of a family with an empty name")
	}
	if r.families == nil {
		r.families = map[string]Family{}
	}
	if _, dup := r.families[name]; dup {
		panic("engine: Register called twice for family " + name)
	}
	r.families[name] = f
}

// Names returns the registered family names, sorted.
func (r *Registry) Names() []string {
	var out []string
	for n := range r.families {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Lookup returns the family called name; the error names the allowed values.
func (r *Registry) Lookup(name string) (Family, error) {
	if f, ok := r.families[name]; ok {
		return f, nil
	}
	if msg, ok := r.renamed[name]; ok {
		return nil, fmt.Errorf("family: %s", msg)
	}
	return nil, fmt.Errorf("family: unknown family %q (allowed: %s)", name, strings.Join(r.Names(), ", "))
}

// Reproductions returns every embedded reproduction: name → (family, block).
func (r *Registry) Reproductions() map[string]Embedded {
	out := map[string]Embedded{}
	for _, n := range r.Names() {
		if rp, ok := r.families[n].(Reproducer); ok {
			for name, block := range rp.Reproductions() {
				out[name] = Embedded{Family: n, Block: block}
			}
		}
	}
	return out
}

// Embedded is an embedded reproduction: a family and its configuration block.
type Embedded struct {
	Family string
	Block  []byte
}

// Planned is a plan with its units stamped with the family name.
type Planned struct {
	Plan
	Family string
	units  []Unit
}

// Units returns the plan's units, each carrying the family name (so their IDs are complete).
func (p *Planned) Units() []Unit { return p.units }

// PlanBlock plans a family's configuration block: a document in the shared RunSpec schema
// (IsRunSpec) through the family's PlanSpec, anything else as the family's own sweep block.
func (r *Registry) PlanBlock(family string, block []byte, source string) (*Planned, error) {
	f, err := r.Lookup(family)
	if err != nil {
		return nil, err
	}
	if IsRunSpec(block) {
		s, err := ParseRunSpec(block, family)
		if err != nil {
			return nil, err
		}
		s.Env.File = RelativeTo(source, s.Env.File)
		return r.PlanSpec(s, source)
	}
	p, err := f.Plan(block, source)
	if err != nil {
		return nil, err
	}
	return NewPlanned(f.Name(), p)
}

// RelativeTo resolves a path named inside a configuration file against the file's directory,
// as a reader of the file expects (a relative env.file beside the configuration). path is
// returned unchanged when it is empty or absolute, or when source is not a file: "flags",
// "test", or "embedded:<name>".
func RelativeTo(source, path string) string {
	if path == "" || filepath.IsAbs(path) || source == "" || source == "flags" || source == "test" || strings.HasPrefix(source, "embedded:") {
		return path
	}
	return filepath.Join(filepath.Dir(source), path)
}

// NewPlanned stamps the family of every unit and rejects plans with two units of the same ID.
func NewPlanned(family string, p Plan) (*Planned, error) {
	us := p.Units()
	out := make([]Unit, len(us))
	seen := map[string]string{}
	for i, u := range us {
		u.Family = family
		id := u.ID()
		if other, dup := seen[id]; dup {
			return nil, fmt.Errorf("%s: cells %q and %q with seed %d are the same unit (identical resolved configuration)", family, other, u.Cell, u.Seed)
		}
		seen[id] = u.Cell
		out[i] = u
	}
	return &Planned{Plan: p, Family: family, units: out}, nil
}

// Resizer is a family that can resize a configuration block (quick runs, CI): set K and the
// seeds, leaving everything else as it is.
type Resizer interface {
	// Resize returns block with K = episodes (0 = keep) and the given seeds (nil = keep).
	Resize(block []byte, episodes int, seeds []uint64) ([]byte, error)
}

// Resize returns the sweep configuration of an embedded reproduction (`family:` first),
// resized when episodes or seeds are given.
func Resize(r *Registry, e Embedded, episodes int, seeds []uint64) ([]byte, error) {
	f, err := r.Lookup(e.Family)
	if err != nil {
		return nil, err
	}
	block := e.Block
	if episodes != 0 || seeds != nil {
		rs, ok := f.(Resizer)
		if !ok {
			return nil, fmt.Errorf("family %s cannot resize its configurations; edit the printed configuration", e.Family)
		}
		if block, err = rs.Resize(block, episodes, seeds); err != nil {
			return nil, err
		}
	}
	return append([]byte("family: "+e.Family+"\n"), block...), nil
}
