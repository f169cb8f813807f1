package tabular

import (
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/dprl/dprl/agents/protocol"
	model "github.com/dprl/dprl/model/tabular"
	"github.com/dprl/dprl/privacy/noise"
)

// corridor is a small terminating model: states 0..3 in a line, state 4 terminal (the exit,
// TerminalReward tr per remaining step). Action 0 stays (reward 0.1), action 1 moves right with
// probability 0.8 (reward 0). Every episode starts in 0. With tr = 0.5 and H = 10 the optimal
// policy leaves as fast as it can.
func corridor(t testing.TB, H int, tr float64) *model.MDP {
	t.Helper()
	const S, A = 5, 2
	p := make([]float64, S*A*S)
	r := make([]float64, S*A)
	for s := 0; s < S; s++ {
		row := func(a int) []float64 { return p[(s*A+a)*S : (s*A+a+1)*S] }
		if s == S-1 {
			row(0)[s], row(1)[s] = 1, 1 // never used: the episode has ended
			continue
		}
		row(0)[s] = 1
		r[s*A] = 0.1
		row(1)[s+1], row(1)[s] = 0.8, 0.2
	}
	m, err := model.NewHomogeneous("corridor", S, A, H, p, r, []float64{1, 0, 0, 0, 0}, model.Deterministic)
	if err != nil {
		t.Fatal(err)
	}
	m.Terminal, m.TerminalReward = []bool{false, false, false, false, true}, tr
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	return m
}

// exitAfter returns a trajectory of the corridor that ends at step L (L ≥ 4) in the terminal
// state 4: it tries to move right at every step and fails at the first L − 4; reward 0.3.
func exitAfter(L int) *model.Trajectory {
	tr := &model.Trajectory{S: make([]int, L+1), A: make([]int, L), R: make([]float64, L)}
	s := 0
	for h := 0; h < L; h++ {
		tr.S[h], tr.A[h], tr.R[h] = s, 1, 0.3
		if h >= L-4 {
			s++
		}
	}
	tr.S[L] = s
	return tr
}

// TestTerminalContributesItsSteps: a user whose episode ends on entering a terminal state at
// step t contributes exactly t steps — t visits, t transitions (none out of the terminal
// state) and t rewards — to every agent's statistics: the papers' non-private, JDP and LDP
// counters and practical-jdp's and practical-ldp's contribution vectors, whose ℓ2 distance to
// a full episode's stays within Δ₂ (the σ of an H-step episode).
func TestTerminalContributesItsSteps(t *testing.T) {
	const H, K = 10, 5
	m := corridor(t, H, 0.5)
	term, err := newTerminal("agent.terminal", m.S, m.Terminal, m.TerminalReward)
	if err != nil {
		t.Fatal(err)
	}
	none := func(string) noise.Source { return identitySource{} }
	for _, L := range []int{4, 6, 9, 10} {
		tr := exitAfter(L)
		check := func(who string, n, nt, rw []float64, S int) {
			t.Helper()
			if got := sum(n); math.Abs(got-float64(L)) > 1e-9 {
				t.Errorf("%s, L = %d: %g visits counted, want %d", who, L, got, L)
			}
			if got := sum(nt); math.Abs(got-float64(L)) > 1e-9 {
				t.Errorf("%s, L = %d: %g transitions counted, want %d", who, L, got, L)
			}
			if got := sum(rw); math.Abs(got-0.3*float64(L)) > 1e-9 {
				t.Errorf("%s, L = %d: reward sum %g, want %g", who, L, got, 0.3*float64(L))
			}
			for i, x := range nt { // no transition out of the terminal state 4
				if s := i / S / m.A % S; x != 0 && m.IsTerminal(s) {
					t.Errorf("%s, L = %d: a transition out of terminal state %d counted", who, L, s)
				}
			}
		}
		// The papers' agents: exact counts, the JDP tree's first prefix, the LDP report.
		ag, err := New(m.S, m.A, H, K, Config{Algorithm: "dp-ucbvi", Privacy: privacyConfig(NonPrivate, 1, Strict, EPractical),
			Bonus: PracticalBonus(), Terminal: m.Terminal, TerminalReward: m.TerminalReward}, seededStreams(1))
		if err != nil {
			t.Fatal(err)
		}
		if err := ag.Server.Receive(ag.Client.Encode(tr)); err != nil {
			t.Fatal(err)
		}
		b := ag.Server.Billboard()
		check("ucbvi", b.N, b.NT, b.R, m.S)
		c, err := NewCentral(m.S, m.A, H, K, privacyConfig(JDP, 1, Strict, EPractical), none)
		if err != nil {
			t.Fatal(err)
		}
		c.term = term
		if err := c.Ingest(tr); err != nil {
			t.Fatal(err)
		}
		check("central", c.Release().N, c.Release().NT, c.Release().R, m.S)
		z := NewRandomizer(m.S, m.A, H, 1, identitySource{})
		z.term = term
		rep, err := z.Randomize(tr)
		if err != nil {
			t.Fatal(err)
		}
		n, nt, rw := rep.Values()
		check("local randomizer", n, nt, rw, m.S)

		// The practical agents' contribution vector x (pooled, no visit cap and a norm budget
		// that cannot bind, H² ≥ M₂, so that every step counts), through their own curator (JDP:
		// the counter's prefix without noise) and user side (LDP: the report without noise).
		for _, name := range []string{"practical-jdp", "practical-ldp"} {
			cfg, err := DefaultPracticalConfig(name, 1, 1e-5)
			if err != nil {
				t.Fatal(err)
			}
			cfg.Privacy.VisitCap, cfg.Privacy.NormBudget, cfg.Privacy.BatchEvery = 0, H*H, 1
			cfg.Terminal, cfg.TerminalReward = m.Terminal, m.TerminalReward
			pa, err := NewPractical(m.S, m.A, H, K, cfg, PracticalStreams{Tie: rand.New(rand.NewPCG(1, 2)), Posterior: rand.New(rand.NewPCG(3, 4)), Noise: identitySource{}})
			if err != nil {
				t.Fatal(err)
			}
			msg, err := pa.Client.Encode(tr)
			if err != nil {
				t.Fatal(err)
			}
			var nt, rw []float64 // transition counts, reward sums
			if g, ok := msg.(*GaussianReport); ok {
				x := g.Values()
				nt, rw = x[:m.S*m.A*m.S], x[m.S*m.A*m.S:]
				for i := range rw {
					rw[i] /= DefaultRewardWeight // the user's vector holds w·r
				}
			} else {
				if err := pa.Server.Receive(msg); err != nil {
					t.Fatal(err)
				}
				rel := pa.Server.Release()
				nt, rw = rel.NT, rel.R
			}
			check(name, nt, nt, rw, m.S)
			// Against the full episode that never leaves (10 stays): within Δ₂.
			full := &model.Trajectory{S: make([]int, H+1), A: make([]int, H), R: make([]float64, H)}
			for h := range full.R {
				full.R[h] = 1
			}
			enc := newContribution(m.S, m.A, H, cfg.Privacy, nil)
			y := make([]float64, enc.dim())
			enc.term = term
			if err := enc.add(full, y); err != nil {
				t.Fatal(err)
			}
			x2 := make([]float64, enc.dim())
			if err := enc.add(tr, x2); err != nil {
				t.Fatal(err)
			}
			d := 0.0
			for i := range y {
				d += (x2[i] - y[i]) * (x2[i] - y[i])
			}
			if delta := PracticalSensitivity(m.S, m.A, H, cfg.Privacy); math.Sqrt(d) > delta {
				t.Errorf("%s, L = %d: ‖x − x′‖₂ = %g exceeds Δ₂ = %g", name, L, math.Sqrt(d), delta)
			}
		}
	}
}

// TestTerminalRefusedReports: a report that goes on after a terminal state, or stops early in
// a non-terminal one, is refused at every boundary with an error naming the field, and
// changes nothing.
func TestTerminalRefusedReports(t *testing.T) {
	const H, K = 10, 5
	m := corridor(t, H, 0.5)
	term, _ := newTerminal("agent.terminal", m.S, m.Terminal, m.TerminalReward)
	padded := exitAfter(5) // padded to H steps after the terminal state (a buggy client)
	padded.S = append(padded.S, 4, 4, 4, 4, 4)
	padded.A = append(padded.A, 0, 0, 0, 0, 0)
	padded.R = append(padded.R, 0, 0, 0, 0, 0)
	short := exitAfter(5)
	short.S[5] = 3 // stops in a non-terminal state
	bad := exitAfter(5)
	bad.S = bad.S[:5] // 5 actions, 5 states
	cases := []struct {
		name, want string
		tr         *model.Trajectory
	}{
		{"goes on after a terminal state", "trajectory.S[5]: state 4 is terminal but the episode goes on", padded},
		{"stops early in a non-terminal state", "trajectory: 5 steps end in non-terminal state 3 (an episode shorter than H = 10 must end in a terminal state)", short},
		{"lengths", "trajectory: got 5 states, 5 actions and 5 rewards", bad},
		{"empty", "trajectory: got 1 states, 0 actions and 0 rewards", &model.Trajectory{S: []int{0}}},
	}
	for _, c := range cases {
		ucb, err := New(m.S, m.A, H, K, Config{Algorithm: "dp-ucbvi", Privacy: privacyConfig(NonPrivate, 1, Strict, EPractical),
			Bonus: PracticalBonus(), Terminal: m.Terminal, TerminalReward: m.TerminalReward}, seededStreams(1))
		if err != nil {
			t.Fatal(err)
		}
		cen, err := NewCentral(m.S, m.A, H, K, privacyConfig(JDP, 1, Strict, EPractical), func(string) noise.Source { return identitySource{} })
		if err != nil {
			t.Fatal(err)
		}
		cen.term = term
		z := NewRandomizer(m.S, m.A, H, 1, identitySource{})
		z.term = term
		enc := newContribution(m.S, m.A, H, PracticalPrivacy{Pool: true}, nil)
		enc.term = term
		x := make([]float64, enc.dim())
		for who, f := range map[string]func(*model.Trajectory) error{
			"ucbvi":        func(tr *model.Trajectory) error { return ucb.Server.Receive(ucb.Client.Encode(tr)) },
			"central":      cen.Ingest,
			"randomizer":   func(tr *model.Trajectory) error { _, err := z.Randomize(tr); return err },
			"contribution": func(tr *model.Trajectory) error { return enc.add(tr, x) },
		} {
			err := f(c.tr)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s, %s: got %v, want an error containing %q", who, c.name, err, c.want)
			}
		}
		if ucb.Server.Billboard().Users != 0 || sum(ucb.Server.Billboard().N) != 0 || cen.Release().Users != 0 || sum(x) != 0 {
			t.Errorf("%s: a refused trajectory changed the statistics", c.name)
		}
	}
	// A full episode may end in a terminal state too (entering it at the last step).
	full := exitAfter(H)
	if _, err := validateTrajectory(full, m.S, m.A, H, term); err != nil {
		t.Errorf("an H-step episode ending in a terminal state: %v", err)
	}
	// Without terminal states the rule and the message are the earlier ones.
	if _, err := validateTrajectory(exitAfter(5), m.S, m.A, H, terminal{}); err == nil || err.Error() != "trajectory: want 11 states, 10 actions and 10 rewards" {
		t.Errorf("no terminal states: got %v", err)
	}
}

// TestTerminalProtocolBoundary: the contract's Trajectory.Validate (and so Decode, in both
// encodings) checks a terminated report against the header's terminal states, naming the
// field; a header without them, or with others, is refused.
func TestTerminalProtocolBoundary(t *testing.T) {
	const H = 10
	m := corridor(t, H, 0.5)
	cfg, _ := DefaultPracticalConfig("practical-jdp", 1, 1e-5)
	cfg.Terminal, cfg.TerminalReward = m.Terminal, m.TerminalReward
	ag, err := NewPractical(m.S, m.A, H, 5, cfg, practicalStreams(1))
	if err != nil {
		t.Fatal(err)
	}
	sess, _, err := ag.Session("practical-jdp", m, 5)
	if err != nil {
		t.Fatal(err)
	}
	head := sess.Expect()
	if got := head.Dims.Terminal; len(got) != 1 || got[0] != 4 {
		t.Fatalf("header.dims.terminal = %v, want [4]", got)
	}
	report := func(tr *model.Trajectory) *protocol.Trajectory {
		return &protocol.Trajectory{Header: head, States: tr.S, Actions: tr.A, Rewards: tr.R}
	}
	padded := exitAfter(5)
	padded.S, padded.A, padded.R = append(padded.S, 4), append(padded.A, 0), append(padded.R, 0)
	short := exitAfter(5)
	short.S[5] = 2
	long := exitAfter(H + 1)
	noHead := report(exitAfter(5))
	noHead.Header.Dims.Terminal = nil
	cases := []struct {
		name, field string
		r           *protocol.Trajectory
	}{
		{"ends", "", report(exitAfter(5))},
		{"ends at H", "", report(exitAfter(H))},
		{"goes on", "states[5]", report(padded)},
		{"stops in a non-terminal state", "states", report(short)},
		{"too long", "actions", report(long)},
		{"no step", "actions", &protocol.Trajectory{Header: head, States: []int{0}}},
		{"states", "states", &protocol.Trajectory{Header: head, States: []int{0, 1}, Actions: []int{1, 1}, Rewards: []float64{0, 0}}},
		{"rewards", "rewards", &protocol.Trajectory{Header: head, States: []int{0, 1, 2, 3, 4}, Actions: []int{1, 1, 1, 1}, Rewards: []float64{0}}},
		{"header without terminal states", "header.dims.terminal", noHead},
	}
	for _, c := range cases {
		err := c.r.Validate(head)
		var fe *protocol.FieldError
		switch {
		case c.field == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.field != "" && (err == nil || !asField(err, &fe) || fe.Field != c.field):
			t.Errorf("%s: got %v, want an error on field %s", c.name, err, c.field)
		}
		if c.name == "stops in a non-terminal state" && err != nil && !strings.Contains(err.Error(), "5 steps end in non-terminal state 2") {
			t.Errorf("%s: %v", c.name, err)
		}
		for enc, f := range map[string]func(protocol.Report) ([]byte, error){"json": protocol.EncodeJSON, "binary": protocol.EncodeBinary} {
			b, e := f(c.r)
			if e != nil {
				t.Fatal(e)
			}
			got, derr := protocol.Decode(b, head)
			if (derr == nil) != (err == nil) {
				t.Errorf("%s, %s: Decode: %v, Validate: %v", c.name, enc, derr, err)
			}
			if derr == nil {
				tr := got.(*protocol.Trajectory)
				if len(tr.States) != len(c.r.States) || len(tr.Actions) != len(c.r.Actions) {
					t.Errorf("%s, %s: round trip changed the lengths", c.name, enc)
				}
				if err := sess.Receive(got); err != nil {
					t.Errorf("%s, %s: the curator refused a decoded report: %v", c.name, enc, err)
				}
			}
		}
	}
}

func asField(err error, fe **protocol.FieldError) bool {
	f, ok := err.(*protocol.FieldError)
	*fe = f
	return ok
}

// runTerminal runs session sess for K users (user k's stream from seed and k) through the
// protocol loop, optionally through transport, and returns the per-episode regrets and the
// number of reports shorter than H.
func runTerminal(t *testing.T, sess protocol.Session, K, H int, seed uint64, transport func(protocol.Report) (protocol.Report, error)) ([]float64, int) {
	t.Helper()
	regrets := make([]float64, K)
	short := 0
	o := protocol.Options{Episodes: K, Users: func(k int) *rand.Rand { return rand.New(rand.NewPCG(seed, uint64(k))) },
		Each: func(k int, r float64) { regrets[k-1] = r },
		Transport: func(r protocol.Report) (protocol.Report, error) {
			if tr, ok := r.(*protocol.Trajectory); ok && len(tr.Actions) < H {
				short++
			}
			if transport != nil {
				return transport(r)
			}
			return r, nil
		}}
	if err := protocol.Run(context.Background(), sess, o); err != nil {
		t.Fatal(err)
	}
	return regrets, short
}

func mean(xs []float64) float64 { return sum(xs) / float64(len(xs)) }

// TestTerminalLearns: on the terminating corridor, ucbvi (non-private) and practical-jdp run
// through the protocol loop (users' episodes end on entering the exit), learn (the last
// tenth's regret is a fraction of the first tenth's), and the regret is exact in the model:
// the model's absorbing form gives the same V* and the same regret of every policy learned.
func TestTerminalLearns(t *testing.T) {
	const H = 10
	m := corridor(t, H, 0.5)
	abs, err := m.Absorbing()
	if err != nil {
		t.Fatal(err)
	}
	vs, va := model.NewRegret(m), model.NewRegret(abs)
	if d := vs.OptimalValue() - va.OptimalValue(); math.Abs(d) > 1e-12 {
		t.Fatalf("V* = %v, absorbing form %v", vs.OptimalValue(), va.OptimalValue())
	}
	for _, c := range []struct {
		name string
		K    int
		sess func() (protocol.Session, error)
	}{
		{"ucbvi", 2000, func() (protocol.Session, error) {
			ag, err := New(m.S, m.A, H, 2000, Config{Algorithm: "dp-ucbvi", Privacy: privacyConfig(NonPrivate, 1, Strict, EPractical),
				Bonus: PracticalBonus(), Terminal: m.Terminal, TerminalReward: m.TerminalReward}, seededStreams(1))
			if err != nil {
				return nil, err
			}
			s, _, err := ag.Session("ucbvi", m, 2000)
			return s, err
		}},
		{"practical-jdp", 20000, func() (protocol.Session, error) {
			cfg, _ := DefaultPracticalConfig("practical-jdp", 1, 1e-5)
			cfg.Terminal, cfg.TerminalReward = m.Terminal, m.TerminalReward
			ag, err := NewPractical(m.S, m.A, H, 20000, cfg, practicalStreams(1))
			if err != nil {
				return nil, err
			}
			s, _, err := ag.Session("practical-jdp", m, 20000)
			return s, err
		}},
	} {
		sess, err := c.sess()
		if err != nil {
			t.Fatal(c.name, err)
		}
		regrets, short := runTerminal(t, sess, c.K, H, 7, nil)
		_, rule, err := sess.Publish()
		if err != nil {
			t.Fatal(err)
		}
		last := rule.(*model.Policy)
		first, tail := mean(regrets[:c.K/10]), mean(regrets[c.K-c.K/10:])
		t.Logf("%s: regret per episode %.4f (first tenth) → %.4f (last tenth), %d of %d episodes ended early", c.name, first, tail, short, c.K)
		if !(tail < first/3) {
			t.Errorf("%s: regret per episode %.4f → %.4f, not learning", c.name, first, tail)
		}
		if short < c.K/2 {
			t.Errorf("%s: only %d of %d episodes ended in the terminal state", c.name, short, c.K)
		}
		if d := vs.Of(last) - va.Of(last); math.Abs(d) > 1e-12 {
			t.Errorf("%s: the last policy's regret %v, in the absorbing form %v", c.name, vs.Of(last), va.Of(last))
		}
	}
}

// TestTerminalServedRoundTrip: a served session (each report encoded, JSON or binary, and
// decoded against the curator's header, as `dprl serve` does) of a terminating model gives
// the in-process run's regrets bit for bit (practical-jdp, practical-ldp, dp-ucbvi-jdp); the
// trajectory header lists the terminal states, the privatised one (whose layout does not
// depend on the episode's length) does not.
func TestTerminalServedRoundTrip(t *testing.T) {
	const H, K = 10, 600
	m := corridor(t, H, 0.5)
	for _, name := range []string{"practical-jdp", "practical-ldp", "dp-ucbvi-jdp"} {
		build := func() protocol.Session {
			var s protocol.Session
			if _, err := LookupPractical(name); err == nil {
				cfg, _ := DefaultPracticalConfig(name, 1, 1e-5)
				cfg.Privacy.BatchEvery = 5
				cfg.Terminal, cfg.TerminalReward = m.Terminal, m.TerminalReward
				ag, err := NewPractical(m.S, m.A, H, K, cfg, practicalStreams(3))
				if err != nil {
					t.Fatal(err)
				}
				if s, _, err = ag.Session(name, m, K); err != nil {
					t.Fatal(err)
				}
				return s
			}
			info, _ := Lookup(name)
			ag, err := New(m.S, m.A, H, K, Config{Algorithm: info.Algorithm, Privacy: privacyConfig(info.Model, 1, Strict, EPractical),
				Bonus: PracticalBonus(), Terminal: m.Terminal, TerminalReward: m.TerminalReward}, seededStreams(3))
			if err != nil {
				t.Fatal(err)
			}
			if s, _, err = ag.Session(name, m, K); err != nil {
				t.Fatal(err)
			}
			return s
		}
		s0 := build()
		if head := s0.Expect(); (head.Kind == protocol.KindPrivatized) != (len(head.Dims.Terminal) == 0) {
			t.Errorf("%s: header %+v: a trajectory header lists the terminal states, a privatised one does not", name, head.Dims)
		}
		want, short := runTerminal(t, s0, K, H, 11, nil)
		if short == 0 && name != "practical-ldp" {
			t.Fatalf("%s: no episode ended early", name)
		}
		for i, enc := range []func(protocol.Report) ([]byte, error){protocol.EncodeJSON, protocol.EncodeBinary} {
			s := build()
			got, _ := runTerminal(t, s, K, H, 11, func(r protocol.Report) (protocol.Report, error) {
				b, err := enc(r)
				if err != nil {
					return nil, err
				}
				return protocol.Decode(b, s.Expect())
			})
			for k := range want {
				if got[k] != want[k] {
					t.Fatalf("%s, encoding %d: user %d regret %v served, %v in process", name, i, k+1, got[k], want[k])
				}
			}
		}
	}
}

// TestTerminalPlannersExact: every planner values a terminal state exactly (TerminalReward·(H−h),
// no bonus, nothing learned there). In a two-state model where action 0 stays (reward 0.5) and
// action 1 ends the episode (reward 0.5, terminal reward 0), once both actions are well known
// the planners keep going (action 0) until the last step; a planner that valued the terminal
// state like any other — unvisited, hence optimistic — would end the episode at once.
func TestTerminalPlannersExact(t *testing.T) {
	const S, A, H, K = 2, 2, 6, 4000
	p := []float64{1, 0, 0, 1, 0, 1, 0, 1}
	m, err := model.NewHomogeneous("stop", S, A, H, p, []float64{0.5, 0.5, 0, 0}, []float64{1, 0}, model.Deterministic)
	if err != nil {
		t.Fatal(err)
	}
	m.Terminal = []bool{false, true}
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	// Users who stay j steps then leave (L = j+1), j = 0..H−1, and users who stay H steps.
	episodes := func(yield func(*model.Trajectory)) {
		for i := 0; i < K-1; i++ {
			j := i % (H + 1)
			L := min(j+1, H)
			tr := &model.Trajectory{S: make([]int, L+1), A: make([]int, L), R: make([]float64, L)}
			for h := range L {
				tr.R[h] = 0.5
			}
			if j < H {
				tr.A[j], tr.S[L] = 1, 1
			}
			yield(tr)
		}
	}
	check := func(name string, pol *model.Policy) {
		t.Helper()
		for h := 0; h < H-1; h++ {
			if pol.Act[h][0] != 0 {
				t.Errorf("%s: step %d ends the episode (action %d), want 0 (keep collecting 0.5)", name, h, pol.Act[h][0])
			}
			if pol.Act[h][1] != 0 {
				t.Errorf("%s: step %d, terminal state: action %d, want 0", name, h, pol.Act[h][1])
			}
		}
	}
	for _, alg := range []string{"dp-ucbvi", "private-ucbvi"} {
		ag, err := New(S, A, H, K, Config{Algorithm: alg, Privacy: privacyConfig(NonPrivate, 1, Strict, EPractical),
			Bonus: PracticalBonus(), Terminal: m.Terminal}, seededStreams(1))
		if err != nil {
			t.Fatal(err)
		}
		episodes(func(tr *model.Trajectory) {
			if err := ag.Server.Receive(ag.Client.Encode(tr)); err != nil {
				t.Fatal(err)
			}
		})
		pol, err := ag.Server.Policy()
		if err != nil {
			t.Fatal(err)
		}
		check(alg, pol)
	}
	for _, name := range []string{"practical-ucbvi", "practical-jdp"} {
		cfg, _ := DefaultPracticalConfig(name, 10, 1e-5)
		cfg.Terminal = m.Terminal
		ag, err := NewPractical(S, A, H, K, cfg, practicalStreams(1))
		if err != nil {
			t.Fatal(err)
		}
		episodes(func(tr *model.Trajectory) {
			msg, err := ag.Client.Encode(tr)
			if err == nil {
				err = ag.Server.Receive(msg)
			}
			if err != nil {
				t.Fatal(err)
			}
		})
		pol, err := ag.Server.Policy()
		if err != nil {
			t.Fatal(err)
		}
		check(name, pol)
	}
}

// TestTerminalConfig: the agents check the terminal structure they are given (length S, reward
// in [0, 1], no reward without terminal states), and a session refuses an environment whose
// terminal structure differs from the agent's (a runner that forgot to pass it).
func TestTerminalConfig(t *testing.T) {
	const H = 10
	m := corridor(t, H, 0.5)
	for _, c := range []struct {
		set    []bool
		reward float64
		want   string
	}{
		{[]bool{true}, 0, "agent.terminal: has 1 entries, want S = 5"},
		{m.Terminal, 1.5, "agent.terminal_reward: must be in [0, 1]"},
		{nil, 0.5, "agent.terminal_reward: 0.5 given without terminal states"},
	} {
		_, err := New(m.S, m.A, H, 10, Config{Algorithm: "dp-ucbvi", Privacy: privacyConfig(NonPrivate, 1, Strict, EPractical),
			Bonus: PracticalBonus(), Terminal: c.set, TerminalReward: c.reward}, seededStreams(1))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("New: got %v, want %q", err, c.want)
		}
		cfg, _ := DefaultPracticalConfig("practical-jdp", 1, 1e-5)
		cfg.Terminal, cfg.TerminalReward = c.set, c.reward
		_, err = NewPractical(m.S, m.A, H, 10, cfg, practicalStreams(1))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("NewPractical: got %v, want %q", err, c.want)
		}
	}
	ag, err := New(m.S, m.A, H, 10, Config{Algorithm: "dp-ucbvi", Privacy: privacyConfig(NonPrivate, 1, Strict, EPractical), Bonus: PracticalBonus()}, seededStreams(1))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := ag.Session("ucbvi", m, 10); err == nil || !strings.Contains(err.Error(), "agent.terminal") {
		t.Errorf("a session on a terminating model of an agent built without its terminal states: %v", err)
	}
}

// TestAgentTableBounds: every agent refuses, before allocating, a model whose tables it cannot
// hold, naming the agent and the product: a Taxi-sized model (S = 500, A = 6, H = 200,
// time-homogeneous: the model itself is admitted) is refused by the papers' per-step agents
// (H·S·A·S = 3·10⁸ > 2^24) but accepted by practical-jdp, whose statistics are pooled over h
// (S·A·(S+1) ≈ 1.5·10⁶).
func TestAgentTableBounds(t *testing.T) {
	const S, A, H, K = 500, 6, 200, 3
	if err := model.CheckSize("", S, A, 1); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"ucbvi", "dp-ucbvi-jdp", "private-ucbvi-ldp"} {
		info, _ := Lookup(name)
		_, err := New(S, A, H, K, Config{Algorithm: info.Algorithm, Privacy: privacyConfig(info.Model, 1, Strict, EPractical), Bonus: PracticalBonus()}, seededStreams(1))
		if err == nil || !strings.Contains(err.Error(), "agent "+name+": states*actions*states*horizon = 300000000 exceeds") {
			t.Errorf("%s: got %v", name, err)
		}
	}
	for _, f := range []func() error{
		func() error { _, err := NewIdentity(S, A, H); return err },
		func() error {
			_, err := NewCentral(S, A, H, K, privacyConfig(JDP, 1, Strict, EPractical), seededStreams(1).Noise)
			return err
		},
		func() error {
			_, err := NewLocalServer(S, A, H, K, privacyConfig(LDP, 1, Strict, EPractical), 1)
			return err
		},
	} {
		if err := f(); err == nil || !strings.Contains(err.Error(), "states*actions*states*horizon") {
			t.Errorf("got %v, want the size refused", err)
		}
	}
	cfg, _ := DefaultPracticalConfig("practical-jdp", 1, 1e-5)
	if _, err := NewPractical(S, A, H, K, cfg, practicalStreams(1)); err != nil {
		t.Errorf("practical-jdp (pooled) on a Taxi-sized model: %v", err)
	}
	cfg.Privacy.Pool = false
	if _, err := NewPractical(S, A, H, K, cfg, practicalStreams(1)); err == nil || !strings.Contains(err.Error(), "practical agent (statistics per step): states*actions*states*horizon") {
		t.Errorf("practical-jdp per step on a Taxi-sized model: %v", err)
	}
	if _, err := PracticalUserSide(S, 300, H, PracticalPrivacy{Model: LDP, Epsilon: 1, Delta: 1e-5, Pool: true, BatchEvery: 1}); err == nil || !strings.Contains(err.Error(), "practical agent (pooled statistics)") {
		t.Errorf("user side of a model too large even pooled: %v", err)
	}
}
