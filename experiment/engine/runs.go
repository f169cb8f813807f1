package engine

import (
	"fmt"

	"github.com/dprl/dprl/internal/bounds"
)

// Runs are the runs a configuration block asks for, under its keys episodes and seeds (a
// block embeds Runs inline): K users (episodes) per run and the run seeds, one run per seed
// and curve.
type Runs struct {
	// Episodes is K, the number of users (episodes) per run.
	Episodes int `yaml:"episodes" json:"episodes"`
	// Seeds are the run seeds.
	Seeds []uint64 `yaml:"seeds" json:"seeds"`
}

// Resize sets Episodes to episodes (unless 0) and Seeds to seeds (unless nil): what a Resizer
// changes (ResizeFields).
func (r *Runs) Resize(episodes int, seeds []uint64) {
	ResizeFields(episodes, seeds, &r.Seeds, &r.Episodes)
}

// CheckSeeds checks the run seeds of the configuration field named field: 1 to
// bounds.MaxSeeds seeds, each listed once.
func CheckSeeds(field string, seeds []uint64) error {
	if len(seeds) == 0 || len(seeds) > bounds.MaxSeeds {
		return fmt.Errorf("%s: must list 1 to %d seeds, got %d", field, bounds.MaxSeeds, len(seeds))
	}
	if x, dup := bounds.Repeated(seeds); dup {
		return fmt.Errorf("%s: duplicate seed %d", field, x)
	}
	return nil
}
