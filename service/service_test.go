package service_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/dprl/dprl/agents/protocol"
	"github.com/dprl/dprl/experiment/engine"
	tabexp "github.com/dprl/dprl/experiment/tabular"
	"github.com/dprl/dprl/service"
	"github.com/dprl/dprl/service/client"
	"github.com/dprl/dprl/service/store"
)

const (
	adminTok  = "admin-token-0123456789"
	clientTok = "client-token-0123456789"
)

func registry() *engine.Registry {
	r := &engine.Registry{}
	r.Register(tabexp.Family{})
	return r
}

// testConfig is the configuration of a test server on dir: the test registry and tokens.
func testConfig(dir string) service.Config {
	return service.Config{Dir: dir, Registry: registry(), AdminToken: adminTok, ClientToken: clientTok}
}

// live starts a server on dir behind httptest and returns its client and a stop function
// (Shutdown then Close, as dprl serve does on SIGTERM).
func live(t *testing.T, dir string, seeded bool, opts ...func(*service.Config)) (*client.Client, *service.Server, func()) {
	t.Helper()
	cfg := testConfig(dir)
	cfg.Seeded = seeded
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.Store == nil {
		cfg.Store = testStore(t, dir) // bbolt (nil), or PostgreSQL under DPRL_SERVICE_STORE=postgres
	}
	s, hs, stop := service.StartForTest(t, cfg)
	return client.New(hs.URL, adminTok, clientTok, hs.Client()), s, stop
}

// liveURL is live with a second URL serving the same state (serverURL) instead of the server.
func liveURL(t *testing.T, dir string, seeded bool, opts ...func(*service.Config)) (*client.Client, string, func()) {
	t.Helper()
	c, s, stop := live(t, dir, seeded, opts...)
	return c, serverURL(t, s), stop
}

func seedp(s uint64) *uint64 { return &s }

// serverURL serves s on a new httptest server (sharing its state) and returns the URL.
func serverURL(t *testing.T, s *service.Server) string {
	hs := httptest.NewServer(s.Handler())
	t.Cleanup(hs.Close)
	return hs.URL
}

// stoppedStore stops a test server on dir (stop) and opens its store; the caller closes it.
func stoppedStore(t *testing.T, dir string, stop func()) *store.Store {
	t.Helper()
	stop()
	st, err := store.Open(dir, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// reference plays the agent of spec with seed through protocol.Run in process (what a unit of
// `dprl run` does) and returns the regret of every episode.
func reference(t *testing.T, spec engine.RunSpec, seed uint64) []float64 {
	t.Helper()
	spec.Seeds = []uint64{seed}
	if err := spec.Validate(); err != nil {
		t.Fatal(err)
	}
	sv, err := engine.CheckServed(registry(), &spec)
	if err != nil {
		t.Fatal(err)
	}
	st := engine.Streams{Seed: seed}
	served, err := sv.Session(&spec, st)
	if err != nil {
		t.Fatal(err)
	}
	var out []float64
	if err := protocol.Run(context.Background(), served.Session, protocol.Options{Episodes: spec.Episodes, Users: st.Episodes(served.Users),
		Each: func(_ int, r float64) { out = append(out, r) }}); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestSimulateSameAsRun: users arriving in order against a seeded server have exactly the
// regrets of the in-process episode loop of `dprl run` (cmd/dprl's TestServeSameAsRun compares
// with dprl run's own output).
func TestSimulateSameAsRun(t *testing.T) {
	for _, agent := range []string{"practical-jdp", "practical-ldp", "practical-psrl-jdp"} {
		t.Run(agent, func(t *testing.T) {
			c, _, _ := live(t, t.TempDir(), true)
			ctx := context.Background()
			K := 1500
			l, err := c.Create(ctx, client.CreateRequest{Family: "tabular", Agent: agent, Env: client.Env{Name: "riverswim", Params: map[string]float64{"horizon": 10}},
				Epsilon: 1, Delta: 1e-5, Capacity: K, Seed: seedp(7), Simulation: true})
			if err != nil {
				t.Fatal(err)
			}
			res, err := client.Simulate(ctx, c, client.SimOptions{Experiment: l.Experiment, Registry: registry(), Seed: seedp(7)})
			if err != nil {
				t.Fatal(err)
			}
			want := reference(t, engine.RunSpec{Family: "tabular", Agents: []string{agent}, Runs: engine.Runs{Episodes: K},
				Env:     engine.EnvSpec{Name: "riverswim", Params: map[string]float64{"horizon": 10}},
				Privacy: engine.PrivacySpec{Epsilons: []float64{1}, Delta: 1e-5}}, 7)
			if len(res.Regret) != len(want) {
				t.Fatalf("%d regrets, want %d", len(res.Regret), len(want))
			}
			for k := range want {
				if math.Float64bits(res.Regret[k]) != math.Float64bits(want[k]) {
					t.Fatalf("user %d: regret %v through the service, %v in process", k+1, res.Regret[k], want[k])
				}
			}
			if res.Accepted != l.Capacity {
				t.Errorf("%d reports acknowledged, want the capacity %d", res.Accepted, l.Capacity)
			}
			led, err := c.Ledger(ctx, l.Experiment)
			if err != nil {
				t.Fatal(err)
			}
			if led.UsersServed != l.Capacity || led.CapacityLeft != 0 {
				t.Errorf("ledger: %d served, %d left", led.UsersServed, led.CapacityLeft)
			}
		})
	}
}

// TestRestartReplays: a server closed and reopened on the same data directory publishes the
// same policy, and continuing gives the same result as an uninterrupted server (no report
// lost, none counted twice, no noise redrawn: the curator is rebuilt from its key and log).
// Secure (keyed) noise: a real experiment, not seeded.
func TestRestartReplays(t *testing.T) {
	ctx := context.Background()
	play := func(c *client.Client, exp string, users []int) {
		t.Helper()
		var ids []string
		for _, u := range users {
			ids = append(ids, fmt.Sprint("u", u))
		}
		creds, err := c.Credentials(ctx, exp, ids)
		if err != nil {
			t.Fatal(err)
		}
		for _, u := range users {
			id := fmt.Sprint("u", u)
			rep := &protocol.Trajectory{Header: header(t, c, exp), States: make([]int, 11), Actions: make([]int, 10), Rewards: make([]float64, 10)}
			for h := range rep.Actions {
				rep.States[h+1], rep.Actions[h] = (u+h)%6, (u*h)%2
				rep.Rewards[h] = float64((u+h)%3) / 2
			}
			if _, err := c.Submit(ctx, exp, client.Submission{User: id, Credential: creds[id], IdempotencyKey: "k", Report: rep, Regret: math.NaN()}); err != nil {
				t.Fatalf("user %d: %v", u, err)
			}
		}
	}
	req := client.CreateRequest{Family: "tabular", Agent: "practical-jdp", Env: client.Env{Name: "riverswim", Params: map[string]float64{"horizon": 10}}, Epsilon: 1, Delta: 1e-5, Capacity: 1000}
	dir := t.TempDir()
	c, _, stop := live(t, dir, false)
	l, err := c.Create(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	var first, second []int
	for u := 1; u <= 600; u++ {
		if u <= 300 {
			first = append(first, u)
		} else {
			second = append(second, u)
		}
	}
	play(c, l.Experiment, first)
	before := policy(t, c, l.Experiment)
	stop()
	// A twin server on a copy of the stopped server's data (same persisted key) must publish,
	// report after report, exactly what the restarted one does: every release of both, replayed
	// or new, draws the noise keyed by the experiment's key. Noise drawn afresh at each start
	// would make the twins' policies part ways within a few releases.
	twinDir := t.TempDir()
	if err := os.CopyFS(twinDir, os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	c2, _, _ := live(t, dir, false)
	twin, _, _ := live(t, twinDir, false)
	for _, cl := range []*client.Client{c2, twin} {
		if after := policy(t, cl, l.Experiment); !bytes.Equal(before, after) {
			t.Fatalf("the policy changed across a restart:\n%s\n%s", before, after)
		}
	}
	// A retry of an acknowledged report after the restart is acknowledged again, not counted.
	creds, _ := c2.Credentials(ctx, l.Experiment, []string{"u5"})
	rep := &protocol.Trajectory{Header: header(t, c2, l.Experiment), States: make([]int, 11), Actions: make([]int, 10), Rewards: make([]float64, 10)}
	a, err := c2.Submit(ctx, l.Experiment, client.Submission{User: "u5", Credential: creds["u5"], IdempotencyKey: "k", Report: rep, Regret: math.NaN()})
	if err != nil || !a.Replayed || a.Sequence != 5 {
		t.Fatalf("retry after restart: %+v %v", a, err)
	}
	for _, u := range second {
		play(c2, l.Experiment, []int{u})
		play(twin, l.Experiment, []int{u})
		if p, q := policy(t, c2, l.Experiment), policy(t, twin, l.Experiment); !bytes.Equal(p, q) {
			t.Fatalf("after user %d the restarted server and its twin publish different policies:\n%s\n%s", u, p, q)
		}
	}
	led, _ := c2.Ledger(ctx, l.Experiment)
	if led.UsersServed != 600 {
		t.Fatalf("%d users served after the restart, want 600", led.UsersServed)
	}
	// The policy after all 600 reports differs from the one after 300 (it learned), and the
	// experiment's releases went through keyed noise: nothing to compare against in process
	// without its key, which never leaves the store — TestSimulateSameAsRun covers equality.
	if bytes.Equal(before, policy(t, c2, l.Experiment)) && led.PolicyVersion == 1 {
		t.Error("the policy never changed")
	}
}

func header(t *testing.T, c *client.Client, exp string) protocol.Header {
	p, err := c.Policy(context.Background(), exp)
	if err != nil {
		t.Fatal(err)
	}
	return p.Header
}

func policy(t *testing.T, c *client.Client, exp string) []byte {
	p, err := c.Policy(context.Background(), exp)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(p)
	return b
}

// TestOpenAPIMatchesHandlers: every path and method of the served OpenAPI document has a
// handler, and every handler is documented.
func TestOpenAPIMatchesHandlers(t *testing.T) {
	_, s, _ := live(t, t.TempDir(), false)
	hs := httptest.NewServer(s.Handler())
	defer hs.Close()
	resp, err := http.Get(hs.URL + "/v1/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var doc struct {
		OpenAPI string                    `json:"openapi"`
		Paths   map[string]map[string]any `json:"paths"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil || !strings.HasPrefix(doc.OpenAPI, "3.") {
		t.Fatalf("openapi document: %v (version %q)", err, doc.OpenAPI)
	}
	var documented []string
	for p, ops := range doc.Paths {
		for m := range ops {
			documented = append(documented, strings.ToUpper(m)+" "+p)
		}
	}
	sort.Strings(documented)
	routes := service.Routes()
	for i, r := range routes {
		routes[i] = strings.Replace(r, "{$}", "", 1)
	}
	sort.Strings(routes)
	if strings.Join(documented, "\n") != strings.Join(routes, "\n") {
		t.Fatalf("documented:\n%s\nserved:\n%s", strings.Join(documented, "\n"), strings.Join(routes, "\n"))
	}
	// Every documented operation answers (no 404/405 from the router).
	id := regexp.MustCompile(`\{id\}`)
	for _, op := range documented {
		m, p, _ := strings.Cut(op, " ")
		req, _ := http.NewRequest(m, hs.URL+id.ReplaceAllString(p, "nope"), strings.NewReader("{}"))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusMethodNotAllowed || (resp.StatusCode == http.StatusNotFound && !strings.Contains(p, "{id}")) {
			t.Errorf("%s: %d", op, resp.StatusCode)
		}
	}
}
