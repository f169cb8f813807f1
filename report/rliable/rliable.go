// Package rliable holds the aggregate statistics of "Deep Reinforcement Learning at the Edge of
// the Statistical Precipice" (Agarwal et al., NeurIPS 2021) that `dprl compare` reports across
// seeds: the interquartile mean (IQM, §4.3 "Aggregate metrics"), percentile confidence
// intervals from a stratified bootstrap (§4.2, resampling runs within each task), and the
// probability of improvement (§4.3 "Probability of improvement", a Mann–Whitney U statistic
// normalised to [0, 1], ties counted 1/2) with its independent stratified bootstrap interval.
//
// All functions are pure: randomness comes only from the *rand.Rand passed in, so the same
// generator state gives the same interval.
package rliable

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// Interval is a point estimate with a confidence interval [Lo, Hi].
type Interval struct {
	// Point is the statistic on the observed data.
	Point float64 `json:"point"`
	// Lo and Hi are the percentile bootstrap bounds.
	Lo float64 `json:"lo"`
	Hi float64 `json:"hi"`
}

// IQM returns the interquartile mean of x: the mean of the sorted values with
// ⌊n/4⌋ removed from each end, exactly scipy.stats.trim_mean(x, 0.25), which rliable's
// metrics.aggregate_iqm uses. For n < 4 nothing is trimmed. x must be non-empty and finite.
func IQM(x []float64) (float64, error) {
	if len(x) == 0 {
		return 0, errors.New("rliable: IQM of no values")
	}
	s := slices.Clone(x)
	for _, v := range s {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return 0, fmt.Errorf("rliable: IQM: value %v is not finite", v)
		}
	}
	slices.Sort(s)
	return trimmedMean(s), nil
}

// trimmedMean is the 25 % trimmed mean of sorted s (non-empty).
func trimmedMean(s []float64) float64 {
	cut := len(s) / 4 // int(0.25·n), as scipy.stats.trim_mean
	sum := 0.0
	for _, v := range s[cut : len(s)-cut] {
		sum += v
	}
	return sum / float64(len(s)-2*cut)
}

// Percentile returns the p-quantile (p ∈ [0, 1]) of sorted s with linear interpolation between
// order statistics (numpy.percentile's default, used by rliable's percentile intervals).
func Percentile(sorted []float64, p float64) float64 {
	h := p * float64(len(sorted)-1)
	lo := int(math.Floor(h))
	if lo >= len(sorted)-1 {
		return sorted[len(sorted)-1]
	}
	return sorted[lo] + (h-float64(lo))*(sorted[lo+1]-sorted[lo])
}

// checkBoot validates the common bootstrap arguments.
func checkBoot(reps int, level float64, r *rand.Rand) error {
	if reps < 1 {
		return fmt.Errorf("rliable: resamples must be ≥ 1, got %d", reps)
	}
	if !(level > 0 && level < 1) {
		return fmt.Errorf("rliable: confidence level must be in (0, 1), got %v", level)
	}
	if r == nil {
		return errors.New("rliable: nil random generator")
	}
	return nil
}

// interval sorts the bootstrap replicates and returns the central level-interval around point.
func interval(point float64, reps []float64, level float64) Interval {
	slices.Sort(reps)
	a := (1 - level) / 2
	return Interval{Point: point, Lo: Percentile(reps, a), Hi: Percentile(reps, 1-a)}
}

// IQMCI returns the IQM of the pooled values of strata with a percentile confidence interval
// at level from reps stratified bootstrap resamples (Agarwal et al. 2021 §4.2): each resample
// draws len(s) values with replacement from every stratum s separately, and the IQM of the pooled
// resample is one replicate. With one stratum (the seeds of one curve) it is the ordinary
// bootstrap of that curve's seeds. Every stratum needs at least 2 values (one value has no
// spread to resample).
func IQMCI(strata [][]float64, reps int, level float64, r *rand.Rand) (Interval, error) {
	if err := checkBoot(reps, level, r); err != nil {
		return Interval{}, err
	}
	if len(strata) == 0 {
		return Interval{}, errors.New("rliable: IQMCI of no strata")
	}
	var pooled []float64
	for i, s := range strata {
		if len(s) < 2 {
			return Interval{}, fmt.Errorf("rliable: stratum %d has %d value(s); a bootstrap interval needs at least 2", i, len(s))
		}
		pooled = append(pooled, s...)
	}
	point, err := IQM(pooled)
	if err != nil {
		return Interval{}, err
	}
	buf := make([]float64, len(pooled))
	out := make([]float64, reps)
	for b := range out {
		k := 0
		for _, s := range strata {
			for range s {
				buf[k] = s[r.IntN(len(s))]
				k++
			}
		}
		slices.Sort(buf)
		out[b] = trimmedMean(buf)
	}
	return interval(point, out, level), nil
}

// ProbLower returns P(X < Y) estimated from samples x and y: the fraction of pairs (x_i, y_j)
// with x_i < y_j, ties counted 1/2 (the Mann–Whitney U statistic divided by len(x)·len(y);
// Agarwal et al. 2021 §4.3 with "better" meaning lower, as for regret). Both must be non-empty
// and finite.
func ProbLower(x, y []float64) (float64, error) {
	if len(x) == 0 || len(y) == 0 {
		return 0, errors.New("rliable: ProbLower of an empty sample")
	}
	if err := checkFinite("ProbLower", x, y); err != nil {
		return 0, err
	}
	return probLower(x, y), nil
}

// checkFinite refuses a NaN or infinite value in any of the samples (a NaN compares neither
// lower nor higher, so it would silently bias the statistic).
func checkFinite(what string, samples ...[]float64) error {
	for _, s := range samples {
		for _, v := range s {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("rliable: %s: value %v is not finite", what, v)
			}
		}
	}
	return nil
}

// probLower is ProbLower without the checks.
func probLower(x, y []float64) float64 {
	s := 0.0
	for _, a := range x {
		for _, b := range y {
			switch {
			case a < b:
				s++
			case a == b:
				s += 0.5
			}
		}
	}
	return s / float64(len(x)*len(y))
}

// ProbLowerCI returns ProbLower(x, y) with a percentile confidence interval at level from reps
// independent stratified bootstrap resamples (rliable's StratifiedIndependentBootstrap): x and
// y are resampled with replacement separately. Both need at least 2 values.
func ProbLowerCI(x, y []float64, reps int, level float64, r *rand.Rand) (Interval, error) {
	if err := checkBoot(reps, level, r); err != nil {
		return Interval{}, err
	}
	if len(x) < 2 || len(y) < 2 {
		return Interval{}, fmt.Errorf("rliable: samples of %d and %d value(s); a bootstrap interval needs at least 2 each", len(x), len(y))
	}
	if err := checkFinite("ProbLowerCI", x, y); err != nil {
		return Interval{}, err
	}
	bx, by := make([]float64, len(x)), make([]float64, len(y))
	out := make([]float64, reps)
	for b := range out {
		for i := range bx {
			bx[i] = x[r.IntN(len(x))]
		}
		for i := range by {
			by[i] = y[r.IntN(len(y))]
		}
		out[b] = probLower(bx, by)
	}
	return interval(probLower(x, y), out, level), nil
}
