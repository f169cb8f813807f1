package engine

import (
	"errors"
	"fmt"

	"github.com/dprl/dprl/experiment/rundir"
	"github.com/dprl/dprl/internal/boundedread"
)

// SplitFamily splits a configuration document into its `family:` value and the rest of the
// document (the family's own block, which the family decodes strictly). A document without
// `family:` belongs to def (the tabular family, for configurations written before the engine);
// def == "" makes `family:` required.
func SplitFamily(data []byte, def string) (family string, block []byte, err error) {
	return splitKey(data, "family", def, "required (the agent family, see dprl list)")
}

// Source is where a configuration came from.
type Source struct {
	// Name is the file path, or "embedded:<reproduction>".
	Name string
	// Inputs are the files read (a configuration file with its SHA-256).
	Inputs []rundir.Input
}

// Load reads a sweep configuration: a file path, or the name of an embedded reproduction
// when no file of that name exists. def is the family of documents without `family:`.
func (r *Registry) Load(arg, def string) (*Planned, Source, error) {
	data, err := boundedread.ReadFile(arg, boundedread.DefaultLimit)
	if err != nil {
		if e, ok := r.Reproductions()[arg]; ok {
			p, err := r.PlanBlock(e.Family, e.Block, "embedded:"+arg)
			return p, Source{Name: "embedded:" + arg}, err
		}
		if refused := (*boundedread.Error)(nil); errors.As(err, &refused) {
			return nil, Source{}, fmt.Errorf("config: %w", err) // a FIFO, a device, a directory, too large
		}
		return nil, Source{}, fmt.Errorf("config: %w (not a file, nor an embedded reproduction)", err)
	}
	fam, block, err := SplitFamily(data, def)
	if err != nil {
		return nil, Source{}, err
	}
	p, err := r.PlanBlock(fam, block, arg)
	src := Source{Name: arg, Inputs: []rundir.Input{rundir.HashBytes("config", arg, data)}}
	return p, src, err
}
