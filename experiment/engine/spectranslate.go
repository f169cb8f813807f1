package engine

import (
	"fmt"
	"slices"
	"strings"
)

// ResolveSet translates a RunSpec's environment into c through the registry: it resolves
// env.name (Resolve; the reference environment when omitted) and sets the environment's
// parameters in c from env.params (Set), errors naming the environment by its resolved name
// even when env.name is omitted. It returns the resolved name (also with an unknown name's
// error) and environment (whose constructor builds c).
func (r *Envs[C, M]) ResolveSet(s *RunSpec, family string, c *C) (string, Env[C, M], error) {
	kind, env, err := r.Resolve(s, family, "environment")
	if err != nil {
		return kind, env, err
	}
	named := *s
	named.Env.Name = kind
	return kind, env, r.Set(env, &named, c)
}

// CheckAgent refuses agent i of a RunSpec, name, unless it is one of the family's agents
// (allowed, as `dprl list` shows them); the error names agents[i], the family and the allowed
// names.
func CheckAgent(i int, name, family string, allowed []string) error {
	if !slices.Contains(allowed, name) {
		return fmt.Errorf("agents[%d]: unknown agent %q of family %s (allowed: %s)", i, name, family, strings.Join(allowed, ", "))
	}
	return nil
}
