package tabular

import (
	"fmt"
	"math/rand/v2"

	model "github.com/dprl/dprl/model/tabular"
	"github.com/dprl/dprl/privacy/noise"
)

// Message is what a user's client sends to the server after her episode.
type Message interface{ message() }

// RawTrajectory is the message of the trusted-curator (JDP and non-private) protocols: the
// user hands her raw trajectory to the curator.
type RawTrajectory struct{ T *model.Trajectory }

func (RawTrajectory) message() {}

// Client runs on the user's side and encodes her trajectory into the message she sends.
type Client interface {
	Encode(t *model.Trajectory) Message
}

// Server is the learner: it releases the policy for the next user and receives messages.
type Server interface {
	// Policy computes π_k from the current release. The returned policy is owned by the server
	// and valid until the next call.
	Policy() (*model.Policy, error)
	// Receive ingests one user's message.
	Receive(m Message) error
	// Diagnostics returns the planner's counters.
	Diagnostics() PlannerStats
	// Billboard returns the current release (what the planner reads).
	Billboard() *Billboard
}

type rawClient struct{}

func (rawClient) Encode(t *model.Trajectory) Message { return RawTrajectory{T: t} }

// trustedServer is the server of a trusted curator (JDP agents and the non-private twins):
// the curator ingests raw trajectories and a planner computes the policy from its release R
// only (a *Billboard, or a practical agent's *Release).
type trustedServer[R any, P releasePlanner[R]] struct {
	cur     releaser[R]
	planner P
	pol     *model.Policy
}

func (c *trustedServer[R, P]) Policy() (*model.Policy, error) {
	return c.pol, c.planner.Plan(c.cur.Release(), c.pol)
}

func (c *trustedServer[R, P]) Receive(m Message) error {
	raw, ok := m.(RawTrajectory)
	if !ok {
		return fmt.Errorf("curator: expected a raw trajectory, got %T", m)
	}
	return c.cur.Ingest(raw.T)
}

// releaser is a trusted curator as its server sees it: it ingests raw trajectories and
// releases R.
type releaser[R any] interface {
	Ingest(t *model.Trajectory) error
	Release() R
}

// releasePlanner computes a policy from a release R only.
type releasePlanner[R any] interface {
	Plan(r R, pol *model.Policy) error
}

// curatorServer is the server of JDP and non-private agents: a trusted Curator plus a Planner
// that sees only the curator's Billboard.
type curatorServer struct {
	trustedServer[*Billboard, Planner]
}

func newCuratorServer(cur Curator, planner Planner, pol *model.Policy) *curatorServer {
	return &curatorServer{trustedServer[*Billboard, Planner]{cur: cur, planner: planner, pol: pol}}
}

func (c *curatorServer) Diagnostics() PlannerStats { return c.planner.Diagnostics() }
func (c *curatorServer) Billboard() *Billboard     { return c.cur.Release() }

// localServerOf is the server of LDP agents: it accepts only the privatised reports Rep of its
// local server S (a concrete type: nothing else reaches it) and plans from S's release R.
type localServerOf[R any, Rep Message, S privatizedReceiver[R, Rep], P releasePlanner[R]] struct {
	srv     S
	planner P
	pol     *model.Policy
}

// privatizedReceiver is the local server of an LDP agent: it takes privatised reports Rep and
// releases R.
type privatizedReceiver[R any, Rep Message] interface {
	Receive(r Rep) error
	Release() R
}

func (l *localServerOf[R, Rep, S, P]) Policy() (*model.Policy, error) {
	return l.pol, l.planner.Plan(l.srv.Release(), l.pol)
}

func (l *localServerOf[R, Rep, S, P]) Receive(m Message) error {
	if rj, ok := m.(rejected); ok {
		return fmt.Errorf("ldp client: %w", rj.err)
	}
	r, ok := m.(Rep)
	if !ok {
		return fmt.Errorf("ldp server: accepts only privatized reports, got %T", m)
	}
	return l.srv.Receive(r)
}

// ldpServer is the server of LDP agents: it accepts only *Report messages.
type ldpServer struct {
	localServerOf[*Billboard, *Report, *LocalServer, Planner]
}

func (l *ldpServer) Diagnostics() PlannerStats { return l.planner.Diagnostics() }
func (l *ldpServer) Billboard() *Billboard     { return l.srv.Release() }

// Config selects an agent.
type Config struct {
	// Algorithm is "dp-ucbvi" (Bernstein bonus, eq. (31); with Model NonPrivate this is UCBVI)
	// or "private-ucbvi" (Hoeffding bonus on raw noisy counts; NonPrivate gives UCBVI-CH-like).
	Algorithm string
	Privacy   PrivacyConfig
	Bonus     BonusConfig
	// Terminal and TerminalReward are the environment's public terminal structure
	// (model.MDP.Terminal and TerminalReward; nil and 0: no terminal states), which the
	// runners copy from the model: the curator accepts episodes that end on entering a
	// terminal state and counts their steps only, the planner values terminal states exactly
	// (terminal.go). Not part of the configuration's JSON: they come with the environment.
	Terminal       []bool  `json:"-"`
	TerminalReward float64 `json:"-"`
}

// Streams are the agent's independent random streams.
type Streams struct {
	// Tie breaks ties in the greedy policy.
	Tie *rand.Rand
	// Noise supplies one noise source per mechanism (JDP counters, the LDP randomiser). Nil
	// means the deployment default: a fresh crypto-seeded noise.Secure source per mechanism.
	Noise Sources
}

// Agent is a configured learner split along its trust boundary.
type Agent struct {
	Client  Client
	Server  Server
	Privacy PrivacyReport
	// Bonus is the resolved bonus configuration (ι and C3 filled in).
	Bonus BonusConfig
	term  terminal
}

// New builds an agent for an (S, A, H) MDP and K episodes. Noise levels are computed here from
// public parameters only (the terminal states are public too). A model whose per-step tables
// (H·S·A·S entries) exceed model.MaxEntries is refused before anything is allocated.
func New(S, A, H, K int, cfg Config, st Streams) (ag *Agent, err error) {
	if err := checkShape(S, A, H, K); err != nil {
		return nil, err
	}
	if err := model.CheckSize("agent "+AgentName(cfg)+": ", S, A, H); err != nil {
		return nil, err
	}
	term, err := newTerminal("agent.terminal", S, cfg.Terminal, cfg.TerminalReward)
	if err != nil {
		return nil, err
	}
	if err := cfg.Privacy.Validate(); err != nil {
		return nil, err
	}
	bonus, err := cfg.Bonus.Resolve(S, A, H, K, cfg.Privacy.Beta)
	if err != nil {
		return nil, err
	}
	if st.Tie == nil {
		return nil, fmt.Errorf("agent: a tie-breaking stream is required")
	}
	var planner Planner
	switch cfg.Algorithm {
	case "dp-ucbvi":
		p := NewDPUCBVI(S, A, H, bonus, st.Tie)
		p.term = term
		planner = p
	case "private-ucbvi":
		p := NewPrivateUCBVI(S, A, H, bonus, st.Tie)
		p.term = term
		planner = p
	default:
		return nil, fmt.Errorf("agent.algorithm: unknown algorithm %q (allowed: dp-ucbvi, private-ucbvi)", cfg.Algorithm)
	}
	if st.Noise == nil && cfg.Privacy.Model != NonPrivate {
		var serr error
		st.Noise = func(string) noise.Source {
			s, err := noise.NewSecure()
			if err != nil {
				serr = err
				return noise.NewSecureFromKey([32]byte{}) // never used: New returns serr below
			}
			return s
		}
		defer func() {
			if serr != nil {
				ag, err = nil, serr
			}
		}()
	}
	pol := model.NewDeterministic(S, H)
	ag = &Agent{Bonus: bonus, term: term}
	switch cfg.Privacy.Model {
	case NonPrivate:
		id, err := NewIdentity(S, A, H)
		if err != nil {
			return nil, err
		}
		id.term = term
		ag.Client, ag.Server = rawClient{}, newCuratorServer(id, planner, pol)
		if _, ag.Privacy, err = cfg.Privacy.scales(S, A, H, K, false); err != nil {
			return nil, err
		}
	case JDP:
		c, err := NewCentral(S, A, H, K, cfg.Privacy, st.Noise)
		if err != nil {
			return nil, err
		}
		c.term = term
		ag.Client, ag.Server, ag.Privacy = rawClient{}, newCuratorServer(c, planner, pol), c.Report()
	case LDP:
		src := st.Noise("local/report")
		b, rep, err := cfg.Privacy.scales(S, A, H, K, src.Secure())
		if err != nil {
			return nil, err
		}
		srv, err := NewLocalServer(S, A, H, K, cfg.Privacy, b)
		if err != nil {
			return nil, err
		}
		z := NewRandomizer(S, A, H, b, src)
		z.term = term
		ag.Client = z
		ag.Server, ag.Privacy = &ldpServer{localServerOf[*Billboard, *Report, *LocalServer, Planner]{srv: srv, planner: planner, pol: pol}}, rep
	}
	return ag, nil
}
