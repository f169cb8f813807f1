package tabular

import "github.com/dprl/dprl/privacy/counter"

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
