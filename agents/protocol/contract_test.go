package protocol_test

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/dprl/dprl/agents/linmdp"
	"github.com/dprl/dprl/agents/linmix"
	"github.com/dprl/dprl/agents/lq"
	"github.com/dprl/dprl/agents/protocol"
	"github.com/dprl/dprl/agents/tabular"
	mlinmdp "github.com/dprl/dprl/model/linmdp"
	mlinmix "github.com/dprl/dprl/model/linmix"
	mlq "github.com/dprl/dprl/model/lq"
	mtab "github.com/dprl/dprl/model/tabular"
	"github.com/dprl/dprl/privacy/noise"
	"github.com/dprl/dprl/rng"
)

var update = flag.Bool("update", false, "rewrite testdata/*.json")

// agentCase builds one agent's session afresh (the same seed gives the same session), with a
// snapshot of what its curator has released; rule reads the policy the curator publishes next.
// Both return deep copies, comparable with reflect.DeepEqual.
type agentCase struct {
	name  string
	K     int // the agent's K; tests run K − 1 episodes and then publish once more
	build func(t testing.TB) (protocol.Session, func() any)
	rule  func(t testing.TB, s protocol.Session) any
}

// users returns user k's stream rng.NewSeed(seed)/users/k.
func users(seed uint64) func(k int) *rand.Rand {
	u := rng.NewSeed(seed).Child("users")
	return func(k int) *rand.Rand { return u.Index(uint64(k)).Rand() }
}

// must returns v, or fails the test (through a panic) on err.
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func publish[T any](t testing.TB, s protocol.Session) protocol.Policy[T] {
	t.Helper()
	c, ok := s.Curator().(interface {
		Publish() (protocol.Policy[T], error)
	})
	if !ok {
		t.Fatalf("curator %T does not publish %T", s.Curator(), *new(T))
	}
	return must(c.Publish())
}

func tabularRule(t testing.TB, s protocol.Session) any {
	p := publish[*mtab.Policy](t, s)
	out := make([][]int, len(p.Rule.Act))
	for h := range out {
		out[h] = slices.Clone(p.Rule.Act[h])
	}
	return out
}

func linmixRule(t testing.TB, s protocol.Session) any {
	p := publish[*linmix.Rule](t, s)
	return [2]any{slices.Clone(p.Rule.Policy.Act), slices.Clone(p.Rule.Policy.Prob)}
}

// eps is the ε of the private cases: large, so that the policies follow the data within the
// few episodes of a test (the tests compare runs, they do not measure learning).
const eps = 100

func tabularPractical(name string, H, K int) func(t testing.TB) (protocol.Session, func() any) {
	return func(t testing.TB) (protocol.Session, func() any) {
		m := must(mtab.RiverSwim(H))
		cfg := must(tabular.DefaultPracticalConfig(name, eps, 1e-5))
		cfg.Privacy.BatchEvery = 2
		root := rng.NewSeed(7)
		ag := must(tabular.NewPractical(m.S, m.A, m.H, K, cfg, tabular.PracticalStreams{Tie: root.Child("tie").Rand(),
			Posterior: root.Child("posterior").Rand(), Noise: noise.NewSeeded(root.Child("noise").Rand())}))
		s, _, err := ag.Session(name, m, K)
		return must(s, err), func() any { return ag.Server.Release().Clone() }
	}
}

func tabularPaper(name string, H, K int) func(t testing.TB) (protocol.Session, func() any) {
	return func(t testing.TB) (protocol.Session, func() any) {
		m := must(mtab.RiverSwim(H))
		info := must(tabular.Lookup(name))
		priv := tabular.PrivacyConfig{Model: info.Model, Epsilon: eps, Calibration: tabular.Strict, Beta: 0.1, EMode: tabular.EPractical, EScale: 1}
		root := rng.NewSeed(7)
		ag := must(tabular.New(m.S, m.A, m.H, K, tabular.Config{Algorithm: info.Algorithm, Privacy: priv, Bonus: tabular.PracticalBonus()},
			tabular.Streams{Tie: root.Child("tie").Rand(), Noise: func(n string) noise.Source { return noise.NewSeeded(root.Child(n).Rand()) }}))
		s, _, err := ag.Session(name, m, K)
		return must(s, err), func() any { return ag.Server.Billboard().Clone() }
	}
}

func linmdpCase(name string, K int, mk func(env *mlinmdp.MDP, com linmdp.Common) (linmdp.Agent, error)) agentCase {
	return agentCase{name: name, K: K, build: func(t testing.TB) (protocol.Session, func() any) {
		env := must(mlinmdp.RiverSwimOneHot(3, 4))
		seed := rng.NewSeed(3).Child("agent")
		ag := must(mk(env, linmdp.Common{K: K, Seed: &seed, CBeta: 0.05}))
		s, _, ev := linmdp.NewSession(env, ag, name, K)
		return s, func() any { return [2]any{ag.Updates(), ev.Return} }
	}, rule: func(t testing.TB, s protocol.Session) any {
		p := publish[[][]int](t, s)
		out := make([][]int, len(p.Rule))
		for h := range out {
			out[h] = slices.Clone(p.Rule[h])
		}
		return out
	}}
}

func linmixPractical(mode linmix.Mode, H, K int) agentCase {
	return agentCase{name: "practical-vtr/" + mode.String(), K: K, build: func(t testing.TB) (protocol.Session, func() any) {
		m := must(mlinmix.TwoStateHard(3, H, 0.1, 0.5, nil))
		cfg := linmix.PracticalConfig{Privacy: linmix.PracticalPrivacy{Mode: mode, Epsilon: eps, Delta: 1e-5, BatchEvery: 2}, Episodes: K, BetaMult: 0.01}
		a := must(linmix.NewPracticalSeeded(m, cfg, rng.NewSeed(5)))
		s, _ := a.Session()
		return s, func() any { return a.Release().Clone() }
	}, rule: linmixRule}
}

func linmixPaper(alg linmix.Algorithm, mode linmix.Mode, H, K int) agentCase {
	cfg := linmix.Config{Algorithm: alg, Mode: mode, Episodes: K, Epsilon: eps, Delta: 1e-3}
	return agentCase{name: cfg.Name(), K: K, build: func(t testing.TB) (protocol.Session, func() any) {
		m := must(mlinmix.TwoStateHard(3, H, 0.1, 0.5, nil))
		a := must(linmix.NewSeeded(m, cfg, rng.NewSeed(5)))
		s, _ := a.Session()
		return s, func() any { return a.Billboard().Clone() }
	}, rule: linmixRule}
}

// lqPractical runs practical-ofu-rl with a release after every user (the default batches are
// longer than the test).
func lqPractical(K int) agentCase {
	return agentCase{name: "practical-ofu-rl", K: K, build: func(t testing.TB) (protocol.Session, func() any) {
		sys := mlq.LQE1()
		cfg := lq.DefaultPracticalConfig(eps, K)
		cfg.BatchEvery, cfg.References = 1, 2
		cfg.Search.NumRandomStarts, cfg.Search.MaxIter = 2, 20
		pub := lq.PublicOf(sys)
		cur := must(lq.NewPracticalCurator(pub, cfg, noise.NewSeeded(rng.NewSeed(9).Child("noise").Rand())))
		pl := must(lq.NewPracticalPlanner(pub, cfg, rng.NewSeed(9).Child("optimiser")))
		srv := lq.NewPracticalServer(cur, pl, cfg.Name())
		return protocol.NewSession(srv, lq.NewPracticalUser(sys, srv.Expect()), lq.NewPracticalEvaluator(sys)),
			func() any { return cur.Release().Clone() }
	}, rule: func(t testing.TB, s protocol.Session) any {
		p := publish[*lq.PracticalPlanner](t, s)
		g := [][]float64{slices.Clone(p.Rule.Set.Set.ThetaHat), {p.Rule.Set.Set.Beta}}
		for _, rp := range p.Rule.Refs {
			for _, k := range rp.Gains {
				g = append(g, slices.Clone(k))
			}
		}
		return g
	}}
}

func lqPaper(K int) agentCase {
	return agentCase{name: "private-ofu-rl", K: K, build: func(t testing.TB) (protocol.Session, func() any) {
		sys := mlq.LQE1()
		cfg := lq.DefaultConfig(eps, K)
		cfg.Search.NumRandomStarts, cfg.Search.MaxIter = 2, 20
		pub := lq.PublicOf(sys)
		consts := must(lq.ComputeConstants(pub, cfg))
		root := rng.NewSeed(9)
		cur := must(lq.NewCurator(pub, cfg, consts, noise.NewSeeded(root.Child("B1").Rand()), noise.NewSeeded(root.Child("B2").Rand())))
		srv := lq.NewServer(cur, cfg.Name(), K)
		u := lq.NewOFUUser(sys, lq.NewPlanner(pub, cfg, consts), srv.Expect(), root.Child("optimiser"))
		return protocol.NewSession(srv, u, lq.NewEvaluator(sys)), func() any { return cur.ScaledPairs }
	}, rule: func(t testing.TB, s protocol.Session) any {
		p := publish[*lq.Billboard](t, s)
		return [2][]float64{slices.Clone(p.Rule.T1), slices.Clone(p.Rule.T2)}
	}}
}

// cases are the agents every contract test runs: each family's practical agents (JDP and LDP)
// and a papers' agent of each report layout.
func cases() []agentCase {
	lsvi := func(env *mlinmdp.MDP, com linmdp.Common) (linmdp.Agent, error) { return linmdp.NewLSVIUCB(env, com) }
	practical := func(env *mlinmdp.MDP, com linmdp.Common) (linmdp.Agent, error) {
		return linmdp.NewPractical(env, linmdp.PracticalConfig{Common: com, Epsilon: eps, Delta: 1e-5, Batched: true, BatchEvery: 2})
	}
	return []agentCase{
		{name: "practical-jdp", K: 40, build: tabularPractical("practical-jdp", 4, 40), rule: tabularRule},
		{name: "practical-ldp", K: 40, build: tabularPractical("practical-ldp", 4, 40), rule: tabularRule},
		{name: "practical-psrl-jdp", K: 20, build: tabularPractical("practical-psrl-jdp", 4, 20), rule: tabularRule},
		{name: "dp-ucbvi-ldp", K: 12, build: tabularPaper("dp-ucbvi-ldp", 3, 12), rule: tabularRule},
		linmdpCase("practical-lsvi-batched", 30, practical),
		linmdpCase("lsvi-ucb", 12, lsvi),
		linmixPractical(linmix.JDP, 4, 30),
		linmixPractical(linmix.LDP, 4, 30),
		linmixPaper(linmix.UCRLVTRPlus, linmix.JDP, 3, 8),
		linmixPaper(linmix.LinOptPO, linmix.LDP, 3, 8),
		lqPractical(12),
		lqPaper(6),
	}
}

// outcome runs c for K − 1 episodes (with transport, if non-nil) and returns the regret of
// every episode and the policy published next.
func outcome(t testing.TB, c agentCase, transport func(s protocol.Session) func(protocol.Report) (protocol.Report, error)) ([]float64, any) {
	t.Helper()
	s, released := c.build(t)
	var regret []float64
	o := protocol.Options{Episodes: c.K - 1, Users: users(11), Each: func(_ int, r float64) { regret = append(regret, r) }}
	if transport != nil {
		o.Transport = transport(s)
	}
	if err := protocol.Run(context.Background(), s, o); err != nil {
		t.Fatal(err)
	}
	return regret, [2]any{released(), c.rule(t, s)}
}

func wire(encode func(protocol.Report) ([]byte, error)) func(s protocol.Session) func(protocol.Report) (protocol.Report, error) {
	return func(s protocol.Session) func(protocol.Report) (protocol.Report, error) {
		return func(r protocol.Report) (protocol.Report, error) {
			b, err := encode(r)
			if err != nil {
				return nil, err
			}
			return protocol.Decode(b, s.Expect())
		}
	}
}

// TestWireEqualsInProcess plays every agent's episodes with each report encoded, sent and
// decoded (JSON and binary) before the curator receives it: the regrets and the policy the
// curator publishes afterwards are bit-identical to the in-process path.
func TestWireEqualsInProcess(t *testing.T) {
	for _, c := range cases() {
		t.Run(c.name, func(t *testing.T) {
			r0, p0 := outcome(t, c, nil)
			for name, enc := range map[string]func(protocol.Report) ([]byte, error){"json": protocol.EncodeJSON, "binary": protocol.EncodeBinary} {
				r1, p1 := outcome(t, c, wire(enc))
				if !slices.Equal(r0, r1) {
					t.Errorf("%s: regrets differ from the in-process path:\n%v\n%v", name, r0, r1)
				}
				if !reflect.DeepEqual(p0, p1) {
					t.Errorf("%s: the policy published after %d episodes differs from the in-process one", name, c.K-1)
				}
			}
			if len(r0) != c.K-1 {
				t.Fatalf("%d regrets, want %d", len(r0), c.K-1)
			}
		})
	}
}

// TestWireCheckIsSensitive: the comparisons of TestWireEqualsInProcess and
// TestHostileReportsRefused see a change of the reports' content: a transport that alters one
// number of every report changes the outcome of every case.
func TestWireCheckIsSensitive(t *testing.T) {
	for _, c := range cases() {
		r0, p0 := outcome(t, c, nil)
		r1, p1 := outcome(t, c, func(protocol.Session) func(protocol.Report) (protocol.Report, error) {
			return func(r protocol.Report) (protocol.Report, error) {
				switch r := r.(type) {
				case *protocol.Trajectory:
					for h, x := range r.Rewards {
						r.Rewards[h] = 1 - x
					}
				case *protocol.Leaves:
					r.Y[0][0] += 0.3
				case *protocol.Path:
					r.States[1][0] += 0.3
				case *protocol.Privatized:
					// A sign flip stays within the LDP curators' symmetric report bound.
					r.Blocks[0][0] = -r.Blocks[0][0]
				}
				return r, nil
			}
		})
		if slices.Equal(r0, r1) && reflect.DeepEqual(p0, p1) {
			t.Errorf("%s: altered reports left the outcome unchanged: the comparison is vacuous", c.name)
		}
	}
}

// hostile returns malformed copies of the honest report r for a curator expecting want, each
// with the field its error must name.
func hostile(r protocol.Report, want protocol.Header) map[string]protocol.Report {
	out := map[string]protocol.Report{}
	head := func(f func(h *protocol.Header)) protocol.Header {
		h := want
		h.Dims.Regressors, h.Dims.Blocks = slices.Clone(h.Dims.Regressors), slices.Clone(h.Dims.Blocks)
		f(&h)
		return h
	}
	switch r := r.(type) {
	case *protocol.Trajectory:
		cp := func(f func(c *protocol.Trajectory)) *protocol.Trajectory {
			c := &protocol.Trajectory{Header: r.Header, States: slices.Clone(r.States), Actions: slices.Clone(r.Actions), Rewards: slices.Clone(r.Rewards)}
			f(c)
			return c
		}
		H, S, A := want.Dims.Horizon, want.Dims.States, want.Dims.Actions
		out["states"] = cp(func(c *protocol.Trajectory) { c.States = c.States[:H] })
		out["actions"] = cp(func(c *protocol.Trajectory) { c.Actions = append(c.Actions, 0) })
		out["rewards"] = cp(func(c *protocol.Trajectory) { c.Rewards = c.Rewards[:H-1] })
		out["states[1]"] = cp(func(c *protocol.Trajectory) { c.States[1] = S })
		out["states[0]"] = cp(func(c *protocol.Trajectory) { c.States[0] = -1 })
		out[fmt.Sprintf("actions[%d]", H-1)] = cp(func(c *protocol.Trajectory) { c.Actions[H-1] = A })
		out["rewards[1]"] = cp(func(c *protocol.Trajectory) { c.Rewards[1] = math.NaN() })
		out["rewards[0]"] = cp(func(c *protocol.Trajectory) { c.Rewards[0] = math.Inf(1) })
		out["header.agent"] = cp(func(c *protocol.Trajectory) { c.Header = head(func(h *protocol.Header) { h.Agent = "other" }) })
		out["header.dims.states"] = cp(func(c *protocol.Trajectory) { c.Header = head(func(h *protocol.Header) { h.Dims.States++ }) })
		out["header.schema"] = cp(func(c *protocol.Trajectory) { c.Header = head(func(h *protocol.Header) { h.Schema = 2 }) })
	case *protocol.Leaves:
		cp := func(f func(c *protocol.Leaves)) *protocol.Leaves {
			c := &protocol.Leaves{Header: r.Header}
			for h := range r.X {
				c.X, c.Y = append(c.X, cloneRows(r.X[h])), append(c.Y, slices.Clone(r.Y[h]))
			}
			f(c)
			return c
		}
		out["x"] = cp(func(c *protocol.Leaves) { c.X, c.Y = append(c.X, c.X[0]), append(c.Y, c.Y[0]) }) // too many leaves
		out["y"] = cp(func(c *protocol.Leaves) { c.Y = c.Y[1:] })
		out["x[0][0]"] = cp(func(c *protocol.Leaves) { c.X[0][0] = append(c.X[0][0], 0) })
		out["x[1][0][1]"] = cp(func(c *protocol.Leaves) { c.X[1][0][1] = math.NaN() })
		out["y[0][0]"] = cp(func(c *protocol.Leaves) { c.Y[0][0] = math.Inf(-1) })
		out["header.dims.steps"] = cp(func(c *protocol.Leaves) { c.Header = head(func(h *protocol.Header) { h.Dims.Steps++ }) })
	case *protocol.Path:
		cp := func(f func(c *protocol.Path)) *protocol.Path {
			c := &protocol.Path{Header: r.Header, States: cloneRows(r.States), Inputs: cloneRows(r.Inputs)}
			f(c)
			return c
		}
		out["states"] = cp(func(c *protocol.Path) { c.States = c.States[1:] })
		out["inputs"] = cp(func(c *protocol.Path) { c.Inputs = append(c.Inputs, c.Inputs[0]) })
		out["states[2]"] = cp(func(c *protocol.Path) { c.States[2] = c.States[2][:1] })
		out["inputs[1][0]"] = cp(func(c *protocol.Path) { c.Inputs[1][0] = math.NaN() })
		out["states[3][1]"] = cp(func(c *protocol.Path) { c.States[3][1] = math.Inf(1) })
		out["header.dims.input_dim"] = cp(func(c *protocol.Path) { c.Header = head(func(h *protocol.Header) { h.Dims.InputDim++ }) })
	case *protocol.Privatized:
		cp := func(f func(c *protocol.Privatized)) *protocol.Privatized {
			c := &protocol.Privatized{Header: r.Header, Blocks: cloneRows(r.Blocks)}
			f(c)
			return c
		}
		out["blocks"] = cp(func(c *protocol.Privatized) { c.Blocks = c.Blocks[1:] })
		out["blocks[0]"] = cp(func(c *protocol.Privatized) { c.Blocks[0] = c.Blocks[0][1:] })
		out["blocks[0][3]"] = cp(func(c *protocol.Privatized) { c.Blocks[0][3] = math.NaN() })
		out["blocks[0][0]"] = cp(func(c *protocol.Privatized) { c.Blocks[0][0] = math.Inf(-1) })
		out["header.kind"] = cp(func(c *protocol.Privatized) {
			c.Header = head(func(h *protocol.Header) { h.Kind = protocol.KindTrajectory })
		})
		out["header.dims.blocks[0]"] = cp(func(c *protocol.Privatized) { c.Header = head(func(h *protocol.Header) { h.Dims.Blocks[0]++ }) })
	}
	return out
}

func fieldOf(err error) string {
	var fe *protocol.FieldError
	if errors.As(err, &fe) {
		return fe.Field
	}
	return ""
}

// TestHostileReportsRefused sends, before every honest report, malformed copies of it (wrong
// sizes, NaN and ±Inf, out-of-range states and actions, too many leaves, a wrong header) to
// the curator, directly (Receive) and as bytes (Decode, JSON and binary, plus an oversized
// message): each is refused with an error naming the field, and the run is bit-identical to
// one that never saw them (the curator changed nothing).
func TestHostileReportsRefused(t *testing.T) {
	for _, c := range cases() {
		t.Run(c.name, func(t *testing.T) {
			r0, p0 := outcome(t, c, nil)
			attempts := 0
			r1, p1 := outcome(t, c, func(s protocol.Session) func(protocol.Report) (protocol.Report, error) {
				want := s.Expect()
				return func(r protocol.Report) (protocol.Report, error) {
					for field, bad := range hostile(r, want) {
						attempts++
						if err := s.Receive(bad); err == nil || fieldOf(err) != field {
							t.Fatalf("Receive of a report with a bad %s: got %v, want an error naming %s", field, err, field)
						}
						b, err := protocol.EncodeBinary(bad)
						if err != nil {
							t.Fatal(err)
						}
						if _, err := protocol.Decode(b, want); err == nil || fieldOf(err) != field {
							t.Fatalf("Decode of a binary report with a bad %s: got %v, want an error naming %s", field, err, field)
						}
						if b, err := protocol.EncodeJSON(bad); err == nil { // NaN and ±Inf have no JSON form
							if _, err := protocol.Decode(b, want); err == nil || fieldOf(err) != field {
								t.Fatalf("Decode of a JSON report with a bad %s: got %v, want an error naming %s", field, err, field)
							}
						}
					}
					big := make([]byte, protocol.MaxBytes(want)+1)
					copy(big, `{"header":`)
					if _, err := protocol.Decode(big, want); fieldOf(err) != "size" {
						t.Fatalf("oversized report: got %v, want an error naming size", err)
					}
					return r, nil
				}
			})
			if attempts == 0 {
				t.Fatal("no hostile report was tried")
			}
			if !slices.Equal(r0, r1) || !reflect.DeepEqual(p0, p1) {
				t.Errorf("refused reports changed the curator: the run differs from the clean one")
			}
		})
	}
}

// TestDecodeRefusesMalformedJSON: unknown fields, duplicate keys, trailing data, a missing
// header and another schema version are refused, naming the field.
func TestDecodeRefusesMalformedJSON(t *testing.T) {
	c := cases()[0]
	s, _ := c.build(t)
	var good []byte
	if err := protocol.Run(context.Background(), s, protocol.Options{Episodes: 2, Users: users(1), Transport: func(r protocol.Report) (protocol.Report, error) {
		good = must(protocol.EncodeJSON(r))
		return r, nil
	}}); err != nil {
		t.Fatal(err)
	}
	want := s.Expect()
	if _, err := protocol.Decode(good, want); err != nil {
		t.Fatalf("the honest report is refused: %v", err)
	}
	for _, bad := range []struct{ field, doc string }{
		{"json", strings.Replace(string(good), `"states"`, `"extra":1,"states"`, 1)},
		{"json", strings.Replace(string(good), `"states"`, `"rewards":[0,0,0,0],"states"`, 1)},
		{"json", string(good) + `{}`},
		{"header", strings.Replace(string(good), `"header"`, `"head"`, 1)},
		{"header.schema", strings.Replace(string(good), `"schema":1`, `"schema":2`, 1)},
		{"json", `[1,2`},
	} {
		if _, err := protocol.Decode([]byte(bad.doc), want); fieldOf(err) != bad.field {
			t.Errorf("%.60s…: got %v, want an error naming %s", bad.doc, err, bad.field)
		}
	}
}

// TestLDPCuratorTakesOnlyPrivatized: an LDP curator's types accept only *protocol.Privatized —
// its Receive method takes nothing else, so `cur.Receive(&protocol.Trajectory{…})` does not
// compile (checked here by reflection on every LDP curator type) — and at run time the decoder
// refuses kind trajectory for an LDP agent before reading the payload, and the session refuses
// a raw report.
func TestLDPCuratorTakesOnlyPrivatized(t *testing.T) {
	priv := reflect.TypeOf(&protocol.Privatized{})
	var _ protocol.LDPCurator[*mtab.Policy] = (*tabular.LocalCurator)(nil)
	var _ protocol.LDPCurator[*linmix.Rule] = (*linmix.LocalCurator)(nil)
	for _, cur := range []any{(*tabular.LocalCurator)(nil), (*linmix.LocalCurator)(nil)} {
		m, ok := reflect.TypeOf(cur).MethodByName("Receive")
		if !ok || m.Type.NumIn() != 2 || m.Type.In(1) != priv {
			t.Errorf("%T.Receive must take exactly a *protocol.Privatized, has %v", cur, m.Type)
		}
	}
	for _, c := range cases() {
		s, _ := c.build(t)
		want := s.Expect()
		if want.Kind != protocol.KindPrivatized {
			continue
		}
		if _, ok := s.Curator().(interface {
			Receive(*protocol.Privatized) error
		}); !ok {
			t.Errorf("%s: the curator of an LDP agent is %T", c.name, s.Curator())
		}
		raw := &protocol.Trajectory{Header: want, States: []int{0}, Actions: []int{}, Rewards: []float64{}}
		raw.Header.Kind = protocol.KindTrajectory
		if err := s.Receive(raw); fieldOf(err) != "header.kind" {
			t.Errorf("%s: a raw trajectory handed to the LDP session: got %v", c.name, err)
		}
		doc := must(protocol.EncodeJSON(raw))
		_, err := protocol.Decode(doc, want)
		if fieldOf(err) != "header.kind" || !strings.Contains(err.Error(), "locally private") {
			t.Errorf("%s: Decode of kind trajectory for an LDP agent: got %v", c.name, err)
		}
		if cur, ok := s.Curator().(protocol.LDPCurator[*mtab.Policy]); ok {
			if _, err := protocol.DecodeFor(cur, doc); fieldOf(err) != "header.kind" {
				t.Errorf("%s: DecodeFor of a raw trajectory: got %v", c.name, err)
			}
		}
	}
}

// TestGoldenReports pins the JSON encoding (schema 1) of the first report of one agent of each
// family and of a privatised report: the bytes are stable, decode to the same report and
// re-encode to the same bytes (go test ./agents/protocol -run TestGoldenReports -update
// rewrites them after a deliberate change of the schema, which must bump SchemaVersion).
func TestGoldenReports(t *testing.T) {
	golden := map[string]agentCase{}
	for _, c := range cases() {
		switch c.name {
		case "practical-jdp", "practical-ldp", "practical-lsvi-batched", "practical-vtr/jdp", "practical-ofu-rl":
			golden[c.name] = c
		}
	}
	for name, c := range golden {
		t.Run(name, func(t *testing.T) {
			s, _ := c.build(t)
			var doc []byte
			if err := protocol.Run(context.Background(), s, protocol.Options{Episodes: 2, Users: users(1), Transport: func(r protocol.Report) (protocol.Report, error) {
				if doc == nil {
					doc = must(protocol.EncodeJSON(r))
				}
				return r, nil
			}}); err != nil {
				t.Fatal(err)
			}
			file := filepath.Join("testdata", strings.ReplaceAll(name, "/", "-")+".json")
			if *update {
				if err := os.WriteFile(file, append(doc, '\n'), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			want = bytes.TrimSuffix(want, []byte("\n"))
			if !bytes.Equal(doc, want) {
				t.Fatalf("the JSON encoding changed:\n got %s\nwant %s", doc, want)
			}
			if !bytes.HasPrefix(doc, []byte(fmt.Sprintf(`{"header":{"schema":%d,`, protocol.SchemaVersion))) {
				t.Errorf("the report does not start with its schema version: %.60s", doc)
			}
			r := must(protocol.Decode(want, s.Expect()))
			if again := must(protocol.EncodeJSON(r)); !bytes.Equal(again, want) {
				t.Errorf("decode and re-encode changed the bytes:\n got %s\nwant %s", again, want)
			}
			bin := must(protocol.EncodeBinary(r))
			if r2 := must(protocol.Decode(bin, s.Expect())); !reflect.DeepEqual(r, r2) {
				t.Errorf("binary round trip changed the report")
			}
		})
	}
}

// cloneRows deep-copies rows (nil for no rows).
func cloneRows(rows [][]float64) [][]float64 {
	var out [][]float64
	for _, x := range rows {
		out = append(out, slices.Clone(x))
	}
	return out
}
