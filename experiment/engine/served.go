package engine

import "fmt"

// ServedSpec returns the served RunSpec s as a family's RunSpec translation (the one of `dprl
// run`) reads it: its one seed is the unit's, st.Seed, and its noise source seeded (the
// translations admit only the experiments' source; the family's Session builds the secure one
// itself from st).
func ServedSpec(s *RunSpec, st Streams) *RunSpec {
	c := *s
	c.Seeds = []uint64{st.Seed}
	c.Privacy.Noise = "seeded"
	return &c
}

// ServedUnitsError is the error of a served RunSpec whose translation has n units (what names
// them: "cells", "curves") instead of exactly one; it names agents.
func ServedUnitsError(n int, what string) error {
	return fmt.Errorf("agents: a served experiment runs exactly one agent at one ε, got %d %s", n, what)
}
