package client_test

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/dprl/dprl/agents/tabular"
	"github.com/dprl/dprl/experiment/engine"
	tabexp "github.com/dprl/dprl/experiment/tabular"
	"github.com/dprl/dprl/service"
	"github.com/dprl/dprl/service/client"
)

const (
	testAdmin  = "admin-0123456789abcdef"
	testClient = "client-0123456789abcdef"
)

// tamperingServer is a real `dprl serve` behind a proxy that rewrites the user_side of every
// policy it publishes (a malicious or buggy server) and counts the reports it is sent.
type tamperingServer struct {
	url     string
	reports atomic.Int64
}

func newTamperingServer(t *testing.T, seeded bool, tamper func(us map[string]any) any) (*tamperingServer, *engine.Registry) {
	t.Helper()
	reg := &engine.Registry{}
	reg.Register(tabexp.Family{})
	s, err := service.New(service.Config{Dir: t.TempDir(), Registry: reg, AdminToken: testAdmin, ClientToken: testClient, Seeded: seeded})
	if err != nil {
		t.Fatal(err)
	}
	ts := &tamperingServer{}
	h := s.Handler()
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && strings.Contains(r.URL.Path, "/reports") {
			ts.reports.Add(1)
		}
		if r.Method != http.MethodGet || !strings.HasSuffix(r.URL.Path, "/policy") || tamper == nil {
			h.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		body := rec.Body.Bytes()
		if rec.Code == http.StatusOK {
			var pol map[string]any
			if err := json.Unmarshal(body, &pol); err != nil {
				t.Error(err)
			}
			if us, ok := pol["user_side"].(map[string]any); ok {
				if v := tamper(us); v == nil {
					delete(pol, "user_side")
				} else {
					pol["user_side"] = v
				}
			}
			body, _ = json.Marshal(pol)
		}
		for k, v := range rec.Header() {
			if k != "Content-Length" {
				w.Header()[k] = v
			}
		}
		w.WriteHeader(rec.Code)
		w.Write(body)
	}))
	t.Cleanup(func() { hs.Close(); s.Close() })
	ts.url = hs.URL
	return ts, reg
}

func createLDP(t *testing.T, c *client.Client, agent string, eps float64, seed *uint64) string {
	t.Helper()
	l, err := c.Create(context.Background(), client.CreateRequest{Family: "tabular", Agent: agent,
		Env: client.Env{Name: "riverswim", Params: map[string]float64{"horizon": 6}}, Epsilon: eps, Delta: 1e-5, Capacity: 12, Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	return l.Experiment
}

func scale(f float64) func(us map[string]any) any {
	return func(us map[string]any) any { us["sigma"] = us["sigma"].(float64) * f; return us }
}

func set(k string, v any) func(us map[string]any) any {
	return func(us map[string]any) any { us[k] = v; return us }
}

// TestUserRefusesLessNoise: a server that publishes less noise than the user's own computation
// (σ/10, σ = 0, one ulp less, a larger visit cap or reward weight, another norm budget, another
// layout, none) makes
// the Go user refuse with an error naming the parameter, and she sends no report; an honest
// server, or one publishing more noise, is served.
func TestUserRefusesLessNoise(t *testing.T) {
	for _, tc := range []struct {
		name   string
		agent  string
		tamper func(us map[string]any) any
		field  string // "" when served
	}{
		{"honest", "practical-ldp", nil, ""},
		{"honest-plugin", "practical-ldp-plugin", nil, ""},
		{"more-noise", "practical-ldp", scale(3), ""},
		{"sigma-div-10", "practical-ldp", scale(0.1), "user_side.sigma"},
		{"sigma-zero", "practical-ldp", set("sigma", 0.0), "user_side.sigma"},
		{"sigma-negative", "practical-ldp", scale(-1), "user_side.sigma"},
		{"sigma-one-ulp-less-than-own", "practical-ldp", func(us map[string]any) any {
			// The user's own σ is the continuous Gaussian's (less than the secure curator's).
			us["sigma"] = math.Nextafter(ownSigma(t, us), 0)
			return us
		}, "user_side.sigma"},
		{"sigma-own", "practical-ldp", func(us map[string]any) any { us["sigma"] = ownSigma(t, us); return us }, ""},
		{"visit-cap-larger", "practical-ldp", set("visit_cap", 5.0), "user_side.visit_cap"},
		{"norm-budget-smaller", "practical-ldp", set("norm_budget", 19.0), "user_side.norm_budget"}, // M₂ = 20 at H = 6
		{"public-rewards", "practical-ldp", set("public_rewards", true), "user_side.public_rewards"},
		{"reward-weight-1", "practical-ldp", set("reward_weight", 1.0), "user_side.reward_weight"},
		{"unpooled", "practical-ldp", set("pool", false), "user_side.pool"},
		{"states", "practical-ldp", set("states", 7.0), "user_side.states"},
		{"no-user-side", "practical-ldp", func(map[string]any) any { return nil }, "user_side"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts, reg := newTamperingServer(t, false, tc.tamper)
			c := client.New(ts.url, testAdmin, testClient, nil)
			exp := createLDP(t, c, tc.agent, 1, nil)
			res, err := client.Simulate(context.Background(), c, client.SimOptions{Experiment: exp, Registry: reg, Epsilon: 1, Delta: 1e-5})
			if tc.field == "" {
				if err != nil {
					t.Fatalf("refused an honest server: %v", err)
				}
				if res.Accepted != 11 {
					t.Fatalf("accepted %d reports, want 11", res.Accepted)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.field+":") {
				t.Fatalf("got %v, want a refusal naming %s", err, tc.field)
			}
			if n := ts.reports.Load(); n != 0 {
				t.Fatalf("%d reports sent to a server publishing less noise", n)
			}
		})
	}
}

// ownSigma is the σ a user computes herself for the layout us publishes at (1, 1e-5). It runs
// in the server's handler goroutine: it reports with t.Errorf, never t.Fatal.
func ownSigma(t *testing.T, us map[string]any) float64 {
	own, err := tabular.PracticalUserSideFor("practical-ldp", int(us["states"].(float64)), int(us["actions"].(float64)),
		int(us["horizon"].(float64)), us["pool"].(bool), us["public_rewards"].(bool), 1, 1e-5)
	if err != nil {
		t.Errorf("own calibration: %v", err)
	}
	if !(own.Sigma > 0) || !(own.Sigma < us["sigma"].(float64)) {
		t.Errorf("own σ %v, the secure curator's %v: want 0 < own < curator's", own.Sigma, us["sigma"])
	}
	return own.Sigma
}

// TestUserStatesHerOwnGuarantee: outside seeded test mode a locally private user states her
// own (ε, δ) — the noise is computed from it — and a server whose ledger says otherwise is
// refused before any report.
func TestUserStatesHerOwnGuarantee(t *testing.T) {
	ts, reg := newTamperingServer(t, false, nil)
	c := client.New(ts.url, testAdmin, testClient, nil)
	exp := createLDP(t, c, "practical-ldp", 4, nil)
	for _, tc := range []struct {
		name       string
		eps, delta float64
		field      string
	}{
		{"none", 0, 0, "epsilon:"},
		{"no-delta", 4, 0, "delta:"},
		{"server-epsilon-weaker", 1, 1e-5, "epsilon:"},
		{"server-delta-differs", 4, 1e-6, "delta:"},
	} {
		_, err := client.Simulate(context.Background(), c, client.SimOptions{Experiment: exp, Registry: reg, Epsilon: tc.eps, Delta: tc.delta})
		if err == nil || !strings.HasPrefix(err.Error(), tc.field) {
			t.Errorf("%s: got %v, want an error naming %s", tc.name, err, tc.field)
		}
	}
	if n := ts.reports.Load(); n != 0 {
		t.Fatalf("%d reports sent", n)
	}
	if _, err := client.Simulate(context.Background(), c, client.SimOptions{Experiment: exp, Registry: reg, Epsilon: 4, Delta: 1e-5}); err != nil {
		t.Fatal(err)
	}
}

// TestSeededModeKeepsTheLedgerGuarantee: seeded test mode (explicit) may take the ledger's
// (ε, δ) and reproduces the same regrets twice; the honest seeded server's σ (the continuous
// calibration) is accepted.
func TestSeededModeKeepsTheLedgerGuarantee(t *testing.T) {
	ts, reg := newTamperingServer(t, true, nil)
	c := client.New(ts.url, testAdmin, testClient, nil)
	seed := uint64(3)
	var regs [2][]float64
	for i := range regs {
		exp := createLDP(t, c, "practical-ldp", 1, &seed)
		res, err := client.Simulate(context.Background(), c, client.SimOptions{Experiment: exp, Registry: reg, Seed: &seed, UserPrefix: "u" + string(rune('a'+i))})
		if err != nil {
			t.Fatal(err)
		}
		regs[i] = res.Regret
	}
	if !bytes.Equal(floatBytes(regs[0]), floatBytes(regs[1])) {
		t.Fatal("seeded mode did not reproduce")
	}
}

func floatBytes(x []float64) []byte {
	b, _ := json.Marshal(x)
	return b
}
