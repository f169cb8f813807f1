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

// Clone returns a copy of r whose seeds are a new slice (a configuration built from r, which
// may resize it, never shares them).
func (r Runs) Clone() Runs {
	return Runs{Episodes: r.Episodes, Seeds: append([]uint64(nil), r.Seeds...)}
}

// Check checks the runs: Episodes in [minEpisodes, bounds.MaxEpisodes] (the minimum is the
// family's) and the seeds (CheckSeeds); the errors name the keys episodes and seeds.
func (r Runs) Check(minEpisodes int) error {
	if r.Episodes < minEpisodes || r.Episodes > bounds.MaxEpisodes {
		return fmt.Errorf("episodes: must be in [%d, %d], got %d", minEpisodes, bounds.MaxEpisodes, r.Episodes)
	}
	return CheckSeeds("seeds", r.Seeds)
}

// CheckSeeds checks the run seeds of the configuration field named field: 1 to
// bounds.MaxSeeds seeds, each listed once (the error names the index of a repeated one).
func CheckSeeds(field string, seeds []uint64) error {
	if len(seeds) == 0 || len(seeds) > bounds.MaxSeeds {
		return fmt.Errorf("%s: must list 1 to %d seeds, got %d", field, bounds.MaxSeeds, len(seeds))
	}
	seen := make(map[uint64]bool, len(seeds))
	for i, s := range seeds {
		if seen[s] {
			return fmt.Errorf("%s[%d]: duplicate seed %d", field, i, s)
		}
		seen[s] = true
	}
	return nil
}
