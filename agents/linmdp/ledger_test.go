package linmdp

import (
	"math"
	"strings"
	"testing"

	"github.com/dprl/dprl/privacy/accounting"
	"github.com/dprl/dprl/privacy/ledger"
	"github.com/dprl/dprl/privacy/noise"
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

// TestPapersLedgerSecure: with a hardened (noise.Secure) source, Ngo's and Luyo's ledger
// entries carry the Secure grid rounding (practical-privacy spec §7): every node of the H
// Gram trees (H·d(d+1)/2 coordinates a user can change per level) and every vector release
// (H·d coordinates) is rounded to its noise's grid γ = noise.GaussianGranularity(σ) before
// the noise is added, so the per-release sensitivity is Δ + √n·γ. The ledger's μ must equal
// √(levels·(2√H + √(H·d(d+1)/2)·γ(σ))²/σ² + releases·(2(H+1)√H + √(H·d)·γ(σ_y))²/σ_y²),
// computed here from the public parameters alone, and be strictly larger than the seeded
// twin's (which rounds nothing and keeps its report); a source secure for one mechanism only
// adds the rounding to that mechanism's entry only. The verdict at the nominal ε does not
// change for these configurations (the rounding is ~2^-29 relative).
func TestPapersLedgerSecure(t *testing.T) {
	env := e2small(t)
	const K, delta = 400, 1e-5
	sd := rng.NewSeed(3)
	secureFor := func(prefix string) func(string) noise.Source {
		return func(label string) noise.Source {
			if !strings.HasPrefix(label, prefix) {
				return noise.NewSeeded(sd.Child(label).Rand())
			}
			var key [32]byte
			copy(key[:], label)
			return noise.NewSecureFromKey(key)
		}
	}
	type mech struct {
		h, d, levels, releases int
		sigma, sigmaY          float64
	}
	// UMax 5: the sound calibration's own cap is 0 updates at this K (no vector entry).
	ngo := func(cal Calibration, src func(string) noise.Source) (Agent, mech, error) {
		a, err := NewNgo(env, NgoConfig{Common: Common{K: K, Seed: &sd, Noise: src}, Epsilon: 1, Delta: delta, Calibration: cal, UMax: 5})
		if err != nil {
			return nil, mech{}, err
		}
		c := a.cons
		return a, mech{c.H, c.D, c.L, c.UMax, c.SigmaNode, c.SigmaY}, nil
	}
	luyo := func(cal LuyoCalibration, batches int, src func(string) noise.Source) (Agent, mech, error) {
		a, err := NewLuyo(env, LuyoConfig{Common: Common{K: K, Seed: &sd, Noise: src}, Epsilon: 0.5, Delta: delta, Calibration: cal, Batches: batches})
		if err != nil {
			return nil, mech{}, err
		}
		c := a.cons
		return a, mech{c.H, c.D, c.TreeLevels, max(c.B-1, 0), c.SigmaLam, c.SigmaU}, nil
	}
	for _, c := range []struct {
		name       string
		make       func(src func(string) noise.Source) (Agent, mech, error)
		gram, vec  bool   // which entries are secure
		securePref string // labels whose source is Secure
	}{
		{"ngo sound", func(s func(string) noise.Source) (Agent, mech, error) { return ngo(CalibSound, s) }, true, true, ""},
		{"ngo printed", func(s func(string) noise.Source) (Agent, mech, error) { return ngo(CalibPrinted, s) }, true, true, ""},
		{"ngo y only", func(s func(string) noise.Source) (Agent, mech, error) { return ngo(CalibSound, s) }, false, true, "y"},
		{"luyo paper", func(s func(string) noise.Source) (Agent, mech, error) { return luyo(0, 0, s) }, true, true, ""},
		{"luyo zcdp", func(s func(string) noise.Source) (Agent, mech, error) { return luyo(LuyoZCDP, 20, s) }, true, true, ""},
		{"luyo gram only", func(s func(string) noise.Source) (Agent, mech, error) { return luyo(LuyoZCDP, 20, s) }, true, false, "gram/"},
	} {
		t.Run(c.name, func(t *testing.T) {
			seeded, m, err := c.make(nil)
			if err != nil {
				t.Fatal(err)
			}
			secure, _, err := c.make(secureFor(c.securePref))
			if err != nil {
				t.Fatal(err)
			}
			rs, rq := seeded.Info().Ledger, secure.Info().Ledger
			if rs.Secure || len(rs.Entries) != len(rq.Entries) || len(rq.Entries) != 2 {
				t.Fatalf("seeded report secure=%v with %d entries, secure one %d entries", rs.Secure, len(rs.Entries), len(rq.Entries))
			}
			for i, e := range rs.Entries {
				if e.Secure || e.RoundedSensitivity != e.Sensitivity {
					t.Errorf("seeded entry %s: secure=%v, rounded Δ %v != Δ %v", e.Name, e.Secure, e.RoundedSensitivity, e.Sensitivity)
				}
				if want := []bool{c.gram, c.vec}[i]; rq.Entries[i].Secure != want {
					t.Errorf("secure agent's entry %s: secure=%v, want %v", rq.Entries[i].Name, rq.Entries[i].Secure, want)
				}
			}
			h, d := float64(m.h), float64(m.d)
			gram, vec := 2*math.Sqrt(h), 2*(h+1)*math.Sqrt(h)
			if c.gram {
				gram += math.Sqrt(h*d*(d+1)/2) * noise.GaussianGranularity(m.sigma)
			}
			if c.vec {
				vec += math.Sqrt(h*d) * noise.GaussianGranularity(m.sigmaY)
			}
			mu := math.Sqrt(float64(m.levels)*gram*gram/(m.sigma*m.sigma) + float64(m.releases)*vec*vec/(m.sigmaY*m.sigmaY))
			dp, err := accounting.GDP{Mu: mu}.ToApproxDP(delta)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("seeded μ = %.17g ε = %.17g; secure μ = %.17g ε = %.17g (nominal %g)", rs.Mu, rs.Epsilon, rq.Mu, rq.Epsilon, rq.Nominal)
			if math.Abs(rq.Mu-mu) > 1e-13*mu || math.Abs(rq.Epsilon-dp.Epsilon) > 1e-10*dp.Epsilon {
				t.Errorf("secure ledger μ = %.17g, ε = %.17g; want μ = %.17g, ε = %.17g", rq.Mu, rq.Epsilon, mu, dp.Epsilon)
			}
			// (Luyo's paper calibration at this K is so noisy that ε underflows to the
			// smallest double for both: then μ alone can be compared.)
			if !(rq.Mu > rs.Mu) || !(rq.Epsilon > rs.Epsilon || rs.Epsilon < 1e-300) || !rq.Secure {
				t.Errorf("secure report μ %v ε %v (secure=%v) not above the seeded μ %v ε %v", rq.Mu, rq.Epsilon, rq.Secure, rs.Mu, rs.Epsilon)
			}
			if secure.Info().EffectiveEp != rq.Epsilon {
				t.Errorf("Info.EffectiveEp %v != ledger ε %v", secure.Info().EffectiveEp, rq.Epsilon)
			}
			if rq.PrivateAtNominal != rs.PrivateAtNominal {
				t.Errorf("verdict flipped: seeded private=%v, secure private=%v", rs.PrivateAtNominal, rq.PrivateAtNominal)
			}
		})
	}
}
