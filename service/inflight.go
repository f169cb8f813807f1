package service

import (
	"context"
	"net/http"
	"strconv"
	"sync"
)

// DefaultMaxInflightBytes is the default budget of request-body bytes in flight.
const DefaultMaxInflightBytes = 64 << 20

// inflight bounds the bytes of request bodies the server holds at once, across every route:
// a body is reserved before it is read — its Content-Length, or the route's maximum for a body
// of unknown length (chunked), at most the whole budget — and released when its handler
// returns (the decoded reports live until then). A request that does not fit is answered 503
// with Retry-After before any byte of its body is read. Memory is then bounded by a small
// multiple of the budget (the body, its decoded form) whatever the number of connections.
type inflight struct {
	mu      sync.Mutex
	limit   int64
	used    int64
	refused uint64 // requests refused since start
}

// reserve takes n bytes of the budget (n ≤ limit) if they are free.
func (b *inflight) reserve(n int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.used+n > b.limit {
		b.refused++
		return false
	}
	b.used += n
	return true
}

func (b *inflight) release(n int64) {
	b.mu.Lock()
	b.used -= n
	b.mu.Unlock()
}

// state returns the bytes reserved, the limit and the requests refused.
func (b *inflight) state() (used, limit int64, refused uint64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used, b.limit, b.refused
}

// reservation is a request's share of the budget, released when its handler returns.
type reservation struct {
	b *inflight
	n int64
}

type reservationKey struct{}

// withBudget gives every request a reservation (in its context) that readBody fills and
// that is released when the handler returns.
func (s *Server) withBudget(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		res := &reservation{b: s.inflight}
		defer func() { res.b.release(res.n) }()
		h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), reservationKey{}, res)))
	})
}

// reserveBody reserves the request's body (at most max bytes) in the server's budget before
// it is read; when the budget is exhausted it answers 503 with Retry-After and returns false.
func reserveBody(w http.ResponseWriter, r *http.Request, max int64) bool {
	res, _ := r.Context().Value(reservationKey{}).(*reservation)
	if res == nil {
		return true
	}
	n := r.ContentLength
	if n < 0 || n > max {
		n = max
	}
	n = min(n, res.b.limit) // a body larger than the whole budget is read alone
	if n <= 0 {
		return true
	}
	if !res.b.reserve(n) {
		w.Header().Set("Retry-After", strconv.Itoa(1))
		w.Header().Set("Connection", "close")
		fail(w, http.StatusServiceUnavailable, "busy", "body", "the server holds as many request bytes as it allows (--max-inflight-bytes %d); nothing was read or stored; retry after a second", res.b.limit)
		return false
	}
	res.n += n
	return true
}
