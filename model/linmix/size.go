package linmix

import (
	"fmt"

	"github.com/dprl/dprl/internal/bounds"
)

// Size limits, checked before the tables they bound are allocated (New, the file loader), so
// that no input can exhaust memory or keep the constructor looping for long.
const (
	// MaxEntries bounds each table a linear mixture MDP allocates: the reward features
	// (S·A·d2; the reward form of a file has d2 = S·A), the ψ rows (n_ψ·d), the per-step
	// probabilities (H·n_ψ), the per-step mean rewards (H·S·A) and the optimal values
	// ((H+1)·S).
	MaxEntries = 1 << 26
	// MaxWork bounds the operations of the exact ψ normalisation check (Luyo Asm. 2): 2^n·d
	// for every (s,a) whose n ψ rows fail the cheap coordinate bound.
	MaxWork = 1 << 30
)

// CheckSize checks the dimensions of a linear mixture MDP (S states, A actions, horizon H,
// transition-feature dimension d, reward-feature dimension d2, nPsi ψ rows) against
// MaxEntries without allocating; the error names the product and the limit.
func CheckSize(S, A, H, d, d2, nPsi int) error {
	for _, c := range []struct {
		what    string
		factors []int
	}{
		{"reward features states·actions·reward_dim", []int{S, A, d2}},
		{"psi rows n_psi·dim", []int{nPsi, d}},
		{"per-step probabilities horizon·n_psi", []int{H, nPsi}},
		{"per-step rewards horizon·states·actions", []int{H, S, A}},
		{"optimal values (horizon+1)·states", []int{H + 1, S}},
	} {
		if n, ok := bounds.Product(MaxEntries, c.factors...); !ok {
			return fmt.Errorf("linmix: %s = %s exceeds the limit 2^26 entries (states=%d, actions=%d, horizon=%d, dim=%d, reward_dim=%d, %d psi rows)", c.what, n, S, A, H, d, d2, nPsi)
		}
	}
	return nil
}
