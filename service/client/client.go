// Package client is the Go client of `dprl serve`: the API calls (create an experiment, mint
// credentials, fetch the published policy with ETag caching, submit a report, read the
// ledger) and Simulate, which plays simulated users against a server (dprl client simulate).
//
// The user's side of an agent runs here, not on the server: a user plays her episode with the
// published policy and, for a locally private agent, privatises her report with the agent's
// randomiser before it leaves her process, drawing from a crypto-seeded source the server
// cannot reproduce (Simulate's seeded mode, for tests only, draws from the run seed instead).
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dprl/dprl/agents/protocol"
)

// Client talks to one server, or to the servers of a shared database (NewFailover): one of
// them leads, the others answer 503 not_leader.
type Client struct {
	bases       []string
	cur         atomic.Int64 // the index in bases of the server used
	http        *http.Client
	admin, auth string

	mu      sync.Mutex
	cache   map[string]cachedPolicy // experiment → last policy (ETag)
	fetches map[string]*fetch       // experiment → its policy fetch in flight (SharedPolicy)
}

// fetch is a policy fetch in flight: done is closed once p, err are set.
type fetch struct {
	done chan struct{}
	p    *Policy
	err  error
}

type cachedPolicy struct {
	etag string
	p    *Policy
}

// New returns a client of the server at base (http://127.0.0.1:8080). admin may be empty for a
// client that only submits; token is the client token. hc nil is an HTTP client with a 60 s
// timeout that keeps up to MaxIdleConns connections to the server open between requests
// (Go's default transport keeps 2 per host, so concurrent users beyond that would open a new
// connection for most of their requests).
func New(base, admin, token string, hc *http.Client) *Client {
	return NewFailover([]string{base}, admin, token, hc)
}

// NewFailover returns a client of the servers at bases, which share one database (dprl serve
// --store postgres://…): it sends each request to the server that answered last, and moves
// to the next server when that one cannot be reached (its connection is refused) or answers
// 503 not_leader (a standby) — requests it never processed. Any other failure is returned as
// it is; Simulate retries a report with the same idempotency key, so a report in flight when
// the leader dies is acknowledged once, by the server that takes over.
func NewFailover(bases []string, admin, token string, hc *http.Client) *Client {
	if hc == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.MaxIdleConns, t.MaxIdleConnsPerHost = MaxIdleConns, MaxIdleConns
		hc = &http.Client{Timeout: 60 * time.Second, Transport: t}
	}
	bs := make([]string, len(bases))
	for i, b := range bases {
		bs[i] = strings.TrimSuffix(b, "/")
	}
	return &Client{bases: bs, http: hc, admin: admin, auth: token, cache: map[string]cachedPolicy{}, fetches: map[string]*fetch{}}
}

// MaxIdleConns is the number of idle connections to the server a default client keeps open:
// at least the concurrency of a simulation (dprl client simulate --concurrency).
const MaxIdleConns = 256

// Error is an error response of the server.
type Error struct {
	Status  int
	Code    string `json:"code"`
	Field   string `json:"field"`
	Message string `json:"message"`
}

func (e *Error) Error() string {
	if e.Field != "" {
		return fmt.Sprintf("server: %d %s (%s): %s", e.Status, e.Code, e.Field, e.Message)
	}
	return fmt.Sprintf("server: %d %s: %s", e.Status, e.Code, e.Message)
}

// CreateRequest is the body of an experiment's creation (see the API document). A private
// experiment names its Epsilon (the server refuses an ε the agent's accountant does not
// certify); Delta 0 is omitted (the server's default δ, stated in the answer). A non-private
// baseline is created only with NonPrivate (and neither ε nor δ). Simulation marks simulated
// users: only then may reports carry a simulated regret.
type CreateRequest struct {
	Family     string  `json:"family"`
	Agent      string  `json:"agent"`
	Env        Env     `json:"env"`
	Epsilon    float64 `json:"epsilon,omitempty"`
	Delta      float64 `json:"delta,omitempty"`
	NonPrivate bool    `json:"non_private,omitempty"`
	Simulation bool    `json:"simulation,omitempty"`
	Capacity   int     `json:"capacity"`
	Seed       *uint64 `json:"seed,omitempty"`
}

// Env is the environment description of an experiment.
type Env struct {
	Name   string             `json:"name,omitempty"`
	Params map[string]float64 `json:"params,omitempty"`
	Model  json.RawMessage    `json:"model,omitempty"`
}

// Ledger is an experiment's public state.
type Ledger struct {
	Experiment    string  `json:"experiment"`
	Family        string  `json:"family"`
	Agent         string  `json:"agent"`
	Kind          string  `json:"kind"`
	Epsilon       float64 `json:"epsilon"`
	Delta         float64 `json:"delta"`
	Mu            float64 `json:"mu"`
	Statement     string  `json:"statement"`
	Capacity      int     `json:"capacity"`
	UsersServed   int     `json:"users_served"`
	CapacityLeft  int     `json:"capacity_left"`
	PolicyVersion uint64  `json:"policy_version"`
	Episodes      int     `json:"episodes"`
	Env           Env     `json:"env"`
	Releases      []struct {
		Version uint64 `json:"version"`
		Users   int    `json:"users"`
	} `json:"releases"`
	Seeded bool `json:"seeded_test_mode"`
	// Private is true only when the agent's accountant certifies (Epsilon, Delta); a
	// non-private experiment's Statement starts with NON-PRIVATE.
	Private bool `json:"private"`
	// Simulation marks an experiment created as a simulation.
	Simulation bool `json:"simulation"`
}

// Policy is a published policy.
type Policy struct {
	Experiment string          `json:"experiment"`
	Version    uint64          `json:"version"`
	Header     protocol.Header `json:"header"`
	Rule       json.RawMessage `json:"rule"`
	// UserSide are the randomiser parameters the server published for a locally private
	// agent (practical-ldp: its σ, layout and clipping; absent otherwise). A user only checks
	// them against her own computation (protocol.UserSideChecker), never builds from them.
	UserSide json.RawMessage `json:"user_side,omitempty"`
}

// Ack is a report's acknowledgement.
type Ack struct {
	Experiment     string `json:"experiment"`
	Sequence       uint64 `json:"sequence"`
	IdempotencyKey string `json:"idempotency_key"`
	Replayed       bool   `json:"replayed"`
	// PolicyVersion is the policy version published when the report was acknowledged.
	PolicyVersion uint64 `json:"policy_version"`
}

func (c *Client) do(ctx context.Context, method, path, token string, body []byte, ctype string, hdr map[string]string, out any) (*http.Response, error) {
	for tried := 1; ; tried++ {
		i := c.cur.Load()
		resp, err := c.do1(ctx, c.bases[i], method, path, token, body, ctype, hdr, out)
		if tried >= len(c.bases) || !elsewhere(err) || ctx.Err() != nil {
			return resp, err
		}
		c.cur.CompareAndSwap(i, (i+1)%int64(len(c.bases)))
	}
}

// elsewhere reports whether err says the request was not processed by the server and another
// server of a shared database may take it: the connection was refused (nothing was sent), or
// a standby answered 503 not_leader.
func elsewhere(err error) bool {
	var e *Error
	if errors.As(err, &e) {
		return e.Status == http.StatusServiceUnavailable && e.Code == "not_leader"
	}
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

func (c *Client) do1(ctx context.Context, base, method, path, token string, body []byte, ctype string, hdr map[string]string, out any) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, base+path, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode >= 400 {
		var e struct {
			Error Error `json:"error"`
		}
		if json.Unmarshal(data, &e) != nil || e.Error.Code == "" {
			return nil, &Error{Status: resp.StatusCode, Code: "http", Message: strings.TrimSpace(string(data))}
		}
		e.Error.Status = resp.StatusCode
		return nil, &e.Error
	}
	if out != nil && resp.StatusCode != http.StatusNotModified {
		if err := json.Unmarshal(data, out); err != nil {
			return nil, fmt.Errorf("server response: %w", err)
		}
	}
	return resp, nil
}

// Create creates an experiment (admin token).
func (c *Client) Create(ctx context.Context, r CreateRequest) (*Ledger, error) {
	b, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	l := new(Ledger)
	_, err = c.do(ctx, http.MethodPost, "/v1/experiments", c.admin, b, "application/json", nil, l)
	return l, err
}

// Ledger returns an experiment's public state.
func (c *Client) Ledger(ctx context.Context, exp string) (*Ledger, error) {
	l := new(Ledger)
	_, err := c.do(ctx, http.MethodGet, "/v1/experiments/"+exp+"/ledger", "", nil, "", nil, l)
	return l, err
}

// Credentials mints users' credentials (admin token), in requests of at most 10 000 users.
func (c *Client) Credentials(ctx context.Context, exp string, users []string) (map[string]string, error) {
	out := make(map[string]string, len(users))
	for len(users) > 0 {
		n := min(len(users), 10000)
		b, _ := json.Marshal(map[string][]string{"users": users[:n]})
		var r struct {
			Credentials map[string]string `json:"credentials"`
		}
		if _, err := c.do(ctx, http.MethodPost, "/v1/experiments/"+exp+"/credentials", c.admin, b, "application/json", nil, &r); err != nil {
			return nil, err
		}
		for k, v := range r.Credentials {
			out[k] = v
		}
		users = users[n:]
	}
	return out, nil
}

// Policy returns the published policy of exp, revalidating its cached copy with
// If-None-Match (a 304 costs no body).
func (c *Client) Policy(ctx context.Context, exp string) (*Policy, error) {
	c.mu.Lock()
	cp := c.cache[exp]
	c.mu.Unlock()
	hdr := map[string]string{}
	if cp.p != nil {
		hdr["If-None-Match"] = cp.etag
	}
	p := new(Policy)
	resp, err := c.do(ctx, http.MethodGet, "/v1/experiments/"+exp+"/policy", "", nil, "", hdr, p)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode == http.StatusNotModified {
		return cp.p, nil
	}
	c.mu.Lock()
	c.cache[exp] = cachedPolicy{etag: resp.Header.Get("ETag"), p: p}
	c.mu.Unlock()
	return p, nil
}

// cached returns the policy of exp this client fetched last (nil: none).
func (c *Client) cached(exp string) *Policy {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cache[exp].p
}

// SharedPolicy is Policy for many concurrent users of one client: while a fetch of exp's
// policy is in flight, the others wait for its answer instead of sending the same request.
func (c *Client) SharedPolicy(ctx context.Context, exp string) (*Policy, error) {
	c.mu.Lock()
	if f := c.fetches[exp]; f != nil {
		c.mu.Unlock()
		select {
		case <-f.done:
			return f.p, f.err
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	f := &fetch{done: make(chan struct{})}
	c.fetches[exp] = f
	c.mu.Unlock()
	f.p, f.err = c.Policy(ctx, exp)
	c.mu.Lock()
	delete(c.fetches, exp)
	c.mu.Unlock()
	close(f.done)
	return f.p, f.err
}

// Submission is one user's report and her identity.
type Submission struct {
	User, Credential, IdempotencyKey string
	Report                           protocol.Report
	// Regret, when not NaN, is a simulator's exact regret of the episode (shown on the
	// status page); real users send none.
	Regret float64
}

// Submit sends a report in the binary encoding and returns its acknowledgement. A retry with
// the same idempotency key returns the original acknowledgement (Ack.Replayed).
func (c *Client) Submit(ctx context.Context, exp string, s Submission) (*Ack, error) {
	b, err := protocol.EncodeBinary(s.Report)
	if err != nil {
		return nil, err
	}
	hdr := map[string]string{"Dprl-User": s.User, "Dprl-User-Credential": s.Credential, "Idempotency-Key": s.IdempotencyKey}
	if s.Regret == s.Regret { // not NaN
		hdr["Dprl-Simulated-Regret"] = strconv.FormatFloat(s.Regret, 'g', -1, 64)
	}
	a := new(Ack)
	_, err = c.do(ctx, http.MethodPost, "/v1/experiments/"+exp+"/reports", c.auth, b, "application/octet-stream", hdr, a)
	return a, err
}

// IsCode reports whether err is a server error with the given code.
func IsCode(err error, code string) bool {
	var e *Error
	return errors.As(err, &e) && e.Code == code
}

// Backup streams a consistent copy of the server's database to w (admin token; GET
// /v1/backup) and returns its size. A copy cut short of the length the server announced is an
// error.
func (c *Client) Backup(ctx context.Context, w io.Writer) (int64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.bases[c.cur.Load()]+"/v1/backup", nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Bearer "+c.admin)
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		data, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		var e struct {
			Error Error `json:"error"`
		}
		if json.Unmarshal(data, &e) != nil || e.Error.Code == "" {
			return 0, &Error{Status: resp.StatusCode, Code: "http", Message: strings.TrimSpace(string(data))}
		}
		e.Error.Status = resp.StatusCode
		return 0, &e.Error
	}
	if resp.ContentLength < 0 {
		return 0, errors.New("backup: the server sent no Content-Length")
	}
	n, err := io.Copy(w, resp.Body)
	if err == nil && n != resp.ContentLength {
		err = io.ErrUnexpectedEOF
	}
	if err != nil {
		return n, fmt.Errorf("backup: %d of %d bytes received: %w", n, resp.ContentLength, err)
	}
	return n, nil
}
