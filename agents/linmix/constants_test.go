package linmix

import (
	"math"
	"testing"
)

func ref() Params {
	return Params{K: 10000, H: 10, D: 5, D2: 2, Epsilon: 0.5, Delta: 1e-5, P: 0.05, Cw: 2}
}

// TestGoldenConstants checks every constant of the spec's Appendix A (relative tolerance
// 1e-9; Appendix A prints 10 significant digits, so values are compared at the printed
// precision where the table rounds).
func TestGoldenConstants(t *testing.T) {
	p := ref()
	nearP := func(name string, got, want float64, digits int) {
		t.Helper()
		tol := math.Pow(10, -float64(digits)) * math.Abs(want)
		if tol < 1e-9*math.Abs(want) {
			tol = 1e-9 * math.Abs(want)
		}
		if math.Abs(got-want) > tol {
			t.Errorf("%s = %.12g, want %.12g", name, got, want)
		}
	}
	if K0(p.K) != 15 {
		t.Errorf("K0 = %d, want 15", K0(p.K))
	}
	nearP("self-normalised term", SelfNorm(p), 83.87999561, 9)
	np := LuyoNonPrivate(p)
	nearP("β NP corollary", np.BetaCorollary, 173.87999561, 9)
	nearP("β NP thm7", np.BetaTheorem7, 103.8799956, 9)
	j := LuyoJDP(p)
	nearP("σ_B JDP", j.SigmaB, 6972479.764, 9)
	nearP("Υ^J", j.Upsilon, 1121896432, 9)
	nearP("C^J", j.C, 278436537.3, 9)
	nearP("β JDP cor", j.BetaCorollary, 301536.3955, 9)
	nearP("β JDP thm7", j.BetaTheorem7, 209365.0594, 9)
	l := LuyoLDP(p)
	nearP("σ_B LDP", l.SigmaB, 44111.57478, 9)
	nearP("Υ^L", l.Upsilon, 183262006.4, 9)
	nearP("C^L", l.C, 45482664.02, 9)
	nearP("β LDP cor", l.BetaCorollary, 121920.7817, 9)
	nearP("β LDP thm7", l.BetaTheorem7, 84668.22167, 9)
	jl := LuyoLaplace(p, true)
	nearP("b_B JDP-Lap", jl.BB, 360000, 9)
	nearP("b_g JDP-Lap", jl.BG, 268328.1573, 9)
	nearP("Υ JDP-Lap", jl.Upsilon, 100304246, 8)
	nearP("C JDP-Lap", jl.C, 31570341.79, 9)
	nearP("β JDP-Lap", jl.BetaCorollary, 90220.73164, 9)
	ll := LuyoLaplace(p, false)
	nearP("b_B LDP-Lap", ll.BB, 24000, 9)
	nearP("b_g LDP-Lap", ll.BG, 17888.54382, 9)
	nearP("Υ LDP-Lap", ll.Upsilon, 150652779.6, 9)
	nearP("C LDP-Lap", ll.C, 48797380, 7)
	nearP("β LDP-Lap", ll.BetaCorollary, 110550.5413, 9)
	nearP("ρ*", ZCDPRhoStar(0.5, 1e-5), 0.005313904231, 9)
	nearP("σ zCDP JDP", LuyoZCDP(p, true).SigmaB, 33602.28134, 9)
	nearP("σ zCDP LDP", LuyoZCDP(p, false).SigmaB, 8676.071734, 9)

	pp := p
	pj := PlusJDP(pp)
	nearP("σ_{B,1} JDP", pj.Sigma1, 744192.3772, 9)
	nearP("σ_{B,2} JDP", pj.Sigma2, 1488384754, 9)
	nearP("Υ^{J,1}", pj.Upsilon1, 127734440.9, 9)
	nearP("Υ^{J,2}", pj.Upsilon2, 2.554688819e+11, 9)
	c, h, ti := pj.Betas(p.K)
	nearP("β̌ JDP", c, 102587.8534, 9)
	nearP("β̂ JDP", h, 102239.8289, 9)
	nearP("β̃ JDP", ti, 4597751.322, 9)
	pl := PlusLDP(pp)
	nearP("σ_{B,1} LDP", pl.Sigma1, 4510.602918, 9)
	nearP("σ_{B,2} LDP", pl.Sigma2, 9021205.837, 9)
	nearP("Υ^{L,1}", pl.Upsilon1, 19989952.46, 9)
	nearP("Υ^{L,2}", pl.Upsilon2, 3.997990492e+10, 9)
	c, h, ti = pl.Betas(p.K)
	nearP("β̌ LDP", c, 41109.27007, 9)
	nearP("β̂ LDP", h, 40761.24551, 9)
	nearP("β̃ LDP", ti, 1848345.463, 9)

	zj := ZhouJDP(p)
	nearP("σ_{p,1}", zj.SigmaP1, 854216.9725, 9)
	nearP("σ_{p,2}", zj.SigmaP2, 382017.4436, 9)
	nearP("σ_{r,1}", zj.SigmaR1, 1708.433945, 9)
	nearP("σ_{r,2}", zj.SigmaR2, 1708.433945, 9)
	nearP("Σ_{p,1}", zj.SigmaShiftP, 67702539.6, 9)
	nearP("Σ_r", zj.SigmaShiftR, 113653.1037, 9)
	nearP("ν_p", zj.NuP, 1415.922533, 9)
	nearP("ν_r", zj.NuR, 138.4185345, 9)
	nearP("β_p JDP", zj.BetaP, 33299.76341, 9)
	nearP("β_r JDP", zj.BetaR, 965.836399, 9)
	zl := ZhouLDP(p)
	nearP("σ^L_{p,1}", zl.SigmaP1, 220557.8739, 9)
	nearP("σ^L_{p,2}", zl.SigmaP2, 98636.4798, 9)
	nearP("σ^L_{r,1}", zl.SigmaR1, 441.1157478, 9)
	nearP("Σ^L_{p,1}", zl.SigmaShiftP, 451350264, 9)
	nearP("Σ^L_r", zl.SigmaShiftR, 757687.358, 9)
	nearP("ν^L_p", zl.NuP, 3655.89626, 9)
	nearP("ν^L_r", zl.NuR, 357.3951194, 9)
	nearP("β_p LDP", zl.BetaP, 85953.73397, 9)
	nearP("β_r LDP", zl.BetaR, 2491.187946, 9)
	zn := ZhouNonPrivate(p)
	nearP("β_p NP", zn.BetaP, 46.86626866, 9)
	nearP("β_r NP", zn.BetaR, 4.042493469, 9)
	s, z := ZhouAccount(0.5, 1e-5, 10)
	nearP("ε simple", s, 0.5001027838, 9)
	nearP("ε zCDP", z, 0.0689022832, 9)
	// Initial bonus scale β·H/sqrt(λ+2Υ) ≈ 63.7 in both JDP and LDP (spec P4).
	for _, c := range []LuyoConstants{j, l} {
		if v := c.BetaCorollary * 10 / math.Sqrt(c.Lambda+2*c.Upsilon); math.Abs(v-63.7) > 0.1 {
			t.Errorf("initial bonus scale %v, want ≈ 63.7", v)
		}
	}
}
