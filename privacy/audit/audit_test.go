package audit

import (
	"context"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/dprl/dprl/internal/longtest"
	"github.com/dprl/dprl/rng"
)

// ciRuns caps the runs per side in CI; every verdict below was checked at these sizes.
func ciRuns(t Target) int {
	if t.Runs != 0 && t.Runs < 6000 {
		return 2000
	}
	return 6000
}

// TestMechanismTargets is the auditor's acceptance test: every correct mechanism passes and
// every deliberately broken variant (noise/4, tree noise redrawn per release, noise scale
// computed from the data) is flagged, at a fixed seed. The quick suite audits the one-shot
// mechanisms; the tree mechanisms (T = 128 releases per run) are a long check.
func TestMechanismTargets(t *testing.T) {
	for _, tg := range MechanismTargets() {
		t.Run(tg.Name, func(t *testing.T) {
			if strings.Contains(tg.Name, "tree") {
				longtest.Skip(t, "audits of the tree mechanisms, ≈ 1 CPU minute")
			}
			r, err := Audit(context.Background(), tg, Options{Runs: ciRuns(tg), Seed: rng.NewSeed(7)})
			if err != nil {
				t.Fatal(err)
			}
			if r.Violation != tg.Broken {
				t.Errorf("%s: ε_LB = %.3f vs claim %g: verdict %s (event %s)", tg.Name, r.EpsilonLB, tg.Claim.Epsilon, r.Verdict(), r.Event)
			}
		})
	}
}

// TestAuditValidity checks the false-positive rate of the whole procedure: on a correct
// Laplace mechanism, over 40 independent audits at 90% confidence, the number of (false)
// violations is Binomial(40, ≤ 0.1); more than 12 has probability < 0.001. An auditor that
// reuses the selection half for estimation and uses 50% intervals instead of the stated
// confidence fails this test (checked once by hand: 13 of 40).
func TestAuditValidity(t *testing.T) {
	tg := MechanismTargets()[0]
	tg.Claim.Epsilon = 0.999 // the bound is tight for Laplace: audit just below the truth
	viol := 0
	for i := 0; i < 40; i++ {
		r, err := Audit(context.Background(), tg, Options{Runs: 1000, Confidence: 0.9, Seed: rng.NewSeed(uint64(100 + i))})
		if err != nil {
			t.Fatal(err)
		}
		if r.Violation {
			viol++
		}
	}
	if viol > 12 {
		t.Errorf("%d of 40 audits of a correct mechanism reported a violation at 90%% confidence", viol)
	}
}

func TestAuditDeterministicAcrossWorkers(t *testing.T) {
	tg := MechanismTargets()[5] // tree-laplace/noise-div4
	var got []Result
	for _, w := range []int{1, 3} {
		r, err := Audit(context.Background(), tg, Options{Runs: 1000, Workers: w, Seed: rng.NewSeed(3)})
		if err != nil {
			t.Fatal(err)
		}
		r.Seconds = 0
		got = append(got, r)
	}
	if !reflect.DeepEqual(got[0], got[1]) {
		t.Errorf("results differ with the worker count:\n%+v\n%+v", got[0], got[1])
	}
}

func TestAuditBadInput(t *testing.T) {
	ok := func(side int, seed rng.Seed) ([]float64, error) { return []float64{float64(side)}, nil }
	ragged := func(side int, seed rng.Seed) ([]float64, error) { return make([]float64, 1+side), nil }
	failing := func(side int, seed rng.Seed) ([]float64, error) { return nil, errors.New("boom") }
	cases := []struct {
		t    Target
		o    Options
		want string
	}{
		{Target{Name: "x", Claim: Claim{Epsilon: 1}}, Options{}, "no Run"},
		{Target{Name: "x", Claim: Claim{Epsilon: 0}, Run: ok}, Options{}, "epsilon"},
		{Target{Name: "x", Claim: Claim{Epsilon: 1, Delta: 1}, Run: ok}, Options{}, "delta"},
		{Target{Name: "x", Claim: Claim{Epsilon: 1}, Run: ok}, Options{Runs: 10}, "runs per side"},
		{Target{Name: "x", Claim: Claim{Epsilon: 1}, Run: ok}, Options{Runs: 500, Confidence: 1.5}, "confidence"},
		{Target{Name: "x", Claim: Claim{Epsilon: 1}, Run: ragged}, Options{Runs: 500}, "output length"},
		{Target{Name: "x", Claim: Claim{Epsilon: 1}, Run: failing}, Options{Runs: 500}, "boom"},
	}
	for _, c := range cases {
		_, err := Audit(context.Background(), c.t, c.o)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("got %v, want an error mentioning %q", err, c.want)
		}
	}
	if _, err := CanaryAudit(Target{Name: "x", Claim: Claim{Epsilon: 1}}, CanaryOptions{}); !errors.Is(err, ErrNoCanary) {
		t.Errorf("canary audit without Canary: got %v", err)
	}
}

// A deterministic (non-private) mechanism is refuted with certainty.
func TestAuditFlagsDeterministicRelease(t *testing.T) {
	tg := Target{Name: "leak", Claim: Claim{Epsilon: 1}, Broken: true,
		Run: func(side int, seed rng.Seed) ([]float64, error) {
			return []float64{float64(side), seed.Rand().NormFloat64()}, nil
		}}
	r, err := Audit(context.Background(), tg, Options{Runs: 1000, Seed: rng.NewSeed(1)})
	if err != nil {
		t.Fatal(err)
	}
	// With 500 held-out runs per side and a perfect event, ε_LB = ln(p_lo/p'_hi) with
	// p_lo = (0.001/12)^(1/500) and p'_hi = 1 − that: about 4.7.
	if !r.Violation || r.EpsilonLB < 4 {
		t.Errorf("deterministic release: ε_LB = %.3f, want > 4", r.EpsilonLB)
	}
}

func TestCanaryPValue(t *testing.T) {
	// δ = 0: the tail of Binomial(r, 1/2) at ε = 0.
	if p := CanaryPValue(10, 10, 10, 0, 0); math.Abs(p-math.Pow(0.5, 10)) > 1e-12 {
		t.Errorf("P[Bin(10, 1/2) ≥ 10] = %g, want %g", p, math.Pow(0.5, 10))
	}
	if p := CanaryPValue(10, 10, 0, 1, 0); p != 1 {
		t.Errorf("v = 0 must give p = 1, got %g", p)
	}
	// The δ term only increases the p-value.
	if CanaryPValue(1000, 100, 80, 1, 1e-5) <= CanaryPValue(1000, 100, 80, 1, 0) {
		t.Error("δ > 0 must increase the p-value")
	}
	// The bound: 600/600 correct with δ = 1e-5 at 95%.
	lb := CanaryEpsilonLB(1000, 600, 600, 1e-5, 0.05)
	if !(lb > 3 && lb < 8) {
		t.Errorf("ε_LB(600/600) = %g, want in (3, 8)", lb)
	}
	if p := CanaryPValue(1000, 600, 600, lb, 1e-5); math.Abs(p-0.05) > 1e-3 {
		t.Errorf("p-value at the bound = %g, want 0.05", p)
	}
	// Chance accuracy gives no evidence.
	if lb := CanaryEpsilonLB(1000, 1000, 500, 0, 0.05); lb != 0 {
		t.Errorf("500/1000 correct: ε_LB = %g, want 0", lb)
	}
	// Monotone in the number of correct guesses.
	prev := 0.0
	for v := 500; v <= 1000; v += 50 {
		lb := CanaryEpsilonLB(1000, 1000, v, 0, 0.05)
		if lb < prev {
			t.Errorf("ε_LB not monotone at v = %d", v)
		}
		prev = lb
	}
}

func TestGaussianSigmaExact(t *testing.T) {
	s, err := GaussianSigmaExact(1, 1, 1e-3)
	if err != nil {
		t.Fatal(err)
	}
	// Larger than the analytic Gaussian's σ at (1, 1e-5) and below the classic bound's at (1, 1e-3).
	if !(s > 1 && s < math.Sqrt(2*math.Log(1.25/1e-3))) {
		t.Errorf("σ = %g out of range", s)
	}
	if _, err := GaussianSigmaExact(1, 0, 1e-3); err == nil {
		t.Error("ε = 0 must be rejected")
	}
}
