package linmdp

import (
	"fmt"
	"github.com/dprl/dprl/internal/privacytest"
	"testing"

	"github.com/dprl/dprl/privacy/accounting"
)

// TestPracticalReleaseSlack: with the Secure source (the deployment default) on a real-valued
// factorisation counter (blt, sqrt) the practical agents account for the grid rounding of the
// counter's noise prediction: the ledger entry carries counter.SecureReleaseSlack of the
// counter's rounding gain, capacity and dimension, the report's μ is the Gaussian mechanism's
// μ plus that slack, and the total still meets the nominal (1, 1e-5). A tree has no slack.
// Dropping the slack from the registration, the calibration or the report fails this test.
func TestPracticalReleaseSlack(t *testing.T) {
	env := practicalSmall(t)
	target, err := accounting.GDPFor(accounting.ApproxDP{Epsilon: 1, Delta: 1e-5})
	if err != nil {
		t.Fatal(err)
	}
	for _, kind := range []string{"blt", "sqrt", "tree"} {
		for _, batched := range []bool{false, true} {
			a, err := NewPractical(env, PracticalConfig{Common: Common{K: 300}, Epsilon: 1, Delta: 1e-5, Counter: kind, Batched: batched, Batches: 10})
			if err != nil {
				t.Fatal(err)
			}
			privacytest.CheckReleaseSlack(t, a.Report(), kind, target.Mu, fmt.Sprintf("%s batched=%v", kind, batched))
		}
	}
}
