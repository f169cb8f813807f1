package linmdp

import (
	"math"
	"testing"

	"github.com/dprl/dprl/privacy/accounting"
	"github.com/dprl/dprl/privacy/ledger"
	"github.com/dprl/dprl/rng"
)

// TestPapersLedger: the privacy object of Ngo's and Luyo's agents (Info.Ledger, which the
// manifest and the service print) is the ledger's composition of the mechanisms the agent
// registered — the H Gram trees (ℓ2 sensitivity 2√H, √levels nodes per leaf, the agent's node
// σ) and the vector releases (2(H+1)√H per release, √releases, the agent's σ_y) — and its ε
// is the exact μ-GDP conversion of μ = √(4H·levels/σ² + 4(H+1)²·H·releases/σ_y²), computed
// here from the agent's constants, which is also √(2ρ) of the agent's own zCDP accounting.
func TestPapersLedger(t *testing.T) {
	env := e2small(t)
	const K, delta = 400, 1e-5
	sd := rng.NewSeed(3)
	h := float64(env.H)
	type mech struct {
		levels, releases int
		sigma, sigmaY    float64
		rho              float64
	}
	for _, c := range []struct {
		name string
		eps  float64
		make func() (Agent, mech, error)
	}{
		{"ngo sound", 1, func() (Agent, mech, error) {
			a, err := NewNgo(env, NgoConfig{Common: Common{K: K, Seed: &sd}, Epsilon: 1, Delta: delta})
			if err != nil {
				return nil, mech{}, err
			}
			return a, mech{a.cons.L, a.cons.UMax, a.cons.SigmaNode, a.cons.SigmaY, a.cons.RhoSpent}, nil
		}},
		{"ngo printed", 1, func() (Agent, mech, error) {
			a, err := NewNgo(env, NgoConfig{Common: Common{K: K, Seed: &sd}, Epsilon: 1, Delta: delta, Calibration: CalibPrinted})
			if err != nil {
				return nil, mech{}, err
			}
			return a, mech{a.cons.L, a.cons.UMax, a.cons.SigmaNode, a.cons.SigmaY, a.cons.RhoSpent}, nil
		}},
		{"luyo paper", 0.5, func() (Agent, mech, error) {
			a, err := NewLuyo(env, LuyoConfig{Common: Common{K: K, Seed: &sd}, Epsilon: 0.5, Delta: delta})
			if err != nil {
				return nil, mech{}, err
			}
			return a, mech{a.cons.TreeLevels, max(a.cons.B-1, 0), a.cons.SigmaLam, a.cons.SigmaU, a.cons.RhoCertified}, nil
		}},
		{"luyo zcdp", 1, func() (Agent, mech, error) {
			a, err := NewLuyo(env, LuyoConfig{Common: Common{K: K, Seed: &sd}, Epsilon: 1, Delta: delta, Calibration: LuyoZCDP, Batches: 20})
			if err != nil {
				return nil, mech{}, err
			}
			return a, mech{a.cons.TreeLevels, max(a.cons.B-1, 0), a.cons.SigmaLam, a.cons.SigmaU, a.cons.RhoCertified}, nil
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			a, m, err := c.make()
			if err != nil {
				t.Fatal(err)
			}
			in := a.Info()
			r := in.Ledger
			want := 1
			if m.releases > 0 {
				want = 2
			}
			if r.Model != ledger.JDP || r.Guarantee != accounting.KindGDP || len(r.Entries) != want || r.Neighbouring != accounting.ReplaceOne {
				t.Fatalf("ledger report %+v, want a JDP μ-GDP report of %d entries", r, want)
			}
			g := r.Entries[0]
			if g.Name != EntryGram || g.Sensitivity != 2*math.Sqrt(h) || g.Factor != math.Sqrt(float64(m.levels)) || g.Sigma != m.sigma {
				t.Errorf("Gram entry %+v, want Δ = 2√H, factor √%d, σ = %v", g, m.levels, m.sigma)
			}
			mu2 := 4 * h * float64(m.levels) / (m.sigma * m.sigma)
			if m.releases > 0 {
				v := r.Entries[1]
				if v.Name != EntryVector || v.Sensitivity != 2*(h+1)*math.Sqrt(h) || v.Factor != math.Sqrt(float64(m.releases)) || v.Sigma != m.sigmaY {
					t.Errorf("vector entry %+v, want Δ = 2(H+1)√H, factor √%d, σ = %v", v, m.releases, m.sigmaY)
				}
				mu2 += 4 * (h + 1) * (h + 1) * h * float64(m.releases) / (m.sigmaY * m.sigmaY)
			}
			mu := math.Sqrt(mu2)
			t.Logf("%d entries, μ = %.4g, ε = %.4g at nominal %g", len(r.Entries), r.Mu, r.Epsilon, c.eps)
			dp, err := accounting.GDP{Mu: mu}.ToApproxDP(delta)
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(r.Mu-mu) > 1e-12*mu || math.Abs(in.EffectiveEp-dp.Epsilon) > 1e-9*math.Max(dp.Epsilon, 1e-300) || r.Epsilon != in.EffectiveEp {
				t.Errorf("ledger μ = %v, ε = %v (Info %v), want μ = %v, ε = %v", r.Mu, r.Epsilon, in.EffectiveEp, mu, dp.Epsilon)
			}
			// The same μ is √(2ρ) of the agent's own zCDP accounting.
			if math.Abs(mu*mu/2-m.rho) > 1e-9*m.rho {
				t.Errorf("μ²/2 = %v, agent's ρ = %v", mu*mu/2, m.rho)
			}
			if r.PrivateAtNominal != (dp.Epsilon <= c.eps*(1+1e-9)) || r.Nominal != c.eps || r.Delta != delta {
				t.Errorf("private at nominal %v (ε %v, nominal %v, δ %v)", r.PrivateAtNominal, dp.Epsilon, r.Nominal, r.Delta)
			}
		})
	}
}
