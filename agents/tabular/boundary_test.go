package tabular

import (
	"fmt"
	"math"
	"testing"

	"github.com/dprl/dprl/internal/privacytest"
	model "github.com/dprl/dprl/model/tabular"
	"github.com/dprl/dprl/privacy/noise"
	"github.com/dprl/dprl/rng"
)

// identitySource adds no noise (to observe exactly what crosses the privacy boundary).
type identitySource struct{}

func (identitySource) AddLaplace(x, _ float64) float64  { return x }
func (identitySource) AddGaussian(x, _ float64) float64 { return x }
func (identitySource) Secure() bool                     { return false }

// hostileTrajectory returns a valid-index trajectory whose rewards are all r.
func hostileTrajectory(S, A, H int, r float64) *model.Trajectory {
	t := model.NewTrajectory(H)
	for h := 0; h < H; h++ {
		t.S[h], t.A[h], t.R[h] = h%S, h%A, r
	}
	t.S[H] = 0
	return t
}

// l1 returns Σ|a_i − b_i|.
func l1(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		s += math.Abs(a[i] - b[i])
	}
	return s
}

// TestHostileRewardsClipped (issue 10 item 4): the tabular privatizers clip rewards to [0, 1]
// themselves (NaN → 0), so a buggy or hostile client cannot push a user's contribution beyond
// the sensitivity the calibration assumes: with no noise, the JDP curator's release and the
// LDP user's report after one hostile user differ from those after a zero-reward user by at
// most H in ℓ1 per statistic family (each of the H steps adds ≤ 1), and every reward entry is
// in [0, 1]. (On the old code a reward of 1e9 was released as is.)
func TestHostileRewardsClipped(t *testing.T) {
	const S, A, H, K = 3, 2, 4, 8
	priv := privacyConfig(JDP, 1, Strict, EPractical)
	for _, r := range append([]float64{0.5, 1}, privacytest.Hostile...) {
		ref, bad := hostileTrajectory(S, A, H, 0), hostileTrajectory(S, A, H, r)
		// JDP curator.
		var rel [2][]float64
		for i, tr := range []*model.Trajectory{ref, bad} {
			c, err := NewCentral(S, A, H, K, priv, func(string) noise.Source { return identitySource{} })
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Ingest(tr); err != nil {
				t.Fatalf("reward %g: %v", r, err)
			}
			rel[i] = append([]float64(nil), c.Release().R...)
		}
		if d := l1(rel[0], rel[1]); !(d <= H) {
			t.Errorf("JDP: reward %g: released reward sums moved by %g in ℓ1, sensitivity bound %d", r, d, H)
		}
		for _, v := range rel[1] {
			if !(v >= 0 && v <= 1) {
				t.Errorf("JDP: reward %g released as %g, outside [0, 1]", r, v)
			}
		}
		// LDP randomiser.
		var rep [2][]float64
		for i, tr := range []*model.Trajectory{ref, bad} {
			z := NewRandomizer(S, A, H, 1, identitySource{})
			out, err := z.Randomize(tr)
			if err != nil {
				t.Fatalf("reward %g: %v", r, err)
			}
			_, _, rep[i] = out.Values()
		}
		if d := l1(rep[0], rep[1]); !(d <= H) {
			t.Errorf("LDP: reward %g: report moved by %g in ℓ1, sensitivity bound %d", r, d, H)
		}
	}
}

// TestHostileIndicesRejected (issue 10 item 4): out-of-range states or actions and
// trajectories of the wrong length give an error naming the field — not a panic, and not a
// silent write into another (s, a) stream — and leave the privatizer's state unchanged.
func TestHostileIndicesRejected(t *testing.T) {
	const S, A, H, K = 3, 2, 4, 8
	cases := []struct {
		name string
		mod  func(*model.Trajectory) *model.Trajectory
	}{
		{"state too large", func(t *model.Trajectory) *model.Trajectory { t.S[1] = S; return t }},
		{"negative state", func(t *model.Trajectory) *model.Trajectory { t.S[0] = -1; return t }},
		{"last state", func(t *model.Trajectory) *model.Trajectory { t.S[H] = S + 7; return t }},
		{"action too large", func(t *model.Trajectory) *model.Trajectory { t.A[2] = A; return t }},
		{"negative action", func(t *model.Trajectory) *model.Trajectory { t.A[0] = -3; return t }},
		{"short", func(t *model.Trajectory) *model.Trajectory { t.A = t.A[:H-1]; return t }},
		{"nil", func(*model.Trajectory) *model.Trajectory { return nil }},
	}
	for _, c := range cases {
		check := func(who string, f func(*model.Trajectory) error) {
			t.Helper()
			defer func() {
				if p := recover(); p != nil {
					t.Errorf("%s, %s: panic %v", who, c.name, p)
				}
			}()
			err := f(c.mod(hostileTrajectory(S, A, H, 0.5)))
			if err == nil {
				t.Errorf("%s, %s: accepted", who, c.name)
			} else if !containsAny(err.Error(), "trajectory") {
				t.Errorf("%s, %s: error %q does not name the trajectory field", who, c.name, err)
			}
		}
		cen, err := NewCentral(S, A, H, K, privacyConfig(JDP, 1, Strict, EPractical), func(string) noise.Source { return identitySource{} })
		if err != nil {
			t.Fatal(err)
		}
		check("central", cen.Ingest)
		if cen.Release().Users != 0 || sum(cen.Release().N) != 0 {
			t.Errorf("central, %s: state changed by a rejected trajectory", c.name)
		}
		id, err := NewIdentity(S, A, H)
		if err != nil {
			t.Fatal(err)
		}
		check("identity", id.Ingest)
		z := NewRandomizer(S, A, H, 1, identitySource{})
		check("randomizer", func(tr *model.Trajectory) error { _, err := z.Randomize(tr); return err })
		// Through the agents' message path too.
		for _, mdl := range []Model{NonPrivate, JDP, LDP} {
			ag, err := New(S, A, H, K, Config{Algorithm: "dp-ucbvi", Privacy: privacyConfig(mdl, 1, Strict, EPractical), Bonus: PracticalBonus()}, seededStreams(1))
			if err != nil {
				t.Fatal(err)
			}
			check(fmt.Sprintf("agent %s", mdl), func(tr *model.Trajectory) error { return ag.Server.Receive(ag.Client.Encode(tr)) })
		}
	}
}

func containsAny(s string, subs ...string) bool {
	for _, x := range subs {
		for i := 0; i+len(x) <= len(s); i++ {
			if s[i:i+len(x)] == x {
				return true
			}
		}
	}
	return false
}

// TestSecureReleasesOnGrid (practical-privacy spec §7, the tabular part of the cross-family
// check): with the Secure source every JDP release (N, NT, R) and every LDP report entry is an
// exact multiple of the grid step of the Laplace scale actually used.
func TestSecureReleasesOnGrid(t *testing.T) {
	m := riverswim(t)
	const K = 12
	for _, mdl := range []Model{JDP, LDP} {
		st := Streams{Tie: rng.NewSeed(1).Child("tie").Rand(), Noise: func(name string) noise.Source {
			return noise.NewSecureFromKey([32]byte{byte(len(name)), 2})
		}}
		ag, err := New(m.S, m.A, m.H, K, Config{Algorithm: "dp-ucbvi", Privacy: privacyConfig(mdl, 1, Strict, EPractical), Bonus: PracticalBonus()}, st)
		if err != nil {
			t.Fatal(err)
		}
		if !ag.Privacy.Secure {
			t.Fatalf("%s: report says the noise is not secure", mdl)
		}
		g := noise.LaplaceGranularity(ag.Privacy.Scale)
		grid := func(int) float64 { return g }
		traj := model.NewTrajectory(m.H)
		users := usersOf(3)
		for k := 0; k < K-1; k++ {
			pol, err := ag.Server.Policy()
			if err != nil {
				t.Fatal(err)
			}
			m.Rollout(pol, users(k), traj)
			msg := ag.Client.Encode(traj)
			if rep, ok := msg.(*Report); ok {
				n, nt, r := rep.Values()
				for _, x := range [][]float64{n, nt, r} {
					if i := privacytest.OffGrid(x, grid); i >= 0 {
						t.Fatalf("LDP report entry %d = %g is off the grid %g", i, x[i], g)
					}
				}
			}
			if err := ag.Server.Receive(msg); err != nil {
				t.Fatal(err)
			}
			if mdl == JDP {
				bb := ag.Server.Billboard()
				for _, x := range [][]float64{bb.N, bb.NT, bb.R} {
					if i := privacytest.OffGrid(x, grid); i >= 0 {
						t.Fatalf("JDP release entry %d = %g is off the grid %g", i, x[i], g)
					}
				}
			}
		}
	}
}

// TestLDPServerCannotRegenerateNoise (issue 10 item 3e): no value reachable from the LDP
// server is a noise source or a seed, and it shares no random generator with the users'
// randomiser (so it cannot regenerate a report's noise); the randomiser is the positive
// control.
func TestLDPServerCannotRegenerateNoise(t *testing.T) {
	m := riverswim(t)
	for _, streams := range []Streams{seededStreams(1), {Tie: rng.NewSeed(1).Rand()}} {
		ag, err := New(m.S, m.A, m.H, 10, Config{Algorithm: "dp-ucbvi", Privacy: privacyConfig(LDP, 1, Strict, EPractical), Bonus: PracticalBonus()}, streams)
		if err != nil {
			t.Fatal(err)
		}
		if p, ok := privacytest.Reach(ag.Server, privacytest.NoiseOrSeed); ok {
			t.Errorf("the LDP server reaches a noise source or seed at %s", p)
		}
		if p, ok := privacytest.SharedState(ag.Client, ag.Server); ok {
			t.Errorf("the LDP server shares the users' random state at %s", p)
		}
		if _, ok := privacytest.Reach(ag.Client, privacytest.NoiseOrSeed); !ok {
			t.Error("the randomiser holds no noise source: the check is vacuous")
		}
	}
	// Negative control: a server that held the users' source would be flagged.
	z := NewRandomizer(2, 2, 2, 1, noise.NewSeeded(rng.NewSeed(1).Rand()))
	if _, ok := privacytest.SharedState(z, struct{ leak *Randomizer }{z}); !ok {
		t.Error("SharedState misses a shared noise source")
	}
}

// TestSecureScaleAccountsForRounding (issue 10 item 2): with the Secure source the statistic
// is rounded to the grid γ, which raises each changed coordinate's sensitivity from 1 to
// 1 + γ. The report's ε includes that factor, and the strict calibration's scale is inflated to
// b' ≥ b(1 + γ(b')) so the run stays ε-private under replace-one; Seeded runs are unchanged
// (scale 6HL/ε exactly, no grid).
func TestSecureScaleAccountsForRounding(t *testing.T) {
	const S, A, H, K = 4, 2, 5, 100
	L := float64(3 * H * 7) // 3·H·L with L = Levels(K−1) = 7
	for _, eps := range []float64{1e-3, 0.1, 1, 10} {
		priv := privacyConfig(JDP, eps, Strict, EPractical)
		seeded, err := NewCentral(S, A, H, K, priv, seededStreams(1).Noise)
		if err != nil {
			t.Fatal(err)
		}
		sec, err := NewCentral(S, A, H, K, priv, func(string) noise.Source { return noise.NewSecureFromKey([32]byte{1}) })
		if err != nil {
			t.Fatal(err)
		}
		rs, rq := seeded.Report(), sec.Report()
		if rs.Scale != 2*L/eps || rs.GridStep != 0 || rs.Secure {
			t.Errorf("ε=%g: seeded scale %g (want %g), grid %g", eps, rs.Scale, 2*L/eps, rs.GridStep)
		}
		g := noise.LaplaceGranularity(rq.Scale)
		if !rq.Secure || rq.GridStep != g || !(rq.Scale >= rs.Scale*(1+g)) {
			t.Errorf("ε=%g: secure scale %g, grid %g: want ≥ %g·(1+γ)", eps, rq.Scale, rq.GridStep, rs.Scale)
		}
		if want := 2 * L * (1 + g) / rq.Scale; math.Abs(rq.EpsilonReplaceOne-want) > 1e-12*want || !(rq.EpsilonReplaceOne <= eps*(1+1e-12)) || !rq.PrivateAtNominal {
			t.Errorf("ε=%g: secure ε (replace-one) = %g, want %g ≤ nominal", eps, rq.EpsilonReplaceOne, want)
		}
		// Without the inflation the rounding would exceed the nominal ε.
		if 2*L*(1+noise.LaplaceGranularity(rs.Scale))/rs.Scale <= eps {
			t.Errorf("ε=%g: the rounding slack is invisible: test is vacuous", eps)
		}
	}
	if b := secureScale(1e12); !(b > 1e12) || math.IsInf(b, 0) {
		t.Errorf("secureScale(1e12) = %g", b)
	}
}
