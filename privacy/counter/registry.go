package counter

import (
	"fmt"
	"sort"
	"strings"

	"github.com/dprl/dprl/privacy/noise"
)

// Builder builds a Gaussian continual counter from its configuration (noise fixed there, from
// public parameters) and its noise source.
type Builder func(cfg GaussianConfig, src noise.Source) (GaussianCounter, error)

// Kind is one kind of Gaussian continual counter: its name in configurations
// (`privacy.counter`), a one-line description and its builder.
type Kind struct {
	Name, Doc string
	Build     Builder
}

// DefaultKind is the counter dprl's practical agents use unless told otherwise.
const DefaultKind = "blt"

// Registry holds counter kinds by name: the one list every practical agent of every family
// chooses its counter from. NewRegistry returns dprl's kinds; tests register fakes on a registry
// of their own. The zero value is empty and ready to use.
type Registry struct {
	kinds map[string]Kind
}

// NewRegistry returns a registry holding dprl's four Gaussian counters.
func NewRegistry() *Registry {
	r := &Registry{}
	r.Register(Kind{"blt", "buffered linear Toeplitz fit to the square-root factorisation: O(buffers·dim) state and work per insertion (Dvijotham et al. 2024)",
		func(c GaussianConfig, s noise.Source) (GaussianCounter, error) { return NewSqrtBLT(c, 0, s) }})
	r.Register(Kind{"honaker", "binary tree with Honaker's variance-optimal combination of the nodes",
		func(c GaussianConfig, s noise.Source) (GaussianCounter, error) { return NewHonakerTree(c, s) }})
	r.Register(Kind{"sqrt", "the exact square-root factorisation: O(t·dim) per insertion (reference; short streams)",
		func(c GaussianConfig, s noise.Source) (GaussianCounter, error) { return NewSqrtFactorization(c, s) }})
	r.Register(Kind{"tree", "binary-tree mechanism with Gaussian node noise",
		func(c GaussianConfig, s noise.Source) (GaussianCounter, error) { return NewGaussianTree(c, s) }})
	return r
}

// Register adds k. It panics on an empty name, a nil builder or a name registered twice
// (programming errors, as database/sql.Register).
func (r *Registry) Register(k Kind) {
	if k.Name == "" || k.Build == nil {
		panic("counter: Register of a kind without a name or builder")
	}
	if r.kinds == nil {
		r.kinds = map[string]Kind{}
	}
	if _, dup := r.kinds[k.Name]; dup {
		panic("counter: Register called twice for kind " + k.Name)
	}
	r.kinds[k.Name] = k
}

// Names returns the registered kind names, sorted.
func (r *Registry) Names() []string {
	out := make([]string, 0, len(r.kinds))
	for n := range r.kinds {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Lookup returns the kind called name (DefaultKind when name is ""); the error names the field
// privacy.counter and the allowed names.
func (r *Registry) Lookup(name string) (Kind, error) {
	if name == "" {
		name = DefaultKind
	}
	if k, ok := r.kinds[name]; ok {
		return k, nil
	}
	return Kind{}, fmt.Errorf("privacy.counter: unknown counter %q (allowed: %s)", name, strings.Join(r.Names(), ", "))
}

// Factor returns the sensitivity factor of a counter of kind k for elements of length dim and
// the given capacity, read from a noise-free instance (σ = 0, no source, no data): it depends
// on public parameters only.
func (k Kind) Factor(dim, capacity int) (float64, error) {
	c, err := k.Build(GaussianConfig{Dim: dim, Capacity: capacity}, nil)
	if err != nil {
		return 0, err
	}
	return c.SensitivityFactor(), nil
}
