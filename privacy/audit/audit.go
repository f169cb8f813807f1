package audit

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"sort"
	"sync"
	"time"

	"github.com/dprl/dprl/privacy/stattest"
	"github.com/dprl/dprl/rng"
)

// DefaultRuns is the number of runs per side of a full audit when neither Options.Runs nor
// Target.Runs says otherwise.
const DefaultRuns = 20000

// Options configures an audit.
type Options struct {
	// Runs is the number of runs per side (≥ 200; 0 = Target.Runs, else DefaultRuns). Half of
	// them choose the events, the other half estimate their probabilities.
	Runs int
	// Confidence is the confidence of the reported lower bound (in (0, 1); 0 = 0.99). It holds
	// jointly over every event estimated on the held-out half (Bonferroni).
	Confidence float64
	// Workers is the number of parallel runs (0 = GOMAXPROCS). The result does not depend on it.
	Workers int
	// Seed is the audit's root seed; run i of side s uses Seed.Child(target).Child(side).Index(i).
	Seed rng.Seed
	// Progress, when set, is called after every completed run with the number of runs done
	// and the total (both sides). Audit counts the runs of its one target (total 2·runs per
	// side); RunAll counts across every target of the report. The calls are serialised and
	// done increases by one at each call, ending at total when the audit succeeds. It must not
	// block for long: the runs wait for it. Nil reports nothing.
	Progress func(done, total int)
}

// runsPerSide resolves the number of runs per side of target t (Options.Runs, else t.Runs,
// else DefaultRuns).
func (o Options) runsPerSide(t Target) int {
	n := o.Runs
	if n == 0 {
		n = t.Runs
	}
	if n == 0 {
		n = DefaultRuns
	}
	return n
}

// Result is the outcome of auditing one target.
type Result struct {
	// Target, Family, Claim and Broken are copied from the target.
	Target string  `json:"target"`
	Family string  `json:"family"`
	Claim  Claim   `json:"claim"`
	Broken bool    `json:"broken"`
	Runs   int     `json:"runs_per_side"`
	Conf   float64 `json:"confidence"`
	// EpsilonLB is the audited lower bound on ε: with probability ≥ Conf over the audit's
	// randomness, the target is not (ε, δ)-DP for any ε < EpsilonLB (δ = Claim.Delta).
	EpsilonLB float64 `json:"epsilon_lower_bound"`
	// Event describes the event that attains EpsilonLB, and PD, PDp its held-out frequencies
	// on the side it favours and on the other side.
	Event string  `json:"event"`
	PD    float64 `json:"p_event"`
	PDp   float64 `json:"p_event_neighbour"`
	// Violation is EpsilonLB > Claim.Epsilon: the claim is refuted at confidence Conf.
	Violation bool    `json:"violation"`
	Seconds   float64 `json:"seconds"`
}

// Verdict renders the outcome for tables: "pass", "VIOLATION", or, for broken variants,
// "flagged" (expected) and "MISSED" (the auditor lacked power).
func (r Result) Verdict() string {
	switch {
	case r.Broken && r.Violation:
		return "flagged (broken variant)"
	case r.Broken:
		return "MISSED (broken variant)"
	case r.Violation:
		return "VIOLATION"
	}
	return "pass"
}

// Audit runs t on both neighbouring inputs, chooses output events on half of the runs and
// bounds ε from below on the other half.
//
// Event families, each fitted on the selection half (privacy spec §5.5, DP-Sniper of
// Bichsel et al. 2021):
//   - thresholds on the projection of the output onto the standardized difference of the two
//     sides' means (the likelihood-ratio statistic of a Gaussian mechanism);
//   - thresholds on the single most discriminating coordinate;
//   - thresholds on the standardized squared distance to the pooled mean (catches noise whose
//     scale depends on the data);
//   - thresholds on the score of a logistic-regression classifier on standardized
//     coordinates and their squares (DP-Sniper).
//
// For each family, the event {T > τ} or {T ≤ τ} and the direction (D vs D′ or D′ vs D) that
// maximise the bound on the selection half are kept; the held-out half then gives, for each
// kept event, ε_LB = ln((p_lo − δ)/p′_hi) with Clopper–Pearson limits at a Bonferroni-corrected
// level, and Result.EpsilonLB is the largest.
func Audit(ctx context.Context, t Target, opts Options) (Result, error) {
	start := time.Now()
	if t.Run == nil {
		return Result{}, fmt.Errorf("audit: target %q has no Run function", t.Name)
	}
	if err := t.Claim.validate(); err != nil {
		return Result{}, fmt.Errorf("audit: target %q: %w", t.Name, err)
	}
	n := opts.runsPerSide(t)
	if n < 200 {
		return Result{}, fmt.Errorf("audit: runs per side must be >= 200, got %d", n)
	}
	conf := opts.Confidence
	if conf == 0 {
		conf = 0.99
	}
	if !(conf > 0 && conf < 1) {
		return Result{}, fmt.Errorf("audit: confidence must be in (0, 1), got %v", conf)
	}
	outs, err := collect(ctx, t, n, opts.Workers, opts.Seed.Child(t.Name), opts.Progress)
	if err != nil {
		return Result{}, err
	}
	half := n / 2
	sel := [2][][]float64{outs[0][:half], outs[1][:half]}
	est := [2][][]float64{outs[0][half:], outs[1][half:]}

	stats := fitStatistics(sel)
	type chosen struct {
		name  string
		stat  statistic
		tau   float64
		above bool
		dir   int // the side whose probability is the numerator
	}
	var events []chosen
	for _, st := range stats {
		vals := [2][]float64{apply(st.f, sel[0]), apply(st.f, sel[1])}
		tau, above, dir, ok := bestThreshold(vals, t.Claim.Delta)
		if ok {
			events = append(events, chosen{st.name, st, tau, above, dir})
		}
	}
	res := Result{Target: t.Name, Family: t.Family, Claim: t.Claim, Broken: t.Broken, Runs: n, Conf: conf}
	if len(events) > 0 {
		// Bonferroni over the kept events; each ε_LB already splits its level over its two
		// Clopper–Pearson limits.
		level := 1 - (1-conf)/float64(len(events))
		for _, ev := range events {
			var c [2]int
			for s := 0; s < 2; s++ {
				for _, o := range est[s] {
					v := ev.stat.f(o)
					if (v > ev.tau) == ev.above {
						c[s]++
					}
				}
			}
			num, den := c[ev.dir], c[1-ev.dir]
			m := [2]int{len(est[0]), len(est[1])}
			lb := stattest.EpsilonLowerBound(num, m[ev.dir], den, m[1-ev.dir], t.Claim.Delta, level)
			if lb > res.EpsilonLB || res.Event == "" {
				op := "≤"
				if ev.above {
					op = ">"
				}
				res.EpsilonLB = lb
				res.Event = fmt.Sprintf("%s %s %.4g favours D%s", ev.name, op, ev.tau, map[int]string{0: "", 1: "′"}[ev.dir])
				res.PD = float64(num) / float64(m[ev.dir])
				res.PDp = float64(den) / float64(m[1-ev.dir])
			}
		}
	}
	res.Violation = res.EpsilonLB > t.Claim.Epsilon
	res.Seconds = time.Since(start).Seconds()
	return res, nil
}

func (c Claim) validate() error {
	if !(c.Epsilon > 0) || math.IsInf(c.Epsilon, 0) {
		return fmt.Errorf("claimed epsilon must be finite and > 0, got %v", c.Epsilon)
	}
	if !(c.Delta >= 0 && c.Delta < 1) {
		return fmt.Errorf("claimed delta must be in [0, 1), got %v", c.Delta)
	}
	return nil
}

// collect runs the target n times on each side, in parallel, into arrays indexed by run so
// that the result does not depend on the number of workers. progress (may be nil) is called,
// under the lock, after each completed run with (runs done, 2n).
func collect(ctx context.Context, t Target, n, workers int, seed rng.Seed, progress func(done, total int)) ([2][][]float64, error) {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	var outs [2][][]float64
	outs[0] = make([][]float64, n)
	outs[1] = make([][]float64, n)
	sides := [2]rng.Seed{seed.Child("D"), seed.Child("D'")}
	jobs := make(chan int)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	done := 0
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				s, i := j%2, j/2
				o, err := t.Run(s, sides[s].Index(uint64(i)))
				if err == nil && ctx.Err() != nil {
					err = ctx.Err()
				}
				if err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = fmt.Errorf("audit: target %q, side %d, run %d: %w", t.Name, s, i, err)
					}
					mu.Unlock()
					continue
				}
				outs[s][i] = o
				if progress != nil {
					mu.Lock()
					done++
					progress(done, 2*n)
					mu.Unlock()
				}
			}
		}()
	}
	for j := 0; j < 2*n; j++ {
		mu.Lock()
		stop := firstErr != nil
		mu.Unlock()
		if stop {
			break
		}
		jobs <- j
	}
	close(jobs)
	wg.Wait()
	if firstErr != nil {
		return outs, firstErr
	}
	dim := len(outs[0][0])
	if dim == 0 {
		return outs, fmt.Errorf("audit: target %q returned an empty output", t.Name)
	}
	for s := 0; s < 2; s++ {
		for i, o := range outs[s] {
			if len(o) != dim {
				return outs, fmt.Errorf("audit: target %q: output length %d on side %d run %d, want %d (it must not depend on side or seed)", t.Name, len(o), s, i, dim)
			}
			for _, v := range o {
				if math.IsNaN(v) {
					return outs, fmt.Errorf("audit: target %q: NaN in output on side %d run %d", t.Name, s, i)
				}
			}
		}
	}
	return outs, nil
}

// statistic is a scalar summary of an output vector, fitted on the selection half.
type statistic struct {
	name string
	f    func([]float64) float64
}

func apply(f func([]float64) float64, xs [][]float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = f(x)
	}
	return out
}

// maxLogitFeatures caps the number of coordinates the classifier uses (the most
// discriminating ones on the selection half).
const maxLogitFeatures = 128

func fitStatistics(sel [2][][]float64) []statistic {
	d := len(sel[0][0])
	var mu [2][]float64
	pooled := make([]float64, d)
	sd := make([]float64, d)
	for s := 0; s < 2; s++ {
		mu[s] = make([]float64, d)
		for _, o := range sel[s] {
			for j, v := range o {
				mu[s][j] += v
			}
		}
		for j := range mu[s] {
			mu[s][j] /= float64(len(sel[s]))
		}
	}
	for j := range pooled {
		pooled[j] = (mu[0][j] + mu[1][j]) / 2
	}
	for s := 0; s < 2; s++ {
		for _, o := range sel[s] {
			for j, v := range o {
				e := v - mu[s][j]
				sd[j] += e * e
			}
		}
	}
	ntot := float64(len(sel[0]) + len(sel[1]))
	for j := range sd {
		sd[j] = math.Sqrt(sd[j] / ntot)
		if sd[j] < 1e-12 {
			sd[j] = 1e-12 // a constant coordinate: any difference in it is decisive
		}
	}
	// Standardized mean differences and variance ratios rank the coordinates.
	score := make([]float64, d)
	w := make([]float64, d)
	best := 0
	for j := 0; j < d; j++ {
		w[j] = (mu[1][j] - mu[0][j]) / (sd[j] * sd[j])
		score[j] = math.Abs(mu[1][j]-mu[0][j]) / sd[j]
		if score[j] > score[best] {
			best = j
		}
	}
	proj := func(o []float64) float64 {
		var t float64
		for j, v := range o {
			t += w[j] * (v - pooled[j])
		}
		return t
	}
	dist := func(o []float64) float64 {
		var t float64
		for j, v := range o {
			z := (v - pooled[j]) / sd[j]
			t += z * z
		}
		return t
	}
	bj := best
	coord := func(o []float64) float64 { return o[bj] }

	// Sparse statistics on the coordinates whose mean difference is significant on the
	// selection half (|t| > 3.5, at most maxLogitFeatures; the 8 largest if none is): the
	// projection, and the log-likelihood ratio of independent Laplace noise,
	// Σ_j (|x_j − μ0_j| − |x_j − μ1_j|)/b_j, which is the optimal statistic for Laplace
	// mechanisms (and clipped-linear, so robust to heavy tails).
	nsel := float64(len(sel[0]))
	var sig []int
	byT := make([]int, d)
	for j := range byT {
		byT[j] = j
	}
	sort.SliceStable(byT, func(a, b int) bool { return score[byT[a]] > score[byT[b]] })
	for _, j := range byT {
		if score[j]*math.Sqrt(nsel/2) > 3.5 && len(sig) < maxLogitFeatures {
			sig = append(sig, j)
		}
	}
	if len(sig) == 0 {
		sig = byT[:min(8, d)]
	}
	mad := make([]float64, d)
	for s := 0; s < 2; s++ {
		for _, o := range sel[s] {
			for _, j := range sig {
				mad[j] += math.Abs(o[j] - mu[s][j])
			}
		}
	}
	for _, j := range sig {
		mad[j] = math.Max(mad[j]/ntot, 1e-12)
	}
	sparse := func(o []float64) float64 {
		var t float64
		for _, j := range sig {
			t += w[j] * (o[j] - pooled[j])
		}
		return t
	}
	// |x−μ0| − |x−μ1| = clamp(2x − μ0 − μ1, −|μ1−μ0|, |μ1−μ0|)·sign(μ1−μ0), written with an
	// explicit clamp so that its plateaus are exact atoms: the event cannot split a plateau by
	// floating-point rounding noise (which would audit the rounding of the sampler — Mironov's
	// attack — rather than the mechanism).
	laplaceLR := func(o []float64) float64 {
		var t float64
		for _, j := range sig {
			gap := mu[1][j] - mu[0][j]
			g := math.Abs(gap)
			v := math.Max(-g, math.Min(g, 2*o[j]-mu[0][j]-mu[1][j]))
			if gap < 0 {
				v = -v
			}
			t += v / mad[j]
		}
		return t
	}

	// Classifier features: the most discriminating coordinates by mean difference or by
	// spread difference, standardized, and their squares.
	spread := make([]float64, d)
	for s := 0; s < 2; s++ {
		for _, o := range sel[s] {
			for j, v := range o {
				z := math.Abs(v-mu[s][j]) / sd[j]
				if s == 0 {
					spread[j] += z
				} else {
					spread[j] -= z
				}
			}
		}
	}
	idx := make([]int, d)
	for j := range idx {
		idx[j] = j
	}
	rank := func(j int) float64 { return score[j] + math.Abs(spread[j])/float64(len(sel[0])) }
	sort.SliceStable(idx, func(a, b int) bool { return rank(idx[a]) > rank(idx[b]) })
	if len(idx) > maxLogitFeatures {
		idx = idx[:maxLogitFeatures]
	}
	feat := func(o []float64, f []float64) {
		for k, j := range idx {
			z := (o[j] - pooled[j]) / sd[j]
			z = math.Max(-50, math.Min(50, z))
			f[2*k] = z
			f[2*k+1] = z * z / 10
		}
	}
	theta := fitLogistic(sel, feat, 2*len(idx))
	logit := func(o []float64) float64 {
		f := make([]float64, 2*len(idx))
		feat(o, f)
		t := theta[len(f)]
		for k, v := range f {
			t += theta[k] * v
		}
		return t
	}
	return []statistic{
		{"projection on mean difference", proj},
		{fmt.Sprintf("coordinate %d", bj), coord},
		{fmt.Sprintf("projection on %d significant coordinates", len(sig)), sparse},
		{fmt.Sprintf("Laplace likelihood ratio on %d significant coordinates", len(sig)), laplaceLR},
		{"standardized squared distance", dist},
		{"logistic classifier score", logit},
	}
}

// fitLogistic fits P(side = 1 | o) = σ(θ·f(o) + θ₀) by gradient descent with a small ridge
// penalty. Deterministic.
func fitLogistic(sel [2][][]float64, feat func([]float64, []float64), p int) []float64 {
	n := len(sel[0]) + len(sel[1])
	X := make([]float64, n*p)
	y := make([]float64, n)
	r := 0
	for s := 0; s < 2; s++ {
		for _, o := range sel[s] {
			feat(o, X[r*p:(r+1)*p])
			y[r] = float64(s)
			r++
		}
	}
	theta := make([]float64, p+1)
	grad := make([]float64, p+1)
	const iters, lambda = 300, 1e-3
	lr := 0.5
	for it := 0; it < iters; it++ {
		for k := range grad {
			grad[k] = 0
		}
		for i := 0; i < n; i++ {
			row := X[i*p : (i+1)*p]
			z := theta[p]
			for k, v := range row {
				z += theta[k] * v
			}
			e := 1/(1+math.Exp(-z)) - y[i]
			for k, v := range row {
				grad[k] += e * v
			}
			grad[p] += e
		}
		for k := range theta {
			g := grad[k] / float64(n)
			if k < p {
				g += lambda * theta[k]
			}
			theta[k] -= lr * g
		}
	}
	return theta
}

// bestThreshold scans thresholds at the quantiles of the pooled statistic and returns the
// event {T > τ} (above) or {T ≤ τ} and the favoured side dir maximising a conservative
// selection-half estimate of the ε bound.
func bestThreshold(vals [2][]float64, delta float64) (tau float64, above bool, dir int, ok bool) {
	pool := append(append([]float64(nil), vals[0]...), vals[1]...)
	sort.Float64s(pool)
	var sorted [2][]float64
	for s := 0; s < 2; s++ {
		sorted[s] = append([]float64(nil), vals[s]...)
		sort.Float64s(sorted[s])
	}
	bestLB := math.Inf(-1)
	qs := []float64{0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.03, 0.05, 0.075, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5}
	var cands []float64
	for _, q := range qs {
		i := int(q * float64(len(pool)))
		cands = append(cands, pool[i], pool[len(pool)-1-i])
	}
	for _, c := range cands {
		for s := 0; s < 2; s++ {
			n := [2]int{len(sorted[0]), len(sorted[1])}
			// count ≤ c on each side
			le := [2]int{sort.Search(n[0], func(i int) bool { return sorted[0][i] > c }), sort.Search(n[1], func(i int) bool { return sorted[1][i] > c })}
			for _, ab := range []bool{true, false} {
				var k [2]int
				for t := 0; t < 2; t++ {
					if ab {
						k[t] = n[t] - le[t]
					} else {
						k[t] = le[t]
					}
				}
				lb := stattest.EpsilonLowerBound(k[s], n[s], k[1-s], n[1-s], delta, 0.95)
				if lb > bestLB {
					bestLB, tau, above, dir, ok = lb, c, ab, s, true
				}
			}
		}
	}
	return tau, above, dir, ok
}

// ErrNoCanary is returned by CanaryAudit for a target without a Canary function.
var ErrNoCanary = errors.New("audit: target has no canary run")
