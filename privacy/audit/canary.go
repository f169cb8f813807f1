package audit

import (
	"fmt"
	"math"
	"sort"
	"time"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/dprl/dprl/rng"
)

// CanaryOptions configures a one-run canary audit.
type CanaryOptions struct {
	// Guesses is the number r of canaries the auditor guesses about (the r/2 highest scores
	// are guessed "included", the r/2 lowest "excluded", the rest abstain). Fixed before the
	// run, as the analysis requires; 0 = all canaries.
	Guesses int
	// Confidence of the lower bound (0 = 0.95, the level used by Steinke et al.).
	Confidence float64
	// Seed draws the inclusion bits and the run's randomness.
	Seed rng.Seed
}

// CanaryResult is the outcome of a one-run canary audit.
type CanaryResult struct {
	Target    string  `json:"target"`
	Claim     Claim   `json:"claim"`
	Broken    bool    `json:"broken"`
	Canaries  int     `json:"canaries"`
	Guesses   int     `json:"guesses"`
	Correct   int     `json:"correct"`
	Conf      float64 `json:"confidence"`
	EpsilonLB float64 `json:"epsilon_lower_bound"`
	Violation bool    `json:"violation"`
	Seconds   float64 `json:"seconds"`
}

// CanaryAudit runs the one-run audit of Steinke, Nasr & Jagielski (2023): each of the m
// canaries is included independently with probability 1/2, the target runs once, the
// auditor guesses inclusion from the per-canary scores, and the number of correct guesses
// gives a lower bound on ε. Under (ε, δ)-DP the number W of correct guesses among r satisfies
// (their Theorem 5.2)
//
//	P[W ≥ v] ≤ P[Binomial(r, e^ε/(1+e^ε)) ≥ v] + 2mδ · max_{1≤i≤v} P[v > Binomial(r, q) ≥ v−i]/i,
//
// and the reported ε_LB is the largest ε for which this p-value is below 1 − Confidence.
func CanaryAudit(t Target, opts CanaryOptions) (CanaryResult, error) {
	start := time.Now()
	if t.Canary == nil || t.Canaries < 2 {
		return CanaryResult{}, fmt.Errorf("%w: %q", ErrNoCanary, t.Name)
	}
	if err := t.Claim.validate(); err != nil {
		return CanaryResult{}, fmt.Errorf("audit: target %q: %w", t.Name, err)
	}
	m := t.Canaries
	r := opts.Guesses
	if r == 0 {
		r = m
	}
	if r < 2 || r > m {
		return CanaryResult{}, fmt.Errorf("audit: canary guesses must be in [2, %d], got %d", m, r)
	}
	conf := opts.Confidence
	if conf == 0 {
		conf = 0.95
	}
	if !(conf > 0 && conf < 1) {
		return CanaryResult{}, fmt.Errorf("audit: canary confidence must be in (0, 1), got %v", conf)
	}
	seed := opts.Seed.Child(t.Name).Child("canary")
	bits := seed.Child("include").Rand()
	include := make([]bool, m)
	for i := range include {
		include[i] = bits.IntN(2) == 1
	}
	scores, err := t.Canary(include, seed.Child("run"))
	if err != nil {
		return CanaryResult{}, fmt.Errorf("audit: canary run of %q: %w", t.Name, err)
	}
	if len(scores) != m {
		return CanaryResult{}, fmt.Errorf("audit: canary run of %q returned %d scores, want %d", t.Name, len(scores), m)
	}
	order := make([]int, m)
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return scores[order[a]] > scores[order[b]] })
	plus := r / 2
	minus := r - plus
	v := 0
	for k := 0; k < plus; k++ {
		if include[order[k]] {
			v++
		}
	}
	for k := 0; k < minus; k++ {
		if !include[order[m-1-k]] {
			v++
		}
	}
	lb := CanaryEpsilonLB(m, r, v, t.Claim.Delta, 1-conf)
	return CanaryResult{Target: t.Name, Claim: t.Claim, Broken: t.Broken, Canaries: m, Guesses: r, Correct: v,
		Conf: conf, EpsilonLB: lb, Violation: lb > t.Claim.Epsilon, Seconds: time.Since(start).Seconds()}, nil
}

// CanaryPValue is the probability bound of Steinke, Nasr & Jagielski (2023, Thm 5.2) that an
// (ε, δ)-DP algorithm lets an auditor with m canaries and r guesses make at least v correct
// guesses.
func CanaryPValue(m, r, v int, eps, delta float64) float64 {
	q := 1 / (1 + math.Exp(-eps))
	b := distuv.Binomial{N: float64(r), P: q}
	tail := 1.0 // P[Bin ≥ v]
	if v > 0 {
		tail = 1 - b.CDF(float64(v-1))
	}
	if delta > 0 {
		var alpha, sum float64
		for i := 1; i <= v; i++ {
			sum += b.Prob(float64(v - i))
			if sum > float64(i)*alpha {
				alpha = sum / float64(i)
			}
		}
		tail += alpha * delta * 2 * float64(m)
	}
	return math.Min(tail, 1)
}

// CanaryEpsilonLB returns the largest ε (to 1e-6) whose CanaryPValue is below p, or 0 when
// even ε = 0 cannot be rejected.
func CanaryEpsilonLB(m, r, v int, delta, p float64) float64 {
	if CanaryPValue(m, r, v, 0, delta) >= p {
		return 0
	}
	lo, hi := 0.0, 1.0
	for CanaryPValue(m, r, v, hi, delta) < p {
		lo, hi = hi, 2*hi
		if hi > 1e3 {
			return lo
		}
	}
	for hi-lo > 1e-6 {
		mid := (lo + hi) / 2
		if CanaryPValue(m, r, v, mid, delta) < p {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
}
