package linmdp

import (
	"math"
	"testing"
)

func rel(a, b float64) float64 { return math.Abs(a-b) / math.Max(math.Abs(b), 1e-300) }

// golden is one constant of a reference table.
type golden struct {
	name      string
	got, want float64
}

// checkGolden checks every constant of cs to relative tolerance 1e-8.
func checkGolden(t *testing.T, cs []golden) {
	t.Helper()
	for _, c := range cs {
		if rel(c.got, c.want) > 1e-8 {
			t.Errorf("%s = %.12g, want %.12g", c.name, c.got, c.want)
		}
	}
}

// TestRhoConversion checks the spec §1.6 test vectors.
func TestRhoConversion(t *testing.T) {
	for _, c := range []struct{ eps, delta, rho float64 }{
		{1, 1e-5, 0.02081993834}, {1, 1e-6, 0.01746890477}, {0.1, 1e-5, 2.162092711e-4}, {10, 1e-5, 1.550355229},
	} {
		rho, err := RhoFromEpsDelta(c.eps, c.delta)
		if err != nil {
			t.Fatal(err)
		}
		if rel(rho, c.rho) > 1e-8 {
			t.Errorf("rho(%g, %g) = %.12g, want %.12g", c.eps, c.delta, rho, c.rho)
		}
		if e := EpsFromRho(rho, c.delta); rel(e, c.eps) > 1e-12 {
			t.Errorf("round trip eps = %.15g, want %g", e, c.eps)
		}
	}
}

// TestNgoGolden checks the spec §3.2 reference table (K = 10⁴, H = 5, d = 5, ε = 1,
// δ = 1e−5, p = 0.05). Checked by hand: dropping the H-way budget split from σ_node (the
// printed paper's N3 error) fails 11 of the values.
func TestNgoGolden(t *testing.T) {
	rho, _ := RhoFromEpsDelta(1, 1e-5)
	s, err := NewNgoConstants(10000, 5, 5, rho, 0.05, CalibSound)
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewNgoConstants(10000, 5, 5, rho, 0.05, CalibPrinted)
	if err != nil {
		t.Fatal(err)
	}
	checkGolden(t, []golden{
		{"L", float64(s.L), 14},
		{"S U_max", float64(s.UMax), 4},
		{"P U_max", float64(p.UMax), 24},
		{"S sigma_node", s.SigmaNode, 115.9683014},
		{"S lambda", s.LambdaTilde, 16823.9247},
		{"S N_max", s.NMax, 4.051328914},
		{"S sigma_y", s.SigmaY, 371.9259872},
		{"S lambda_y", s.LambdaY, 3704.319403},
		{"S U_K", s.UK, 17.4595498},
		{"S ln chi", s.LnChi, 63.87895599},
		{"S beta_thm", s.BetaThm, 290958.2942},
		{"S beta_req", s.BetaReq, 18629.45369},
		{"P lambda", p.LambdaTilde, 2009.678966},
		{"P N_max", p.NMax, 24.91304186},
		{"P sigma_y", p.SigmaY, 423.6617823},
		{"P lambda_y", p.LambdaY, 3333.925574},
		{"P U_K", p.UK, 51.5383847},
		{"P ln chi", p.LnChi, 64.96139609},
		{"P beta_thm", p.BetaThm, 102200.7611},
		{"P beta_req", p.BetaReq, 7297.849523},
	})
	if s.Beta != s.BetaThm || rel(s.RhoSpent, rho) > 1e-12 {
		t.Errorf("[S]: beta = %g (want beta_thm), rho spent %g (want %g)", s.Beta, s.RhoSpent, rho)
	}
	if !(p.RhoSpent > 1.5*rho) {
		t.Errorf("[P] spends rho %g, expected well above the nominal %g", p.RhoSpent, rho)
	}
}

// TestLuyoGolden checks the spec §4.1 reference table.
func TestLuyoGolden(t *testing.T) {
	c, err := NewLuyoConstants(10000, 5, 5, 1, 1e-5, 0.05, 0, LuyoPaper)
	if err != nil {
		t.Fatal(err)
	}
	checkGolden(t, []golden{
		{"B", float64(c.B), 11},
		{"B0", float64(c.B0), 5},
		{"sigma_lambda", c.SigmaLam, 900364.0542},
		{"sigma_u", c.SigmaU, 2013275.23},
		{"upsilon", c.Upsilon, 180787753.8},
		{"c_K", c.CK, 903938768.8},
		{"C_u", c.CU, 20409125.64},
		{"U_K", c.UK, 1},
		{"ln chi", c.LnChi, 33.88176826},
		{"beta", c.Beta, 273339140},
	})
	z, err := NewLuyoConstants(10000, 5, 5, 1, 1e-5, 0.05, 0, LuyoZCDP)
	if err != nil {
		t.Fatal(err)
	}
	// Spec §4.6: σ_Λ ≈ 62, σ_u ≈ 588, Υ ≈ 4979, β ≈ 1.5·10⁶.
	for _, x := range []struct {
		name           string
		got, want, tol float64
	}{{"sigma_lambda", z.SigmaLam, 62, 0.01}, {"sigma_u", z.SigmaU, 588, 0.01}, {"upsilon", z.Upsilon, 4979, 0.01}, {"beta", z.Beta, 1.5e6, 0.05}} {
		if rel(x.got, x.want) > x.tol {
			t.Errorf("zcdp %s = %.6g, want ≈ %g", x.name, x.got, x.want)
		}
	}
	if rel(z.RhoCertified, 0.02081993834) > 1e-6 {
		t.Errorf("zcdp certified rho %g, want the nominal 0.0208", z.RhoCertified)
	}
}

func TestConstantsBadInput(t *testing.T) {
	if _, err := NewNgoConstants(0, 5, 5, 1, 0.05, CalibSound); err == nil {
		t.Error("K = 0 accepted")
	}
	if _, err := NewNgoConstants(10, 5, 5, -1, 0.05, CalibSound); err == nil {
		t.Error("rho < 0 accepted")
	}
	if _, err := NewNgoConstants(10, 5, 5, 1, 1.5, CalibSound); err == nil {
		t.Error("p > 1 accepted")
	}
	if _, err := NewLuyoConstants(10, 5, 5, 1, 0, 0.05, 0, LuyoPaper); err == nil {
		t.Error("delta = 0 accepted")
	}
	if _, err := NewLuyoConstants(10, 5, 5, 1, 1e-5, 0.05, 11, LuyoPaper); err == nil {
		t.Error("B > K accepted")
	}
}
