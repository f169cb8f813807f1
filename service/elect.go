package service

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dprl/dprl/service/store"
)

// Several servers on one shared database (docs/serve.md, "PostgreSQL: several servers, one
// leader"): each runs ServeElected. Exactly one holds the leadership (Elector) and serves the
// API from a Server built on the leader's store — every write of which is fenced by the
// leadership, so a server that lost it commits, and therefore acknowledges, nothing more. The
// others are standbys: /readyz answers 503, every API request 503 not_leader naming the
// leader (header Dprl-Leader), and they try to take over every TakeoverPoll. A leader that
// loses the leadership (its lock connection failed, or a write found the fence closed)
// becomes a standby at once: its Server is closed (the reports it holds are refused, 503) and
// it tries to lead again like any standby.

// Elector is a shared database's leader election (package pgstore).
type Elector interface {
	// TryLead tries once to become the leader: the leader's store, or nil while another
	// server leads.
	TryLead(ctx context.Context) (Leadership, error)
	// Leader describes the current leader for a standby's answers.
	Leader(ctx context.Context) (string, error)
}

// Leadership is the leader's store: every write is fenced by the leadership, and Lost is
// closed when the leadership ends.
type Leadership interface {
	store.Backend
	Lost() <-chan struct{}
}

// TakeoverPoll is how often a standby tries to take the leadership.
const TakeoverPoll = 500 * time.Millisecond

// ServeElected serves on b until ctx is cancelled: as a standby while another server leads,
// as the leader (a Server built from cfg on the leader's store, its experiments rebuilt from
// the database) while this one does. ready receives the base URL once it serves (as a
// standby at first).
func ServeElected(ctx context.Context, cfg Config, el Elector, b *Bound, ready func(url string)) error {
	logf := cfg.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}
	sb := &standby{el: el}
	sb.describe(ctx)
	var cur atomic.Pointer[http.Handler]
	set := func(h http.Handler) { cur.Store(&h) }
	set(sb.handler())
	hs, errc := b.start(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { (*cur.Load()).ServeHTTP(w, r) }), ready)
	shutdown := func(s *Server) error {
		sctx, cancel := context.WithTimeout(context.Background(), b.drain)
		defer cancel()
		err := hs.Shutdown(sctx)
		if s != nil {
			err = errors.Join(err, s.Close())
		}
		return err
	}
	t := time.NewTicker(TakeoverPoll)
	defer t.Stop()
	var lastErr string
	for {
		set(sb.handler())
		l, err := el.TryLead(ctx)
		if err != nil {
			if m := err.Error(); m != lastErr {
				logf("standby: cannot reach the database to take the leadership: %v (retrying every %s)", err, TakeoverPoll)
				lastErr = m
			}
		} else if l != nil {
			lastErr = ""
			start := time.Now()
			c := cfg
			c.Store = l
			s, err := New(c)
			if err != nil {
				logf("leader: rebuilding the experiments failed: %v; the leadership is released", err)
				l.Close()
			} else {
				logf("leader: serving (experiments rebuilt from the database in %s)", time.Since(start).Round(time.Millisecond))
				set(s.Handler())
				select {
				case <-l.Lost():
					set(sb.handler())
					s.Close()
					logf("standby: the leadership was lost; this server acknowledges nothing until it leads again")
					sb.describe(ctx)
					continue
				case err := <-errc:
					s.Close()
					return err
				case <-ctx.Done():
					return shutdown(s)
				}
			}
		} else {
			lastErr = ""
			sb.describe(ctx)
		}
		select {
		case err := <-errc:
			return err
		case <-ctx.Done():
			return shutdown(nil)
		case <-t.C:
		}
	}
}

// standby answers while another server leads.
type standby struct {
	el     Elector
	mu     sync.Mutex
	leader string // the leader's description
}

func (sb *standby) describe(ctx context.Context) {
	d, err := sb.el.Leader(ctx)
	if err != nil {
		d = fmt.Sprintf("unknown (the database cannot be reached: %v)", err)
	}
	sb.mu.Lock()
	sb.leader = d
	sb.mu.Unlock()
}

func (sb *standby) handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sb.mu.Lock()
		leader := sb.leader
		sb.mu.Unlock()
		switch r.URL.Path {
		case "/healthz":
			writeJSON(w, http.StatusOK, map[string]string{"status": "ok", "role": "standby", "leader": leader})
			return
		case "/metrics":
			w.Header().Set("Content-Type", "text/plain; version=0.0.4")
			fmt.Fprint(w, "# HELP dprl_leader 0: this server is a standby of a shared database (the leader serves the full metrics).\n# TYPE dprl_leader gauge\ndprl_leader 0\n")
			return
		}
		w.Header().Set("Dprl-Leader", leader)
		w.Header().Set("Retry-After", "1")
		fail(w, http.StatusServiceUnavailable, "not_leader", "", "this server is a standby: it does not serve the API while another server leads the shared database; the leader is %s", leader)
	})
}
