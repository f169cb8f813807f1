package service_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strings"
	"testing"

	"github.com/dprl/dprl/agents/protocol"
	"github.com/dprl/dprl/service"
	"github.com/dprl/dprl/service/client"
	"github.com/dprl/dprl/service/store"
)

// serveLogged starts a server on dir (as live) whose log lines go to lg.
func serveLogged(t *testing.T, dir string, lg *logLines) (*client.Client, string, func()) {
	t.Helper()
	cfg := testConfig(dir)
	cfg.Logf = lg.logf
	_, hs, stop := service.StartForTest(t, cfg)
	return client.New(hs.URL, adminTok, clientTok, hs.Client()), hs.URL, stop
}

// ldpReport returns a practical-ldp report for header h whose every number is v.
func ldpReport(h protocol.Header, v float64) *protocol.Privatized {
	r := &protocol.Privatized{Header: h, Blocks: make([][]float64, len(h.Dims.Blocks))}
	for i, n := range h.Dims.Blocks {
		r.Blocks[i] = make([]float64, n)
		for j := range r.Blocks[i] {
			r.Blocks[i][j] = v
		}
	}
	return r
}

// TestHugeLDPReportRefused (issue 25 item 2): a practical-ldp (and practical-ldp-plugin) report
// whose blocks hold huge finite values (1e308, 1e200, −1e308), in the binary or the JSON
// encoding, is refused with 400 naming the block entry, nothing is stored, and the server
// keeps publishing and accepting honest reports. (Before the fix the report was accepted and
// the planner panicked at the next release — `invalid argument to IntN` — which crashed `dprl
// serve` at every restart; the service's panic net then answered 400 naming only "report".)
func TestHugeLDPReportRefused(t *testing.T) {
	ctx := context.Background()
	for _, agent := range []string{"practical-ldp", "practical-ldp-plugin"} {
		t.Run(agent, func(t *testing.T) {
			c, url, _ := serveLogged(t, t.TempDir(), &logLines{})
			l, err := c.Create(ctx, client.CreateRequest{Family: "tabular", Agent: agent, Env: client.Env{Name: "riverswim", Params: map[string]float64{"horizon": 4}}, Epsilon: 1, Delta: 1e-5, Capacity: 50})
			if err != nil {
				t.Fatal(err)
			}
			exp := l.Experiment
			h := header(t, c, exp)
			var ids []string
			for u := range 12 {
				ids = append(ids, fmt.Sprint("u", u))
			}
			creds, err := c.Credentials(ctx, exp, ids)
			if err != nil {
				t.Fatal(err)
			}
			for i, v := range []float64{1e308, 1e200, -1e308} {
				id := ids[i]
				// binary (the Go client)
				_, err := c.Submit(ctx, exp, client.Submission{User: id, Credential: creds[id], IdempotencyKey: "b", Report: ldpReport(h, v), Regret: math.NaN()})
				var e *client.Error
				if !errors.As(err, &e) || e.Status != http.StatusBadRequest || !strings.HasPrefix(e.Field, "report.blocks[0][") {
					t.Fatalf("%g (binary): got %v, want 400 naming report.blocks[0][…]", v, err)
				}
				// JSON
				body, err := protocol.EncodeJSON(ldpReport(h, v))
				if err != nil {
					t.Fatal(err)
				}
				req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url+"/v1/experiments/"+exp+"/reports", bytes.NewReader(body))
				req.Header.Set("Authorization", "Bearer "+clientTok)
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Dprl-User", id)
				req.Header.Set("Dprl-User-Credential", creds[id])
				req.Header.Set("Idempotency-Key", "j")
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				var out struct {
					Error struct{ Code, Field string } `json:"error"`
				}
				err = json.NewDecoder(resp.Body).Decode(&out)
				resp.Body.Close()
				if err != nil || resp.StatusCode != http.StatusBadRequest || !strings.HasPrefix(out.Error.Field, "report.blocks[0][") {
					t.Fatalf("%g (JSON): got %d %+v (%v), want 400 naming report.blocks[0][…]", v, resp.StatusCode, out, err)
				}
			}
			// Honest-sized reports are still accepted and the policy is served.
			for _, id := range ids[3:] {
				if _, err := c.Submit(ctx, exp, client.Submission{User: id, Credential: creds[id], IdempotencyKey: "k", Report: ldpReport(h, 0.5), Regret: math.NaN()}); err != nil {
					t.Fatalf("%s: %v", id, err)
				}
			}
			policy(t, c, exp)
			led, err := c.Ledger(ctx, exp)
			if err != nil || led.UsersServed != len(ids)-3 {
				t.Fatalf("ledger %+v (%v): want %d users served (the refused reports not stored)", led, err, len(ids)-3)
			}
		})
	}
}

// TestRefusedStoredReportSkipped (issue 25 item 2): a stored report that the curator now
// refuses (written into the log directly: a record acknowledged by an older dprl) is logged
// and skipped when the server restarts: the server starts, publishes, accepts new reports, and
// the log says the curator refused the record (not that it panicked on it).
func TestRefusedStoredReportSkipped(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	c, _, stop := serveLogged(t, dir, &logLines{})
	l, err := c.Create(ctx, client.CreateRequest{Family: "tabular", Agent: "practical-ldp", Env: client.Env{Name: "riverswim", Params: map[string]float64{"horizon": 4}}, Epsilon: 1, Delta: 1e-5, Capacity: 50})
	if err != nil {
		t.Fatal(err)
	}
	exp := l.Experiment
	h := header(t, c, exp)
	creds, err := c.Credentials(ctx, exp, []string{"a", "b"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Submit(ctx, exp, client.Submission{User: "a", Credential: creds["a"], IdempotencyKey: "k", Report: ldpReport(h, 0.5), Regret: math.NaN()}); err != nil {
		t.Fatal(err)
	}
	st := stoppedStore(t, dir, stop)
	bad, err := protocol.EncodeBinary(ldpReport(h, 1e308))
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Append(exp, 2, []*store.Record{{User: sha256.Sum256([]byte("older dprl's user")), Idem: "old", Regret: math.NaN(), Report: bad}}); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	lg := &logLines{}
	c2, _, _ := serveLogged(t, dir, lg)
	if n := lg.count("record 2: the curator refuses this acknowledged report; it is skipped"); n != 1 {
		t.Fatalf("%d log lines say record 2 was refused and skipped, want 1; log:\n%s", n, strings.Join(lg.lines, "\n"))
	}
	if n := lg.count("panicked"); n != 0 {
		t.Fatalf("the curator panicked on replay; log:\n%s", strings.Join(lg.lines, "\n"))
	}
	p1 := policy(t, c2, exp)
	if _, err := c2.Submit(ctx, exp, client.Submission{User: "b", Credential: creds["b"], IdempotencyKey: "k", Report: ldpReport(h, 0.5), Regret: math.NaN()}); err != nil {
		t.Fatalf("a new report after the restart: %v", err)
	}
	if p2 := policy(t, c2, exp); len(p1) == 0 || len(p2) == 0 {
		t.Fatal("no policy served after the restart")
	}
}
