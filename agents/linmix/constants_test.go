package linmix

import (
	"fmt"
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
	if K0(p.K) != 15 {
		t.Errorf("K0 = %d, want 15", K0(p.K))
	}
	np := LuyoNonPrivate(p)
	j, l := LuyoJDP(p), LuyoLDP(p)
	jl, ll := LuyoLaplace(p, true), LuyoLaplace(p, false)
	zj, zl, zn := ZhouJDP(p), ZhouLDP(p), ZhouNonPrivate(p)
	s, z := ZhouAccount(0.5, 1e-5, 10)
	near := func(name string, got, want float64, digits int) {
		t.Helper()
		tol := math.Pow(10, -float64(digits)) * math.Abs(want)
		if tol < 1e-9*math.Abs(want) {
			tol = 1e-9 * math.Abs(want)
		}
		if math.Abs(got-want) > tol {
			t.Errorf("%s = %.12g, want %.12g", name, got, want)
		}
	}
	for _, c := range []struct {
		name      string
		got, want float64
		digits    int // compared at this many significant digits (at least 1e-9 relative)
	}{
		{"self-normalised term", SelfNorm(p), 83.87999561, 9},
		{"β NP corollary", np.BetaCorollary, 173.87999561, 9},
		{"β NP thm7", np.BetaTheorem7, 103.8799956, 9},
		{"σ_B JDP", j.SigmaB, 6972479.764, 9},
		{"Υ^J", j.Upsilon, 1121896432, 9},
		{"C^J", j.C, 278436537.3, 9},
		{"β JDP cor", j.BetaCorollary, 301536.3955, 9},
		{"β JDP thm7", j.BetaTheorem7, 209365.0594, 9},
		{"σ_B LDP", l.SigmaB, 44111.57478, 9},
		{"Υ^L", l.Upsilon, 183262006.4, 9},
		{"C^L", l.C, 45482664.02, 9},
		{"β LDP cor", l.BetaCorollary, 121920.7817, 9},
		{"β LDP thm7", l.BetaTheorem7, 84668.22167, 9},
		{"b_B JDP-Lap", jl.BB, 360000, 9},
		{"b_g JDP-Lap", jl.BG, 268328.1573, 9},
		{"Υ JDP-Lap", jl.Upsilon, 100304246, 8},
		{"C JDP-Lap", jl.C, 31570341.79, 9},
		{"β JDP-Lap", jl.BetaCorollary, 90220.73164, 9},
		{"b_B LDP-Lap", ll.BB, 24000, 9},
		{"b_g LDP-Lap", ll.BG, 17888.54382, 9},
		{"Υ LDP-Lap", ll.Upsilon, 150652779.6, 9},
		{"C LDP-Lap", ll.C, 48797380, 7},
		{"β LDP-Lap", ll.BetaCorollary, 110550.5413, 9},
		{"ρ*", ZCDPRhoStar(0.5, 1e-5), 0.005313904231, 9},
		{"σ zCDP JDP", LuyoZCDP(p, true).SigmaB, 33602.28134, 9},
		{"σ zCDP LDP", LuyoZCDP(p, false).SigmaB, 8676.071734, 9},
		{"σ_{p,1}", zj.SigmaP1, 854216.9725, 9},
		{"σ_{p,2}", zj.SigmaP2, 382017.4436, 9},
		{"σ_{r,1}", zj.SigmaR1, 1708.433945, 9},
		{"σ_{r,2}", zj.SigmaR2, 1708.433945, 9},
		{"Σ_{p,1}", zj.SigmaShiftP, 67702539.6, 9},
		{"Σ_r", zj.SigmaShiftR, 113653.1037, 9},
		{"ν_p", zj.NuP, 1415.922533, 9},
		{"ν_r", zj.NuR, 138.4185345, 9},
		{"β_p JDP", zj.BetaP, 33299.76341, 9},
		{"β_r JDP", zj.BetaR, 965.836399, 9},
		{"σ^L_{p,1}", zl.SigmaP1, 220557.8739, 9},
		{"σ^L_{p,2}", zl.SigmaP2, 98636.4798, 9},
		{"σ^L_{r,1}", zl.SigmaR1, 441.1157478, 9},
		{"Σ^L_{p,1}", zl.SigmaShiftP, 451350264, 9},
		{"Σ^L_r", zl.SigmaShiftR, 757687.358, 9},
		{"ν^L_p", zl.NuP, 3655.89626, 9},
		{"ν^L_r", zl.NuR, 357.3951194, 9},
		{"β_p LDP", zl.BetaP, 85953.73397, 9},
		{"β_r LDP", zl.BetaR, 2491.187946, 9},
		{"β_p NP", zn.BetaP, 46.86626866, 9},
		{"β_r NP", zn.BetaR, 4.042493469, 9},
		{"ε simple", s, 0.5001027838, 9},
		{"ε zCDP", z, 0.0689022832, 9},
	} {
		near(c.name, c.got, c.want, c.digits)
	}
	for _, v := range []struct {
		tag  string
		c    PlusConstants
		want [7]float64 // σ_{B,1}, σ_{B,2}, Υ^1, Υ^2, β̌, β̂, β̃
	}{
		{"JDP", PlusJDP(p), [7]float64{744192.3772, 1488384754, 127734440.9, 2.554688819e+11, 102587.8534, 102239.8289, 4597751.322}},
		{"LDP", PlusLDP(p), [7]float64{4510.602918, 9021205.837, 19989952.46, 3.997990492e+10, 41109.27007, 40761.24551, 1848345.463}},
	} {
		bc, bh, bt := v.c.Betas(p.K)
		for i, got := range []float64{v.c.Sigma1, v.c.Sigma2, v.c.Upsilon1, v.c.Upsilon2, bc, bh, bt} {
			near(fmt.Sprintf("%s %s", []string{"σ_{B,1}", "σ_{B,2}", "Υ^1", "Υ^2", "β̌", "β̂", "β̃"}[i], v.tag), got, v.want[i], 9)
		}
	}
	// Initial bonus scale β·H/sqrt(λ+2Υ) ≈ 63.7 in both JDP and LDP (spec P4).
	for _, c := range []LuyoConstants{j, l} {
		if v := c.BetaCorollary * 10 / math.Sqrt(c.Lambda+2*c.Upsilon); math.Abs(v-63.7) > 0.1 {
			t.Errorf("initial bonus scale %v, want ≈ 63.7", v)
		}
	}
}
