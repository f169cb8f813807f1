package linmix

import (
	"math"
	"testing"

	"github.com/dprl/dprl/privacy/accounting"
	"github.com/dprl/dprl/privacy/ledger"
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
