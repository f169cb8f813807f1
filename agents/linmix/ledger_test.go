package linmix

import (
	"math"
	"strings"
	"testing"

	"github.com/dprl/dprl/privacy/accounting"
	"github.com/dprl/dprl/privacy/ledger"
	"github.com/dprl/dprl/privacy/noise"
	"github.com/dprl/dprl/rng"
)

// TestPapersLedger: the privacy object of Luyo's agents (UCRL-VTR in every calibration,
// UCRL-VTR+) is the ledger's composition of the statistics the agent registers, with the
// agent's own σ or b, and its ε is recomputed here from the constants: with m = K0 nodes per
// element (JDP) or 1 (LDP) and the replace-one sensitivities of one step, Gram √2·X² and
// target 2·X·Y (ℓ2; X = maxX, Y = maxY: H, H for UCRL-VTR, √d, √d and H², H² for UCRL-VTR+),
//
//	Gaussian: μ² = Σ_regressions H·m·(2X⁴/σ_mat² + 4X²Y²/σ_vec²), ε = GDP(μ) at δ;
//	Laplace:  ε = H·m·((d+1)H²/b_B + 2√d·H²/b_g) (= the nominal ε: spec §3.5 [D]).
//
// Covered and EffectiveEpsilon are the ledger's verdict and ε.
func TestPapersLedger(t *testing.T) {
	m := envA(t)
	const K, delta = 64, 1e-5
	H, d := float64(m.Horizon()), float64(m.Dim())
	for _, cfg := range []Config{
		{Algorithm: UCRLVTR, Mode: JDP, Epsilon: 0.5},
		{Algorithm: UCRLVTR, Mode: JDP, Epsilon: 2}, // outside the paper's range ε < 1
		{Algorithm: UCRLVTR, Mode: LDP, Epsilon: 0.5},
		{Algorithm: UCRLVTR, Mode: JDP, Epsilon: 1, Calibration: ZCDP},
		{Algorithm: UCRLVTR, Mode: LDP, Epsilon: 1, Calibration: Laplace},
		{Algorithm: UCRLVTR, Mode: JDP, Epsilon: 1, Calibration: Laplace},
		{Algorithm: UCRLVTRPlus, Mode: JDP, Epsilon: 0.5},
		{Algorithm: UCRLVTRPlus, Mode: LDP, Epsilon: 0.5},
	} {
		cfg.Episodes = K
		if cfg.Calibration != Laplace {
			cfg.Delta = delta
		}
		t.Run(cfg.Name(), func(t *testing.T) {
			a, err := NewSeeded(m, cfg, rng.NewSeed(1))
			if err != nil {
				t.Fatal(err)
			}
			c := a.Constants()
			r := c.Ledger
			mult := float64(K0(K))
			model := ledger.JDP
			if cfg.Mode == LDP {
				mult, model = 1, ledger.LDP
			}
			xy := [][2]float64{{H, H}}
			if cfg.Algorithm == UCRLVTRPlus {
				xy = [][2]float64{{math.Sqrt(d), math.Sqrt(d)}, {H * H, H * H}}
			}
			if r.Model != model || len(r.Entries) != 2*len(xy) || r.Neighbouring != accounting.ReplaceOne || len(c.SigmaMat) != len(xy) {
				t.Fatalf("ledger report %+v", r)
			}
			var want float64
			if cfg.Calibration == Laplace {
				want = H * mult * ((d+1)*H*H/c.SigmaMat[0] + 2*math.Sqrt(d)*H*H/c.SigmaVec[0])
				if r.Guarantee != accounting.KindPureDP || r.Delta != 0 {
					t.Errorf("Laplace: guarantee %q at δ = %g, want pure-dp at 0", r.Guarantee, r.Delta)
				}
			} else {
				mu2 := 0.0
				for i, v := range xy {
					x, y := v[0], v[1]
					mu2 += H * mult * (2*x*x*x*x/(c.SigmaMat[i]*c.SigmaMat[i]) + 4*x*x*y*y/(c.SigmaVec[i]*c.SigmaVec[i]))
				}
				dp, err := accounting.GDP{Mu: math.Sqrt(mu2)}.ToApproxDP(delta)
				if err != nil {
					t.Fatal(err)
				}
				want = dp.Epsilon
				if r.Guarantee != accounting.KindGDP || r.Delta != delta {
					t.Errorf("Gaussian: guarantee %q at δ = %g, want gdp at %g", r.Guarantee, r.Delta, delta)
				}
			}
			if math.Abs(r.Epsilon-want) > 1e-9*want || c.EffectiveEpsilon != r.Epsilon {
				t.Errorf("ledger ε = %v (EffectiveEpsilon %v), want %v", r.Epsilon, c.EffectiveEpsilon, want)
			}
			if c.Covered != r.PrivateAtNominal || r.PrivateAtNominal != (want <= cfg.Epsilon*(1+1e-9)) {
				t.Errorf("covered %v, ledger private %v, ε %v at nominal %v", c.Covered, r.PrivateAtNominal, want, cfg.Epsilon)
			}
			t.Logf("ε = %.4g at nominal %g", r.Epsilon, cfg.Epsilon)
		})
	}
}

// TestPapersLedgerSecure: with hardened (noise.Secure) sources, the entries of Luyo's agents
// carry the grid rounding of every released tree node (JDP) or user report (LDP) (practical-
// privacy spec §7). Coordinate k of a step's statistic is drawn at s·c_k and rounded to
// γ_k = granularity(s·c_k), so each release's sensitivity (in units of s) grows by
// √(H·Σ_k (γ_k/c_k)²) (ℓ2) or H·Σ_k γ_k/c_k (ℓ1), c the JDP Gram's SumSqrt2 multipliers
// (√2 on the d diagonal entries, 1 on the d(d−1)/2 others; 1 everywhere for the LDP reports,
// the targets and the Laplace calibration). The ledger's ε must equal the recomputation here
// from the constants alone, with
//
//	Gaussian: μ² = Σ_regressions m·((√(2H)·X² + R_mat)²/σ_mat² + (2√H·X·Y + √(H·d)·γ(σ_vec))²/σ_vec²),
//	Laplace:  ε  = m·(((d+1)H·X² + H·d(d+1)/2·γ_L(b_B))/b_B + (2√d·H·X·Y + H·d·γ_L(b_g))/b_g),
//
// be strictly larger than the seeded twin's (which keeps its report), and not flip the
// verdict; an agent whose vector trees alone are Secure rounds only its target entries. The
// Laplace calibration, which spends the nominal ε exactly, would flip (ε = nominal·(1 + 3e-7)
// in JDP, 2e-6 in LDP): a Secure agent widens its b_B and b_g instead (secureLaplace), and its
// ledger ε, recomputed here with the widened scales, stays the nominal.
func TestPapersLedgerSecure(t *testing.T) {
	m := envA(t)
	const K, delta = 64, 1e-5
	H, d := float64(m.Horizon()), float64(m.Dim())
	g, gl := noise.GaussianGranularity, noise.LaplaceGranularity
	for _, c := range []struct {
		cfg    Config
		prefix string // paths whose source is Secure ("" = all)
	}{
		{Config{Algorithm: UCRLVTR, Mode: JDP, Epsilon: 0.5}, ""},
		{Config{Algorithm: UCRLVTR, Mode: LDP, Epsilon: 0.5}, ""},
		{Config{Algorithm: UCRLVTR, Mode: JDP, Epsilon: 1, Calibration: ZCDP}, ""},
		{Config{Algorithm: UCRLVTR, Mode: JDP, Epsilon: 1, Calibration: ZCDP}, "vec/"},
		{Config{Algorithm: UCRLVTR, Mode: LDP, Epsilon: 1, Calibration: Laplace}, ""},
		{Config{Algorithm: UCRLVTR, Mode: JDP, Epsilon: 1, Calibration: Laplace}, ""},
		{Config{Algorithm: UCRLVTRPlus, Mode: JDP, Epsilon: 0.5}, ""},
		{Config{Algorithm: UCRLVTRPlus, Mode: LDP, Epsilon: 0.5}, ""},
	} {
		cfg := c.cfg
		cfg.Episodes = K
		if cfg.Calibration != Laplace {
			cfg.Delta = delta
		}
		t.Run(cfg.Name()+"/"+c.prefix, func(t *testing.T) {
			seeded, err := NewSeeded(m, cfg, rng.NewSeed(1))
			if err != nil {
				t.Fatal(err)
			}
			ns := rng.NewSeed(1).Child("noise")
			secure, err := NewWithNoise(m, cfg, rng.NewSeed(1), func(path string) noise.Source {
				if !strings.HasPrefix(path, c.prefix) {
					return noise.NewSeeded(ns.Child(path).Rand())
				}
				var key [32]byte
				copy(key[:], path)
				return noise.NewSecureFromKey(key)
			})
			if err != nil {
				t.Fatal(err)
			}
			cs, cq := seeded.Constants(), secure.Constants()
			rs, rq := cs.Ledger, cq.Ledger
			if rs.Secure || len(rs.Entries) != len(rq.Entries) {
				t.Fatalf("seeded report secure=%v, %d vs %d entries", rs.Secure, len(rs.Entries), len(rq.Entries))
			}
			gramOn, vecOn := c.prefix == "", true
			for i, e := range rs.Entries {
				if e.Secure || e.RoundedSensitivity != e.Sensitivity {
					t.Errorf("seeded entry %s: secure=%v, rounded Δ %v != Δ %v", e.Name, e.Secure, e.RoundedSensitivity, e.Sensitivity)
				}
				want := vecOn
				if strings.HasSuffix(e.Name, gramSuffix) {
					want = gramOn
				}
				if q := rq.Entries[i]; q.Secure != want || q.Sensitivity != e.Sensitivity {
					t.Errorf("secure agent's entry %s: secure=%v (want %v), Δ %v (seeded %v)", q.Name, q.Secure, want, q.Sensitivity, e.Sensitivity)
				}
			}
			mult := float64(K0(K))
			if cfg.Mode == LDP {
				mult = 1
			}
			xy := [][2]float64{{H, H}}
			if cfg.Algorithm == UCRLVTRPlus {
				xy = [][2]float64{{math.Sqrt(d), math.Sqrt(d)}, {H * H, H * H}}
			}
			on := func(b bool) float64 {
				if b {
					return 1
				}
				return 0
			}
			var want float64
			if cfg.Calibration == Laplace {
				x, y, bB, bG := xy[0][0], xy[0][1], cq.SigmaMat[0], cq.SigmaVec[0]
				want = mult * (((d+1)*H*x*x+on(gramOn)*H*d*(d+1)/2*gl(bB))/bB + (2*math.Sqrt(d)*H*x*y+on(vecOn)*H*d*gl(bG))/bG)
			} else {
				mu2 := 0.0
				for i, v := range xy {
					x, y, sm, sv := v[0], v[1], cq.SigmaMat[i], cq.SigmaVec[i]
					rm := math.Sqrt(H*d*(d+1)/2) * g(sm) // LDP: every coordinate at scale 1
					if cfg.Mode == JDP {
						rm = math.Sqrt(H * (d*(d-1)/2*g(sm)*g(sm) + d*math.Pow(g(math.Sqrt2*sm)/math.Sqrt2, 2)))
					}
					gm := math.Sqrt(2*H)*x*x + on(gramOn)*rm
					gv := 2*math.Sqrt(H)*x*y + on(vecOn)*math.Sqrt(H*d)*g(sv)
					mu2 += mult * (gm*gm/(sm*sm) + gv*gv/(sv*sv))
				}
				dp, err := accounting.GDP{Mu: math.Sqrt(mu2)}.ToApproxDP(delta)
				if err != nil {
					t.Fatal(err)
				}
				want = dp.Epsilon
			}
			t.Logf("seeded ε = %.17g, secure ε = %.17g, recomputed %.17g (nominal %g)", rs.Epsilon, rq.Epsilon, want, cfg.Epsilon)
			if math.Abs(rq.Epsilon-want) > 1e-10*want || cq.EffectiveEpsilon != rq.Epsilon {
				t.Errorf("secure ledger ε = %.17g (EffectiveEpsilon %v), want %.17g", rq.Epsilon, cq.EffectiveEpsilon, want)
			}
			widened := cq.SigmaMat[0] > cs.SigmaMat[0] && cq.SigmaVec[0] > cs.SigmaVec[0]
			switch {
			case !rq.Secure:
				t.Errorf("the secure agent's report is not secure")
			case cfg.Calibration == Laplace:
				// The Laplace calibration spends the nominal ε exactly: a Secure agent widens
				// b_B and b_g to cover the rounding (secureLaplace), so its ε stays the nominal.
				if !widened || rq.Epsilon > cfg.Epsilon*(1+1e-12) {
					t.Errorf("Laplace: b_B %v → %v, b_g %v → %v (want both widened), secure ε %v > nominal %v",
						cs.SigmaMat[0], cq.SigmaMat[0], cs.SigmaVec[0], cq.SigmaVec[0], rq.Epsilon, cfg.Epsilon)
				}
			case !(rq.Epsilon > rs.Epsilon):
				t.Errorf("secure ε %v not above the seeded %v", rq.Epsilon, rs.Epsilon)
			}
			// The noise actually drawn is at the reported scales (the trees or the randomiser).
			if q := secure.specs[0]; q.mat.Scale != cq.SigmaMat[0] || q.vec.Scale != cq.SigmaVec[0] ||
				(secure.cur != nil && (secure.cur.mt[0].cal.Scale != cq.SigmaMat[0] || secure.cur.vt[0].cal.Scale != cq.SigmaVec[0] || secure.cur.mt[0].onGrid() != gramOn || !secure.cur.vt[0].onGrid())) ||
				(secure.rnd != nil && secure.rnd.specs[0].mat.Scale != cq.SigmaMat[0]) {
				t.Errorf("the agent draws at scales other than its reported %v, %v", cq.SigmaMat, cq.SigmaVec)
			}
			for i := range cs.SigmaMat {
				if cfg.Calibration != Laplace && (cq.SigmaMat[i] != cs.SigmaMat[i] || cq.SigmaVec[i] != cs.SigmaVec[i]) {
					t.Errorf("Gaussian σ changed by a Secure source: %v, %v (seeded %v, %v)", cq.SigmaMat, cq.SigmaVec, cs.SigmaMat, cs.SigmaVec)
				}
			}
			if rq.PrivateAtNominal != rs.PrivateAtNominal || cq.Covered != rq.PrivateAtNominal {
				t.Errorf("verdict: seeded private=%v, secure private=%v (covered %v)", rs.PrivateAtNominal, rq.PrivateAtNominal, cq.Covered)
			}
			if strings.Count(cq.Privacy, "privacy ledger") != 1 {
				t.Errorf("privacy statement %q: want one ledger verdict", cq.Privacy)
			}
		})
	}
}
