package linmix

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	model "github.com/dprl/dprl/model/linmix"
	"github.com/dprl/dprl/privacy/accounting"
	"github.com/dprl/dprl/privacy/noise"
	"github.com/dprl/dprl/rng"
)

// TestLDPReportNoiseMatchesCalibration: the noise an LDP user adds to every entry of her
// report (packed X Xᵀ and X y, Luyo Alg. 1 msg_h) has exactly the variance of the calibration
// fixed in the specs — σ² (Gaussian modes) or 2b² (Laplace) — so the accountant's guarantee is
// the one the reports get. With all-zero leaves each entry is pure noise; the mean square of N
// i.i.d. draws has relative standard deviation √(2/N) (Gaussian) or √(5/N) (Laplace, E Y⁴ =
// 24b⁴), and the tolerance is 6 of them. A randomiser that adds less noise than calibrated
// (e.g. half the scale: mean square ×1/4) fails.
func TestLDPReportNoiseMatchesCalibration(t *testing.T) {
	m := envA(t)
	for _, cal := range []Calibration{ZCDP, Paper, Laplace} {
		t.Run(string(cal), func(t *testing.T) {
			cfg := Config{Algorithm: UCRLVTR, Mode: LDP, Calibration: cal, Episodes: 10, Epsilon: 1, Delta: 1e-5}
			a, err := NewSeeded(m, cfg, rng.NewSeed(21))
			if err != nil {
				t.Fatal(err)
			}
			z := &Randomizer{specs: a.specs, src: noise.NewSeeded(rand.New(rand.NewPCG(21, 22)))}
			lv := newLeaves(m.Horizon(), a.specs)
			const reports = 1500
			nr := len(a.specs)
			sumMat, sumVec := make([]float64, nr), make([]float64, nr)
			nMat, nVec := make([]int, nr), make([]int, nr)
			for range reports {
				rep := z.Privatize(lv)
				for i := range rep.mat {
					r := i % nr
					for _, v := range rep.mat[i] {
						sumMat[r] += v * v
						nMat[r]++
					}
					for _, v := range rep.vec[i] {
						sumVec[r] += v * v
						nVec[r]++
					}
				}
			}
			rel := math.Sqrt2
			if cal == Laplace {
				rel = math.Sqrt(5)
			}
			for r, sp := range a.specs {
				for _, c := range []struct {
					what string
					cal  noise.Calibration
					sum  float64
					n    int
				}{{"matrix", sp.mat, sumMat[r], nMat[r]}, {"vector", sp.vec, sumVec[r], nVec[r]}} {
					want := c.cal.Variance()
					if !(want > 0) {
						t.Fatalf("regression %d %s: calibration %s adds no noise", r, c.what, c.cal)
					}
					got := c.sum / float64(c.n)
					tol := 6 * rel / math.Sqrt(float64(c.n))
					if math.Abs(got/want-1) > tol {
						t.Errorf("regression %d %s entries: noise mean square %.6g, calibration %s has variance %.6g (ratio %.4f, tolerance ±%.4f over %d draws)",
							r, c.what, got, c.cal, want, got/want, tol, c.n)
					}
				}
			}
		})
	}
}

// TestLDPNoiseNotReproducibleFromSeed: in deployment (New) each user's randomiser must draw
// from a secret stream: nothing the server holds — in particular the public run seed, from
// which the server's own streams are derived — may determine the LDP noise. Two agents built
// from the same seed must therefore send different reports for the same leaves (equal reports
// have probability 0 for continuous or fine-grid noise), and neither may equal the report of
// the seeded (simulation) agent with that seed.
func TestLDPNoiseNotReproducibleFromSeed(t *testing.T) {
	m := envA(t)
	cfg := Config{Algorithm: UCRLVTR, Mode: LDP, Calibration: ZCDP, Episodes: 10, Epsilon: 1, Delta: 1e-5}
	report := func(a *Agent) []float64 {
		return a.rnd.Privatize(newLeaves(m.Horizon(), a.specs)).Values()
	}
	var reps [][]float64
	for _, build := range []func(*model.MDP, Config, rng.Seed) (*Agent, error){New, New, NewSeeded} {
		a, err := build(m, cfg, rng.NewSeed(7))
		if err != nil {
			t.Fatal(err)
		}
		reps = append(reps, report(a))
	}
	same := func(x, y []float64) bool {
		for i := range x {
			if x[i] != y[i] {
				return false
			}
		}
		return len(x) == len(y)
	}
	if same(reps[0], reps[1]) {
		t.Error("two deployed agents with the same seed sent identical LDP reports: the users' noise is a function of the public seed")
	}
	if same(reps[0], reps[2]) || same(reps[1], reps[2]) {
		t.Error("a deployed agent's LDP report equals the seeded agent's: the users' noise is derived from the run seed")
	}
}

// TestCentralReleaseNoiseMatchesCalibration: the statistics the JDP curator releases after
// the first user (Luyo Alg. 1 / Zhou, tree prefix of length 1) are her exact Σ X Xᵀ and Σ X y
// plus one tree node of Gaussian noise per entry, with the standard deviation of the
// calibration in the specs (times the symmetric-noise multiplier of the entry). Over many
// independently seeded agents the standardised residuals must have mean square 1 within 6
// standard errors (√(2/N)). A release of the raw statistics (residual 0) or with less noise
// than calibrated fails.
func TestCentralReleaseNoiseMatchesCalibration(t *testing.T) {
	m := envA(t)
	for _, c := range []struct {
		alg Algorithm
		cal Calibration
	}{{UCRLVTR, ZCDP}, {UCRLVTR, Paper}, {UCRLVTRPlus, Paper}, {LinOptVI, Paper}} {
		t.Run(fmt.Sprint(c.alg, "/", c.cal), func(t *testing.T) {
			var sum float64
			n := 0
			for i := range 60 {
				cfg := Config{Algorithm: c.alg, Mode: JDP, Calibration: c.cal, Episodes: 16, Epsilon: 1, Delta: 1e-5}
				a, err := NewSeeded(m, cfg, rng.NewSeed(uint64(300+i)))
				if err != nil {
					t.Fatal(err)
				}
				cur := a.cur
				lv := newLeaves(m.Horizon(), cur.specs)
				for h := range lv.x {
					for r := range lv.x[h] {
						lv.x[h][r][0] = 0.3
						lv.y[h][r] = 0.7
					}
				}
				if err := cur.observe(lv); err != nil {
					t.Fatal(err)
				}
				nreg := len(cur.specs)
				for j := range cur.stat {
					sp := cur.specs[j%nreg]
					if sp.mat.Kind != noise.Gaussian || sp.vec.Kind != noise.Gaussian || !(sp.mat.Scale > 0) || !(sp.vec.Scale > 0) {
						t.Fatalf("regression %d: calibrations %s, %s, want Gaussian noise", j%nreg, sp.mat, sp.vec)
					}
					d := sp.dim
					scales := noise.SymScales(d, sp.sym)
					if sp.sym == noise.Mirror {
						for k := range scales {
							scales[k] = 1
						}
					}
					for p := 0; p < d; p++ {
						for q := p; q < d; q++ {
							k := noise.PackedIndex(d, p, q)
							z := (cur.stat[j][k] - cur.g[j][p*d+q]) / (sp.mat.Scale * scales[k])
							sum += z * z
							n++
						}
						z := (cur.uu[j][p] - cur.u[j][p]) / sp.vec.Scale
						sum += z * z
						n++
					}
				}
			}
			ms := sum / float64(n)
			if tol := 6 * math.Sqrt(2/float64(n)); math.Abs(ms-1) > tol {
				t.Errorf("released statistics' noise has mean square %.4f of the calibrated variance, want 1 ± %.4f (%d entries)", ms, tol, n)
			}
		})
	}
}

// TestZCDPCalibrationWithinBudget recomputes the privacy of the zCDP calibration mode (spec P7
// [D]) from the σ it returns and the spec's accounting, not from its formula: JDP releases 2H
// trees whose leaves each lie in ≤ K0 nodes, LDP 2H statistics once per user, each with
// sensitivity Δ = 2H², so ρ = (#releases)·Δ²/(2σ²) (Bun & Steinke 2016, Prop. 1.6 and
// composition) must convert (Lemma 3.5) to at most the target ε at δ. A σ below the
// calibration (e.g. halved: 4ρ) fails.
func TestZCDPCalibrationWithinBudget(t *testing.T) {
	for _, p := range []Params{
		{K: 10000, H: 10, D: 5, D2: 2, Epsilon: 0.5, Delta: 1e-5, P: 0.05, Cw: 2},
		{K: 64, H: 3, D: 2, D2: 2, Epsilon: 2, Delta: 1e-6, P: 0.1, Cw: 1},
		{K: 1000, H: 5, D: 4, D2: 3, Epsilon: 8, Delta: 1e-3, P: 0.05, Cw: 1},
	} {
		H := float64(p.H)
		delta := 2 * H * H
		for _, jdp := range []bool{true, false} {
			sigma := LuyoZCDP(p, jdp).SigmaB
			releases := 2 * H // LDP: 2H statistics per user, each released once
			if jdp {
				releases *= float64(K0(p.K)) // JDP: 2H trees, a leaf in ≤ K0 nodes each
			}
			rho := accounting.GaussianRho(math.Sqrt(releases)*delta, sigma)
			got, err := accounting.ZCDP{Rho: rho}.ToApproxDP(p.Delta)
			if err != nil {
				t.Fatal(err)
			}
			if got.Epsilon > p.Epsilon*(1+1e-9) {
				t.Errorf("%+v jdp=%v: σ = %g gives ρ = %g, i.e. ε = %g > target %g", p, jdp, sigma, rho, got.Epsilon, p.Epsilon)
			}
		}
	}
}
