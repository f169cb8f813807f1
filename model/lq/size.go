package lq

import "fmt"

// Size limits, checked by NewSystem before the Riccati tables are allocated or the recursion
// is run, so that no system file can exhaust memory or keep the constructor looping for long.
const (
	// MaxEntries bounds the per-step tables of the Riccati recursion (P_h, K_h and the
	// closed-loop matrices: (H+2)·(2n² + nd) entries), which planners also keep per step.
	MaxEntries = 1 << 26
	// MaxWork bounds the Riccati recursion over the horizon: H·(n+d)³ operations.
	MaxWork = 1 << 32
)

// CheckSize checks a system with state dimension n, control dimension d and horizon H
// against MaxEntries and MaxWork without allocating; the error names the product and the
// limit. n, d ≤ 64 and H ≤ 100000 are checked separately by NewSystem.
func CheckSize(n, d, H int) error {
	if n < 1 || d < 1 || H < 1 || n > 1<<10 || d > 1<<10 || H > 1<<20 {
		return fmt.Errorf("lq: dimensions n=%d, d=%d, H=%d out of range", n, d, H)
	}
	// Within these ranges no product below overflows 64 bits.
	if e := uint64(H+2) * uint64(2*n*n+n*d); e > MaxEntries {
		return fmt.Errorf("lq: Riccati tables (H+2)·(2n²+nd) = %d exceeds the limit 2^26 entries (n=%d, d=%d, horizon=%d)", e, n, d, H)
	}
	p := uint64(n + d)
	if w := uint64(H) * p * p * p; w > MaxWork {
		return fmt.Errorf("lq: Riccati recursion H·(n+d)³ = %d exceeds the limit 2^32 operations (n=%d, d=%d, horizon=%d)", w, n, d, H)
	}
	return nil
}
