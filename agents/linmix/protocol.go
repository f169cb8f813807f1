package linmix

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"

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

// Rule is what a linear-mixture curator publishes for one user.
type Rule struct {
	// Policy is the policy she plays (a softmax for LinOpt-PO).
	Policy model.Policy
	// The planner's state for this episode (its values V_{h+1}, widths and the billboard the
	// leaves of UCRL-VTR+ read): public post-processing of the release, valid until the next
	// publication.
	pl  *planner
	bb  *Billboard
	ppl *practicalPlanner
}

// Played is a user's episode: her trajectory and the rule she played.
type Played struct {
	tr   *trajectory
	rule *Rule
}

// publisher plans once per episode and versions the published policy (the version changes
// when the actions or the softmax probabilities differ from the previous publication).
type publisher struct {
	head     protocol.Header
	K, users int
	k        int
	begun    bool
	received int
	plan     func(r *Rule)
	rule     Rule
	prevAct  []int
	prevProb []float64
	version  uint64
	name     string // error prefix
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
		pol := p.rule.Policy
		if p.version == 0 || !slices.Equal(pol.Act, p.prevAct) || !slices.Equal(pol.Prob, p.prevProb) {
			p.version++
			p.prevAct = append(p.prevAct[:0], pol.Act...)
			if pol.Prob == nil {
				p.prevProb = nil
			} else {
				p.prevProb = append(p.prevProb[:0], pol.Prob...)
			}
		}
	}
	return protocol.Policy[*Rule]{Version: p.version, Rule: &p.rule}, nil
}

// end ends the current episode (after its report, or without one).
func (p *publisher) end() { p.begun = false }

func (p *publisher) admit() error {
	if p.received >= p.users {
		return fmt.Errorf("%s: all %d users of the calibration were received", p.name, p.users)
	}
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
	if err := c.admit(); err != nil {
		return err
	}
	if err := c.ingest(r); err != nil {
		return err
	}
	c.received++
	c.end()
	return nil
}

// LocalCurator is the curator of an LDP linear-mixture agent: it accepts only privatised
// reports (protocol.LDPCurator) and holds no noise stream.
type LocalCurator struct {
	publisher
	ingest func(r *protocol.Privatized) error
}

// Receive implements protocol.LDPCurator.
func (c *LocalCurator) Receive(r *protocol.Privatized) error {
	if err := r.Validate(c.head); err != nil {
		return err
	}
	if err := c.admit(); err != nil {
		return err
	}
	if err := c.ingest(r); err != nil {
		return err
	}
	c.received++
	c.end()
	return nil
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
}

// Play implements protocol.User: s₁ = Start, a_h ~ π_h(s_h), (s_{h+1}, r_h) ~ Step, from her
// stream r.
func (u *User[R]) Play(_ int, p protocol.Policy[*Rule], r *rand.Rand) (*Played, error) {
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
}

// NewEvaluator returns the evaluator of m.
func NewEvaluator(m *model.MDP) *Evaluator { return &Evaluator{ev: m.NewEvaluator()} }

// Policy implements protocol.Evaluator.
func (e *Evaluator) Policy(p protocol.Policy[*Rule]) error {
	e.last = e.ev.Regret(p.Rule.Policy)
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
	pub := publisher{K: a.cfg.Episodes, users: a.cfg.Episodes, name: "linmix", plan: func(r *Rule) {
		bb := a.Billboard()
		a.pl.plan(bb)
		r.Policy, r.pl, r.bb = a.pl.pol, a.pl, bb
	}}
	a.tr = trajectory{s: make([]int, H+1), a: make([]int, H), r: make([]float64, H)}
	leaves := func(e *Played) {
		switch a.cfg.Algorithm {
		case UCRLVTR:
			e.rule.pl.leavesVTR(e.tr, a.lv)
		case UCRLVTRPlus:
			e.rule.pl.leavesPlus(e.rule.bb, e.tr, a.lv)
		default:
			e.rule.pl.leavesLinOpt(e.tr, a.lv)
		}
	}
	if a.cfg.Mode == LDP {
		var blocks []int
		for h := 0; h < H; h++ {
			for _, sp := range a.specs {
				blocks = append(blocks, noise.PackedLen(sp.dim), sp.dim)
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
		}}
		out := &protocol.Privatized{Header: pub.head}
		a.ldpUser = &User[*protocol.Privatized]{m: a.m, env: a.m, ep: Played{tr: &a.tr}, report: func(e *Played) (*protocol.Privatized, error) {
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
	a.jdpUser = &User[*protocol.Leaves]{m: a.m, env: a.m, ep: Played{tr: &a.tr}, report: func(e *Played) (*protocol.Leaves, error) {
		leaves(e)
		out.X, out.Y = a.lv.x, a.lv.y
		return out, nil
	}}
}

// Session returns the agent's contract (its curator — a TrustedCurator, or a LocalCurator
// under LDP — its user and the evaluator) for protocol.Run. The run must start at the
// agent's first episode.
func (a *Agent) Session() (protocol.Session, *Evaluator) {
	ev := NewEvaluator(a.m)
	if a.local != nil {
		return protocol.NewSession(a.local, a.ldpUser, ev), ev
	}
	return protocol.NewSession(a.trusted, a.jdpUser, ev), ev
}

func (a *Agent) publisher() *publisher {
	if a.local != nil {
		return &a.local.publisher
	}
	return &a.trusted.publisher
}

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
	regret := a.ev.Regret(p.Rule.Policy)
	a.users.Index(uint64(pub.k)).Reseed(a.upcg)
	if a.local != nil {
		a.ldpUser.env = env
		e, _ := a.ldpUser.Play(pub.k, p, a.ur)
		rep, err := a.ldpUser.Report(e)
		if err != nil {
			return regret, err
		}
		return regret, a.local.Receive(rep)
	}
	a.jdpUser.env = env
	e, _ := a.jdpUser.Play(pub.k, p, a.ur)
	rep, err := a.jdpUser.Report(e)
	if err != nil {
		return regret, err
	}
	return regret, a.trusted.Receive(rep)
}

// contract builds the practical agent's curator and user (once, in buildPractical).
func (a *PracticalAgent) contract() {
	H, d := a.m.Horizon(), a.m.Dim()
	name := a.cfg.Name()
	pub := publisher{K: a.cfg.Episodes, users: a.cfg.Episodes - 1, name: "linmix practical", plan: func(r *Rule) {
		a.pl.plan(a.Release())
		r.Policy, r.ppl = a.pl.pol, a.pl
	}}
	a.tr = trajectory{s: make([]int, H+1), a: make([]int, H), r: make([]float64, H)}
	if a.rnd != nil {
		pub.head = mixHeader(name, protocol.KindPrivatized, H, 0, nil, []int{a.rnd.enc.dim()})
		a.local = &LocalCurator{publisher: pub, ingest: func(r *protocol.Privatized) error {
			return a.srv.Receive(&PracticalReport{x: r.Blocks[0]})
		}}
		out := &protocol.Privatized{Header: pub.head, Blocks: make([][]float64, 1)}
		a.ldpUser = &User[*protocol.Privatized]{m: a.m, env: a.m, ep: Played{tr: &a.tr}, report: func(e *Played) (*protocol.Privatized, error) {
			e.rule.ppl.leaves(e.tr, a.lv)
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
		e.rule.ppl.leaves(e.tr, a.lv)
		for h, y := range a.lv.y {
			out.Y[h][0] = y
		}
		return out, nil
	}}
}

// Session returns the practical agent's contract (see Agent.Session).
func (a *PracticalAgent) Session() (protocol.Session, *Evaluator) {
	ev := NewEvaluator(a.m)
	if a.local != nil {
		return protocol.NewSession(a.local, a.ldpUser, ev), ev
	}
	return protocol.NewSession(a.trusted, a.jdpUser, ev), ev
}

func (a *PracticalAgent) publisher() *publisher {
	if a.local != nil {
		return &a.local.publisher
	}
	return &a.trusted.publisher
}

// episode plays one episode of the contract (user k's stream users/k) and returns the exact
// regret of the published policy; the last user plays no reported episode.
func (a *PracticalAgent) episode() (float64, error) {
	pub := a.publisher()
	p, err := pub.Publish()
	if err != nil {
		return 0, err
	}
	regret := a.ev.Regret(p.Rule.Policy)
	if pub.k > pub.users {
		pub.end()
		return regret, nil // the last user's data would reach nobody
	}
	a.users.Index(uint64(pub.k)).Reseed(a.upcg)
	if a.local != nil {
		e, _ := a.ldpUser.Play(pub.k, p, a.ur)
		rep, err := a.ldpUser.Report(e)
		if err != nil {
			return regret, err
		}
		return regret, a.local.Receive(rep)
	}
	e, _ := a.jdpUser.Play(pub.k, p, a.ur)
	rep, err := a.jdpUser.Report(e)
	if err != nil {
		return regret, err
	}
	return regret, a.trusted.Receive(rep)
}
