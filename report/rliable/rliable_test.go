package rliable

import (
	"math"
	"testing"

	"github.com/dprl/dprl/rng"
)

func TestIQM(t *testing.T) {
	for _, tc := range []struct {
		name string
		x    []float64
		want float64
	}{
		{"one value", []float64{7}, 7},
		{"n<4 trims nothing", []float64{1, 2, 30}, 11},
		// n=4: ⌊4/4⌋=1 from each end → mean(2,3).
		{"n=4", []float64{4, 1, 3, 2}, 2.5},
		// n=8: 2 from each end of 1..7,1000 → mean(3,4,5,6); trimming only the top, only
		// the bottom or 10 % instead of 25 % gives another value.
		{"n=8 skewed", []float64{1000, 1, 2, 3, 4, 5, 6, 7}, 4.5},
		// n=7: ⌊7/4⌋=1 → mean(-5,0,1,2,50) = 9.6 (not the 25–75 % interpolated quantiles).
		{"n=7 outliers both ends", []float64{-1000, -5, 0, 1, 2, 50, 1e6}, 9.6},
		// n=9: ⌊9/4⌋=2 → mean(3..7) = 5.
		{"n=9", []float64{9, 8, 7, 6, 5, 4, 3, 2, 1}, 5},
	} {
		got, err := IQM(tc.x)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("%s: IQM(%v) = %v, want %v", tc.name, tc.x, got, tc.want)
		}
	}
}

func TestIQMErrors(t *testing.T) {
	for _, x := range [][]float64{nil, {1, math.NaN()}, {math.Inf(1)}} {
		if _, err := IQM(x); err == nil {
			t.Errorf("IQM(%v): no error", x)
		}
	}
}

func TestPercentile(t *testing.T) {
	hundred := make([]float64, 101)
	for i := range hundred {
		hundred[i] = float64(i)
	}
	for _, tc := range []struct {
		s    []float64
		p    float64
		want float64
	}{
		{[]float64{1, 2, 3, 4}, 0.5, 2.5},
		{[]float64{1, 2, 3, 4}, 0, 1},
		{[]float64{1, 2, 3, 4}, 1, 4},
		{[]float64{0, 10}, 0.25, 2.5},
		{hundred, 0.025, 2.5},
		{hundred, 0.975, 97.5},
	} {
		if got := Percentile(tc.s, tc.p); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("Percentile(%v, %v) = %v, want %v", tc.s, tc.p, got, tc.want)
		}
	}
}

func TestProbLower(t *testing.T) {
	for _, tc := range []struct {
		x, y []float64
		want float64
	}{
		// 6 pairs with x<y, 2 ties (2,2), (3,3): (6 + 2/2)/9.
		{[]float64{1, 2, 3}, []float64{2, 3, 4}, 7.0 / 9},
		{[]float64{2, 3, 4}, []float64{1, 2, 3}, 2.0 / 9},
		{[]float64{1, 1}, []float64{1, 1}, 0.5},
		{[]float64{0}, []float64{5, 6}, 1},
		{[]float64{10, 20}, []float64{5}, 0},
	} {
		got, err := ProbLower(tc.x, tc.y)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("ProbLower(%v, %v) = %v, want %v", tc.x, tc.y, got, tc.want)
		}
	}
}

func TestIQMCI(t *testing.T) {
	seed := rng.NewSeed(1)
	for _, tc := range []struct {
		name          string
		strata        [][]float64
		point, lo, hi float64
		tol           float64
	}{
		// Constant data: every replicate equals the point.
		{"constant", [][]float64{{3, 3, 3}}, 3, 3, 3, 0},
		// Two strata, each constant: a stratified bootstrap keeps one 0 and one 1 in every
		// resample, so the interval is degenerate; resampling the pooled values would not be.
		{"stratified", [][]float64{{0, 0}, {1, 1}}, 0.5, 0.5, 0.5, 0},
		// {0, 1}: replicates 0, ½, 1 with probabilities ¼, ½, ¼; with 2000 resamples the
		// 2.5 % and 97.5 % quantiles are 0 and 1 (P(fewer than 50 zeros) < 1e-80).
		{"two values", [][]float64{{0, 1}}, 0.5, 0, 1, 0},
	} {
		got, err := IQMCI(tc.strata, 2000, 0.95, seed.Child(tc.name).Rand())
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if math.Abs(got.Point-tc.point) > 1e-12 || math.Abs(got.Lo-tc.lo) > tc.tol+1e-12 || math.Abs(got.Hi-tc.hi) > tc.tol+1e-12 {
			t.Errorf("%s: IQMCI = %+v, want point %v in [%v, %v]", tc.name, got, tc.point, tc.lo, tc.hi)
		}
	}
}

func TestIQMCIDeterministicAndCovers(t *testing.T) {
	x := []float64{10, 12, 9, 30, 11, 13, 8, 12}
	a, err := IQMCI([][]float64{x}, 2000, 0.95, rng.NewSeed(7).Rand())
	if err != nil {
		t.Fatal(err)
	}
	b, _ := IQMCI([][]float64{x}, 2000, 0.95, rng.NewSeed(7).Rand())
	if a != b {
		t.Fatalf("same seed, different intervals: %+v vs %+v", a, b)
	}
	// Replicates are IQMs of resamples of x, so they lie within [min, max] and the interval
	// must contain the point and be non-degenerate for spread-out data.
	if !(a.Lo < a.Point && a.Point < a.Hi && a.Lo >= 8 && a.Hi <= 30) {
		t.Errorf("interval %+v does not bracket the IQM within the data range", a)
	}
}

func TestProbLowerCI(t *testing.T) {
	seed := rng.NewSeed(3)
	// Separated samples: every resample has all x below all y → degenerate at 1.
	got, err := ProbLowerCI([]float64{1, 2, 3}, []float64{10, 11}, 2000, 0.95, seed.Child("sep").Rand())
	if err != nil {
		t.Fatal(err)
	}
	if got != (Interval{1, 1, 1}) {
		t.Errorf("separated: %+v, want {1 1 1}", got)
	}
	// x={0,1}, y={0,1}: replicates range over {0, ¼, ½, ¾, 1} (P=0 needs x={1,1},y={0,0}: 1/16);
	// the 2.5 % and 97.5 % quantiles are 0 and 1.
	got, err = ProbLowerCI([]float64{0, 1}, []float64{0, 1}, 2000, 0.95, seed.Child("overlap").Rand())
	if err != nil {
		t.Fatal(err)
	}
	if got != (Interval{0.5, 0, 1}) {
		t.Errorf("overlap: %+v, want {0.5 0 1}", got)
	}
}

func TestBootstrapErrors(t *testing.T) {
	r := rng.NewSeed(1).Rand()
	if _, err := IQMCI([][]float64{{1}}, 2000, 0.95, r); err == nil {
		t.Error("IQMCI with one seed: no error")
	}
	if _, err := IQMCI(nil, 2000, 0.95, r); err == nil {
		t.Error("IQMCI of no strata: no error")
	}
	if _, err := IQMCI([][]float64{{1, 2}}, 0, 0.95, r); err == nil {
		t.Error("IQMCI with 0 resamples: no error")
	}
	if _, err := ProbLowerCI([]float64{1}, []float64{1, 2}, 2000, 0.95, r); err == nil {
		t.Error("ProbLowerCI with one value: no error")
	}
	if _, err := ProbLowerCI([]float64{1, 2}, []float64{1, 2}, 2000, 1, r); err == nil {
		t.Error("ProbLowerCI at level 1: no error")
	}
}

// TestNonFiniteRefused: a NaN or infinite value is an error of every statistic (ProbLower used
// to compare NaN as neither lower nor higher and return a number).
func TestNonFiniteRefused(t *testing.T) {
	r := rng.NewSeed(1).Rand()
	for _, bad := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		x := []float64{1, bad, 3}
		if _, err := ProbLower(x, []float64{1, 2}); err == nil {
			t.Errorf("ProbLower with %v: no error", bad)
		}
		if _, err := ProbLower([]float64{1, 2}, x); err == nil {
			t.Errorf("ProbLower with %v in y: no error", bad)
		}
		if _, err := ProbLowerCI(x, []float64{1, 2}, 100, 0.95, r); err == nil {
			t.Errorf("ProbLowerCI with %v: no error", bad)
		}
		if _, err := IQMCI([][]float64{x}, 100, 0.95, r); err == nil {
			t.Errorf("IQMCI with %v: no error", bad)
		}
	}
}
