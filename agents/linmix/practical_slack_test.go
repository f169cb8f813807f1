package linmix

import (
	"fmt"
	"github.com/dprl/dprl/internal/privacytest"
	"testing"

	"github.com/dprl/dprl/privacy/accounting"
	"github.com/dprl/dprl/privacy/noise"
	"github.com/dprl/dprl/rng"
)

// TestPracticalReleaseSlack: practical-vtr/jdp with the Secure source on a real-valued
// factorisation counter (blt, sqrt) accounts for the grid rounding of the counter's noise
// prediction: the ledger entry carries counter.SecureReleaseSlack of the counter's rounding
// gain, capacity and dimension, the report's μ is the Gaussian mechanism's μ plus that slack,
// and the total still meets the nominal (1, 1e-5). A tree has no slack. Dropping the slack
// from the registration, the calibration or the report fails this test.
func TestPracticalReleaseSlack(t *testing.T) {
	m := practicalEnv(t)
	target, err := accounting.GDPFor(accounting.ApproxDP{Epsilon: 1, Delta: 1e-5})
	if err != nil {
		t.Fatal(err)
	}
	for _, kind := range []string{"blt", "sqrt", "tree"} {
		for _, M := range []int{1, 20} {
			cfg := PracticalConfig{Episodes: 200, Privacy: PracticalPrivacy{Mode: JDP, Epsilon: 1, Counter: kind, BatchEvery: M}}
			a, err := buildPractical(m, cfg, rng.NewSeed(1), noise.NewSecureFromKey([32]byte{17, 3}))
			if err != nil {
				t.Fatal(err)
			}
			privacytest.CheckReleaseSlack(t, a.Guarantee(), kind, target.Mu, fmt.Sprintf("%s M=%d", kind, M))
		}
	}
}
