// Package stattest provides the statistical tests used to check privacy mechanisms
// empirically: Kolmogorov–Smirnov goodness of fit, Clopper–Pearson intervals, the StatDP-style
// event test of P[M(D)∈E] ≤ e^ε·P[M(D')∈E], and the implied empirical lower bound on ε.
// Empirical tests can refute a privacy claim, never prove it.
package stattest

import (
	"math"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/stat/distuv"
)

// KSOneSample returns the Kolmogorov–Smirnov statistic D of the sample xs against the
// continuous CDF cdf, and its asymptotic p-value (Kolmogorov distribution, with the
// Stephens (1970) small-sample correction √n + 0.12 + 0.11/√n).
func KSOneSample(xs []float64, cdf func(float64) float64) (d, pValue float64) {
	n := len(xs)
	if n == 0 {
		return 0, 1
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	fn := float64(n)
	for i, x := range s {
		f := cdf(x)
		d = max(d, f-float64(i)/fn, float64(i+1)/fn-f)
	}
	sq := math.Sqrt(fn)
	return d, kolmogorovQ((sq + 0.12 + 0.11/sq) * d)
}

// kolmogorovQ is P(K > x) for the Kolmogorov distribution: 2 Σ_{j≥1} (−1)^{j−1} e^{−2j²x²}.
func kolmogorovQ(x float64) float64 {
	if x < 0.2 {
		return 1
	}
	s := 0.0
	for j := 1; j <= 100; j++ {
		t := math.Exp(-2 * float64(j*j) * x * x)
		if j%2 == 1 {
			s += t
		} else {
			s -= t
		}
		if t < 1e-16 {
			break
		}
	}
	return min(1, max(0, 2*s))
}

// ClopperPearson returns the exact two-sided confidence interval for a binomial proportion
// with k successes in n trials.
func ClopperPearson(k, n int, confidence float64) (lo, hi float64) {
	if n <= 0 || k < 0 || k > n {
		return math.NaN(), math.NaN()
	}
	a := (1 - confidence) / 2
	if k > 0 {
		lo = distuv.Beta{Alpha: float64(k), Beta: float64(n - k + 1)}.Quantile(a)
	}
	hi = 1
	if k < n {
		hi = distuv.Beta{Alpha: float64(k + 1), Beta: float64(n - k)}.Quantile(1 - a)
	}
	return lo, hi
}

// DPEventTest is the StatDP test (Ding et al. 2018) of H0: P[M(D)∈E] ≤ e^ε·P[M(D')∈E], given
// the event counts cD of nD runs on D and cDp of nDp runs on D'. The D count is thinned by
// Binomial(cD, e^{−ε}) (drawn from r), which makes the two counts comparable under H0, and a
// one-sided Fisher exact test asks whether the thinned D proportion exceeds the D' one. A small
// p-value is evidence of a privacy violation.
func DPEventTest(cD, nD, cDp, nDp int, eps float64, r *rand.Rand) float64 {
	thin := 0
	p := math.Exp(-eps)
	for i := 0; i < cD; i++ {
		if r.Float64() < p {
			thin++
		}
	}
	return fisherGreater(thin, nD, cDp, nDp)
}

// fisherGreater is the one-sided Fisher exact p-value P(X ≥ a) for the 2×2 table
// [[a, n1−a], [b, n2−b]] with fixed margins (X hypergeometric).
func fisherGreater(a, n1, b, n2 int) float64 {
	k := a + b // total successes
	N := n1 + n2
	lchoose := func(n, r int) float64 {
		x, _ := math.Lgamma(float64(n + 1))
		y, _ := math.Lgamma(float64(r + 1))
		z, _ := math.Lgamma(float64(n - r + 1))
		return x - y - z
	}
	den := lchoose(N, k)
	hi := min(k, n1)
	p := 0.0
	for x := a; x <= hi; x++ {
		if k-x > n2 {
			continue
		}
		p += math.Exp(lchoose(n1, x) + lchoose(n2, k-x) - den)
	}
	return min(1, p)
}

// EpsilonLowerBound returns the empirical lower bound ln((p_lo − δ)/p'_hi) on ε implied by the
// event counts, where p_lo is the lower Clopper–Pearson bound of P[M(D)∈E] and p'_hi the upper
// bound of P[M(D')∈E], each at confidence 1 − (1−confidence)/2; 0 if not positive.
func EpsilonLowerBound(cD, nD, cDp, nDp int, delta, confidence float64) float64 {
	c := 1 - (1-confidence)/2
	lo, _ := ClopperPearson(cD, nD, 2*c-1)
	_, hi := ClopperPearson(cDp, nDp, 2*c-1)
	if !(lo-delta > 0) || !(hi > 0) {
		return 0
	}
	return max(0, math.Log((lo-delta)/hi))
}
