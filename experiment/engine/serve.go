package engine

import (
	"crypto/hmac"
	"crypto/sha256"
	"fmt"

	"github.com/dprl/dprl/agents/protocol"
	"github.com/dprl/dprl/internal/bounds"
	"github.com/dprl/dprl/privacy/noise"
)

// Servable is a family whose agents a service can serve (`dprl serve`) and a client can play
// against it (`dprl client simulate`).
type Servable interface {
	// Session builds the one agent of a served RunSpec (checked by CheckServed) with the
	// streams st, exactly as a unit of `dprl run` with that spec and seed builds it, and
	// returns its contract. The environment is built too (the users' side and the evaluator
	// need it; a service uses only the curator side, which reads the public dimensions).
	Session(s *RunSpec, st Streams) (Served, error)
}

// Served is a served agent: its contract and its accountant's statement.
type Served struct {
	// Session is the agent's contract.
	Session protocol.Session
	// Privacy is the accountant's report (a privacy/ledger.Report for dprl's practical agents,
	// the papers' own report for theirs): JSON-encodable, fixed at construction from public
	// parameters.
	Privacy any
	// Statement is the report's one-line statement (as `dprl run` prints it).
	Statement string
	// Users is how the family's users draw their episodes (Streams.Episodes), so that a client
	// playing users against a service draws them as `dprl run` does.
	Users UserStreams
}

// CheckServed validates a served RunSpec — one family that is Servable, exactly one agent, at
// most one ε (exactly one for a private agent; the family checks), K in bounds and at most one
// seed — and returns the family. Errors name the field.
func CheckServed(r *Registry, s *RunSpec) (Servable, error) {
	f, err := r.Lookup(s.Family)
	if err != nil {
		return nil, fmt.Errorf("family: %w", err)
	}
	sv, ok := f.(Servable)
	if !ok {
		return nil, fmt.Errorf("family: family %s cannot be served", s.Family)
	}
	if len(s.Agents) != 1 {
		return nil, fmt.Errorf("agents: a served experiment runs exactly one agent, got %d", len(s.Agents))
	}
	if len(s.Privacy.Epsilons) > 1 {
		return nil, fmt.Errorf("privacy.epsilons: a served experiment has one ε, got %d", len(s.Privacy.Epsilons))
	}
	if s.Episodes < 1 || s.Episodes > bounds.MaxEpisodes {
		return nil, fmt.Errorf("episodes: capacity K must be in [1, %d], got %d", bounds.MaxEpisodes, s.Episodes)
	}
	if len(s.Seeds) > 1 {
		return nil, fmt.Errorf("seeds: a served experiment has at most one seed, got %d", len(s.Seeds))
	}
	return sv, nil
}

// SecureNoise returns the secure noise source of the stream name: keyed by s.Key (its
// HMAC-SHA-256 with name) when the unit has a key — a service's persisted secret, so that a
// restarted curator redraws exactly the noise it drew before — and crypto-seeded otherwise
// (nil, the agents' deployment default).
func (s Streams) SecureNoise(name string) noise.Source {
	if s.Trace != nil {
		s.Trace(name)
	}
	if s.Key == nil {
		return nil
	}
	m := hmac.New(sha256.New, s.Key[:])
	m.Write([]byte("dprl/noise/" + name))
	var k [32]byte
	copy(k[:], m.Sum(nil))
	return noise.NewSecureFromKey(k)
}
