package linmix

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"testing"

	agents "github.com/dprl/dprl/agents/linmix"
	"github.com/dprl/dprl/agents/protocol"
	"github.com/dprl/dprl/experiment/engine"
)

// The served agent (engine.Servable) against `dprl run`'s unit: in-process (protocol.Run), over
// a wire-form remote (protocol.RunRemote against a fake service wrapping a third served
// session) and the unit itself give the same regrets, bit for bit.

const serveEnv = "env: {name: two-state-hard, params: {dim: 3, horizon: 4}}\n"

// parseServed parses a served RunSpec document (one agent, one seed) and checks it as a service
// does (engine.CheckServed).
func parseServed(t *testing.T, doc string) *engine.RunSpec {
	t.Helper()
	s, err := engine.ParseRunSpec([]byte(doc), FamilyName)
	if err != nil {
		t.Fatal(err)
	}
	var r engine.Registry
	r.Register(Family{})
	if _, err := engine.CheckServed(&r, s); err != nil {
		t.Fatal(err)
	}
	return s
}

func serve(t *testing.T, s *engine.RunSpec, st engine.Streams) engine.Served {
	t.Helper()
	sv, err := Family{}.Session(s, st)
	if err != nil {
		t.Fatal(err)
	}
	return sv
}

// fakeRemote is an in-process service: the curator of a served session behind the wire forms
// (rules as EncodeRule's JSON, cached by version; reports as EncodeBinary's bytes decoded against
// the curator's header). It records the rule bytes of every Policy call and the reports.
type fakeRemote struct {
	cur     protocol.Session
	have    bool
	version uint64
	rule    []byte
	rules   [][]byte
	reports [][]byte
}

func (r *fakeRemote) Policy(context.Context) (uint64, []byte, error) {
	v, rule, err := r.cur.Publish()
	if err != nil {
		return 0, nil, err
	}
	if !r.have || v != r.version {
		b, err := protocol.EncodeRule(rule)
		if err != nil {
			return 0, nil, err
		}
		r.have, r.version, r.rule = true, v, b
	}
	r.rules = append(r.rules, r.rule)
	return v, r.rule, nil
}

func (r *fakeRemote) Submit(_ context.Context, k int, rep protocol.Report, _ float64) error {
	b, err := protocol.EncodeBinary(rep)
	if err != nil {
		return err
	}
	got, err := protocol.Decode(b, r.cur.Expect())
	if err != nil {
		return fmt.Errorf("user %d: %w", k, err)
	}
	r.reports = append(r.reports, b)
	return r.cur.Receive(got)
}

// replay feeds the reports recorded by rec to the curator of sv in order and returns how many
// of its published rules (JSON) equal rec's.
func replay(t *testing.T, sv engine.Served, rec *fakeRemote) (same int) {
	t.Helper()
	c := sv.Session
	for i, want := range rec.rules {
		_, rule, err := c.Publish()
		if err != nil {
			t.Fatal(err)
		}
		b, err := protocol.EncodeRule(rule)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Equal(b, want) {
			same++
		}
		if i < len(rec.reports) {
			rep, err := protocol.Decode(rec.reports[i], c.Expect())
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Receive(rep); err != nil {
				t.Fatalf("report %d: %v", i+1, err)
			}
		}
	}
	return same
}

// checkServed runs the served agent of doc (seed 7) in-process and remotely and compares both,
// bit for bit, with each other and with `dprl run`'s unit of the same spec and seed.
func checkServed(t *testing.T, doc string) {
	t.Helper()
	ctx := context.Background()
	s := parseServed(t, doc)
	st := engine.Streams{Seed: s.Seeds[0]}
	K := s.Episodes

	local := serve(t, s, st)
	if _, err := json.Marshal(local.Privacy); err != nil || local.Statement == "" {
		t.Fatalf("privacy report %v (%v), statement %q", local.Privacy, err, local.Statement)
	}
	var inproc []float64
	if err := protocol.Run(ctx, local.Session, protocol.Options{Episodes: K, Users: st.Episodes(engine.FromOne),
		Each: func(_ int, r float64) { inproc = append(inproc, r) }}); err != nil {
		t.Fatal(err)
	}

	user, cur := serve(t, s, st), serve(t, s, st)
	rem := &fakeRemote{cur: cur.Session}
	var remote []float64
	if err := protocol.RunRemote(ctx, user.Session, protocol.Options{Episodes: K, Users: st.Episodes(engine.FromOne),
		Each: func(_ int, r float64) { remote = append(remote, r) }}, rem); err != nil {
		t.Fatal(err)
	}
	if len(inproc) != K || len(remote) != K {
		t.Fatalf("%d and %d regrets, want %d", len(inproc), len(remote), K)
	}
	cum := make([]float64, K) // R(k) as the unit sums it
	c := 0.0
	for k := range inproc {
		if math.Float64bits(inproc[k]) != math.Float64bits(remote[k]) {
			t.Fatalf("episode %d: regret %v in-process, %v remote", k+1, inproc[k], remote[k])
		}
		c += inproc[k]
		cum[k] = c
	}

	p, err := Family{}.PlanSpec(s, "test")
	if err != nil {
		t.Fatal(err)
	}
	pl, err := engine.NewPlanned(FamilyName, p)
	if err != nil {
		t.Fatal(err)
	}
	col, err := engine.RunInMemory(ctx, pl, engine.Local{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	var sr unitResult
	if err := col.Load(0, &sr); err != nil {
		t.Fatal(err)
	}
	cps := p.(*plan).checkpoints
	if len(sr.Cum) != len(cps) || cps[len(cps)-1] != K {
		t.Fatalf("%d checkpoints recorded, want %d ending at K", len(sr.Cum), len(cps))
	}
	for i, k := range cps {
		if math.Float64bits(sr.Cum[i]) != math.Float64bits(cum[k-1]) {
			t.Fatalf("R(%d) = %v served, %v by dprl run's unit", k, cum[k-1], sr.Cum[i])
		}
	}
	if c == 0 {
		t.Fatal("zero regret: the test compares nothing")
	}
	t.Logf("%s: R(%d) = %v, %d rule versions", s.Agents[0], K, c, rem.version)
}

func TestServedMatchesRun(t *testing.T) {
	for _, c := range []struct{ agent, K string }{
		// practical-vtr releases every 500 users (the spec's batch_every).
		{"practical-vtr/jdp", "2000"}, {"practical-vtr/ldp", "2000"},
		// the papers' agents: UCRL-VTR+ (its rule carries the billboard and widths) and
		// LinOpt-PO (a softmax policy).
		{"ucrl-vtr+/jdp", "300"}, {"linopt-po/ldp", "300"},
	} {
		t.Run(c.agent, func(t *testing.T) {
			checkServed(t, serveEnv+"episodes: "+c.K+"\nseeds: [7]\nagents: ["+c.agent+"]\nprivacy: {epsilons: [1]}\n")
		})
	}
}

// TestServedAgents: every agent of the family is served; its privacy report is JSON and its
// first rule round-trips through its wire form.
func TestServedAgents(t *testing.T) {
	for _, a := range AgentNames() {
		s := parseServed(t, serveEnv+"episodes: 20\nseeds: [1]\nagents: ["+a+"]\nprivacy: {epsilons: [1]}\n")
		sv := serve(t, s, engine.Streams{Seed: 1})
		if _, err := json.Marshal(sv.Privacy); err != nil || sv.Statement == "" {
			t.Errorf("%s: privacy %v (%v), statement %q", a, sv.Privacy, err, sv.Statement)
		}
		t.Logf("%s: %s", a, sv.Statement)
		_, rule, err := sv.Session.Publish()
		if err != nil {
			t.Fatal(err)
		}
		b, err := protocol.EncodeRule(rule)
		if err != nil {
			t.Fatal(err)
		}
		var back *agents.Rule
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		if b2, _ := protocol.EncodeRule(back); !bytes.Equal(b, b2) {
			t.Errorf("%s: the rule does not round-trip", a)
		}
	}
}

// TestServedSecureKeyed: with privacy.noise secure and a key, the noise is keyed: a second
// session with the same key fed the same reports publishes the same rules, one with another key
// different ones.
func TestServedSecureKeyed(t *testing.T) {
	ctx := context.Background()
	s := parseServed(t, serveEnv+"episodes: 2000\nseeds: [3]\nagents: [practical-vtr/jdp]\nprivacy: {epsilons: [1], noise: secure}\n")
	k1, k2 := [32]byte{1}, [32]byte{2}
	st := engine.Streams{Seed: 3, Key: &k1}
	rec := &fakeRemote{cur: serve(t, s, st).Session}
	if err := protocol.RunRemote(ctx, serve(t, s, st).Session, protocol.Options{Episodes: s.Episodes, Users: st.Episodes(engine.FromOne)}, rec); err != nil {
		t.Fatal(err)
	}
	if rec.version < 2 {
		t.Fatalf("only %d rule versions: the test compares little", rec.version)
	}
	if same := replay(t, serve(t, s, st), rec); same != len(rec.rules) {
		t.Errorf("same key: %d of %d rules equal, want all", same, len(rec.rules))
	}
	other := st
	other.Key = &k2
	same := replay(t, serve(t, s, other), rec)
	t.Logf("%d rule versions; another key: %d of %d rules equal", rec.version, same, len(rec.rules))
	if same == len(rec.rules) {
		t.Errorf("another key: all %d rules equal, want some to differ", same)
	}
	seeded := *s
	seeded.Privacy.Noise = "seeded"
	if same := replay(t, serve(t, &seeded, st), rec); same == len(rec.rules) {
		t.Errorf("seeded noise: all %d rules equal to the keyed ones, want some to differ", same)
	}
}
