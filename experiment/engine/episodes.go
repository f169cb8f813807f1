package engine

import (
	"math/rand/v2"

	"github.com/dprl/dprl/rng"
)

// This file is the one place where the streams of a unit's users are derived for the episode
// loop (protocol.Run), and where the named streams the families' agents have always used are
// spelled. Each family keeps the paths it has always used, so that every reproduction stays
// byte-identical:
//
//	family     users' episodes (Episodes)       agent streams
//	tabular    Users().Index(k−1)   FromZero     agent/tie, agent/posterior, noise/<mechanism>
//	linmdp     Env(), shared        SharedEnv    agent/… (Common.Seed = Agent())
//	linmix     Users().Index(k)     FromOne      the root: ties, noise/<stat>/<h·8+r>, ldp, practical-noise
//	lq         Users().Index(k)     FromOne      privacy/B1, privacy/B2, optimiser/k (papers);
//	                                             privacy/practical, optimiser/practical/… (practical)

// UserStreams says how the users of a family draw their episodes.
type UserStreams int

const (
	// FromZero: user k (1-based) draws from Users().Index(k−1) (tabular).
	FromZero UserStreams = iota
	// FromOne: user k draws from Users().Index(k) (linmix, lq).
	FromOne
	// SharedEnv: the users draw in turn from one environment stream, Env() (linmdp: one
	// stream for the run, as the family's environment has always been simulated).
	SharedEnv
)

// Episodes returns user k's stream for the episode loop (protocol.Options.Users). The
// returned generator is reseeded in place by every call (no allocation per episode), so a
// user's stream is valid until the next user's.
func (s Streams) Episodes(kind UserStreams) func(k int) *rand.Rand {
	if kind == SharedEnv {
		r := s.Env().Rand()
		return func(int) *rand.Rand { return r }
	}
	users := s.Users()
	off := 0
	if kind == FromZero {
		off = -1
	}
	pcg := rand.NewPCG(0, 0)
	r := rand.New(pcg)
	return func(k int) *rand.Rand {
		users.Index(uint64(k + off)).Reseed(pcg)
		return r
	}
}

// Path returns the stream at path below the unit's root: the named streams of the table above
// that are not users, agent, env or noise/<name> (linmix's ties, lq's privacy/B1, …).
func (s Streams) Path(path ...string) rng.Seed {
	r := s.Root()
	for _, p := range path {
		r = r.Child(p)
	}
	return r
}
