package report

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
)

// Band is the pointwise summary of a set of equally long runs: the mean, a
// two-sided confidence interval [Lo, Hi] for the mean, and the sample standard
// deviation, each with one entry per point, together with the number of runs
// N that were summarised.
type Band struct {
	Mean, Lo, Hi, SD []float64
	N                int
}

// Len returns the number of points in the band.
func (b Band) Len() int { return len(b.Mean) }

// MeanBand summarises runs pointwise. For each index t it computes the mean
// over runs of runs[i][t], the sample standard deviation (denominator n−1)
// and a two-sided Student-t confidence interval for the mean at confidence
// level (for example 0.95):
//
//	mean ± t_{(1+level)/2, n−1} · sd / √n
//
// With a single run the interval degenerates to Lo = Hi = Mean and SD = 0.
// All runs must be non-empty and of equal length, and level must lie in the
// open interval (0, 1). NaN values propagate into the affected points.
func MeanBand(runs [][]float64, level float64) (Band, error) {
	if len(runs) == 0 {
		return Band{}, errors.New("report: MeanBand: no runs")
	}
	if !(level > 0 && level < 1) {
		return Band{}, fmt.Errorf("report: MeanBand: confidence level %v not in (0, 1)", level)
	}
	T := len(runs[0])
	if T == 0 {
		return Band{}, errors.New("report: MeanBand: runs are empty")
	}
	for i, r := range runs {
		if len(r) != T {
			return Band{}, fmt.Errorf("report: MeanBand: run %d has length %d, want %d (length of run 0)", i, len(r), T)
		}
	}
	n := len(runs)
	b := Band{
		Mean: make([]float64, T),
		Lo:   make([]float64, T),
		Hi:   make([]float64, T),
		SD:   make([]float64, T),
		N:    n,
	}
	// Two passes (mean, then squared deviations) for numerical stability;
	// iterate run-major so each run is scanned contiguously.
	for _, r := range runs {
		for t, v := range r {
			b.Mean[t] += v
		}
	}
	inv := 1 / float64(n)
	for t := range b.Mean {
		b.Mean[t] *= inv
	}
	if n == 1 {
		copy(b.Lo, b.Mean)
		copy(b.Hi, b.Mean)
		return b, nil
	}
	for _, r := range runs {
		for t, v := range r {
			d := v - b.Mean[t]
			b.SD[t] += d * d
		}
	}
	q := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(n - 1)}.Quantile((1 + level) / 2)
	scale := q / math.Sqrt(float64(n))
	for t := range b.SD {
		sd := math.Sqrt(b.SD[t] / float64(n-1))
		b.SD[t] = sd
		h := scale * sd
		b.Lo[t] = b.Mean[t] - h
		b.Hi[t] = b.Mean[t] + h
	}
	return b, nil
}

// GrowthExponent fits log y = a + slope·log x by ordinary least squares over
// the points with from ≤ x ≤ to and returns slope. For cumulative regret
// growing like T^α the result estimates α (for example ≈ 0.5 for √T regret
// and ≈ 1 for linear regret).
//
// Points whose x or y is not strictly positive (or not finite) are skipped,
// since their logarithm is undefined. It is an error if x and y differ in
// length, if from > to, or if fewer than two usable points with distinct x
// remain.
func GrowthExponent(x, y []float64, from, to float64) (slope float64, err error) {
	if len(x) != len(y) {
		return 0, fmt.Errorf("report: GrowthExponent: len(x) = %d != len(y) = %d", len(x), len(y))
	}
	if !(from <= to) {
		return 0, fmt.Errorf("report: GrowthExponent: invalid range [%v, %v]", from, to)
	}
	var lx, ly []float64
	for i, xi := range x {
		yi := y[i]
		if xi < from || xi > to || !(xi > 0) || !(yi > 0) || math.IsInf(xi, 0) || math.IsInf(yi, 0) {
			continue
		}
		lx = append(lx, math.Log(xi))
		ly = append(ly, math.Log(yi))
	}
	if len(lx) < 2 {
		return 0, fmt.Errorf("report: GrowthExponent: %d usable points in [%v, %v], need at least 2", len(lx), from, to)
	}
	distinct := false
	for _, v := range lx[1:] {
		if v != lx[0] {
			distinct = true
			break
		}
	}
	if !distinct {
		return 0, fmt.Errorf("report: GrowthExponent: all usable points in [%v, %v] share the same x", from, to)
	}
	_, slope = stat.LinearRegression(lx, ly, nil, false)
	return slope, nil
}
