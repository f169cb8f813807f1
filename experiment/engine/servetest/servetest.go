// Package servetest holds the checks the families' tests share about a served agent
// (engine.Servable) against `dprl run`'s unit: in-process (protocol.Run), over a wire-form
// remote (protocol.RunRemote against FakeRemote, a fake service wrapping a third served
// session) and the unit itself give the same regrets, bit for bit.
package servetest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"testing"

	"github.com/dprl/dprl/agents/protocol"
	"github.com/dprl/dprl/experiment/engine"
)

// Family is a family whose agents are served and whose RunSpecs plan into `dprl run`'s units.
type Family interface {
	engine.Family
	engine.Servable
	engine.SpecPlanner
}

// Suite describes a served family to the shared checks: what is specific to the family.
type Suite struct {
	// Family is the family under test.
	Family Family
	// Env is the env line of its RunSpec documents ("env: {…}\n").
	Env string
	// Users is how its users draw their episodes (engine.Streams.Episodes).
	Users engine.UserStreams
	// Unit reads the cumulative regrets of `dprl run`'s unit of plan p (one unit, seed 0 of
	// col): cum[i] is R(checkpoints[i]). checkpoints nil means every episode 1..K
	// (len(cum) must then be K).
	Unit func(t *testing.T, p engine.Plan, col *engine.Collection) (checkpoints []int, cum []float64)
	// Nontrivial, if set, replaces Check's default guard (R(K) ≠ 0): it fails t when the
	// served regrets cum (R(k) at cum[k−1]) of s make the comparison vacuous.
	Nontrivial func(t *testing.T, s *engine.RunSpec, cum []float64)
	// Wire returns a new pointer to the wire type of rule (an agent's published rule) for
	// json.Unmarshal, or nil when rule is of no known type.
	Wire func(rule any) any
}

// Parse parses a served RunSpec document of the family (one agent, one seed) and checks it as
// a service does (engine.CheckServed).
func (c Suite) Parse(t *testing.T, doc string) *engine.RunSpec {
	t.Helper()
	s, err := engine.ParseRunSpec([]byte(doc), c.Family.Name())
	if err != nil {
		t.Fatal(err)
	}
	var r engine.Registry
	r.Register(c.Family)
	if _, err := engine.CheckServed(&r, s); err != nil {
		t.Fatal(err)
	}
	return s
}

// Serve builds the served agent of s with the streams st.
func (c Suite) Serve(t *testing.T, s *engine.RunSpec, st engine.Streams) engine.Served {
	t.Helper()
	sv, err := c.Family.Session(s, st)
	if err != nil {
		t.Fatal(err)
	}
	if sv.Users != c.Users {
		t.Fatalf("served users draw as %v, want %v", sv.Users, c.Users)
	}
	return sv
}

// FakeRemote is an in-process service: the curator of a served session behind the wire forms
// (rules as EncodeRule's JSON, cached by version; reports as EncodeBinary's bytes decoded
// against the curator's header). It records the rule bytes of every Policy call and the
// reports.
type FakeRemote struct {
	// Curator is the served session whose curator side answers.
	Curator protocol.Session
	// Version is the last published rule version.
	Version uint64
	// Rules holds the rule bytes returned by every Policy call, in order.
	Rules [][]byte
	// Reports holds the reports' wire bytes, in the order submitted.
	Reports [][]byte

	have bool
	rule []byte
}

// Policy publishes the curator's rule in its wire form (cached by version).
func (r *FakeRemote) Policy(context.Context) (uint64, []byte, error) {
	v, rule, err := r.Curator.Publish()
	if err != nil {
		return 0, nil, err
	}
	if !r.have || v != r.Version {
		b, err := protocol.EncodeRule(rule)
		if err != nil {
			return 0, nil, err
		}
		r.have, r.Version, r.rule = true, v, b
	}
	r.Rules = append(r.Rules, r.rule)
	return v, r.rule, nil
}

// Submit passes user k's report to the curator through its binary wire form.
func (r *FakeRemote) Submit(_ context.Context, k int, rep protocol.Report, _ float64) error {
	b, err := protocol.EncodeBinary(rep)
	if err != nil {
		return err
	}
	got, err := protocol.Decode(b, r.Curator.Expect())
	if err != nil {
		return fmt.Errorf("user %d: %w", k, err)
	}
	r.Reports = append(r.Reports, b)
	return r.Curator.Receive(got)
}

// Replay feeds the reports recorded by rec to the curator of sv in order and returns how many
// of its published rules (JSON) equal rec's.
func Replay(t *testing.T, sv engine.Served, rec *FakeRemote) (same int) {
	t.Helper()
	c := sv.Session
	for i, want := range rec.Rules {
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
		if i < len(rec.Reports) {
			rep, err := protocol.Decode(rec.Reports[i], c.Expect())
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

// Run is one served run of MatchesRun: an agent, its capacity K and its ε ("1" if empty).
type Run struct {
	Agent string
	K     int
	Eps   string
}

// MatchesRun checks each run (seed 7) with Check, in a subtest named by its agent.
func (c Suite) MatchesRun(t *testing.T, runs ...Run) {
	t.Helper()
	for _, r := range runs {
		eps := r.Eps
		if eps == "" {
			eps = "1"
		}
		t.Run(r.Agent, func(t *testing.T) {
			c.Check(t, c.Env+"episodes: "+strconv.Itoa(r.K)+"\nseeds: [7]\nagents: ["+r.Agent+"]\nprivacy: {epsilons: ["+eps+"]}\n")
		})
	}
}

// Check runs the served agent of doc in-process and remotely and compares both, bit for bit,
// with each other and with `dprl run`'s unit of the same spec and seed.
func (c Suite) Check(t *testing.T, doc string) {
	t.Helper()
	ctx := context.Background()
	s := c.Parse(t, doc)
	st := engine.Streams{Seed: s.Seeds[0]}
	K := s.Episodes

	local := c.Serve(t, s, st)
	if _, err := json.Marshal(local.Privacy); err != nil || local.Statement == "" {
		t.Fatalf("privacy report %v (%v), statement %q", local.Privacy, err, local.Statement)
	}
	var inproc []float64
	if err := protocol.Run(ctx, local.Session, protocol.Options{Episodes: K, Users: st.Episodes(c.Users),
		Each: func(_ int, r float64) { inproc = append(inproc, r) }}); err != nil {
		t.Fatal(err)
	}

	user, cur := c.Serve(t, s, st), c.Serve(t, s, st)
	rem := &FakeRemote{Curator: cur.Session}
	var remote []float64
	if err := protocol.RunRemote(ctx, user.Session, protocol.Options{Episodes: K, Users: st.Episodes(c.Users),
		Each: func(_ int, r float64) { remote = append(remote, r) }}, rem); err != nil {
		t.Fatal(err)
	}
	if len(inproc) != K || len(remote) != K {
		t.Fatalf("%d and %d regrets, want %d", len(inproc), len(remote), K)
	}
	cum := make([]float64, K) // R(k) as the unit sums it
	R := 0.0
	for k := range inproc {
		if math.Float64bits(inproc[k]) != math.Float64bits(remote[k]) {
			t.Fatalf("episode %d: regret %v in-process, %v remote", k+1, inproc[k], remote[k])
		}
		R += inproc[k]
		cum[k] = R
	}

	p, err := c.Family.PlanSpec(s, "test")
	if err != nil {
		t.Fatal(err)
	}
	pl, err := engine.NewPlanned(c.Family.Name(), p)
	if err != nil {
		t.Fatal(err)
	}
	col, err := engine.RunInMemory(ctx, pl, engine.Local{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	cps, unit := c.Unit(t, p, col)
	if cps == nil {
		if len(unit) != K {
			t.Fatalf("%d cumulative regrets recorded, want K = %d", len(unit), K)
		}
		cps = make([]int, K)
		for i := range cps {
			cps[i] = i + 1
		}
	} else if len(unit) != len(cps) || cps[len(cps)-1] != K {
		t.Fatalf("%d checkpoints recorded, want %d ending at K", len(unit), len(cps))
	}
	for i, k := range cps {
		if math.Float64bits(unit[i]) != math.Float64bits(cum[k-1]) {
			t.Fatalf("R(%d) = %v served, %v by dprl run's unit", k, cum[k-1], unit[i])
		}
	}
	if c.Nontrivial != nil {
		c.Nontrivial(t, s, cum)
	} else if R == 0 {
		t.Fatal("zero regret: the test compares nothing")
	}
	t.Logf("%s: R(%d) = %v, %d rule versions", s.Agents[0], K, R, rem.Version)
}

// Agents checks that every agent of names is served (K = 20, seed 1, ε = 1): its privacy
// report is JSON and its first rule round-trips through its wire form (Wire).
func (c Suite) Agents(t *testing.T, names []string) {
	t.Helper()
	if len(names) == 0 {
		t.Fatal("no agents: the test compares nothing")
	}
	for _, a := range names {
		s := c.Parse(t, c.Env+"episodes: 20\nseeds: [1]\nagents: ["+a+"]\nprivacy: {epsilons: [1]}\n")
		sv := c.Serve(t, s, engine.Streams{Seed: 1})
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
		back := c.Wire(rule)
		if back == nil {
			t.Fatalf("%s: rule of type %T", a, rule)
		}
		if err := json.Unmarshal(b, back); err != nil {
			t.Fatal(err)
		}
		if b2, _ := protocol.EncodeRule(back); !bytes.Equal(b, b2) {
			t.Errorf("%s: the rule does not round-trip", a)
		}
	}
}

// SecureKeyed checks that with privacy.noise secure and a key the noise of agent (capacity K,
// seed 3, ε = 1) is keyed: a second session with the same key fed the same reports publishes
// the same rules, one with another key (or with seeded noise) different ones. It fails when
// fewer than minVersions rule versions are published (the test would compare little).
func (c Suite) SecureKeyed(t *testing.T, agent string, K int, minVersions uint64) {
	t.Helper()
	ctx := context.Background()
	s := c.Parse(t, c.Env+"episodes: "+strconv.Itoa(K)+"\nseeds: [3]\nagents: ["+agent+"]\nprivacy: {epsilons: [1], noise: secure}\n")
	k1, k2 := [32]byte{1}, [32]byte{2}
	st := engine.Streams{Seed: 3, Key: &k1}
	rec := &FakeRemote{Curator: c.Serve(t, s, st).Session}
	if err := protocol.RunRemote(ctx, c.Serve(t, s, st).Session, protocol.Options{Episodes: s.Episodes, Users: st.Episodes(c.Users)}, rec); err != nil {
		t.Fatal(err)
	}
	if rec.Version < minVersions {
		t.Fatalf("only %d rule versions: the test compares little", rec.Version)
	}
	if same := Replay(t, c.Serve(t, s, st), rec); same != len(rec.Rules) {
		t.Errorf("same key: %d of %d rules equal, want all", same, len(rec.Rules))
	}
	other := st
	other.Key = &k2
	same := Replay(t, c.Serve(t, s, other), rec)
	t.Logf("%d rule versions; another key: %d of %d rules equal", rec.Version, same, len(rec.Rules))
	if same == len(rec.Rules) {
		t.Errorf("another key: all %d rules equal, want some to differ", same)
	}
	seeded := *s
	seeded.Privacy.Noise = "seeded"
	if same := Replay(t, c.Serve(t, &seeded, st), rec); same == len(rec.Rules) {
		t.Errorf("seeded noise: all %d rules equal to the keyed ones, want some to differ", same)
	}
}

// Load decodes unit 0 of col (a Suite.Unit's result) as a T.
func Load[T any](t *testing.T, col *engine.Collection) T {
	t.Helper()
	var v T
	if err := col.Load(0, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// PlayReports plays users users of the served spec in process (streams st: the users'
// episodes and noise as a seeded server's users draw them), against a fake service wrapping
// a second session of the same agent, and returns their decoded reports: valid reports of the
// family whatever a real server publishes (the kill and crash tests send them to one).
func PlayReports(t *testing.T, sv engine.Servable, spec *engine.RunSpec, st engine.Streams, users int) []protocol.Report {
	t.Helper()
	user, err := sv.Session(spec, st)
	if err != nil {
		t.Fatal(err)
	}
	cur, err := sv.Session(spec, st)
	if err != nil {
		t.Fatal(err)
	}
	rem := &FakeRemote{Curator: cur.Session}
	if err := protocol.RunRemote(context.Background(), user.Session, protocol.Options{Episodes: users, Users: st.Episodes(user.Users)}, rem); err != nil {
		t.Fatal(err)
	}
	out := make([]protocol.Report, len(rem.Reports))
	for i, b := range rem.Reports {
		if out[i], err = protocol.Decode(b, cur.Session.Expect()); err != nil {
			t.Fatal(err)
		}
	}
	return out
}
