package tabular

import (
	"fmt"
	"math/rand/v2"

	"github.com/dprl/dprl/agents/internal/agentkit"
	"github.com/dprl/dprl/agents/protocol"
	model "github.com/dprl/dprl/model/tabular"
)

// This file implements the agent contract (package protocol) for every tabular agent, the
// papers' and dprl's practical ones:
//
//   - the rule a curator publishes is a deterministic *model.Policy (Act[h][s]);
//   - a trusted curator (JDP, non-private) receives a *protocol.Trajectory (states, actions,
//     rewards) and ingests it through the agent's own boundary (validateTrajectory and
//     clipReward for the papers' privatizers, contribution.add for the practical ones);
//   - an LDP curator receives only *protocol.Privatized: the papers' LDP agents' three blocks
//     [visits N (H·S·A), transitions NT (H·S·A·S), rewards R (H·S·A)], indexed as Billboard;
//     practical-ldp's one block [x] (the contribution vector plus the user's noise, Release
//     layout: NT block then the weighted R block);
//   - the user plays with model.MDP.Rollout from her own stream (an episode ends early on
//     entering a terminal state: her trajectory then has L < H steps, and the trajectory
//     header's dims.terminal lists the terminal states) and, under LDP, privatises with the
//     agent's user-side randomiser (the curator never holds its noise source; her report has
//     the same layout and header whatever L).
//
// The calibration covers K − 1 users: episode K's data is never released (Capacity).

// tabServer is the learner side of both agent kinds (Server and PracticalServer).
type tabServer interface {
	Policy() (*model.Policy, error)
	Receive(m Message) error
}

// publisher turns a server's policy into versioned publications: the version changes when the
// actions differ from the previous publication (agentkit.ActionVersions). Comparing the H·S
// actions costs O(H·S) per user (100 µs on Taxi at H = 200, as much as everything else of an
// episode): a server whose planner recomputes its policy only when the release changes
// (plannedFrom) skips the comparison while the policy was computed from the release of the
// previous publication — the same actions, hence the same version.
type publisher struct {
	srv      tabServer
	head     protocol.Header
	users    int // Capacity
	versions agentkit.ActionVersions
	// from is the plannedFrom of the previous publication (valid when known).
	from  int
	known bool
}

func (p *publisher) Expect() protocol.Header { return p.head }
func (p *publisher) Capacity() int           { return p.users }

func (p *publisher) Publish() (protocol.Policy[*model.Policy], error) {
	pol, err := p.srv.Policy()
	if err != nil {
		p.known = false
		return protocol.Policy[*model.Policy]{}, err
	}
	if f, ok := p.srv.(plannedFrom); ok {
		if from, ok := f.plannedFrom(); ok {
			if p.known && from == p.from {
				return protocol.Policy[*model.Policy]{Version: p.versions.Version(), Rule: pol}, nil
			}
			p.from, p.known = from, true
		} else {
			p.known = false
		}
	}
	return protocol.Policy[*model.Policy]{Version: p.versions.Publish(pol.Act), Rule: pol}, nil
}

// plannedFrom is implemented by a server that can tell which release its current policy was
// computed from: plannedFrom returns the release's number of users and true when the policy
// changes only when that number does (false: unknown, the actions are compared).
type plannedFrom interface {
	plannedFrom() (users int, ok bool)
}

// TrustedCurator is the trusted curator of a JDP or non-private tabular agent: it receives raw
// trajectories.
type TrustedCurator struct {
	publisher
	traj model.Trajectory
}

// Receive implements protocol.Curator: the report is checked against the public (S, A, H)
// and terminal states (sizes — H steps, or L < H ending in a terminal state —, state and
// action ranges, finite rewards), then ingested through the agent's own boundary, which
// checks the same and clips rewards to [0, 1]. A refused report changes nothing.
func (c *TrustedCurator) Receive(r *protocol.Trajectory) error {
	if err := r.Validate(c.head); err != nil {
		return err
	}
	c.traj = model.Trajectory{S: r.States, A: r.Actions, R: r.Rewards}
	return c.srv.Receive(RawTrajectory{T: &c.traj})
}

// LocalCurator is the curator of an LDP tabular agent: it accepts only privatised reports
// (protocol.LDPCurator) and holds no noise stream.
type LocalCurator struct {
	publisher
	message func(b [][]float64) Message
	user    any
	own     any // the users' own RandomizerParams (σ the least their guarantee allows), checked against what a server publishes
	// bound is the public bound of each block's numbers (agentkit.CheckBlocks): the largest
	// honest contribution plus the tail of the user's noise.
	bound []float64
}

// UserSide implements protocol.UserSider: the public parameters of practical-ldp's user-side
// randomiser (a RandomizerParams; nil for the papers' LDP agents), so that a client in another
// language (python/dprl/ldp.py) privatises exactly as the Go one.
func (c *LocalCurator) UserSide() any { return c.user }

// RandomizerParams are the public parameters of practical-ldp's user-side randomiser: the
// contribution's layout and clipping (S, A, H, pooled, public rewards — no reward block —,
// visit cap, norm budget, reward weight) and the noise σ, all fixed from public parameters
// before any data. NormBudget is the effective budget min(B, M₂) (a budget ≥ M₂ never binds).
type RandomizerParams struct {
	States        int  `json:"states"`
	Actions       int  `json:"actions"`
	Horizon       int  `json:"horizon"`
	Pool          bool `json:"pool"`
	PublicRewards bool `json:"public_rewards"`
	// PublicSupport: the contribution's transition block has coordinates only inside the
	// environment's public support (support.go); omitted when false.
	PublicSupport bool    `json:"public_support,omitempty"`
	VisitCap      int     `json:"visit_cap"`
	NormBudget    int     `json:"norm_budget"`
	RewardWeight  float64 `json:"reward_weight"`
	Sigma         float64 `json:"sigma"`
}

// Receive implements protocol.LDPCurator: the blocks are checked against the public lengths
// and for finiteness, then against the public bound of their numbers (agentkit.CheckBlocks:
// the largest honest contribution — an indicator or a clipped reward for the papers' agents,
// the pooled visit cap times max(1, reward weight) for practical-ldp — plus
// agentkit.LaplaceTailScales Laplace scales or agentkit.GaussianTailSigmas σ; an honest report
// exceeds it with probability < 1e-30, and the check is post-processing of the privatised
// report, so it costs no privacy), then summed by the agent's LDP server. Without the bound
// one report of 1e308s made the sums infinite and the planner fail (issue 25 item 2).
func (c *LocalCurator) Receive(r *protocol.Privatized) error {
	if err := r.Validate(c.head); err != nil {
		return err
	}
	if err := agentkit.CheckBlocks(r.Blocks, c.bound); err != nil {
		return err
	}
	return c.srv.Receive(c.message(r.Blocks))
}

var (
	_ protocol.Curator[*model.Policy, *protocol.Trajectory] = (*TrustedCurator)(nil)
	_ protocol.LDPCurator[*model.Policy]                    = (*LocalCurator)(nil)
)

// User plays tabular episodes and reports them (R: *protocol.Trajectory for a trusted curator,
// *protocol.Privatized under LDP).
type User[R protocol.Report] struct {
	m      *model.MDP
	traj   *model.Trajectory
	report func(t *model.Trajectory) (R, error)
}

// Play implements protocol.User: model.MDP.Rollout of the published policy with her stream.
func (u *User[R]) Play(_ int, p protocol.Policy[*model.Policy], r *rand.Rand) (*model.Trajectory, error) {
	u.m.Rollout(p.Rule, r, u.traj)
	return u.traj, nil
}

// Report implements protocol.User.
func (u *User[R]) Report(t *model.Trajectory) (R, error) { return u.report(t) }

// Evaluator is the tabular family's exact regret: E_{s₁}[V*₁(s₁) − V^π₁(s₁)] on the true model,
// computed when the published policy changes.
type Evaluator struct {
	reg  *model.Regret
	last float64
	n    int
}

// NewEvaluator returns the evaluator of m.
func NewEvaluator(m *model.MDP) *Evaluator { return &Evaluator{reg: model.NewRegret(m)} }

// Policy implements protocol.Evaluator.
func (e *Evaluator) Policy(p protocol.Policy[*model.Policy]) error {
	e.last = e.reg.Of(p.Rule)
	e.n++
	return nil
}

// Regret implements protocol.Evaluator.
func (e *Evaluator) Regret(int, *model.Trajectory) (float64, error) { return e.last, nil }

// PolicyChanges is the number of times the published policy changed after the first.
func (e *Evaluator) PolicyChanges() int { return max(e.n-1, 0) }

// tabHeader returns the header of the reports to a tabular agent: its dimensions and, for raw
// trajectories, the terminal states (public structure: a trajectory shorter than H ends in
// one, which the curator checks with them), or, under LDP, the blocks' lengths (a privatised
// report's layout does not depend on where the episode ended, so its header does not list
// them and is the same as without terminal states).
func tabHeader(name string, kind protocol.Kind, S, A, H int, term terminal, blocks []int) protocol.Header {
	d := protocol.Dims{Horizon: H, States: S, Actions: A, Blocks: blocks}
	if kind == protocol.KindTrajectory {
		d.Terminal = term.list()
	}
	return protocol.Header{Schema: protocol.SchemaVersion, Family: protocol.Tabular, Agent: name, Kind: kind, Dims: d}
}

func trustedUser(m *model.MDP, head protocol.Header) *User[*protocol.Trajectory] {
	rep := &protocol.Trajectory{Header: head}
	return &User[*protocol.Trajectory]{m: m, traj: model.NewTrajectory(m.H), report: func(t *model.Trajectory) (*protocol.Trajectory, error) {
		rep.States, rep.Actions, rep.Rewards = t.S, t.A, t.R
		return rep, nil
	}}
}

// checkModel checks that the environment m is the one the agent was built for: its (S, A, H)
// and its terminal structure (Config.Terminal, TerminalReward, which the runner copies from m).
func checkModel(m *model.MDP, S, A, H int, term terminal) error {
	if m == nil || m.S != S || m.A != A || m.H != H {
		return fmt.Errorf("agent: the environment's (S, A, H) differs from the agent's (%d, %d, %d)", S, A, H)
	}
	if !term.same(m) {
		return fmt.Errorf("agent.terminal: the environment's terminal states (%v, reward %g) differ from the agent's (%v, reward %g)",
			terminal{set: m.Terminal}.list(), m.TerminalReward, term.list(), term.reward)
	}
	return nil
}

// Session returns the agent's contract for K episodes on m: its curator (a TrustedCurator, or a
// LocalCurator for an LDP agent), the user side (Rollout on m; the agent's randomiser under
// LDP) and the evaluator. name is the agent's registry name (the reports' header).
func (ag *Agent) Session(name string, m *model.MDP, K int) (protocol.Session, *Evaluator, error) {
	bb := ag.Server.Billboard()
	S, A, H := bb.S, bb.A, bb.H
	if err := checkModel(m, S, A, H, ag.term); err != nil {
		return nil, nil, err
	}
	ev := NewEvaluator(m)
	if z, ok := ag.Client.(*Randomizer); ok {
		n := H * S * A
		head := tabHeader(name, protocol.KindPrivatized, S, A, H, ag.term, []int{n, n * S, n})
		lim := agentkit.LaplaceReportBound(1, z.b) // indicators and rewards clipped to [0, 1]
		cur := &LocalCurator{publisher: publisher{srv: ag.Server, head: head, users: K - 1},
			message: func(b [][]float64) Message { return &Report{n: b[0], nt: b[1], r: b[2]} },
			bound:   []float64{lim, lim, lim}}
		rep := &protocol.Privatized{Header: head, Blocks: make([][]float64, 3)}
		u := &User[*protocol.Privatized]{m: m, traj: model.NewTrajectory(H), report: func(t *model.Trajectory) (*protocol.Privatized, error) {
			r, err := z.Randomize(t)
			if err != nil {
				return nil, err
			}
			rep.Blocks[0], rep.Blocks[1], rep.Blocks[2] = r.n, r.nt, r.r
			return rep, nil
		}}
		return protocol.NewSession(cur, u, ev), ev, nil
	}
	head := tabHeader(name, protocol.KindTrajectory, S, A, H, ag.term, nil)
	cur := &TrustedCurator{publisher: publisher{srv: ag.Server, head: head, users: K - 1}}
	return protocol.NewSession(cur, trustedUser(m, head), ev), ev, nil
}

// Session returns the practical agent's contract for K episodes on m (see Agent.Session; an
// agent given a public reward table refuses an environment whose rewards are not that public
// table); practical-ldp's privatised report is one block, its noisy contribution vector.
func (ag *PracticalAgent) Session(name string, m *model.MDP, K int) (protocol.Session, *Evaluator, error) {
	rel := ag.Server.Release()
	S, A, H := rel.S, rel.A, rel.H
	if err := checkModel(m, S, A, H, ag.term); err != nil {
		return nil, nil, err
	}
	if err := ag.pub.sameAs(m); err != nil {
		return nil, nil, err
	}
	if err := ag.sup.same(m); err != nil {
		return nil, nil, err
	}
	ev := NewEvaluator(m)
	if z, ok := ag.Client.(*GaussianRandomizer); ok {
		head := tabHeader(name, protocol.KindPrivatized, S, A, H, ag.term, []int{len(z.rep.x)})
		e := z.enc
		cur := &LocalCurator{publisher: publisher{srv: ag.Server, head: head, users: K - 1},
			message: func(b [][]float64) Message { return &GaussianReport{x: b[0]} },
			user:    userSideOf(e, z.sigma), own: z.own,
			bound: []float64{agentkit.GaussianReportBound(e.maxEntry(), z.sigma)}}
		rep := &protocol.Privatized{Header: head, Blocks: make([][]float64, 1)}
		u := &User[*protocol.Privatized]{m: m, traj: model.NewTrajectory(H), report: func(t *model.Trajectory) (*protocol.Privatized, error) {
			r, err := z.Randomize(t)
			if err != nil {
				return nil, err
			}
			rep.Blocks[0] = r.x
			return rep, nil
		}}
		return protocol.NewSession(cur, u, ev), ev, nil
	}
	head := tabHeader(name, protocol.KindTrajectory, S, A, H, ag.term, nil)
	cur := &TrustedCurator{publisher: publisher{srv: ag.Server, head: head, users: K - 1}}
	return protocol.NewSession(cur, trustedUser(m, head), ev), ev, nil
}

// AgentName returns the registry name of the papers' agent cfg selects ("dp-ucbvi-jdp", …),
// the agent field of its reports' header.
func AgentName(cfg Config) string {
	for _, a := range Agents() {
		if a.Algorithm == cfg.Algorithm && a.Model == cfg.Privacy.Model {
			return a.Name
		}
	}
	return cfg.Algorithm
}
