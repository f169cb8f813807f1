package report

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWriteCurveCSVRoundTrip(t *testing.T) {
	awkward := []float64{0.1, 1.0 / 3, math.Pi, 1e-300, math.MaxFloat64, math.SmallestNonzeroFloat64,
		math.Copysign(0, -1), 123456789012345680, math.Inf(1), math.Inf(-1), math.NaN(), 5e-324}
	tests := []struct {
		name     string
		episodes []int
		runs     [][]float64
		names    []string
	}{
		{
			name:     "two runs",
			episodes: []int{1, 2, 3},
			runs:     [][]float64{{0.1, 0.2, 0.30000000000000004}, {1, 2, 3}},
			names:    []string{"seed_1", "seed_2"},
		},
		{
			name: "awkward values",
			episodes: func() []int {
				e := make([]int, len(awkward))
				for i := range e {
					e[i] = i * 7
				}
				return e
			}(),
			runs:  [][]float64{awkward, awkward},
			names: []string{"a", "b"},
		},
		{
			name:     "names needing quotes",
			episodes: []int{0, -1},
			runs:     [][]float64{{1, 2}, {3, 4}, {5, 6}},
			names:    []string{"eps=1,delta=0", `say "hi"`, " leading space"},
		},
		{
			name:     "single run",
			episodes: []int{10},
			runs:     [][]float64{{42}},
			names:    []string{"only"},
		},
		{
			name:     "no episodes",
			episodes: nil,
			runs:     [][]float64{{}},
			names:    []string{"r"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			band := Band{Mean: make([]float64, len(tc.episodes)), Lo: make([]float64, len(tc.episodes)), Hi: make([]float64, len(tc.episodes))}
			if len(tc.episodes) > 0 {
				var err error
				if band, err = MeanBand(tc.runs, 0.95); err != nil {
					t.Fatal(err)
				}
			}
			path := filepath.Join(t.TempDir(), "curve.csv")
			if err := WriteCurveCSV(path, tc.episodes, tc.runs, tc.names, band); err != nil {
				t.Fatalf("WriteCurveCSV: %v", err)
			}
			episodes, cols, err := ReadCurveCSV(path)
			if err != nil {
				t.Fatalf("ReadCurveCSV: %v", err)
			}
			if len(episodes) != len(tc.episodes) {
				t.Fatalf("read %d episodes, want %d", len(episodes), len(tc.episodes))
			}
			for i := range episodes {
				if episodes[i] != tc.episodes[i] {
					t.Errorf("episode[%d] = %d, want %d", i, episodes[i], tc.episodes[i])
				}
			}
			want := map[string][]float64{"mean": band.Mean, "ci95_lo": band.Lo, "ci95_hi": band.Hi}
			if band.N == 1 { // one run: no CI columns
				delete(want, "ci95_lo")
				delete(want, "ci95_hi")
			}
			if len(cols) != len(tc.names)+len(want) {
				t.Errorf("read columns %v, want %d", keys(cols), len(tc.names)+len(want))
			}
			for i, name := range tc.names {
				want[name] = tc.runs[i]
			}
			for name, w := range want {
				got, ok := cols[name]
				if !ok {
					t.Errorf("column %q missing", name)
					continue
				}
				if len(got) != len(w) {
					t.Errorf("column %q has %d values, want %d", name, len(got), len(w))
					continue
				}
				for i := range got {
					if math.Float64bits(got[i]) != math.Float64bits(w[i]) && !(math.IsNaN(got[i]) && math.IsNaN(w[i])) {
						t.Errorf("%s[%d] = %v, want exactly %v", name, i, got[i], w[i])
					}
				}
			}
		})
	}
}

func TestWriteCurveCSVFormat(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.csv")
	band := Band{Mean: []float64{0.5, 2}, Lo: []float64{-1, 1.25}, Hi: []float64{2, 2.75}, N: 2}
	err := WriteCurveCSV(path, []int{1, 2}, [][]float64{{0, 1.5}, {1, 2.5}}, []string{"s0", "s1"}, band)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := "episode,s0,s1,mean,ci95_lo,ci95_hi\n1,0,1,0.5,-1,2\n2,1.5,2.5,2,1.25,2.75\n"
	if string(got) != want {
		t.Errorf("file =\n%s\nwant\n%s", got, want)
	}
}

func TestWriteCurveCSVErrors(t *testing.T) {
	okBand := Band{Mean: []float64{1, 2}, Lo: []float64{1, 2}, Hi: []float64{1, 2}}
	tests := []struct {
		name     string
		episodes []int
		runs     [][]float64
		names    []string
		band     Band
		errSub   string
	}{
		{"names vs runs", []int{1, 2}, [][]float64{{1, 2}}, []string{"a", "b"}, okBand, "2 run names for 1 runs"},
		{"short run", []int{1, 2}, [][]float64{{1, 2}, {1}}, []string{"a", "b"}, okBand, `run "b" has 1 values`},
		{"short band mean", []int{1, 2}, [][]float64{{1, 2}}, []string{"a"}, Band{Mean: []float64{1}, Lo: okBand.Lo, Hi: okBand.Hi}, "band mean"},
		{"missing band lo", []int{1, 2}, [][]float64{{1, 2}}, []string{"a"}, Band{Mean: okBand.Mean, Hi: okBand.Hi}, "band lo"},
		{"long band hi", []int{1, 2}, [][]float64{{1, 2}}, []string{"a"}, Band{Mean: okBand.Mean, Lo: okBand.Lo, Hi: []float64{1, 2, 3}}, "band hi"},
		{"duplicate names", []int{1, 2}, [][]float64{{1, 2}, {1, 2}}, []string{"a", "a"}, okBand, "duplicate"},
		{"reserved name", []int{1, 2}, [][]float64{{1, 2}}, []string{"mean"}, okBand, "reserved"},
		{"empty name", []int{1, 2}, [][]float64{{1, 2}}, []string{""}, okBand, "empty run name"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "c.csv")
			if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
				t.Fatal(err)
			}
			err := WriteCurveCSV(path, tc.episodes, tc.runs, tc.names, tc.band)
			if err == nil || !strings.Contains(err.Error(), tc.errSub) {
				t.Fatalf("error = %v, want one containing %q", err, tc.errSub)
			}
			if got, _ := os.ReadFile(path); string(got) != "old" {
				t.Errorf("existing file changed to %q", got)
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 1 {
				t.Errorf("directory holds %d entries, want 1", len(entries))
			}
		})
	}
	if err := WriteCurveCSV(filepath.Join(t.TempDir(), "missing", "c.csv"), []int{1, 2}, [][]float64{{1, 2}}, []string{"a"}, okBand); err == nil {
		t.Error("writing into a missing directory succeeded")
	}
}

func TestReadCurveCSVErrors(t *testing.T) {
	tests := []struct {
		name    string
		content string
		errSub  string
	}{
		{"empty file", "", "empty file"},
		{"wrong first column", "step,a\n1,2\n", `first column is "step"`},
		{"bad episode", "episode,a\nx,2\n", "line 2: episode"},
		{"bad value", "episode,a,b\n1,2,zz\n", `line 2: column "b"`},
		{"ragged row", "episode,a\n1,2,3\n", "wrong number of fields"},
		{"duplicate column", "episode,a,a\n1,2,3\n", `duplicate column "a"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "c.csv")
			if err := os.WriteFile(path, []byte(tc.content), 0o644); err != nil {
				t.Fatal(err)
			}
			_, _, err := ReadCurveCSV(path)
			if err == nil || !strings.Contains(err.Error(), tc.errSub) {
				t.Fatalf("error = %v, want one containing %q", err, tc.errSub)
			}
		})
	}
	if _, _, err := ReadCurveCSV(filepath.Join(t.TempDir(), "nope.csv")); err == nil {
		t.Error("reading a missing file succeeded")
	}
}

func keys(m map[string][]float64) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}

// largeCurve returns a regret-like curve of the given size for benchmarks.
func largeCurve(tb testing.TB, episodes, runs int) ([]int, [][]float64, []string, Band) {
	tb.Helper()
	eps := make([]int, episodes)
	for i := range eps {
		eps[i] = i + 1
	}
	rs := make([][]float64, runs)
	names := make([]string, runs)
	for s := range rs {
		names[s] = "seed_" + string(rune('a'+s))
		rs[s] = make([]float64, episodes)
		for i := range rs[s] {
			rs[s][i] = math.Sqrt(float64(i+1)) * (1 + 0.01*float64(s)) / 3
		}
	}
	band, err := MeanBand(rs, 0.95)
	if err != nil {
		tb.Fatal(err)
	}
	return eps, rs, names, band
}

// BenchmarkWriteCurveCSV writes 50,000 episodes × 10 columns (episode,
// 6 runs, mean and the two interval bounds).
func BenchmarkWriteCurveCSV(b *testing.B) {
	eps, runs, names, band := largeCurve(b, 50000, 6)
	path := filepath.Join(b.TempDir(), "big.csv")
	b.ResetTimer()
	for b.Loop() {
		if err := WriteCurveCSV(path, eps, runs, names, band); err != nil {
			b.Fatal(err)
		}
	}
}

// TestWriteCurveCSVNegativeZero: −0 is written as "-0" and reads back with its sign bit set, in
// run columns and band columns alike. (The literal -0.0 is +0 in Go: the constant is folded
// before conversion, so the value must come from math.Copysign.)
func TestWriteCurveCSVNegativeZero(t *testing.T) {
	negZero := math.Copysign(0, -1)
	if !math.Signbit(negZero) {
		t.Fatal("math.Copysign(0, -1) is not −0")
	}
	path := filepath.Join(t.TempDir(), "z.csv")
	band := Band{Mean: []float64{negZero}, Lo: []float64{negZero}, Hi: []float64{0}, N: 2}
	if err := WriteCurveCSV(path, []int{1}, [][]float64{{negZero}, {0}}, []string{"a", "b"}, band); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if want := "episode,a,b,mean,ci95_lo,ci95_hi\n1,-0,0,-0,-0,0\n"; string(data) != want {
		t.Errorf("file %q, want %q", data, want)
	}
	_, cols, err := ReadCurveCSV(path)
	if err != nil {
		t.Fatal(err)
	}
	for name, neg := range map[string]bool{"a": true, "b": false, "mean": true, "ci95_lo": true, "ci95_hi": false} {
		if got := cols[name][0]; got != 0 || math.Signbit(got) != neg {
			t.Errorf("%s = %v (sign bit %v), want zero with sign bit %v", name, got, math.Signbit(got), neg)
		}
	}
}

// TestWriteCurveCSVOneRun: a single run has no confidence interval, so its file has no CI
// columns.
func TestWriteCurveCSVOneRun(t *testing.T) {
	b, err := MeanBand([][]float64{{1, 3}}, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "one.csv")
	if err := WriteCurveCSV(path, []int{1, 2}, [][]float64{{1, 3}}, []string{"seed_1"}, b); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	if want := "episode,seed_1,mean\n1,1,1\n2,3,3\n"; string(data) != want {
		t.Errorf("file %q, want %q", data, want)
	}
}
