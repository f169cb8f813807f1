package tabular

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/dprl/dprl/agents/internal/agenttest"
)

// TestKeptCountCalibrated: on rows of S = 500 noisy coordinates (σ_t = 1, τ = 2) the kept
// count n̂ of keptCount is unbiased on a row of pure noise, low by τσ_t + σ_t·g on a row with
// one next state seen c = 50 times, and its variance is below the v it states (the mean of
// n_e's v over the rows); the sum's variance S·σ_t² is ≥ 30 times v. With exact counts
// (σ_t = 0) n_e is the count.
func TestKeptCountCalibrated(t *testing.T) {
	const S, tau, rows = 500, 2.0, 4000
	g, h := thresholdMoments(tau)
	if math.Abs(g-0.008490) > 1e-5 || math.Abs(h-0.005695) > 1e-5 {
		t.Fatalf("thresholdMoments(2) = (%g, %g), want (0.008490, 0.005695)", g, h)
	}
	r := rand.New(rand.NewPCG(26, 2))
	row := make([]float64, S)
	for _, c := range []float64{0, 50} {
		t.Run(fmt.Sprintf("c=%g", c), func(t *testing.T) {
			var sum, sq, vsum float64
			for range rows {
				for j := range row {
					row[j] = r.NormFloat64()
				}
				row[7] += c
				n, _, e := keptCount(row, tau, 1, g, h, math.Inf(1))
				sum += n
				sq += n * n
				if n > 0 { // n_e = n²/(n + v): recover v
					vsum += n*n/e - n
				} else {
					vsum += (float64(agenttest.CountAbove(row, tau)) + S*h)
				}
			}
			mean := sum / rows
			vr := sq/rows - mean*mean
			want := 0.0
			if c > 0 {
				want = c - tau - g // the seen state keeps c − τσ_t; its noise part is not removed
			}
			if se := math.Sqrt(vr / rows); math.Abs(mean-want) > 4*se {
				t.Errorf("mean n̂ = %.3f ± %.3f, want %.3f", mean, se, want)
			}
			if v := vsum / rows; !(vr <= v) || S/v < 30 {
				t.Errorf("Var n̂ = %.2f, stated v = %.2f (want Var ≤ v ≤ S/30 = %.1f)", vr, v, S/30.0)
			}
		})
	}
	// An identified next state (above sure): n̂ is its value, unbiased, and v = σ_t².
	sure := sureThreshold(S * 3000)
	var sum, sq float64
	for range rows {
		for j := range row {
			row[j] = r.NormFloat64()
		}
		row[7] += 50
		n, _, e := keptCount(row, keptThreshold(tau, S), 1, g, h, sure)
		if v := n*n/e - n; math.Abs(v-1) > 1e-9 {
			t.Fatalf("identified: v = %g, want σ_t² = 1", v)
		}
		sum += n
		sq += n * n
	}
	if mean, vr := sum/rows, sq/rows-(sum/rows)*(sum/rows); math.Abs(mean-50) > 4*math.Sqrt(vr/rows) || math.Abs(vr-1) > 0.15 {
		t.Errorf("identified: n̂ = %.3f with variance %.3f, want 50 and 1", mean, vr)
	}
	exact := []float64{0, 30, 0, 10}
	if n, pos, e := keptCount(exact, 0, 0, g, h, 0); n != 40 || pos != 40 || e != 40 {
		t.Errorf("exact counts: (n̂, pos, n_e) = (%g, %g, %g), want 40 each", n, pos, e)
	}
}

// TestCountRule: the kept count is the rule exactly when the support is private and S ≥ 32
// (so every pinned reproduction with a private support, S ≤ 10, and every model with a public
// support keeps the sum), whatever the rule, bonus.count overrides it, and the
// planner takes it from its configuration and the public S and support.
func TestCountRule(t *testing.T) {
	for _, tc := range []struct {
		count  string
		S      int
		public bool
		want   bool
	}{
		{"", 6, false, false}, {"", 10, false, false}, {"", 31, false, false}, {"", 32, false, true}, {"", 48, false, true},
		{"", 500, false, true}, {"", 500, true, false}, {"sum", 500, false, false}, {"kept", 6, false, true},
		{"kept", 500, true, true},
	} {
		if got := countRule(tc.count, tc.S, tc.public); got != tc.want {
			t.Errorf("countRule(%q, S=%d, public=%v) = %v, want %v", tc.count, tc.S, tc.public, got, tc.want)
		}
	}
	b := PracticalNoiseBonus()
	for _, S := range []int{10, 48} {
		if u := newNoiseUCB(S, 2, 3, true, terminal{}, nil, nil, b, rand.New(rand.NewPCG(1, 1))); u.kept != (S > 10) {
			t.Errorf("planner of S = %d: kept = %v", S, u.kept)
		}
	}
	b.Count = "nope"
	if _, err := b.resolve(500, 6, 10, 100, PracticalPrivacy{Pool: true}, 0.1); err == nil {
		t.Error("bonus.count \"nope\" accepted")
	}
}

func TestKeptThresholdValue(t *testing.T) {
	for _, tc := range []struct {
		S    int
		want float64
	}{{6, 2}, {43, 2}, {500, 2.8782}, {100, 2.3263}} {
		if got := keptThreshold(2, tc.S); math.Abs(got-tc.want) > 1e-4 {
			t.Errorf("keptThreshold(2, %d) = %g, want %g", tc.S, got, tc.want)
		}
	}
}
