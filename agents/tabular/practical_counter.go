package tabular

import (
	"fmt"
	"math"

	"github.com/dprl/dprl/privacy/counter"
)

// counterBuilder builds one kind of Gaussian continual counter (practical-privacy spec §3).
// Each counter reports its sensitivity factor (max column norm of its encoder) and the
// data-independent std of every released prefix, so the agent and the accountant stay generic.
type counterBuilder = counter.Builder

// DefaultCounter is the counter the practical JDP agents use unless told otherwise.
const DefaultCounter = counter.DefaultKind

// PracticalCounters lists the counter names a practical JDP agent accepts: every kind of the
// one counter registry (counter.NewRegistry).
func PracticalCounters() []string { return counter.NewRegistry().Names() }

func lookupCounter(name string) (counterBuilder, error) {
	k, err := counter.NewRegistry().Lookup(name)
	return k.Build, err
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

// releaseSlack returns counter.SecureReleaseSlack for a counter of the given kind, dimension and
// capacity (0 for the trees): what the Secure grid rounding of a real-valued factorisation's
// noise prediction adds to μ, from public parameters only.
func releaseSlack(build counterBuilder, dim, capacity int) (float64, error) {
	c, err := build(counter.GaussianConfig{Dim: dim, Capacity: capacity}, nil)
	if err != nil {
		return 0, err
	}
	g, ok := c.(interface{ RoundingGain() float64 })
	if !ok {
		return 0, fmt.Errorf("privacy.counter: counter %T does not report its rounding gain", c)
	}
	s := counter.SecureReleaseSlack(g.RoundingGain(), capacity, dim)
	if math.IsNaN(s) {
		return 0, fmt.Errorf("privacy.counter: no release slack for dim %d, capacity %d", dim, capacity)
	}
	return s, nil
}
