package tabular

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"testing"

	model "github.com/dprl/dprl/model/tabular"
	"github.com/dprl/dprl/privacy/noise"
)

// practicalLDPSession builds practical-ldp on a small homogeneous MDP with the noise source src
// (nil: the deployment default) and returns its local curator and randomiser.
func practicalLDPSession(t *testing.T, src noise.Source, eps float64) (*LocalCurator, *GaussianRandomizer, *model.MDP) {
	t.Helper()
	m, err := model.RiverSwim(6)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := DefaultPracticalConfig("practical-ldp", eps, 1e-5)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Privacy.Pool = m.Homogeneous()
	ag, err := NewPractical(m.S, m.A, m.H, 20, cfg, PracticalStreams{Tie: rand.New(rand.NewPCG(1, 2)), Posterior: rand.New(rand.NewPCG(3, 4)), Noise: src})
	if err != nil {
		t.Fatal(err)
	}
	sess, _, err := ag.Session("practical-ldp", m, 20)
	if err != nil {
		t.Fatal(err)
	}
	cur, ok := sess.Curator().(*LocalCurator)
	if !ok {
		t.Fatalf("curator %T", sess.Curator())
	}
	return cur, ag.Client.(*GaussianRandomizer), m
}

// TestCuratorPublishesTheUsersCalibration: the σ a curator calibrates and publishes is the one
// a user computes herself from public parameters (PracticalUserSideFor) — exactly with a
// seeded source, a little more with a Secure one (its grid) — so an honest server passes the
// user's check, and the check refuses the same curator's σ at a weaker ε.
func TestCuratorPublishesTheUsersCalibration(t *testing.T) {
	seeded, _, m := practicalLDPSession(t, noise.NewSeeded(rand.New(rand.NewPCG(5, 6))), 1)
	own, err := PracticalUserSideFor("practical-ldp", m.S, m.A, m.H, m.Homogeneous(), m.PublicRewards, 1, 1e-5)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(seeded.UserSide(), own) {
		t.Fatalf("seeded curator publishes %+v, the user computes %+v", seeded.UserSide(), own)
	}
	secure, z, _ := practicalLDPSession(t, nil, 1)
	pub := secure.UserSide().(RandomizerParams)
	if !(pub.Sigma > own.Sigma) || pub.Sigma != z.sigma {
		t.Fatalf("secure curator σ %v (randomiser %v), own %v: want published = used > own", pub.Sigma, z.sigma, own.Sigma)
	}
	for _, c := range []*LocalCurator{seeded, secure} {
		b, _ := json.Marshal(c.UserSide())
		if err := c.CheckUserSide(b); err != nil {
			t.Fatalf("an honest curator's user_side refused: %v", err)
		}
	}
	weak, _, _ := practicalLDPSession(t, nil, 2)
	b, _ := json.Marshal(weak.UserSide())
	if err := secure.CheckUserSide(b); err == nil {
		t.Fatal("the user side at ε = 1 accepted a curator calibrated at ε = 2")
	}
	for _, bad := range []string{"", "null", `{"sigma":"x"}`} {
		if err := secure.CheckUserSide(json.RawMessage(bad)); err == nil {
			t.Fatalf("user_side %q accepted", bad)
		}
	}
}

// TestUserNoiseDefaultIsCSPRNG: practical-ldp's user-side randomiser draws by default from a
// noise.Secure source keyed from crypto/rand: its type is the CSPRNG one, and two randomisers
// built alike privatise the same episode differently.
func TestUserNoiseDefaultIsCSPRNG(t *testing.T) {
	_, a, m := practicalLDPSession(t, nil, 1)
	_, b, _ := practicalLDPSession(t, nil, 1)
	if _, ok := a.src.(*noise.Secure); !ok || !a.src.Secure() {
		t.Fatalf("default user noise source %T, want *noise.Secure", a.src)
	}
	traj := model.NewTrajectory(m.H)
	pol := &model.Policy{Act: make([][]int, m.H)}
	for h := range pol.Act {
		pol.Act[h] = make([]int, m.S)
	}
	m.Rollout(pol, rand.New(rand.NewPCG(7, 8)), traj)
	ra, err := a.Randomize(traj)
	if err != nil {
		t.Fatal(err)
	}
	x := ra.Values()
	rb, err := b.Randomize(traj)
	if err != nil {
		t.Fatal(err)
	}
	if reflect.DeepEqual(x, rb.Values()) {
		t.Fatal("two default randomisers added the same noise")
	}
}
