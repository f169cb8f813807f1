package tabular

import (
	"math"
	"math/rand/v2"
	"testing"

	model "github.com/dprl/dprl/model/tabular"
)

// TestSensitivity (tabular spec §8.4.3): the element one user adds to each statistic family
// has ℓ1 norm ≤ H (exactly H for visits and transitions: "ZeroOut"), and two different users'
// elements differ by at most 2H per family ("ReplaceOne") — the Δ the calibrations assume.
// Elements are read off the Identity curator after a single ingestion. Adversarial pairs
// include users that visit rarely-visited states with reward 1.
func TestSensitivity(t *testing.T) {
	m, err := model.Garnet(model.GarnetConfig{S: 7, A: 3, H: 9, Branching: 3, RewardDensity: 1, Rewards: model.Bernoulli, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	elem := func(tr *model.Trajectory) *Billboard {
		id, _ := NewIdentity(m.S, m.A, m.H)
		if err := id.Ingest(tr); err != nil {
			t.Fatal(err)
		}
		return id.Release().Clone()
	}
	l1 := func(a, b []float64) float64 {
		s := 0.0
		for i := range a {
			s += math.Abs(a[i] - b[i])
		}
		return s
	}
	r := rand.New(rand.NewPCG(1, 2))
	random := func() *model.Trajectory {
		tr := model.NewTrajectory(m.H)
		for h := 0; h <= m.H; h++ {
			tr.S[h] = r.IntN(m.S)
			if h < m.H {
				tr.A[h] = r.IntN(m.A)
				tr.R[h] = float64(r.IntN(2))
			}
		}
		return tr
	}
	zero := &Billboard{N: make([]float64, m.H*m.S*m.A), NT: make([]float64, m.H*m.S*m.A*m.S), R: make([]float64, m.H*m.S*m.A)}
	H := float64(m.H)
	for i := 0; i < 2000; i++ {
		a, b := random(), random()
		if i%10 == 0 { // adversarial: b always in the last state, reward 1
			for h := range b.A {
				b.S[h], b.A[h], b.R[h] = m.S-1, m.A-1, 1
			}
			b.S[m.H] = m.S - 1
		}
		ea, eb := elem(a), elem(b)
		if l1(ea.N, zero.N) != H || l1(ea.NT, zero.NT) != H || l1(ea.R, zero.R) > H {
			t.Fatalf("zero-out sensitivity: %g %g %g, want H = %g", l1(ea.N, zero.N), l1(ea.NT, zero.NT), l1(ea.R, zero.R), H)
		}
		if d := max(l1(ea.N, eb.N), l1(ea.NT, eb.NT), l1(ea.R, eb.R)); d > 2*H {
			t.Fatalf("replace-one sensitivity %g > 2H = %g", d, 2*H)
		}
	}
	// The accountant's ε is Σ_families L·Δ/b: with Δ = H (zero-out) and b = 3HL/ε that is ε.
	priv := privacyConfig(JDP, 0.7, Paper, ETheory)
	b, rep, err := priv.scales(m.S, m.A, m.H, 1000, false)
	if err != nil {
		t.Fatal(err)
	}
	L := float64(rep.Levels)
	if got := 3 * L * H / b; math.Abs(got-rep.EpsilonZeroOut) > 1e-12 || math.Abs(got-0.7) > 1e-12 {
		t.Fatalf("implied ε %g, report %g", got, rep.EpsilonZeroOut)
	}
}
