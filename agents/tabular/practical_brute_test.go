package tabular

import (
	"fmt"
	"math"
	"testing"

	"github.com/dprl/dprl/agents/internal/agenttest"
	model "github.com/dprl/dprl/model/tabular"
	"github.com/dprl/dprl/privacy/accounting"
	"github.com/dprl/dprl/privacy/noise"
)

// Brute-force checks of the practical agents' ℓ2 sensitivity (issue 18 (b)) and of the Secure
// grid and slack on their release and report paths (issue 18 (c)).

// TestMaxSumSquaresBrute: maxSumSquares(H, m, n) = max{Σ c_i² : c_i ∈ {0..m}, Σ c_i ≤ H, at
// most n cells} by enumeration of every count vector, for H ≤ 8, every cap m ≤ H and n ≤ 5 —
// including m = 1, m = H, n = 1 and m ∤ H, where the remainder cell matters.
func TestMaxSumSquaresBrute(t *testing.T) {
	for H := 1; H <= 8; H++ {
		for m := 1; m <= H; m++ {
			for n := 1; n <= 5; n++ {
				best := 0
				c := make([]int, n)
				var rec func(i, left, sq int)
				rec = func(i, left, sq int) {
					if i == n {
						best = max(best, sq)
						return
					}
					for v := 0; v <= min(m, left); v++ {
						c[i] = v
						rec(i+1, left-v, sq+v*v)
					}
				}
				rec(0, H, 0)
				if got := maxSumSquares(H, m, n); got != float64(best) {
					t.Errorf("maxSumSquares(H=%d, m=%d, n=%d) = %v, brute force %d", H, m, n, got, best)
				}
			}
		}
	}
}

// bruteSensitivity encodes every trajectory of an (S, A, H) MDP whose rewards are drawn from
// rewards with enc and returns the largest distance between two of the contributions (the
// brute-force replace-one sensitivity) and the number of trajectories.
func bruteSensitivity(t *testing.T, enc *contribution, S, A, H int, rewards []float64) (float64, int) {
	t.Helper()
	var xs [][]float64
	allTrajectories(S, A, H, rewards, func(tr *model.Trajectory) {
		x := make([]float64, enc.dim())
		if err := enc.add(tr, x); err != nil {
			t.Fatal(err)
		}
		xs = append(xs, x)
	})
	return agenttest.MaxPairDistance(xs, nil), len(xs)
}

// allTrajectories calls f with every trajectory of an (S, A, H) MDP whose rewards are drawn
// from rewards (states, actions and rewards enumerated in mixed radix).
func allTrajectories(S, A, H int, rewards []float64, f func(*model.Trajectory)) {
	tr := model.NewTrajectory(H)
	digits := make([]int, 3*H+1) // S[0..H], A[0..H−1], R[0..H−1]
	radix := func(i int) int {
		switch {
		case i <= H:
			return S
		case i <= 2*H:
			return A
		}
		return len(rewards)
	}
	for {
		for h := 0; h <= H; h++ {
			tr.S[h] = digits[h]
		}
		for h := 0; h < H; h++ {
			tr.A[h] = digits[H+1+h]
			tr.R[h] = rewards[digits[2*H+1+h]]
		}
		f(tr)
		i := 0
		for ; i < len(digits); i++ {
			digits[i]++
			if digits[i] < radix(i) {
				break
			}
			digits[i] = 0
		}
		if i == len(digits) {
			return
		}
	}
}

// TestPracticalSensitivityBrute enumerates EVERY episode of small MDPs — every state sequence,
// action sequence and reward pattern (rewards {0, 1}, the extremes of the clipped range, plus
// hostile values outside [0, 1] on the smallest shapes) — encodes each with the agents' own
// boundary (contribution.add) and computes the worst replace-one distance max ‖x − x′‖₂ over
// all pairs. PracticalSensitivity must be ≥ it on every shape, including the awkward ones
// (H = 1, S = 1, A = 1, cap 1, cap = H, cap > H, reward weights 1 and 0.5, pooled and
// step-dependent), and equal to it where the doc claims attainment (two episodes with
// disjoint cells: pooled with S ≥ 2 and enough actions for one user's cells in one state,
// step-dependent with S·A ≥ 2). A formula missing the remainder cell, the reward block, a
// step, or the factor 2 of replace-one fails here.
func TestPracticalSensitivityBrute(t *testing.T) {
	type shape struct {
		S, A, H int
		rewards []float64
	}
	shapes := []shape{
		{1, 1, 1, []float64{-2, 0, 0.5, 1, 3}}, {2, 1, 1, []float64{-1, 0, 1, 7}}, {1, 2, 1, []float64{0, 1}},
		{1, 1, 4, []float64{0, 1}}, {2, 1, 3, []float64{0, 1}}, {1, 2, 3, []float64{-1, 0, 1, 2}}, {2, 2, 2, []float64{0, 1}},
		{2, 2, 3, []float64{0, 1}}, {3, 1, 3, []float64{0, 1}}, {1, 3, 3, []float64{0, 1}}, {3, 2, 2, []float64{0, 1}},
		{2, 3, 2, []float64{0, 1}}, {2, 2, 4, []float64{0, 1}},
	}
	for _, sh := range shapes {
		for _, pool := range []bool{true, false} {
			if !pool && sh.H > 3 {
				continue // step-dependent dimension grows with H; H ≤ 3 covers it
			}
			caps := []int{0}
			if pool {
				caps = []int{0, 1, 2, sh.H, sh.H + 3}
			}
			for _, vc := range caps {
				for _, w := range []float64{0, 0.5} {
					p := PracticalPrivacy{Model: JDP, Epsilon: 1, Delta: 1e-5, Pool: pool, VisitCap: vc, BatchEvery: 1, RewardWeight: w}
					enc := newContribution(sh.S, sh.A, sh.H, p, nil)
					brute, n := bruteSensitivity(t, enc, sh.S, sh.A, sh.H, sh.rewards)
					delta := PracticalSensitivity(sh.S, sh.A, sh.H, p)
					name := fmt.Sprintf("S=%d A=%d H=%d pool=%v cap=%d w=%v", sh.S, sh.A, sh.H, pool, vc, p.rewardWeight())
					if brute > delta*(1+1e-12) {
						t.Errorf("%s: worst replace-one distance %v over all %d episodes exceeds Δ₂ = %v", name, brute, n, delta)
					}
					m := p.capOf(sh.H)
					cells := sh.H/m + min(sh.H%m, 1) // cells of one user's worst episode
					attainable := !pool && sh.S*sh.A >= 2 || pool && sh.S >= 2 && sh.A >= cells
					if attainable && brute < delta*(1-1e-12) {
						t.Errorf("%s: Δ₂ = %v is not attained (brute force %v) although two episodes with disjoint cells exist", name, delta, brute)
					}
				}
			}
		}
	}
}

// TestPracticalSecureSlack (issue 18 (c)): with the Secure source the practical agents'
// accountant includes the grid rounding of every released coordinate: the report's
// ledger entry's rounded sensitivity is at least Δ₂ + √dim·γ(σ) with γ the grid of the σ actually used
// (recomputed here from the noise package), the μ it states is that sensitivity times the
// counter's factor over σ (not Δ₂'s), and σ is calibrated so that this μ meets μ(ε, δ). On
// the LDP report path every entry the user sends is on the grid γ(σ): the statistic is rounded
// before the noise is added (a report x + grid noise would carry x's low bits).
func TestPracticalSecureSlack(t *testing.T) {
	const S, A, H, K = 6, 2, 20, 400
	want, err := accounting.GDPFor(accounting.ApproxDP{Epsilon: 1, Delta: 1e-5})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"practical-jdp", "practical-ldp", "practical-psrl-jdp"} {
		for _, counterName := range []string{"", "tree", "sqrt"} {
			cfg, err := DefaultPracticalConfig(name, 1, 1e-5)
			if err != nil {
				t.Fatal(err)
			}
			if counterName != "" {
				if cfg.Privacy.Model != JDP {
					continue
				}
				cfg.Privacy.Counter = counterName
			}
			st := practicalStreams(1)
			st.Noise = noise.NewSecureFromKey([32]byte{18, byte(len(name)), byte(len(counterName))})
			ag, err := NewPractical(S, A, H, K, cfg, st)
			if err != nil {
				t.Fatal(err)
			}
			r := ag.Privacy
			e := r.Entries[0]
			g := noise.GaussianGranularity(e.Sigma)
			if !r.Secure || !e.Secure || e.RoundedSensitivity < e.Sensitivity+math.Sqrt(float64(e.Dim))*g {
				t.Errorf("%s/%s: Secure Δ₂ = %v, want ≥ Δ₂ + √dim·γ = %v + √%d·%g", name, counterName, e.RoundedSensitivity, e.Sensitivity, e.Dim, g)
			}
			if got := e.RoundedSensitivity * e.Factor / e.Sigma; r.Mu < got*(1-1e-12) {
				t.Errorf("%s/%s: report μ = %v, but the rounded statistic's sensitivity gives %v", name, counterName, r.Mu, got)
			}
			if r.Mu > want.Mu*(1+1e-12) || !r.PrivateAtNominal {
				t.Errorf("%s/%s: μ = %v above μ(1, 1e-5) = %v (private %v)", name, counterName, r.Mu, want.Mu, r.PrivateAtNominal)
			}
			if name != "practical-ldp" {
				continue
			}
			tr := model.NewTrajectory(H)
			for h := 0; h < H; h++ {
				tr.S[h], tr.A[h], tr.R[h] = h%S, h%A, 0.3 // w·R = 0.15: off every grid
			}
			msg, err := ag.Client.Encode(tr)
			if err != nil {
				t.Fatal(err)
			}
			for i, v := range msg.(*GaussianReport).Values() {
				if q := v / g; q != math.Trunc(q) {
					t.Fatalf("LDP report entry %d = %v is off the grid γ(σ) = %g: the statistic was not rounded before the noise", i, v, g)
				}
			}
		}
	}
}
