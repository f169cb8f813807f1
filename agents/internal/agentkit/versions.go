package agentkit

import "slices"

// ActionVersions numbers the publications of a deterministic policy given as its action table
// act[h][s]: the version changes when the actions differ from those of the previous
// publication (the copy is O(H·S) and made only then). The first publication is version 1.
type ActionVersions struct {
	prev    [][]int
	version uint64
}

// Publish records act as published and returns its version.
func (v *ActionVersions) Publish(act [][]int) uint64 {
	if v.version == 0 || !slices.EqualFunc(act, v.prev, slices.Equal[[]int]) {
		v.version++
		if v.prev == nil {
			v.prev = make([][]int, len(act))
		}
		for h := range act {
			v.prev[h] = append(v.prev[h][:0], act[h]...)
		}
	}
	return v.version
}

// Version returns the version of the last publication (0 before the first).
func (v *ActionVersions) Version() uint64 { return v.version }
