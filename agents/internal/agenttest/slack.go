package agenttest

import (
	"fmt"
	"testing"

	"github.com/dprl/dprl/internal/privacytest"
	"github.com/dprl/dprl/privacy/accounting"
	"github.com/dprl/dprl/privacy/ledger"
)

// CheckReleaseSlacks runs privacytest.CheckReleaseSlack against the nominal (1, 1e-5) on the
// report of the practical agent that build makes with the Secure source for every counter kind
// ("blt" and "sqrt", real-valued factorisations; "tree", which has no slack), unbatched and
// batched. It is each family's TestPracticalReleaseSlack: with the Secure source (the
// deployment default) on a real-valued factorisation counter the practical agent accounts for
// the grid rounding of the counter's noise prediction: the ledger entry carries
// counter.SecureReleaseSlack of the counter's rounding gain, capacity and dimension, the
// report's μ is the Gaussian mechanism's μ plus that slack, and the total still meets the
// nominal (1, 1e-5). Dropping the slack from the registration, the calibration or the report
// fails it.
func CheckReleaseSlacks(t *testing.T, build func(kind string, batched bool) (ledger.Report, error)) {
	t.Helper()
	target, err := accounting.GDPFor(accounting.ApproxDP{Epsilon: 1, Delta: 1e-5})
	if err != nil {
		t.Fatal(err)
	}
	for _, kind := range []string{"blt", "sqrt", "tree"} {
		for _, batched := range []bool{false, true} {
			r, err := build(kind, batched)
			if err != nil {
				t.Fatal(err)
			}
			privacytest.CheckReleaseSlack(t, r, kind, target.Mu, fmt.Sprintf("%s batched=%v", kind, batched))
		}
	}
}
