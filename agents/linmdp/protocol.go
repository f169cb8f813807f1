package linmdp

import (
	"errors"
	"math/rand/v2"

	"github.com/dprl/dprl/agents/internal/agentkit"
	"github.com/dprl/dprl/agents/protocol"
	model "github.com/dprl/dprl/model/linmdp"
)

// This file implements the agent contract (package protocol) for every linear-MDP agent (the
// papers' and dprl's practical ones; all are trusted-curator agents, JDP or non-private):
//
//   - the rule a curator publishes is the greedy policy pi[h][s] of the Agent (Policy());
//   - the curator receives a *protocol.Trajectory (states in [0, N), actions in [0, A), finite
//     rewards), checked as a whole before any step is observed, then fed to the agent's own
//     boundary (Observe: checkStep, the reward clipped to [0, 1]; practical: one observation
//     per step) and EndEpisode;
//   - the user plays the published policy on the environment (InitialState, Reward, Step) from
//     her stream; in the experiments every user draws in turn from the run's one environment
//     stream (engine.SharedEnv), as the family has always been simulated.
//
// Every agent ingests all K episodes (Capacity K; the calibrations count K users).

// Curator is the trusted curator of a linear-MDP agent.
type Curator struct {
	ag       Agent
	head     protocol.Header
	K        int
	k        int  // episodes begun
	begun    bool // BeginEpisode(k) was called and EndEpisode not yet
	received int
	agentV   int
	seen     bool
	versions agentkit.ActionVersions
}

var _ protocol.Curator[[][]int, *protocol.Trajectory] = (*Curator)(nil)

// NewCurator returns the curator of ag on env for K episodes; name is the agent's name (the
// reports' header).
func NewCurator(env *model.MDP, ag Agent, name string, K int) *Curator {
	return &Curator{ag: ag, K: K, head: protocol.Header{Schema: protocol.SchemaVersion, Family: protocol.LinMDP, Agent: name,
		Kind: protocol.KindTrajectory, Dims: protocol.Dims{Horizon: env.H, States: env.N, Actions: env.A}}}
}

// Expect implements protocol.Curator.
func (c *Curator) Expect() protocol.Header { return c.head }

// Capacity implements protocol.Curator: K.
func (c *Curator) Capacity() int { return c.K }

// Agent returns the agent (its Info and Updates).
func (c *Curator) Agent() Agent { return c.ag }

func (c *Curator) begin() {
	if !c.begun {
		c.k++
		c.ag.BeginEpisode(c.k) // Ngo and LSVI-UCB may update the policy here
		c.begun = true
	}
}

// Publish implements protocol.Curator: it starts the next episode (BeginEpisode) once and
// returns the agent's policy, whose version changes when its actions change.
func (c *Curator) Publish() (protocol.Policy[[][]int], error) {
	c.begin()
	if v := c.ag.PolicyVersion(); !c.seen || v != c.agentV {
		c.versions.Publish(c.ag.Policy())
		c.agentV, c.seen = v, true
	}
	return protocol.Policy[[][]int]{Version: c.versions.Version(), Rule: c.ag.Policy()}, nil
}

// Receive implements protocol.Curator: the whole trajectory is validated first (a refused
// report changes nothing), then its H steps are observed and the episode ended.
func (c *Curator) Receive(r *protocol.Trajectory) error {
	if err := r.Validate(c.head); err != nil {
		return err
	}
	if c.received >= c.K {
		return errors.New("linmdp: all K users of the calibration were received")
	}
	c.begin()
	for h := range r.Actions {
		if err := c.ag.Observe(h, r.States[h], r.Actions[h], r.Rewards[h], r.States[h+1]); err != nil {
			return err
		}
	}
	var before error
	e, hasErr := c.ag.(interface{ Err() error })
	if hasErr {
		before = e.Err()
	}
	c.ag.EndEpisode()
	c.begun = false
	c.received++
	if hasErr && before == nil && e.Err() != nil {
		return e.Err()
	}
	return nil
}

// User plays linear-MDP episodes.
type User struct {
	env *model.MDP
	rep protocol.Trajectory
}

// NewUser returns the user side for a curator with header head.
func NewUser(env *model.MDP, head protocol.Header) *User {
	return &User{env: env, rep: protocol.Trajectory{Header: head, States: make([]int, env.H+1), Actions: make([]int, env.H),
		Rewards: make([]float64, env.H)}}
}

// Play implements protocol.User: s₁ ~ InitialState, a_h = π_h(s_h), r_h = Reward, s_{h+1} ~
// Step, all from her stream r.
func (u *User) Play(_ int, p protocol.Policy[[][]int], r *rand.Rand) (*protocol.Trajectory, error) {
	env, t := u.env, &u.rep
	s := env.InitialState(r)
	for h := 0; h < env.H; h++ {
		a := p.Rule[h][s]
		t.States[h], t.Actions[h], t.Rewards[h] = s, a, env.Reward(h, s, a)
		s = env.Step(h, s, a, r)
	}
	t.States[env.H] = s
	return t, nil
}

// Report implements protocol.User: the trajectory itself (for the trusted curator).
func (u *User) Report(t *protocol.Trajectory) (*protocol.Trajectory, error) { return t, nil }

// Evaluator is the family's exact regret V*₁(s₁) − V^π₁(s₁) at each user's initial state (spec
// §6.6), V^π computed when the published policy changes.
type Evaluator struct {
	env   *model.MDP
	vstar [][]float64
	vpi   [][]float64
	// Return is the realised return summed over the episodes played (for reference).
	Return float64
}

// NewEvaluator returns the evaluator of env.
func NewEvaluator(env *model.MDP) *Evaluator {
	v, _ := env.OptimalValues()
	return &Evaluator{env: env, vstar: v}
}

// Policy implements protocol.Evaluator.
func (e *Evaluator) Policy(p protocol.Policy[[][]int]) error {
	e.vpi = e.env.Evaluate(p.Rule)
	return nil
}

// Regret implements protocol.Evaluator.
func (e *Evaluator) Regret(_ int, t *protocol.Trajectory) (float64, error) {
	for _, r := range t.Rewards {
		e.Return += r
	}
	return model.Regret(e.vstar, e.vpi, t.States[0]), nil
}

// NewSession returns ag's contract for K episodes on env (curator, user, evaluator); name is
// the agent's name.
func NewSession(env *model.MDP, ag Agent, name string, K int) (protocol.Session, *Curator, *Evaluator) {
	c := NewCurator(env, ag, name, K)
	ev := NewEvaluator(env)
	return protocol.NewSession(c, NewUser(env, c.head), ev), c, ev
}
