package linmix

import (
	"math"
	"strings"
	"testing"

	"github.com/dprl/dprl/agents/internal/agenttest"
	"github.com/dprl/dprl/privacy/accounting"
	"github.com/dprl/dprl/privacy/noise"
	"github.com/dprl/dprl/rng"
)

// Brute-force checks of the practical linear-mixture agents' ℓ2 sensitivity (issue 18 (b)),
// of the H − 1 leaves per user its proof counts, and of the Secure grid and slack on the LDP
// report path (issue 18 (c)).

// TestPracticalSensitivityBrute enumerates every user over a grid of leaves — regressors
// X ∈ {0, ±B·e₁, ±B·e₂, B(e₁ ± e₂)/√2, B/2·e₂, B/4·e₁, −0.4B·e₂, 3B·e₁ (projected), (NaN, 1)
// (zeroed)} and targets y ∈ {−½, 0, ½, 2 (clipped), NaN (zeroed)}, one leaf per informative
// step (H − 1 of them; a coarser grid at H = 4) — encodes each with the agents' own guard and
// trace cap and
// computes the worst replace-one distance over all pairs, in the counter's weighted norm.
// PracticalSensitivity must be ≥ it for H = 2 (one leaf), 3 and 4, clipping radii 1 and 0.6
// and budgets 1, 0.5 and 0.2 (where the trace cap binds). A Δ₂ that drops the factor 2 of
// the Gram part, counts H − 2 steps, or forgets the target part fails.
func TestPracticalSensitivityBrute(t *testing.T) {
	const d = 2
	s2 := 1 / math.Sqrt2
	for _, H := range []int{2, 3, 4} {
		for _, B := range []float64{1, 0.6} {
			xs := [][]float64{{0, 0}, {B, 0}, {-B, 0}, {0, B}, {0, -B}, {B * s2, B * s2}, {B * s2, -B * s2}, {0, B / 2}, {B / 4, 0}, {0, -0.4 * B}, {3 * B, 0}, {math.NaN(), 1}}
			ys := []float64{-0.5, 0, 0.5, 2, math.NaN()}
			if H == 4 {
				xs = [][]float64{{0, 0}, {B, 0}, {-B, 0}, {0, B}, {B * s2, B * s2}, {B / 3, 0}}
				ys = []float64{-0.5, 0.5}
			}
			for _, budget := range []float64{1, 0.5, 0.2} {
				T := budget * float64(H-1) * B * B
				enc := practicalEncoder{d: d, B: B, T: T, leaves: H - 1}
				choices := len(xs) * len(ys)
				idx := make([]int, H-1)
				var users [][]float64
				for {
					lv := newPracticalLeaves(H, d)
					for h, i := range idx {
						copy(lv.x[h], xs[i/len(ys)])
						lv.y[h] = ys[i%len(ys)]
					}
					x := make([]float64, enc.dim())
					enc.add(lv, x)
					users = append(users, x)
					h := 0
					for ; h < len(idx); h++ {
						idx[h]++
						if idx[h] < choices {
							break
						}
						idx[h] = 0
					}
					if h == len(idx) {
						break
					}
				}
				brute := agenttest.MaxPairDistance(users, practicalScales(d))
				delta := PracticalSensitivity(H, B, budget)
				if brute > delta*(1+1e-12) {
					t.Errorf("H=%d B=%v budget=%v: worst replace-one distance %v over %d users exceeds Δ₂ = %v", H, B, budget, brute, len(users), delta)
				}
				if !(brute > 0) {
					t.Errorf("H=%d B=%v budget=%v: brute force found no two different users", H, B, budget)
				}
			}
		}
	}
}

// TestPracticalLeavesPerUser: PracticalSensitivity counts n = H − 1 leaves per user (‖u‖ ≤
// ½·Σ‖X_h‖ ≤ ½√(n·T) needs at most n of them), so the agent enforces it itself, not only its
// trusted runner: the JDP curator rejects a user with H leaves (error naming the leaves), and
// the LDP randomiser encodes only the first H − 1 (its report equals, draw for draw, the
// report of the first H − 1 leaves alone). Many small leaves would otherwise carry a target
// sum of norm ½√(k·T) for k leaves.
func TestPracticalLeavesPerUser(t *testing.T) {
	m := practicalEnv(t)
	H, d := m.Horizon(), m.Dim()
	extra := func(n int) *PracticalLeaves {
		lv := &PracticalLeaves{x: make([][]float64, n), y: make([]float64, n)}
		for h := range lv.x {
			lv.x[h] = make([]float64, d)
			lv.x[h][1+h%(d-1)] = 0.05
			lv.y[h] = 0.5
		}
		return lv
	}
	cfg := PracticalConfig{Episodes: 20, Privacy: PracticalPrivacy{Mode: JDP, Epsilon: 1}}
	a, err := NewPracticalSeeded(m, cfg, rng.NewSeed(1))
	if err != nil {
		t.Fatal(err)
	}
	if err := a.cur.Ingest(extra(H - 1)); err != nil {
		t.Fatalf("H − 1 leaves rejected: %v", err)
	}
	if err := a.cur.Ingest(extra(H)); err == nil || !strings.Contains(err.Error(), "leaves") {
		t.Fatalf("a user with H = %d leaves: err = %v, want a rejection naming the leaves", H, err)
	}
	if err := a.cur.Ingest(extra(10 * H)); err == nil {
		t.Fatalf("a user with %d leaves accepted", 10*H)
	}
	cfg.Privacy.Mode = LDP
	var rep [2][]float64
	for i, n := range []int{H - 1, 10 * H} {
		a, err := NewPracticalSeeded(m, cfg, rng.NewSeed(2))
		if err != nil {
			t.Fatal(err)
		}
		lv := extra(n)
		if n > H-1 {
			for h := H - 1; h < n; h++ { // the extra leaves would dominate the report
				lv.x[h][1] = 1e3
			}
		}
		rep[i] = a.rnd.Privatize(lv).Values()
	}
	for k := range rep[0] {
		if rep[0][k] != rep[1][k] {
			t.Fatalf("LDP report coordinate %d: %v with H − 1 leaves, %v with extra leaves: the randomiser encoded more than H − 1 leaves", k, rep[0][k], rep[1][k])
		}
	}
}

// TestPracticalSecureGridSlack (issue 18 (c)): with the Secure source the accountant adds the
// rounding of every coordinate to the grid γ of the smallest per-coordinate std, σ/√2 (the
// Gram off-diagonals), in the counter's weighted norm: rounded sensitivity ≥ Δ₂ + γ·√(Σ_k 1/c_k²)
// (recomputed here from the scales), μ = rounded sensitivity·factor/σ ≤ μ(ε, δ), JDP and LDP.
// On the LDP report path, with the same key, report(leaves) − report(zero leaves) is the
// user's contribution rounded to that grid (error ≤ γ/2 per coordinate) and every entry of
// the report is on the grid: a randomiser that does not round, or rounds to the coarser grid
// of σ, fails.
func TestPracticalSecureGridSlack(t *testing.T) {
	m := practicalEnv(t)
	H, d := m.Horizon(), m.Dim()
	want, err := accounting.GDPFor(accounting.ApproxDP{Epsilon: 1, Delta: 1e-5})
	if err != nil {
		t.Fatal(err)
	}
	sc := practicalScales(d)
	w := 0.0
	for _, c := range sc {
		w += 1 / (c * c)
	}
	key := [32]byte{18, 3}
	for _, mode := range []Mode{JDP, LDP} {
		cfg := PracticalConfig{Episodes: 30, Privacy: PracticalPrivacy{Mode: mode, Epsilon: 1}}
		a, err := buildPractical(m, cfg, rng.NewSeed(1), noise.NewSecureFromKey(key))
		if err != nil {
			t.Fatal(err)
		}
		g := a.Guarantee()
		e := g.Entries[0]
		gamma := noise.GaussianGranularity(e.Sigma / math.Sqrt2)
		if !g.Secure || e.RoundedSensitivity < e.Sensitivity+gamma*math.Sqrt(w) {
			t.Errorf("%s: Secure Δ₂ = %v, want ≥ Δ₂ + γ·√(Σ 1/c²) = %v + %g·%v", mode, e.RoundedSensitivity, e.Sensitivity, gamma, math.Sqrt(w))
		}
		if mu := e.RoundedSensitivity * e.Factor / e.Sigma; g.Mu < mu*(1-1e-12) || mu > want.Mu*(1+1e-12) || !g.PrivateAtNominal {
			t.Errorf("%s: μ = %v (rounded sensitivity gives %v), target %v", mode, g.Mu, mu, want.Mu)
		}
		if mode != LDP {
			continue
		}
		lv := newPracticalLeaves(H, d)
		for h := range lv.x {
			for j := range lv.x[h] {
				lv.x[h][j] = 0.0731 * float64((h*d+j)%7-3) / float64(d)
			}
			lv.y[h] = 0.1234 * float64(h%3-1)
		}
		b, err := buildPractical(m, cfg, rng.NewSeed(1), noise.NewSecureFromKey(key))
		if err != nil {
			t.Fatal(err)
		}
		rx := a.rnd.Privatize(lv).Values()
		r0 := b.rnd.Privatize(newPracticalLeaves(H, d)).Values()
		x := make([]float64, a.rnd.enc.dim())
		a.rnd.enc.add(lv, x)
		for k := range x {
			if q := rx[k] / gamma; q != math.Trunc(q) {
				t.Fatalf("LDP report entry %d = %v is off the grid γ(σ/√2) = %g", k, rx[k], gamma)
			}
			if r := rx[k] - r0[k]; math.Abs(r-x[k]) > gamma/2 || r/gamma != math.Trunc(r/gamma) {
				t.Fatalf("LDP report coordinate %d: the statistic %v entered as %v, want its rounding to the grid γ = %g (error ≤ γ/2)", k, x[k], r, gamma)
			}
		}
	}
}
