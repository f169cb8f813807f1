package audit

import (
	"context"
	"strings"
	"testing"

	"github.com/dprl/dprl/internal/longtest"
	"github.com/dprl/dprl/rng"
)

// TestGaussianCounterTargets: every correct Gaussian counter passes its GDP-derived claim and
// every broken variant (σ/4, noise redrawn per release, wrong factorisation coefficients) is
// flagged, at a fixed seed, with the targets' own 4 000 runs per side (≈ 30 CPU seconds in
// all). The quick suite audits the factorisation counters (≈ 10 CPU seconds); the tree
// counters (T = 128) are a long check.
func TestGaussianCounterTargets(t *testing.T) {
	ts := GaussianCounterTargets()
	if len(ts) != 14 {
		t.Fatalf("%d targets, want 4 correct + 10 broken", len(ts))
	}
	for _, tg := range ts {
		t.Run(tg.Name, func(t *testing.T) {
			if strings.Contains(tg.Name, "tree") {
				longtest.Skip(t, "audits of the tree counters (T = 128), ≈ 2 CPU minutes")
			}
			r, err := Audit(context.Background(), tg, Options{Runs: tg.Runs, Seed: rng.NewSeed(5)})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: ε_LB = %.3f (claim %g) in %.1fs, event %s", tg.Name, r.EpsilonLB, tg.Claim.Epsilon, r.Seconds, r.Event)
			if r.Violation != tg.Broken {
				t.Errorf("%s: ε_LB = %.3f vs claim %g: verdict %s (event %s)", tg.Name, r.EpsilonLB, tg.Claim.Epsilon, r.Verdict(), r.Event)
			}
		})
	}
}
