package tabular

import (
	"fmt"
	"sort"
	"strings"

	"github.com/dprl/dprl/privacy/counter"
	"github.com/dprl/dprl/privacy/noise"
)

// counterBuilder builds one kind of Gaussian continual counter (practical-privacy spec §3).
// Each counter reports its sensitivity factor (max column norm of its encoder) and the
// data-independent std of every released prefix, so the agent and the accountant stay generic.
type counterBuilder func(cfg counter.GaussianConfig, src noise.Source) (counter.GaussianCounter, error)

// practicalCounters are the continual counters a practical JDP agent can use.
var practicalCounters = map[string]counterBuilder{
	"tree": func(c counter.GaussianConfig, s noise.Source) (counter.GaussianCounter, error) {
		return counter.NewGaussianTree(c, s)
	},
	"honaker": func(c counter.GaussianConfig, s noise.Source) (counter.GaussianCounter, error) {
		return counter.NewHonakerTree(c, s)
	},
	// BLT fitted to the square-root factorisation: O(buffers·dim) state and work per insertion.
	"blt": func(c counter.GaussianConfig, s noise.Source) (counter.GaussianCounter, error) {
		return counter.NewSqrtBLT(c, 0, s)
	},
	// The exact square-root factorisation: O(t·dim) per insertion (reference; short streams).
	"sqrt": func(c counter.GaussianConfig, s noise.Source) (counter.GaussianCounter, error) {
		return counter.NewSqrtFactorization(c, s)
	},
}

// DefaultCounter is the counter the practical JDP agents use unless told otherwise.
const DefaultCounter = "blt"

// PracticalCounters lists the counter names a practical JDP agent accepts.
func PracticalCounters() []string {
	var n []string
	for k := range practicalCounters {
		n = append(n, k)
	}
	sort.Strings(n)
	return n
}

func lookupCounter(name string) (counterBuilder, error) {
	if name == "" {
		name = DefaultCounter
	}
	c, ok := practicalCounters[name]
	if !ok {
		return nil, fmt.Errorf("privacy.counter: unknown counter %q (allowed: %s)", name, strings.Join(PracticalCounters(), ", "))
	}
	return c, nil
}

// counterFactor returns the sensitivity factor of a counter of the given kind and capacity,
// read from a noise-free instance (σ = 0, no source, no data): it depends on the capacity only.
func counterFactor(build counterBuilder, dim, capacity int) (float64, error) {
	c, err := build(counter.GaussianConfig{Dim: dim, Capacity: capacity}, nil)
	if err != nil {
		return 0, err
	}
	return c.SensitivityFactor(), nil
}
