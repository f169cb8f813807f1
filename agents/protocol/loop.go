package protocol

import (
	"context"
	"fmt"
	"math/rand/v2"
)

// Session is an agent ready to run: its curator, its user and the family's evaluator, bound
// by NewSession whatever their report type, so a runner drives JDP and LDP agents alike.
type Session interface {
	// Expect is the curator's header.
	Expect() Header
	// Curator returns the curator (a Curator[T, R] of the family; an LDPCurator for an LDP
	// agent).
	Curator() any
	// Receive hands a decoded report to the curator; a report of another type than the one
	// the curator takes is refused (an LDP curator takes only *Privatized).
	Receive(r Report) error
	// Capacity is the curator's Capacity.
	Capacity() int
	// Publish is the curator's Publish with the rule's type erased: what a service holds
	// (EncodeRule turns the rule into its wire form).
	Publish() (version uint64, rule any, err error)
	run(ctx context.Context, o Options) error
	runRemote(ctx context.Context, o Options, r Remote) error
}

// Options control Run.
type Options struct {
	// Episodes is K.
	Episodes int
	// Users returns user k's own stream (k = 1..K). The runner derives it from the unit's
	// streams (engine.Streams.Episodes); the returned generator may be reused by the next call.
	Users func(k int) *rand.Rand
	// Each, if non-nil, is called after episode k with its exact regret (checkpoints).
	Each func(k int, regret float64)
	// Every is how often (in episodes) the context is checked and Progress called (default
	// 1024).
	Every int
	// Progress, if non-nil, is called with the number of episodes completed since its last
	// call, every Every episodes and once at the end.
	Progress func(done int64)
	// Transport, if non-nil, carries each report from the user to the curator (for example:
	// encode, send, decode) and returns what the curator receives.
	Transport func(r Report) (Report, error)
	// Next, if non-nil (RunRemote only), hands out the users to play: the loop plays user
	// Next() until it returns a value outside 1..Episodes. Default: 1, 2, …, Episodes.
	Next func() int
}

type session[T, E any, R Report] struct {
	c  Curator[T, R]
	u  User[T, E, R]
	ev Evaluator[T, E]
}

// NewSession binds an agent's curator and user and the family's evaluator.
func NewSession[T, E any, R Report](c Curator[T, R], u User[T, E, R], ev Evaluator[T, E]) Session {
	return &session[T, E, R]{c: c, u: u, ev: ev}
}

func (s *session[T, E, R]) Expect() Header { return s.c.Expect() }
func (s *session[T, E, R]) Curator() any   { return s.c }
func (s *session[T, E, R]) Capacity() int  { return s.c.Capacity() }

func (s *session[T, E, R]) Publish() (uint64, any, error) {
	p, err := s.c.Publish()
	return p.Version, p.Rule, err
}

func (s *session[T, E, R]) Receive(r Report) error {
	rr, ok := r.(R)
	if !ok {
		var want R
		return fieldf("header.kind", "a %T does not go to this curator (it takes %T)", r, want)
	}
	return s.c.Receive(rr)
}

// Run is the one episode loop of every family. For k = 1..K:
//
//	p := curator.Publish()                   // released statistics only
//	if p.Version changed: evaluator.Policy(p) // exact V^π, only when the rule changed
//	e := user.Play(k, p, Users(k))            // her own stream
//	regret := evaluator.Regret(k, e)          // V*₁(s₁) − V^π₁(s₁)
//	if k ≤ curator.Capacity(): curator.Receive(user.Report(e))
//
// with the context checked and progress reported every Options.Every episodes. Errors name
// the episode.
func Run(ctx context.Context, s Session, o Options) error {
	if o.Episodes < 1 {
		return fmt.Errorf("episodes: must be >= 1, got %d", o.Episodes)
	}
	if o.Users == nil {
		return fmt.Errorf("protocol: no user streams")
	}
	if o.Every < 1 {
		o.Every = 1024
	}
	return s.run(ctx, o)
}

func (s *session[T, E, R]) run(ctx context.Context, o Options) error {
	publish := func() (Policy[T], error) { return s.c.Publish() }
	return s.loop(ctx, o, publish, func(k int, rep R, _ float64) error {
		if o.Transport != nil {
			got, err := o.Transport(rep)
			if err != nil {
				return err
			}
			r, ok := got.(R)
			if !ok {
				return fmt.Errorf("%w (%T, want %T)", errBadTransport, got, rep)
			}
			rep = r
		}
		return s.c.Receive(rep)
	})
}

// loop is the one episode loop (Run, RunRemote): users from o.Next (default 1..K) fetch the
// policy from publish, are evaluated exactly (the rule only when its version changes), play
// from their own stream and, while k ≤ Capacity, hand their report to deliver. The context is
// checked and progress reported every o.Every users.
func (s *session[T, E, R]) loop(ctx context.Context, o Options, publish func() (Policy[T], error), deliver func(k int, rep R, regret float64) error) error {
	K, capacity := o.Episodes, s.c.Capacity()
	next := o.Next
	if next == nil {
		n := 0
		next = func() int { n++; return n }
	}
	var version uint64
	evaluated := false
	done := 0
	for k := next(); k >= 1 && k <= K; k = next() {
		p, err := publish()
		if err != nil {
			return fmt.Errorf("episode %d: %w", k, err)
		}
		if !evaluated || p.Version != version {
			if err := s.ev.Policy(p); err != nil {
				return fmt.Errorf("episode %d: %w", k, err)
			}
			version, evaluated = p.Version, true
		}
		e, err := s.u.Play(k, p, o.Users(k))
		if err != nil {
			return fmt.Errorf("episode %d: %w", k, err)
		}
		regret, err := s.ev.Regret(k, e)
		if err != nil {
			return fmt.Errorf("episode %d: %w", k, err)
		}
		if o.Each != nil {
			o.Each(k, regret)
		}
		if k <= capacity { // beyond, the calibration covers no one: her data reaches no one
			rep, err := s.u.Report(e)
			if err != nil {
				return fmt.Errorf("episode %d: %w", k, err)
			}
			if err := deliver(k, rep, regret); err != nil {
				return fmt.Errorf("episode %d: %w", k, err)
			}
		}
		if done++; done%o.Every == 0 {
			if o.Progress != nil {
				o.Progress(int64(o.Every))
			}
			if err := ctx.Err(); err != nil {
				return err
			}
		}
	}
	if o.Progress != nil && done%o.Every != 0 {
		o.Progress(int64(done % o.Every))
	}
	return nil
}
