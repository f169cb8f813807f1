package linmdp

import (
	"fmt"

	"github.com/dprl/dprl/internal/bounds"
)

// Size limits, checked before the tables they bound are allocated (New, RandomSimplex, the
// file loader), so that no input can exhaust memory or keep the constructor looping for long.
const (
	// MaxEntries bounds each table a linear MDP allocates: the features (N·A·d), μ
	// (steps·N·d, steps = 1 for a homogeneous model, else H), the transition tables
	// (steps·N·A·N in the worst case of full supports) and the per-step tables of values and
	// policies that planners and agents keep (H·N·A).
	MaxEntries = 1 << 26
	// MaxWork bounds the operations New spends computing P_h(s'|s,a) = ⟨φ(s,a), μ_h(s')⟩ for
	// every (h, s, a, s'): steps·N·A·N·d.
	MaxWork = 1 << 32
)

// CheckSize checks the dimensions of a linear MDP with N states, A actions, feature dimension
// D, steps distinct μ_h (1 or H) and horizon H against MaxEntries and MaxWork, without
// allocating; the error names the product and the limit.
func CheckSize(N, A, D, steps, H int) error {
	for _, c := range []struct {
		what    string
		factors []int
		limit   uint64
		unit    string
	}{
		{"features N·A·d", []int{N, A, D}, MaxEntries, "2^26 entries"},
		{"mu steps·N·d", []int{steps, N, D}, MaxEntries, "2^26 entries"},
		{"per-step tables H·N·A", []int{H, N, A}, MaxEntries, "2^26 entries"},
		{"transition tables steps·N·A·N", []int{steps, N, A, N}, MaxEntries, "2^26 entries"},
		{"construction work steps·N·A·N·d", []int{steps, N, A, N, D}, MaxWork, "2^32 operations"},
	} {
		if n, ok := bounds.Product(c.limit, c.factors...); !ok {
			return fmt.Errorf("linmdp: %s = %s exceeds the limit %s (N=%d, A=%d, d=%d, steps=%d, H=%d)", c.what, n, c.unit, N, A, D, steps, H)
		}
	}
	return nil
}
