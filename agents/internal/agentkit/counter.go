package agentkit

import (
	"fmt"

	"github.com/dprl/dprl/privacy/counter"
)

// CounterBuilder returns the builder of the named counter kind; a lookup error is prefixed
// with context.
func CounterBuilder(name, context string) (counter.Builder, error) {
	k, err := counter.NewRegistry().Lookup(name)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", context, err)
	}
	return k.Build, nil
}
