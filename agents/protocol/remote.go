package protocol

import (
	"context"
	"encoding/json"
	"fmt"
)

// A served agent is split across a network: the curator side runs in a service (`dprl serve`)
// and the users play elsewhere. The rule a curator publishes travels as JSON (EncodeRule on
// the service side, DecodeRule inside RunRemote on the users' side); every family's rule type
// round-trips exactly through encoding/json (floats in Go's shortest round-trip form), so a
// user who decodes the wire rule plays exactly what an in-process user would.

// EncodeRule returns the wire form (JSON) of a rule returned by Session.Publish.
func EncodeRule(rule any) ([]byte, error) {
	b, err := json.Marshal(rule)
	if err != nil {
		return nil, fmt.Errorf("policy rule: %w", err)
	}
	return b, nil
}

// UserSider is implemented by curators whose users need public parameters beyond the header to
// build their reports (a locally private agent's randomiser: its σ, clipping and layout). A
// service publishes them with the policy. They are fixed at construction from public
// parameters.
type UserSider interface {
	UserSide() any
}

// Remote is a curator reached over a transport (a client of `dprl serve`).
type Remote interface {
	// Policy returns the currently published policy: its version and its rule's wire form
	// (EncodeRule). It may return the same bytes for the same version (a cache).
	Policy(ctx context.Context) (version uint64, rule []byte, err error)
	// Submit sends user k's report; regret is the exact regret of her episode (a simulator's
	// public evaluation, reported for the service's status page; NaN when unknown). Submit
	// must return only once the curator acknowledged the report.
	Submit(ctx context.Context, k int, r Report, regret float64) error
}

// RunRemote plays users 1..K of the session against a remote curator, in order: each user
// fetches the published policy, plays, is evaluated exactly, and (if k ≤ Capacity) submits her
// report. With Options.Next, several RunRemote calls (one session each, built alike) share the
// users 1..K between them, each taking the next user from Next, for concurrent clients. The session's own curator is not used: only its user side and its evaluator (and
// Capacity, a public parameter). With a remote curator built exactly as the session's (same
// public parameters and seed), users arriving in order see the same policies as in Run, so the
// regrets are the same, bit for bit.
func RunRemote(ctx context.Context, s Session, o Options, r Remote) error {
	if o.Episodes < 1 {
		return fmt.Errorf("episodes: must be >= 1, got %d", o.Episodes)
	}
	if o.Users == nil {
		return fmt.Errorf("protocol: no user streams")
	}
	if r == nil {
		return fmt.Errorf("protocol: no remote curator")
	}
	if o.Every < 1 {
		o.Every = 1024
	}
	return s.runRemote(ctx, o, r)
}

func (s *session[T, E, R]) decode(b []byte) (T, error) {
	var t T
	if err := json.Unmarshal(b, &t); err != nil {
		return t, fmt.Errorf("policy rule: %w", err)
	}
	return t, nil
}

func (s *session[T, E, R]) runRemote(ctx context.Context, o Options, r Remote) error {
	var cur Policy[T]
	have := false
	publish := func() (Policy[T], error) {
		v, raw, err := r.Policy(ctx)
		if err != nil {
			return cur, err
		}
		if !have || v != cur.Version { // decode a rule only when its version changes
			rule, err := s.decode(raw)
			if err != nil {
				return cur, err
			}
			cur, have = Policy[T]{Version: v, Rule: rule}, true
		}
		return cur, nil
	}
	return s.loop(ctx, o, publish, func(k int, rep R, regret float64) error { return r.Submit(ctx, k, rep, regret) })
}
