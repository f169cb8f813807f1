package lq

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/dprl/dprl/agents/protocol"
	"github.com/dprl/dprl/model/lq"
	"github.com/dprl/dprl/rng"
)

// This file implements the agent contract (package protocol) for the LQ agents (OFU-RL,
// Private-OFU-RL and dprl's practical-ofu-rl; all trusted-curator agents):
//
//   - OFU-RL's curator publishes its release, the *Billboard (T₁, T₂): the user plans her own
//     gains from it and her private x₁ with the public Planner and the public optimiser stream
//     optimiser/k (Algorithm 1 lines 3–5), so x₁ never leaves her before her report;
//   - practical-ofu-rl's curator publishes, for each release, the *PracticalPlanner's output
//     (the confidence set and the reference plans, computed on the curator's side from the
//     release only); the user plays the gains of the reference closest to her x₁ (Choose);
//   - the user rolls out u_h = K_h x_h with her own noise stream and reports her raw path
//     (*protocol.Path: x₁..x_{H+1}, u₁..u_H), checked for sizes and finiteness at the boundary;
//     the curator then applies the pair scaling (and, practical, the budget's stopping rule)
//     its sensitivity proof assumes;
//   - the calibration covers K − 1 users (Capacity); every episode's regret is computed at the
//     user's own x₁ (the LQ loop's per-episode evaluation: x₁ differs for every user).

func lqHeader(name string, pub Public) protocol.Header {
	return protocol.Header{Schema: protocol.SchemaVersion, Family: protocol.LQ, Agent: name, Kind: protocol.KindTrajectory,
		Dims: protocol.Dims{Horizon: pub.H, StateDim: pub.N, InputDim: pub.D}}
}

// Server is the trusted curator of OFU-RL and Private-OFU-RL (protocol.Curator) around the
// agent's Curator.
type Server struct {
	cur      *Curator
	head     protocol.Header
	users    int
	received int
	begun    bool
	bb       *Billboard
	prev     Billboard
	version  uint64
}

var _ protocol.Curator[*Billboard, *protocol.Path] = (*Server)(nil)

// NewServer returns the contract's curator around cur for K episodes; name is the agent's
// name.
func NewServer(cur *Curator, name string, K int) *Server {
	return &Server{cur: cur, head: lqHeader(name, cur.pub), users: K - 1}
}

// Expect implements protocol.Curator.
func (s *Server) Expect() protocol.Header { return s.head }

// Capacity implements protocol.Curator: K − 1.
func (s *Server) Capacity() int { return s.users }

// Curator returns the agent's curator.
func (s *Server) Curator() *Curator { return s.cur }

// Publish implements protocol.Curator: the release for the next user (one per episode; its
// version changes with the episode, which the release carries).
func (s *Server) Publish() (protocol.Policy[*Billboard], error) {
	if !s.begun {
		s.bb = s.cur.Release()
		if err := finiteBillboard(s.bb); err != nil {
			return protocol.Policy[*Billboard]{}, err
		}
		s.begun = true
		// The episode is part of the rule (the private log-det bound of the users' planner
		// reads it), so every episode publishes a new version.
		if s.version == 0 || s.bb.Episode != s.prev.Episode || !slices.Equal(s.bb.T1, s.prev.T1) || !slices.Equal(s.bb.T2, s.prev.T2) {
			s.version++
			s.prev.Episode = s.bb.Episode
			s.prev.T1 = append(s.prev.T1[:0], s.bb.T1...)
			s.prev.T2 = append(s.prev.T2[:0], s.bb.T2...)
		}
	}
	return protocol.Policy[*Billboard]{Version: s.version, Rule: s.bb}, nil
}

// Receive implements protocol.Curator: sizes and finiteness first (nothing changes on a
// refused path), then the curator's pair scaling and insertion.
func (s *Server) Receive(r *protocol.Path) error {
	if err := r.Validate(s.head); err != nil {
		return err
	}
	if err := scalablePairs(r); err != nil {
		return err
	}
	if s.received >= s.users {
		return errors.New("lq: all K − 1 users of the calibration were received")
	}
	if err := s.cur.Receive(&Trajectory{X: r.States, U: r.Inputs}); err != nil {
		return err
	}
	s.received++
	s.begun = false
	return nil
}

// PracticalServer is the trusted curator of practical-ofu-rl (protocol.Curator): the agent's
// PracticalCurator and, on its side, the PracticalPlanner that turns each release into the
// published plans.
type PracticalServer struct {
	cur     *PracticalCurator
	pl      *PracticalPlanner
	head    protocol.Header
	last    int
	version uint64
	// SearchSeconds is the time spent planning (diagnostic).
	SearchSeconds float64 `state:"-"`
}

var _ protocol.Curator[*PracticalPlanner, *protocol.Path] = (*PracticalServer)(nil)

// NewPracticalServer returns the contract's curator of cur with planner pl for K episodes.
func NewPracticalServer(cur *PracticalCurator, pl *PracticalPlanner, name string) *PracticalServer {
	return &PracticalServer{cur: cur, pl: pl, head: lqHeader(name, pl.pub), last: -1}
}

// Expect implements protocol.Curator.
func (s *PracticalServer) Expect() protocol.Header { return s.head }

// Capacity implements protocol.Curator: K − 1.
func (s *PracticalServer) Capacity() int { return s.cur.maxUsers }

// Curator returns the agent's curator.
func (s *PracticalServer) Curator() *PracticalCurator { return s.cur }

// Publish implements protocol.Curator: after each release the planner prepares the
// confidence set and the reference plans (a new version); between releases the same plans.
func (s *PracticalServer) Publish() (protocol.Policy[*PracticalPlanner], error) {
	if rel := s.cur.Release(); rel.Index != s.last {
		t0 := time.Now()
		if err := s.pl.Prepare(rel); err != nil {
			return protocol.Policy[*PracticalPlanner]{}, err
		}
		s.SearchSeconds += time.Since(t0).Seconds()
		s.last = rel.Index
		s.version++
	}
	return protocol.Policy[*PracticalPlanner]{Version: s.version, Rule: s.pl}, nil
}

// Receive implements protocol.Curator: sizes and finiteness first, then the curator's
// encoder (pair scaling, the budget's stopping rule).
func (s *PracticalServer) Receive(r *protocol.Path) error {
	if err := r.Validate(s.head); err != nil {
		return err
	}
	return s.cur.Receive(&Trajectory{X: r.States, U: r.Inputs})
}

// Episode is one LQ user's episode: her path, the gains she played and, for OFU-RL, the plan
// she computed (diagnostics).
type Episode struct {
	Path  *Trajectory
	Gains [][]float64
	// Plan is OFU-RL's plan (nil for the practical agent); Zero says every gain is 0.
	Plan *Plan
	Zero bool
	// Cost is the realised cost Σ_h c_h (diagnostic).
	Cost float64
}

// user is the part both LQ users share: the environment and the path buffers.
type user struct {
	sys  *lq.System
	head protocol.Header
	ep   Episode
	w    []float64
	rep  protocol.Path
}

func newUser(sys *lq.System, head protocol.Header) user {
	n, d, H := sys.N, sys.D, sys.H
	tr := &Trajectory{X: make([][]float64, H+1), U: make([][]float64, H)}
	for h := range tr.X {
		tr.X[h] = make([]float64, n)
	}
	for h := range tr.U {
		tr.U[h] = make([]float64, d)
	}
	return user{sys: sys, head: head, ep: Episode{Path: tr}, w: make([]float64, n), rep: protocol.Path{Header: head, States: tr.X, Inputs: tr.U}}
}

// rollout plays u_h = K_h x_h from x₁ = tr.X[0] with the user's noise stream r.
func (u *user) rollout(gains [][]float64, r *rand.Rand) {
	sys, tr := u.sys, u.ep.Path
	n, d := sys.N, sys.D
	cost := 0.0
	for h := 0; h < sys.H; h++ {
		kh := gains[h]
		for i := 0; i < d; i++ {
			v := 0.0
			for j := 0; j < n; j++ {
				v += kh[i*n+j] * tr.X[h][j]
			}
			tr.U[h][i] = v
		}
		cost += sys.Cost(tr.X[h], tr.U[h])
		sys.SampleNoise(r, u.w)
		sys.Step(tr.X[h], tr.U[h], u.w, tr.X[h+1])
	}
	u.ep.Gains, u.ep.Cost = gains, cost
}

// Report implements protocol.User: her raw path.
func (u *user) Report(*Episode) (*protocol.Path, error) { return &u.rep, nil }

// OFUUser is OFU-RL's user: she plans her gains from the published billboard and her own x₁
// (the public Planner, the public optimiser stream optimiser/k) and rolls them out.
type OFUUser struct {
	user
	pl      *Planner
	opt     rng.Seed
	optPCG  *rand.PCG
	optRand *rand.Rand
	// SearchSeconds is the time spent planning (diagnostic).
	SearchSeconds float64 `state:"-"`
}

var _ protocol.User[*Billboard, *Episode, *protocol.Path] = (*OFUUser)(nil)

// NewOFUUser returns OFU-RL's user side on sys; opt is the optimiser stream tree (episode k
// uses opt.Index(k)).
func NewOFUUser(sys *lq.System, pl *Planner, head protocol.Header, opt rng.Seed) *OFUUser {
	pcg := opt.Index(0).PCG()
	return &OFUUser{user: newUser(sys, head), pl: pl, opt: opt, optPCG: pcg, optRand: rand.New(pcg)}
}

// Play implements protocol.User: x₁ = InitialState(k), the plan, the rollout.
func (u *OFUUser) Play(k int, p protocol.Policy[*Billboard], r *rand.Rand) (*Episode, error) {
	if p.Rule == nil {
		return nil, errors.New("lq: no rule")
	}
	x1 := u.ep.Path.X[0]
	u.sys.InitialState(k, x1) // user k arrives with her private x_{k,1}
	u.opt.Index(uint64(k)).Reseed(u.optPCG)
	t0 := time.Now()
	plan, err := u.pl.Plan(p.Rule, x1, u.optRand) // lines 4–5: C_k, Θ̃_k (eq. (9)); gains (eq. (10))
	if err != nil {
		return nil, err
	}
	u.SearchSeconds += time.Since(t0).Seconds()
	u.ep.Plan = plan
	zero := true
	for _, g := range plan.Gains {
		for _, v := range g {
			zero = zero && v == 0
		}
	}
	u.ep.Zero = zero
	u.rollout(plan.Gains, r) // lines 6–8: u_{k,h} = K_h(Θ̃_k) x_{k,h}
	return &u.ep, nil
}

// PracticalUser is practical-ofu-rl's user: she plays the published reference plan closest to
// her own x₁.
type PracticalUser struct{ user }

var _ protocol.User[*PracticalPlanner, *Episode, *protocol.Path] = (*PracticalUser)(nil)

// NewPracticalUser returns practical-ofu-rl's user side on sys.
func NewPracticalUser(sys *lq.System, head protocol.Header) *PracticalUser {
	return &PracticalUser{user: newUser(sys, head)}
}

// Play implements protocol.User.
func (u *PracticalUser) Play(k int, p protocol.Policy[*PracticalPlanner], r *rand.Rand) (*Episode, error) {
	if p.Rule == nil {
		return nil, errors.New("lq: no rule")
	}
	if err := p.Rule.checkWire(u.sys); err != nil {
		return nil, err
	}
	x1 := u.ep.Path.X[0]
	u.sys.InitialState(k, x1) // user k's private initial state
	rp := &p.Rule.Refs[p.Rule.Choose(x1)]
	u.ep.Zero = rp.Zero
	u.rollout(rp.Gains, r)
	return &u.ep, nil
}

// Evaluator is OFU-RL's exact regret J^{π_k}_1(Θ*, x_{k,1}) − J*_1(Θ*, x_{k,1}) at each user's
// x₁, with the run's diagnostics (lq spec §5.4; Θ* is read here, never by the agent).
type Evaluator struct {
	sys       *lq.System
	thetaNorm float64
	Diag      Diagnostics
	// RealisedCost[k−1] is the realised cost of episode k (appended).
	RealisedCost []float64
	// Last is the last episode's plan.
	Last *Plan
}

// NewEvaluator returns OFU-RL's evaluator on sys.
func NewEvaluator(sys *lq.System) *Evaluator {
	return &Evaluator{sys: sys, thetaNorm: frob(sys.Theta)}
}

// Policy implements protocol.Evaluator (the regret depends on each user's plan and x₁).
func (e *Evaluator) Policy(protocol.Policy[*Billboard]) error { return nil }

// Regret implements protocol.Evaluator.
func (e *Evaluator) Regret(_ int, ep *Episode) (float64, error) {
	plan, x1, sys := ep.Plan, ep.Path.X[0], e.sys
	d := &e.Diag
	sr := plan.Search
	d.Fevals += int64(sr.Fevals)
	if sr.EarlyExit {
		d.EarlyExits++
	}
	if sr.Empty {
		d.EmptySets++
	}
	if plan.PDRepair {
		d.PDRepairs++
	}
	if sr.F > sr.FProjHat+1e-12*(1+math.Abs(sr.FProjHat)) {
		d.EstimateViolations++
	}
	if e.thetaNorm <= 1 && plan.Set.Contains(sys.Theta) {
		d.InSet++
		js := sys.Optimal(x1)
		if sr.F <= js+1e-9*(1+math.Abs(js)) {
			d.OptimismHeld++
		}
	}
	if ep.Zero {
		d.ZeroPolicy++
	}
	e.RealisedCost = append(e.RealisedCost, ep.Cost)
	e.Last = plan
	return sys.Regret(plan.Gains, x1)
}

// PracticalEvaluator is practical-ofu-rl's exact regret at each user's x₁ and its diagnostics:
// per release (when the published plans change) the set's and the searches' counters, per
// episode the zero-policy counters.
type PracticalEvaluator struct {
	sys     *lq.System
	thetaOK bool
	Diag    PracticalDiagnostics
}

// NewPracticalEvaluator returns practical-ofu-rl's evaluator on sys.
func NewPracticalEvaluator(sys *lq.System) *PracticalEvaluator {
	return &PracticalEvaluator{sys: sys, thetaOK: frob(sys.Theta) <= 1}
}

// Policy implements protocol.Evaluator: the release's diagnostics.
func (e *PracticalEvaluator) Policy(p protocol.Policy[*PracticalPlanner]) error {
	if p.Rule == nil {
		return errors.New("lq: no rule")
	}
	if err := p.Rule.checkWire(e.sys); err != nil {
		return err
	}
	pl, sys, dg := p.Rule, e.sys, &e.Diag
	dg.Releases++
	if pl.Set.PDRepair {
		dg.PDRepairs++
	}
	in := e.thetaOK && pl.Set.Set.Contains(sys.Theta)
	if in {
		dg.InSet++
	}
	for _, rp := range pl.Refs {
		dg.Searches++
		dg.Fevals += int64(rp.Search.Fevals)
		if rp.Search.EarlyExit {
			dg.EarlyExits++
		}
		if rp.Search.Empty {
			dg.EmptySets++
		}
		switch rp.Mode {
		case SearchCold:
			dg.ColdSearches++
		case SearchWarm:
			dg.WarmSearches++
		case SearchFallback:
			dg.WarmFallbacks++
		}
		if js := sys.Optimal(rp.X); in && rp.Search.F > js+1e-9*(1+math.Abs(js)) {
			dg.OptimismViolations++
		}
	}
	return nil
}

// Regret implements protocol.Evaluator.
func (e *PracticalEvaluator) Regret(k int, ep *Episode) (float64, error) {
	dg := &e.Diag
	if ep.Zero {
		dg.ZeroPolicy++
	} else if dg.FirstNonZero == 0 {
		dg.FirstNonZero = k
	}
	return e.sys.Regret(ep.Gains, ep.Path.X[0])
}
