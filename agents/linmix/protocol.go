package linmix

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/dprl/dprl/agents/internal/agentkit"
	"github.com/dprl/dprl/agents/protocol"
	model "github.com/dprl/dprl/model/linmix"
	"github.com/dprl/dprl/privacy/noise"
)

// This file implements the agent contract (package protocol) for every linear-mixture agent:
// the papers' UCRL-VTR, UCRL-VTR+, LinOpt-VI/PO (Agent) and dprl's practical-vtr
// (PracticalAgent), in every mode.
//
//   - The curator plans once per episode from its release only (the planner is public
//     post-processing, run on the curator's side: what the papers call user-side planning
//     from the broadcast) and publishes a *Rule: the policy the user plays and the planner's
//     values and widths she builds her leaves from. The planners redraw their random
//     tie-breaks for every user, so the version can change without a release.
//   - The user plays the policy from her own stream (model.MDP.Action and Step) and builds her
//     raw leaves (X_h, y_h per regression) from her trajectory and the rule. A trusted
//     curator (JDP, none) receives them as *protocol.Leaves and guards them itself (guard:
//     ‖X‖ ≤ maxX, y ∈ [0, maxY]; practical: ‖X‖ ≤ B, y ∈ [−½, ½], the trace cap, at most
//     H − 1 leaves); under LDP the user privatises them with the agent's user-side randomiser
//     and sends a *protocol.Privatized: the papers' layout is, for h = 1..H and each
//     regression r, the block [packed X Xᵀ + noise] then the block [X y + noise];
//     practical-vtr's is one block, the noisy contribution vector (packed Σ X Xᵀ, then Σ X y).
//   - The papers' curators ingest all K users (Capacity K); practical-vtr's K − 1 (the last
//     user's data would reach nobody).

// Rule is what a linear-mixture curator publishes for one user: the policy she plays and the
// planner's public post-processing of the release that her leaves read (the values Ṽ_{h+1}
// and, for UCRL-VTR+, the billboard and the episode's widths). Its wire form (MarshalJSON,
// UnmarshalJSON) carries exactly these, so a user who plays a decoded rule plays and reports
// exactly what an in-process user does.
type Rule struct {
	// Policy is the policy she plays (a softmax for LinOpt-PO).
	Policy model.Policy
	// next[h] is Ṽ_{h+1} (h = 0..H−1; next[H−1] ≡ 0), the planner's values for this episode:
	// public post-processing of the release, valid until the next publication.
	next [][]float64
	// plus is UCRL-VTR+'s part (nil for the other agents).
	plus *plusRule
	// wire marks a rule decoded from its wire form; checked, that it was checked against the
	// user's dimensions (once).
	wire, checked bool
}

// plusRule is what UCRL-VTR+'s leaves read besides the values: the billboard's factors and
// estimates of both regressions at every step ([2h+r], r = 0 hat, 1 tilde) and the episode's
// widths β̌_k and β̃_k (after BetaMult).
type plusRule struct {
	chol, w        [][]float64
	bCheck, bTilde float64
}

// ruleWire is the wire form of a Rule.
type ruleWire struct {
	// Act and Prob are the policy (Prob null for a deterministic one).
	Act  []int     `json:"act"`
	Prob []float64 `json:"prob"`
	// Next are the values Ṽ_{h+1}(s), h = 0..H−1.
	Next [][]float64 `json:"next_values"`
	// Plus is UCRL-VTR+'s part (omitted for the other agents).
	Plus *plusWire `json:"plus,omitempty"`
}

type plusWire struct {
	Chol      [][]float64 `json:"chol"`
	W         [][]float64 `json:"w"`
	BetaCheck float64     `json:"beta_check"`
	BetaTilde float64     `json:"beta_tilde"`
}

// MarshalJSON returns the rule's wire form (floats in Go's shortest round-trip form: the
// decoded rule is bit-identical).
func (r *Rule) MarshalJSON() ([]byte, error) {
	w := ruleWire{Act: r.Policy.Act, Prob: r.Policy.Prob, Next: r.next}
	if r.plus != nil {
		w.Plus = &plusWire{Chol: r.plus.chol, W: r.plus.w, BetaCheck: r.plus.bCheck, BetaTilde: r.plus.bTilde}
	}
	return json.Marshal(w)
}

// UnmarshalJSON decodes a rule's wire form. The user checks its dimensions against her own
// model before she plays it (User.Play).
func (r *Rule) UnmarshalJSON(b []byte) error {
	var w ruleWire
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*r = Rule{Policy: model.Policy{Act: w.Act, Prob: w.Prob}, next: w.Next, wire: true}
	if w.Plus != nil {
		r.plus = &plusRule{chol: w.Plus.Chol, w: w.Plus.W, bCheck: w.Plus.BetaCheck, bTilde: w.Plus.BetaTilde}
	}
	return nil
}

// check checks a decoded rule against the user's model m (plus: she plays UCRL-VTR+ with
// regressions of dimension d = m.Dim()): sizes, actions in range, finite numbers.
func (r *Rule) check(m *model.MDP, plus bool) error {
	H, S, A, d := m.Horizon(), m.NumStates(), m.NumActions(), m.Dim()
	if len(r.Policy.Act) != H*S {
		return fmt.Errorf("linmix rule: act has %d entries, want H·S = %d", len(r.Policy.Act), H*S)
	}
	for i, a := range r.Policy.Act {
		if a < 0 || a >= A {
			return fmt.Errorf("linmix rule: act[%d] = %d, want an action in [0, %d)", i, a, A)
		}
	}
	if r.Policy.Prob != nil {
		if len(r.Policy.Prob) != H*S*A {
			return fmt.Errorf("linmix rule: prob has %d entries, want H·S·A = %d", len(r.Policy.Prob), H*S*A)
		}
		for i, p := range r.Policy.Prob {
			if !(p >= 0 && p <= 1) {
				return fmt.Errorf("linmix rule: prob[%d] = %g, want a probability", i, p)
			}
		}
	}
	if err := checkRows("next_values", r.next, H, S); err != nil {
		return err
	}
	switch {
	case plus && r.plus == nil:
		return errors.New("linmix rule: plus missing (UCRL-VTR+ reads the billboard and widths)")
	case !plus && r.plus != nil:
		return errors.New("linmix rule: unexpected plus part")
	case plus:
		if err := checkRows("plus.chol", r.plus.chol, 2*H, d*d); err != nil {
			return err
		}
		if err := checkRows("plus.w", r.plus.w, 2*H, d); err != nil {
			return err
		}
		if !allFinite([]float64{r.plus.bCheck, r.plus.bTilde}) {
			return errors.New("linmix rule: plus widths not finite")
		}
	}
	return nil
}

func checkRows(name string, rows [][]float64, n, m int) error {
	if len(rows) != n {
		return fmt.Errorf("linmix rule: %s has %d rows, want %d", name, len(rows), n)
	}
	for i, row := range rows {
		if len(row) != m {
			return fmt.Errorf("linmix rule: %s[%d] has %d entries, want %d", name, i, len(row), m)
		}
		if !allFinite(row) {
			return fmt.Errorf("linmix rule: %s[%d] holds a non-finite number", name, i)
		}
	}
	return nil
}

// finite returns an error when a number of the rule is NaN or infinite: the planner could not
// plan on the released statistics, and the rule is not published (its wire form has no such
// numbers; a service keeps serving the last policy).
func (r *Rule) finite(name string) error {
	rows := append([][]float64{r.Policy.Prob}, r.next...)
	if r.plus != nil {
		rows = append(append(append(rows, r.plus.chol...), r.plus.w...), []float64{r.plus.bCheck, r.plus.bTilde})
	}
	for _, row := range rows {
		if !allFinite(row) {
			return fmt.Errorf("%s: the planner's rule holds a non-finite number (the released statistics are out of its domain); not published", name)
		}
	}
	return nil
}

func allFinite(xs []float64) bool {
	for _, x := range xs {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return false
		}
	}
	return true
}

// Played is a user's episode: her trajectory and the rule she played.
type Played struct {
	tr   *trajectory
	rule *Rule
}

// publisher plans once per episode and versions the published rule (the version changes when
// the rule differs from the previous publication: its actions, softmax probabilities, values or,
// for UCRL-VTR+, billboard and widths; the values change at every release even when the
// actions do not, and the users' leaves read them).
type publisher struct {
	head     protocol.Header
	K, users int
	k        int
	begun    bool
	received int
	plan     func(r *Rule)
	rule     Rule
	prev     ruleCopy
	version  uint64
	name     string // error prefix
	// err is the current episode's planning error (a rule with a non-finite number: the
	// planner's guard, issue 25 item 2), returned by every Publish of the episode.
	err error
	// state is the agent whose state plan and the curator's ingest change (they are closures
	// over it): it makes that state reachable for snapshots (protocol.MarshalState).
	state any
}

// ruleCopy is a copy of the last published rule (to version the next one).
type ruleCopy struct {
	act            []int
	prob           []float64
	next           [][]float64
	chol, w        [][]float64
	bCheck, bTilde float64
}

// same reports whether r equals the copy.
func (c *ruleCopy) same(r *Rule) bool {
	if !slices.Equal(r.Policy.Act, c.act) || !slices.Equal(r.Policy.Prob, c.prob) || (r.Policy.Prob == nil) != (c.prob == nil) ||
		!sameRows(r.next, c.next) {
		return false
	}
	if r.plus == nil {
		return c.chol == nil
	}
	return c.chol != nil && r.plus.bCheck == c.bCheck && r.plus.bTilde == c.bTilde && sameRows(r.plus.chol, c.chol) && sameRows(r.plus.w, c.w)
}

// set makes the copy r's.
func (c *ruleCopy) set(r *Rule) {
	c.act = append(c.act[:0], r.Policy.Act...)
	if r.Policy.Prob == nil {
		c.prob = nil
	} else {
		c.prob = append(c.prob[:0], r.Policy.Prob...)
	}
	c.next = copyRows(c.next, r.next)
	if r.plus == nil {
		c.chol, c.w = nil, nil
		return
	}
	c.chol, c.w = copyRows(c.chol, r.plus.chol), copyRows(c.w, r.plus.w)
	c.bCheck, c.bTilde = r.plus.bCheck, r.plus.bTilde
}

func sameRows(a, b [][]float64) bool {
	return slices.EqualFunc(a, b, func(x, y []float64) bool { return slices.Equal(x, y) })
}

func copyRows(dst, src [][]float64) [][]float64 {
	if dst == nil || len(dst) != len(src) {
		dst = make([][]float64, len(src))
	}
	for i, row := range src {
		dst[i] = append(dst[i][:0], row...)
	}
	return dst
}

// Expect implements protocol.Curator.
func (p *publisher) Expect() protocol.Header { return p.head }

// Capacity implements protocol.Curator.
func (p *publisher) Capacity() int { return p.users }

// Publish implements protocol.Curator: the first call of an episode plans it.
func (p *publisher) Publish() (protocol.Policy[*Rule], error) {
	if !p.begun {
		p.k++
		if p.k > p.K {
			return protocol.Policy[*Rule]{}, fmt.Errorf("%s: episode %d exceeds the configured K = %d (the constants depend on K)", p.name, p.k, p.K)
		}
		p.plan(&p.rule)
		p.begun = true
		if p.err = p.rule.finite(p.name); p.err != nil {
			return protocol.Policy[*Rule]{}, p.err
		}
		if p.version == 0 || !p.prev.same(&p.rule) {
			p.version++
			p.prev.set(&p.rule)
		}
	}
	if p.err != nil {
		return protocol.Policy[*Rule]{}, p.err
	}
	return protocol.Policy[*Rule]{Version: p.version, Rule: &p.rule}, nil
}

// end ends the current episode (after its report, or without one).
func (p *publisher) end() { p.begun = false }

// accept takes one validated report: unless every user of the calibration was received, it
// runs ingest and, when that succeeds, counts the report and ends the episode.
func (p *publisher) accept(ingest func() error) error {
	if p.received >= p.users {
		return fmt.Errorf("%s: all %d users of the calibration were received", p.name, p.users)
	}
	if err := ingest(); err != nil {
		return err
	}
	p.received++
	p.end()
	return nil
}

// TrustedCurator is the curator of a JDP or non-private linear-mixture agent: it receives the
// users' raw leaves.
type TrustedCurator struct {
	publisher
	exact  bool // every report carries exactly Steps steps (the papers' agents)
	ingest func(r *protocol.Leaves) error
}

// Receive implements protocol.Curator: sizes and finiteness are checked against the public
// dimensions (and, for practical-vtr, at most H − 1 steps), then the agent's curator guards
// and ingests the leaves. A refused report changes nothing.
func (c *TrustedCurator) Receive(r *protocol.Leaves) error {
	if err := r.Validate(c.head); err != nil {
		return err
	}
	if c.exact && len(r.X) != c.head.Dims.Steps {
		return &protocol.FieldError{Field: "x", Msg: fmt.Sprintf("got %d steps of leaves, want H = %d", len(r.X), c.head.Dims.Steps)}
	}
	return c.accept(func() error { return c.ingest(r) })
}

// LocalCurator is the curator of an LDP linear-mixture agent: it accepts only privatised
// reports (protocol.LDPCurator) and holds no noise stream.
type LocalCurator struct {
	publisher
	ingest func(r *protocol.Privatized) error
	// bound is the public bound of each block's numbers (agentkit.CheckBlocks).
	bound []float64
}

// Receive implements protocol.LDPCurator: the blocks are checked against the public lengths,
// for finiteness and against the public bound of their numbers (agentkit.CheckBlocks): the
// largest honest entry — maxX² for a packed X Xᵀ, maxX·maxY for X y (the guard: ‖X‖ ≤ maxX,
// y ∈ [0, maxY]); for practical-vtr the trace cap T plus (H − 1)·B/2 — plus
// agentkit.LaplaceTailScales Laplace scales or agentkit.GaussianTailSigmas standard
// deviations of the user's noise. An honest report exceeds it with probability < 1e-30 and the
// check is post-processing of the privatised report: it costs no privacy. Without it one
// report of 1e308s made the sums infinite and the published rule unencodable (issue 25
// item 2).
func (c *LocalCurator) Receive(r *protocol.Privatized) error {
	if err := r.Validate(c.head); err != nil {
		return err
	}
	if err := agentkit.CheckBlocks(r.Blocks, c.bound); err != nil {
		return err
	}
	return c.accept(func() error { return c.ingest(r) })
}

var (
	_ protocol.Curator[*Rule, *protocol.Leaves] = (*TrustedCurator)(nil)
	_ protocol.LDPCurator[*Rule]                = (*LocalCurator)(nil)
)

// User plays linear-mixture episodes and reports them (R: *protocol.Leaves for a trusted
// curator, *protocol.Privatized under LDP).
type User[R protocol.Report] struct {
	m, env *model.MDP
	ep     Played
	report func(e *Played) (R, error)
	plus   bool // UCRL-VTR+: the rule carries the billboard and widths
}

// Play implements protocol.User: s₁ = Start, a_h ~ π_h(s_h), (s_{h+1}, r_h) ~ Step, from her
// stream r. A rule decoded from its wire form is first checked against her model.
func (u *User[R]) Play(_ int, p protocol.Policy[*Rule], r *rand.Rand) (*Played, error) {
	if p.Rule == nil {
		return nil, errors.New("linmix: no rule")
	}
	if p.Rule.wire && !p.Rule.checked {
		if err := p.Rule.check(u.m, u.plus); err != nil {
			return nil, err
		}
		p.Rule.checked = true
	}
	u.ep.rule = p.Rule
	play(u.m, u.env, p.Rule.Policy, r, u.ep.tr)
	return &u.ep, nil
}

// Report implements protocol.User.
func (u *User[R]) Report(e *Played) (R, error) { return u.report(e) }

func play(m, env *model.MDP, pol model.Policy, r *rand.Rand, tr *trajectory) {
	s := env.Start()
	tr.s[0] = s
	for h := 0; h < m.Horizon(); h++ {
		act := m.Action(pol, h, s, r)
		next, rw := env.Step(h, s, act, r)
		tr.a[h], tr.r[h], tr.s[h+1] = act, rw, next
		s = next
	}
}

// Evaluator is the family's exact regret V*₁(s₁) − V^π₁(s₁) (s₁ is the model's fixed start),
// computed when the published policy changes.
type Evaluator struct {
	ev   *model.Evaluator
	last float64
	// the policy last evaluated (a new rule with the same policy — new values — has its regret)
	act   []int
	prob  []float64
	valid bool
}

// NewEvaluator returns the evaluator of m.
func NewEvaluator(m *model.MDP) *Evaluator { return &Evaluator{ev: m.NewEvaluator()} }

// Policy implements protocol.Evaluator: the policy's exact regret, computed when the policy
// differs from the one last evaluated.
func (e *Evaluator) Policy(p protocol.Policy[*Rule]) error {
	pol := p.Rule.Policy
	if e.valid && slices.Equal(pol.Act, e.act) && slices.Equal(pol.Prob, e.prob) && (pol.Prob == nil) == (e.prob == nil) {
		return nil
	}
	e.last = e.ev.Regret(pol)
	e.act = append(e.act[:0], pol.Act...)
	if pol.Prob == nil {
		e.prob = nil
	} else {
		e.prob = append(e.prob[:0], pol.Prob...)
	}
	e.valid = true
	return nil
}

// Regret implements protocol.Evaluator.
func (e *Evaluator) Regret(int, *Played) (float64, error) { return e.last, nil }

func mixHeader(name string, kind protocol.Kind, H, steps int, regs, blocks []int) protocol.Header {
	return protocol.Header{Schema: protocol.SchemaVersion, Family: protocol.LinMix, Agent: name, Kind: kind,
		Dims: protocol.Dims{Horizon: H, Steps: steps, Regressors: regs, Blocks: blocks}}
}

// contract builds the papers' agent's curator and user (once, in build).
func (a *Agent) contract() {
	H := a.m.Horizon()
	name := a.cfg.Name()
	plus := a.cfg.Algorithm == UCRLVTRPlus
	pub := publisher{state: a, K: a.cfg.Episodes, users: a.cfg.Episodes, name: "linmix", plan: func(r *Rule) {
		bb := a.Billboard()
		a.pl.plan(bb)
		r.Policy, r.next = a.pl.pol, a.pl.v[1:]
		if plus {
			if r.plus == nil {
				r.plus = &plusRule{}
			}
			r.plus.chol, r.plus.w, r.plus.bCheck, r.plus.bTilde = bb.chol, bb.w, a.pl.bCheck, a.pl.bTilde
		}
	}}
	a.tr = trajectory{s: make([]int, H+1), a: make([]int, H), r: make([]float64, H)}
	// The user's leaves read the rule (her own planner lends only its public model and scratch).
	leaves := func(e *Played) {
		switch a.cfg.Algorithm {
		case UCRLVTR:
			a.pl.leavesVTR(e.rule.next, e.tr, a.lv)
		case UCRLVTRPlus:
			a.pl.leavesPlus(e.rule.plus, e.rule.next, e.tr, a.lv)
		default:
			a.pl.leavesLinOpt(e.rule.next, e.tr, a.lv)
		}
	}
	if a.cfg.Mode == LDP {
		var blocks []int
		var bound []float64
		for h := 0; h < H; h++ {
			for _, sp := range a.specs {
				blocks = append(blocks, noise.PackedLen(sp.dim), sp.dim)
				bound = append(bound, agentkit.CalibratedBound(sp.maxX*sp.maxX, sp.mat), agentkit.CalibratedBound(sp.maxX*sp.maxY, sp.vec))
			}
		}
		pub.head = mixHeader(name, protocol.KindPrivatized, H, 0, nil, blocks)
		rep := &Report{}
		a.local = &LocalCurator{publisher: pub, ingest: func(r *protocol.Privatized) error {
			rep.mat, rep.vec = rep.mat[:0], rep.vec[:0]
			for i := 0; i < len(r.Blocks); i += 2 {
				rep.mat, rep.vec = append(rep.mat, r.Blocks[i]), append(rep.vec, r.Blocks[i+1])
			}
			return a.srv.Receive(rep)
		}, bound: bound}
		out := &protocol.Privatized{Header: pub.head}
		a.ldpUser = &User[*protocol.Privatized]{m: a.m, env: a.m, ep: Played{tr: &a.tr}, plus: plus, report: func(e *Played) (*protocol.Privatized, error) {
			leaves(e)
			z := a.rnd.Privatize(a.lv)
			out.Blocks = out.Blocks[:0]
			for i := range z.mat {
				out.Blocks = append(out.Blocks, z.mat[i], z.vec[i])
			}
			return out, nil
		}}
		return
	}
	regs := make([]int, len(a.specs))
	for r, sp := range a.specs {
		regs[r] = sp.dim
	}
	pub.head = mixHeader(name, protocol.KindTrajectory, H, H, regs, nil)
	lv := &Leaves{}
	a.trusted = &TrustedCurator{publisher: pub, exact: true, ingest: func(r *protocol.Leaves) error {
		lv.x, lv.y = r.X, r.Y
		return a.cur.observe(lv)
	}}
	out := &protocol.Leaves{Header: pub.head}
	a.jdpUser = &User[*protocol.Leaves]{m: a.m, env: a.m, ep: Played{tr: &a.tr}, plus: plus, report: func(e *Played) (*protocol.Leaves, error) {
		leaves(e)
		out.X, out.Y = a.lv.x, a.lv.y
		return out, nil
	}}
}

// sides are an agent's two sides of the contract: one curator and one user, by mode (a
// TrustedCurator with a Leaves user, or a LocalCurator with a privatising user under LDP).
type sides struct {
	trusted *TrustedCurator
	local   *LocalCurator
	jdpUser *User[*protocol.Leaves]
	ldpUser *User[*protocol.Privatized]
}

// session binds the sides with the evaluator of m.
func (s *sides) session(m *model.MDP) (protocol.Session, *Evaluator) {
	ev := NewEvaluator(m)
	if s.local != nil {
		return protocol.NewSession(s.local, s.ldpUser, ev), ev
	}
	return protocol.NewSession(s.trusted, s.jdpUser, ev), ev
}

// play has user k play the published policy p with the response stream r and hands her report
// to the curator.
func (s *sides) play(k int, p protocol.Policy[*Rule], r *rand.Rand) error {
	if s.local != nil {
		return playReport(s.ldpUser, s.local.Receive, k, p, r)
	}
	return playReport(s.jdpUser, s.trusted.Receive, k, p, r)
}

// playReport has u play the policy p and hands her report to receive.
func playReport[R protocol.Report](u *User[R], receive func(R) error, k int, p protocol.Policy[*Rule], r *rand.Rand) error {
	e, _ := u.Play(k, p, r)
	rep, err := u.Report(e)
	if err != nil {
		return err
	}
	return receive(rep)
}

// runTo plays episodes until K were published and returns their regrets (those played before
// an error, with it).
func (s *sides) runTo(K int, episode func() (float64, error)) ([]float64, error) {
	pub := s.publisher()
	out := make([]float64, 0, K-pub.k)
	for pub.k < K {
		r, err := episode()
		if err != nil {
			return out, err
		}
		out = append(out, r)
	}
	return out, nil
}

func (s *sides) publisher() *publisher {
	if s.local != nil {
		return &s.local.publisher
	}
	return &s.trusted.publisher
}

// Session returns the agent's contract (its curator — a TrustedCurator, or a LocalCurator
// under LDP — its user and the evaluator) for protocol.Run. The run must start at the
// agent's first episode.
func (a *Agent) Session() (protocol.Session, *Evaluator) { return a.session(a.m) }

// episodeIn plays one episode of the contract with a user whose responses come from env (her
// stream users/k) and returns the exact regret of the published policy.
func (a *Agent) episodeIn(env *model.MDP) (float64, error) {
	if env.NumStates() != a.m.NumStates() || env.NumActions() != a.m.NumActions() || env.Horizon() != a.m.Horizon() {
		return 0, errors.New("linmix: user environment has a different shape")
	}
	pub := a.publisher()
	p, err := pub.Publish()
	if err != nil {
		return 0, err
	}
	if a.local != nil {
		a.ldpUser.env = env
	} else {
		a.jdpUser.env = env
	}
	return a.serve(pub.k, p)
}

// contract builds the practical agent's curator and user (once, in buildPractical).
func (a *PracticalAgent) contract() {
	H, d := a.m.Horizon(), a.m.Dim()
	name := a.cfg.Name()
	pub := publisher{state: a, K: a.cfg.Episodes, users: a.cfg.Episodes - 1, name: "linmix practical", plan: func(r *Rule) {
		a.pl.plan(a.Release())
		r.Policy, r.next = a.pl.pol, a.pl.v[1:]
	}}
	a.tr = trajectory{s: make([]int, H+1), a: make([]int, H), r: make([]float64, H)}
	if a.rnd != nil {
		pub.head = mixHeader(name, protocol.KindPrivatized, H, 0, nil, []int{a.rnd.enc.dim()})
		a.local = &LocalCurator{publisher: pub, ingest: func(r *protocol.Privatized) error {
			return a.srv.Receive(&PracticalReport{x: r.Blocks[0]})
		}, bound: []float64{a.rnd.bound()}}
		out := &protocol.Privatized{Header: pub.head, Blocks: make([][]float64, 1)}
		a.ldpUser = &User[*protocol.Privatized]{m: a.m, env: a.m, ep: Played{tr: &a.tr}, report: func(e *Played) (*protocol.Privatized, error) {
			a.pl.leaves(e.rule.next, e.tr, a.lv)
			out.Blocks[0] = a.rnd.Privatize(a.lv).x
			return out, nil
		}}
		return
	}
	pub.head = mixHeader(name, protocol.KindTrajectory, H, H-1, []int{d}, nil)
	lv := &PracticalLeaves{}
	a.trusted = &TrustedCurator{publisher: pub, ingest: func(r *protocol.Leaves) error {
		lv.x, lv.y = lv.x[:0], lv.y[:0]
		for h := range r.X {
			lv.x, lv.y = append(lv.x, r.X[h][0]), append(lv.y, r.Y[h][0])
		}
		return a.cur.Ingest(lv)
	}}
	out := &protocol.Leaves{Header: pub.head, X: make([][][]float64, len(a.lv.x)), Y: make([][]float64, len(a.lv.y))}
	for h := range out.X {
		out.X[h], out.Y[h] = [][]float64{a.lv.x[h]}, make([]float64, 1)
	}
	a.jdpUser = &User[*protocol.Leaves]{m: a.m, env: a.m, ep: Played{tr: &a.tr}, report: func(e *Played) (*protocol.Leaves, error) {
		a.pl.leaves(e.rule.next, e.tr, a.lv)
		for h, y := range a.lv.y {
			out.Y[h][0] = y
		}
		return out, nil
	}}
}

// Session returns the practical agent's contract (see Agent.Session).
func (a *PracticalAgent) Session() (protocol.Session, *Evaluator) { return a.session(a.m) }

// episode plays one episode of the contract (user k's stream users/k) and returns the exact
// regret of the published policy; the last user plays no reported episode.
func (a *PracticalAgent) episode() (float64, error) {
	pub := a.publisher()
	p, err := pub.Publish()
	if err != nil {
		return 0, err
	}
	if pub.k > pub.users {
		pub.end()
		return a.ev.Regret(p.Rule.Policy), nil // the last user's data would reach nobody
	}
	return a.serve(pub.k, p)
}
