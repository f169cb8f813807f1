package report

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// Two-sided 95% Student-t critical values t_{0.975, df}.
const (
	t975df1 = 12.706204736174707
	t975df2 = 4.302652729749464
	t975df4 = 2.7764451051977934
)

func approxEqual(a, b, tol float64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.IsNaN(a) && math.IsNaN(b)
	}
	return math.Abs(a-b) <= tol*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}

func TestMeanBand(t *testing.T) {
	tests := []struct {
		name   string
		runs   [][]float64
		level  float64
		want   Band
		errSub string // non-empty: an error containing this is expected
	}{
		{
			name:  "two runs",
			runs:  [][]float64{{1, 2, 3}, {3, 4, 5}},
			level: 0.95,
			want: Band{
				Mean: []float64{2, 3, 4},
				SD:   []float64{math.Sqrt2, math.Sqrt2, math.Sqrt2},
				Lo:   []float64{2 - t975df1, 3 - t975df1, 4 - t975df1},
				Hi:   []float64{2 + t975df1, 3 + t975df1, 4 + t975df1},
				N:    2,
			},
		},
		{
			name:  "three runs, zero spread at one point",
			runs:  [][]float64{{0, 5}, {3, 5}, {6, 5}},
			level: 0.95,
			want: Band{
				Mean: []float64{3, 5},
				SD:   []float64{3, 0},
				Lo:   []float64{3 - t975df2*3/math.Sqrt(3), 5},
				Hi:   []float64{3 + t975df2*3/math.Sqrt(3), 5},
				N:    3,
			},
		},
		{
			name:  "five runs",
			runs:  [][]float64{{1}, {2}, {3}, {4}, {5}},
			level: 0.95,
			want: Band{
				Mean: []float64{3},
				SD:   []float64{math.Sqrt(2.5)},
				Lo:   []float64{3 - t975df4*math.Sqrt(2.5)/math.Sqrt(5)},
				Hi:   []float64{3 + t975df4*math.Sqrt(2.5)/math.Sqrt(5)},
				N:    5,
			},
		},
		{
			name:  "large offset is numerically stable",
			runs:  [][]float64{{1e9 + 1}, {1e9 + 2}, {1e9 + 3}},
			level: 0.95,
			want: Band{
				Mean: []float64{1e9 + 2},
				SD:   []float64{1},
				Lo:   []float64{1e9 + 2 - t975df2/math.Sqrt(3)},
				Hi:   []float64{1e9 + 2 + t975df2/math.Sqrt(3)},
				N:    3,
			},
		},
		{
			name:  "single run",
			runs:  [][]float64{{1.5, -2}},
			level: 0.95,
			want: Band{
				Mean: []float64{1.5, -2},
				SD:   []float64{0, 0},
				Lo:   []float64{1.5, -2},
				Hi:   []float64{1.5, -2},
				N:    1,
			},
		},
		{
			name:  "NaN propagates",
			runs:  [][]float64{{1, math.NaN()}, {3, 1}},
			level: 0.9,
			want: Band{
				Mean: []float64{2, math.NaN()},
				SD:   []float64{math.Sqrt2, math.NaN()},
				Lo:   []float64{2 - 6.313751514675041, math.NaN()},
				Hi:   []float64{2 + 6.313751514675041, math.NaN()},
				N:    2,
			},
		},
		{name: "no runs", runs: nil, level: 0.95, errSub: "no runs"},
		{name: "empty runs", runs: [][]float64{{}, {}}, level: 0.95, errSub: "empty"},
		{name: "unequal lengths", runs: [][]float64{{1, 2}, {1}}, level: 0.95, errSub: "run 1 has length 1"},
		{name: "level zero", runs: [][]float64{{1}}, level: 0, errSub: "level"},
		{name: "level one", runs: [][]float64{{1}}, level: 1, errSub: "level"},
		{name: "level NaN", runs: [][]float64{{1}}, level: math.NaN(), errSub: "level"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := MeanBand(tc.runs, tc.level)
			if errorCase(t, "MeanBand", err, tc.errSub) {
				return
			}
			if got.N != tc.want.N {
				t.Errorf("N = %d, want %d", got.N, tc.want.N)
			}
			for _, f := range []struct {
				name      string
				got, want []float64
			}{
				{"Mean", got.Mean, tc.want.Mean},
				{"SD", got.SD, tc.want.SD},
				{"Lo", got.Lo, tc.want.Lo},
				{"Hi", got.Hi, tc.want.Hi},
			} {
				if len(f.got) != len(f.want) {
					t.Fatalf("len(%s) = %d, want %d", f.name, len(f.got), len(f.want))
				}
				for i := range f.got {
					if !approxEqual(f.got[i], f.want[i], 1e-9) {
						t.Errorf("%s[%d] = %v, want %v", f.name, i, f.got[i], f.want[i])
					}
				}
			}
		})
	}
}

func TestMeanBandDoesNotModifyInput(t *testing.T) {
	runs := [][]float64{{1, 2}, {3, 4}}
	if _, err := MeanBand(runs, 0.95); err != nil {
		t.Fatal(err)
	}
	if runs[0][0] != 1 || runs[0][1] != 2 || runs[1][0] != 3 || runs[1][1] != 4 {
		t.Errorf("input modified: %v", runs)
	}
}

// TestMeanBandCoverage checks that the interval covers the true mean of
// normal data at close to the nominal rate.
func TestMeanBandCoverage(t *testing.T) {
	tests := []struct {
		n     int
		level float64
	}{{2, 0.95}, {5, 0.95}, {10, 0.9}, {30, 0.99}}
	for _, tc := range tests {
		const points = 20000
		rng := rand.New(rand.NewPCG(uint64(tc.n), 42))
		runs := make([][]float64, tc.n)
		for i := range runs {
			runs[i] = make([]float64, points)
			for j := range runs[i] {
				runs[i][j] = 10 + 3*rng.NormFloat64()
			}
		}
		b, err := MeanBand(runs, tc.level)
		if err != nil {
			t.Fatal(err)
		}
		covered := 0
		for j := range b.Mean {
			if b.Lo[j] <= 10 && 10 <= b.Hi[j] {
				covered++
			}
		}
		rate := float64(covered) / points
		// 5 binomial standard errors.
		tol := 5 * math.Sqrt(tc.level*(1-tc.level)/points)
		if math.Abs(rate-tc.level) > tol {
			t.Errorf("n=%d level=%v: coverage %.4f, want %.4f ± %.4f", tc.n, tc.level, rate, tc.level, tol)
		}
	}
}

func TestGrowthExponent(t *testing.T) {
	pow := func(a, c float64, xs []float64) []float64 {
		ys := make([]float64, len(xs))
		for i, x := range xs {
			ys[i] = c * math.Pow(x, a)
		}
		return ys
	}
	xs := make([]float64, 1000)
	for i := range xs {
		xs[i] = float64(i + 1)
	}
	// y = x^0.5 up to 100, then linear growth continuing from there.
	kinked := make([]float64, len(xs))
	for i, x := range xs {
		if x <= 100 {
			kinked[i] = math.Sqrt(x)
		} else {
			kinked[i] = 10 * x / 100
		}
	}
	withZeros := pow(0.5, 2, xs)
	withZeros[0], withZeros[5], withZeros[50] = 0, -1, 0

	tests := []struct {
		name     string
		x, y     []float64
		from, to float64
		want     float64
		errSub   string
	}{
		{name: "sqrt", x: xs, y: pow(0.5, 3, xs), from: 1, to: 1000, want: 0.5},
		{name: "linear", x: xs, y: pow(1, 0.2, xs), from: 10, to: 500, want: 1},
		{name: "two-thirds", x: xs, y: pow(2.0/3, 7, xs), from: 1, to: 1000, want: 2.0 / 3},
		{name: "constant", x: xs, y: pow(0, 5, xs), from: 1, to: 1000, want: 0},
		{name: "non-positive y skipped", x: xs, y: withZeros, from: 1, to: 1000, want: 0.5},
		{name: "range selects early regime", x: xs, y: kinked, from: 1, to: 100, want: 0.5},
		{name: "range selects late regime", x: xs, y: kinked, from: 101, to: 1000, want: 1},
		{name: "non-positive x skipped", x: []float64{-1, 0, 1, 4}, y: []float64{5, 5, 1, 2}, from: -10, to: 10, want: 0.5},
		{name: "length mismatch", x: xs, y: xs[:10], from: 1, to: 10, errSub: "len(x)"},
		{name: "reversed range", x: xs, y: xs, from: 10, to: 1, errSub: "invalid range"},
		{name: "NaN range", x: xs, y: xs, from: math.NaN(), to: 1, errSub: "invalid range"},
		{name: "one point", x: xs, y: xs, from: 5, to: 5, errSub: "1 usable points"},
		{name: "all y zero", x: xs, y: make([]float64, len(xs)), from: 1, to: 1000, errSub: "0 usable points"},
		{name: "same x", x: []float64{2, 2, 2}, y: []float64{1, 2, 3}, from: 1, to: 3, errSub: "same x"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := GrowthExponent(tc.x, tc.y, tc.from, tc.to)
			if errorCase(t, "GrowthExponent", err, tc.errSub) {
				return
			}
			if !approxEqual(got, tc.want, 1e-9) {
				t.Errorf("slope = %v, want %v", got, tc.want)
			}
		})
	}
}

// errorCase checks the error of the function fn in a table case: when errSub is set the error
// must contain it and errorCase returns true (the case is done); otherwise it must be nil.
func errorCase(t *testing.T, fn string, err error, errSub string) bool {
	t.Helper()
	if errSub != "" {
		if err == nil || !strings.Contains(err.Error(), errSub) {
			t.Fatalf("%s error = %v, want one containing %q", fn, err, errSub)
		}
		return true
	}
	if err != nil {
		t.Fatalf("%s: %v", fn, err)
	}
	return false
}
