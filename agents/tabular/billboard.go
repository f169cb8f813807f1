package tabular

import (
	"fmt"

	"github.com/dprl/dprl/agents/internal/agentkit"
)

// Billboard holds the statistics a privatizer releases before episode k: noisy counts over the
// data of the users seen so far, plus public constants. It is the only input of a Planner, so
// a policy depends on user data only through it.
//
// Indexing (h = 0..H−1 is the paper's step h+1): N and R at (h*S+s)*A+a; NT at
// ((h*S+s)*A+a)*S+s'.
type Billboard struct {
	S, A, H int
	// Users is the number of users whose data the statistics contain (public: k−1).
	Users int
	// E is the public uniform error bound E_{ε,β} of Assumption 3.1 used for this release
	// (0 for the non-private Identity privatizer).
	E float64
	// N is N̂_h(s,a): noisy visit counts.
	N []float64
	// NT is N̂_h(s,a,s'): noisy transition counts.
	NT []float64
	// R is R̃_h(s,a): noisy reward sums (never post-processed, may be negative).
	R []float64
}

func newBillboard(S, A, H int) *Billboard {
	return &Billboard{S: S, A: A, H: H,
		N: make([]float64, H*S*A), NT: make([]float64, H*S*A*S), R: make([]float64, H*S*A)}
}

// Clone returns a deep copy (used to record and replay releases).
func (b *Billboard) Clone() *Billboard {
	c := *b
	agentkit.CopyFloats(&c.N, &c.NT, &c.R)
	return &c
}

func (b *Billboard) check(S, A, H int) error {
	if b.S != S || b.A != A || b.H != H || len(b.N) != H*S*A || len(b.NT) != H*S*A*S || len(b.R) != H*S*A {
		return fmt.Errorf("billboard shape (S=%d, A=%d, H=%d) does not match the planner's (S=%d, A=%d, H=%d)", b.S, b.A, b.H, S, A, H)
	}
	return nil
}
