package service_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/dprl/dprl/agents/protocol"
	"github.com/dprl/dprl/service"
	"github.com/dprl/dprl/service/client"
)

// rawReq sends a request and returns its status and body.
func rawReq(t *testing.T, url, method, path, token string, body []byte, hdr map[string]string) (int, string) {
	t.Helper()
	resp, b := service.DoForTest(t, method, url+path, token, body, hdr)
	return resp.StatusCode, string(b)
}

// createRiverSwim creates an experiment of the tabular agent on RiverSwim (H = 5) with the
// given capacity, (ε, δ) = (1, 1e-5) and seed 3, and returns its ID.
func createRiverSwim(t *testing.T, c *client.Client, agent string, capacity int) string {
	t.Helper()
	l, err := c.Create(context.Background(), client.CreateRequest{Family: "tabular", Agent: agent, Env: client.Env{Name: "riverswim", Params: map[string]float64{"horizon": 5}},
		Epsilon: 1, Delta: 1e-5, Capacity: capacity, Seed: seedp(3)})
	if err != nil {
		t.Fatal(err)
	}
	return l.Experiment
}

// seededRiverSwim starts a seeded server (live) with a second URL serving the same state and
// creates a practical-jdp RiverSwim experiment of capacity 100 on it (createRiverSwim).
func seededRiverSwim(t *testing.T) (c *client.Client, url, id string) {
	t.Helper()
	c, url, _ = liveURL(t, t.TempDir(), true)
	return c, url, createRiverSwim(t, c, "practical-jdp", 100)
}

// TestHostileClients: every hostile request gets its 4xx with a JSON body naming the field,
// and leaves the published state (policy and ledger) unchanged byte for byte.
func TestHostileClients(t *testing.T) {
	dir := t.TempDir()
	c, url, _ := liveURL(t, dir, true)
	ctx := context.Background()
	jdp, full, ldp := createRiverSwim(t, c, "practical-jdp", 100), createRiverSwim(t, c, "practical-jdp", 10), createRiverSwim(t, c, "practical-ldp", 100)
	if _, err := client.Simulate(ctx, c, client.SimOptions{Experiment: jdp, Registry: registry(), Users: 10, Seed: seedp(3)}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.Simulate(ctx, c, client.SimOptions{Experiment: full, Registry: registry(), Seed: seedp(3)}); err != nil {
		t.Fatal(err)
	}
	creds, _ := c.Credentials(ctx, jdp, []string{"sim-1", "fresh"})
	fullCreds, _ := c.Credentials(ctx, full, []string{"late"})
	ldpCreds, _ := c.Credentials(ctx, ldp, []string{"fresh"})
	head := header(t, c, jdp)
	traj := func(mod func(r *protocol.Trajectory)) []byte {
		r := &protocol.Trajectory{Header: head, States: make([]int, 6), Actions: make([]int, 5), Rewards: make([]float64, 5)}
		if mod != nil {
			mod(r)
		}
		b, err := protocol.EncodeBinary(r)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	asJSON := func(r *protocol.Trajectory) []byte { b, _ := json.Marshal(r); return b }
	user := func(id, cred, idem string) map[string]string {
		return map[string]string{"Dprl-User": id, "Dprl-User-Credential": cred, "Idempotency-Key": idem}
	}
	fresh := user("fresh", creds["fresh"], "x1")
	state := func() string {
		var b strings.Builder
		for _, id := range []string{jdp, full, ldp} {
			for _, p := range []string{"/policy", "/ledger"} {
				code, body := rawReq(t, url, "GET", "/v1/experiments/"+id+p, "", nil, nil)
				fmt.Fprintf(&b, "%d %s\n", code, body)
			}
		}
		return b.String()
	}
	before := state()
	// The generated table (docs/hostile-inputs.md): experiment IDs, credentials and tokens by
	// name, so that it does not change from run to run.
	names := strings.NewReplacer(jdp, "{jdp}", full, "{full}", ldp, "{ldp}")
	credName := map[string]string{}
	for u, cr := range creds {
		credName[cr] = "credential of " + u + " on {jdp}"
	}
	credName[fullCreds["late"]] = "credential of late on {full}"
	credName[ldpCreds["fresh"]] = "credential of fresh on {ldp}"
	newID := regexp.MustCompile(`experiment [a-z0-9]{16}\b`) // a refused creation's fresh ID
	var rows [][]string
	cases := 0
	ldpAsTrajectory := header(t, c, ldp)
	ldpAsTrajectory.Kind = protocol.KindTrajectory
	badHead := head
	badHead.Kind = protocol.KindPrivatized
	for _, c := range []struct {
		name        string
		method, exp string
		path        string
		token       string
		body        []byte
		hdr         map[string]string
		status      int
		field       string
	}{
		{"second contribution by the same user", "POST", jdp, "/reports", clientTok, traj(nil), user("sim-1", creds["sim-1"], "other-key"), 409, ""},
		{"a report past capacity", "POST", full, "/reports", clientTok, traj(nil), user("late", fullCreds["late"], "x"), 409, ""},
		{"NaN reward", "POST", jdp, "/reports", clientTok, traj(func(r *protocol.Trajectory) { r.Rewards[2] = math.NaN() }), fresh, 400, "report.rewards[2]"},
		{"infinite reward", "POST", jdp, "/reports", clientTok, traj(func(r *protocol.Trajectory) { r.Rewards[0] = math.Inf(1) }), fresh, 400, "report.rewards[0]"},
		{"negative state", "POST", jdp, "/reports", clientTok, traj(func(r *protocol.Trajectory) { r.States[1] = -1 }), fresh, 400, "report.states[1]"},
		{"huge action", "POST", jdp, "/reports", clientTok, traj(func(r *protocol.Trajectory) { r.Actions[4] = 1 << 40 }), fresh, 400, "report.actions"},
		{"wrong shape", "POST", jdp, "/reports", clientTok, traj(func(r *protocol.Trajectory) { r.States = r.States[:3] }), fresh, 400, "report.states"},
		{"JSON with a NaN", "POST", jdp, "/reports", clientTok, []byte(`{"header":{},"states":[NaN]}`), fresh, 400, "report.json"},
		{"JSON of another kind", "POST", jdp, "/reports", clientTok, asJSON(&protocol.Trajectory{Header: badHead}), fresh, 400, "report.header.kind"},
		{"a raw trajectory to an LDP curator", "POST", ldp, "/reports", clientTok, asJSON(&protocol.Trajectory{Header: ldpAsTrajectory}), user("fresh", ldpCreds["fresh"], "x"), 400, "report.header.kind"},
		{"oversized body", "POST", jdp, "/reports", clientTok, make([]byte, 1<<20), fresh, 413, "body"},
		{"no client token", "POST", jdp, "/reports", "", traj(nil), fresh, 401, "Authorization"},
		{"wrong client token", "POST", jdp, "/reports", "client-token-0123456780", traj(nil), fresh, 401, "Authorization"},
		{"the admin token to submit", "POST", jdp, "/reports", adminTok, traj(nil), fresh, 401, "Authorization"},
		{"another user's credential", "POST", jdp, "/reports", clientTok, traj(nil), user("fresh", creds["sim-1"], "x"), 403, "Dprl-User-Credential"},
		{"another experiment's credential", "POST", ldp, "/reports", clientTok, traj(nil), fresh, 403, "Dprl-User-Credential"},
		{"unknown experiment", "POST", "nope", "/reports", clientTok, traj(nil), fresh, 404, "id"},
		{"no idempotency key", "POST", jdp, "/reports", clientTok, traj(nil), user("fresh", creds["fresh"], ""), 400, "Idempotency-Key"},
		{"bad simulated regret", "POST", jdp, "/reports", clientTok, traj(nil), map[string]string{"Dprl-User": "fresh", "Dprl-User-Credential": creds["fresh"], "Idempotency-Key": "x", "Dprl-Simulated-Regret": "NaN"}, 400, "Dprl-Simulated-Regret"},
		{"credentials with the client token", "POST", jdp, "/credentials", clientTok, []byte(`{"users":["a"]}`), nil, 401, "Authorization"},
		{"create with the client token", "POST", "", "", clientTok, []byte(`{}`), nil, 401, "Authorization"},
		{"create: unknown field", "POST", "", "", adminTok, []byte(`{"family":"tabular","agent":"practical-jdp","capacity":10,"epsilon":1,"bogus":1}`), nil, 400, "bogus"},
		{"create: ε out of range", "POST", "", "", adminTok, []byte(`{"family":"tabular","agent":"practical-jdp","capacity":10,"epsilon":-1}`), nil, 400, "epsilon"},
		{"create: capacity 0", "POST", "", "", adminTok, []byte(`{"family":"tabular","agent":"practical-jdp","capacity":0,"epsilon":1}`), nil, 400, "capacity"},
		{"create: capacity too large", "POST", "", "", adminTok, []byte(`{"family":"tabular","agent":"practical-jdp","capacity":100000000,"epsilon":1}`), nil, 400, "capacity"},
		{"create: unknown agent", "POST", "", "", adminTok, []byte(`{"family":"tabular","agent":"nope","capacity":10,"epsilon":1}`), nil, 400, "agent"},
		{"create: δ of 1", "POST", "", "", adminTok, []byte(`{"family":"tabular","agent":"practical-jdp","capacity":10,"epsilon":1,"delta":1}`), nil, 400, "delta"},
		{"create: oversized", "POST", "", "", adminTok, make([]byte, 9<<20), nil, 413, "body"},
		{"create: null capacity", "POST", "", "", adminTok, []byte(`{"family":"tabular","agent":"practical-jdp","capacity":null,"epsilon":1}`), nil, 400, "capacity"},
		{"create: null environment parameter", "POST", "", "", adminTok, []byte(`{"family":"tabular","agent":"practical-jdp","env":{"name":"riverswim","params":{"horizon":null}},"capacity":10,"epsilon":1}`), nil, 400, "env.params.horizon"},
		{"create: key in another case", "POST", "", "", adminTok, []byte(`{"family":"tabular","agent":"practical-jdp","Capacity":10,"epsilon":1}`), nil, 400, "Capacity"},
		{"JSON report with a null reward", "POST", jdp, "/reports", clientTok, bytes.Replace(asJSON(&protocol.Trajectory{Header: head, States: make([]int, 6), Actions: make([]int, 5), Rewards: make([]float64, 5)}), []byte(`"rewards":[0,0`), []byte(`"rewards":[0,null`), 1), fresh, 400, "report.rewards[1]"},
		{"JSON report with a key in another case", "POST", jdp, "/reports", clientTok, bytes.Replace(asJSON(&protocol.Trajectory{Header: head, States: make([]int, 6), Actions: make([]int, 5), Rewards: make([]float64, 5)}), []byte(`"rewards"`), []byte(`"Rewards"`), 1), fresh, 400, "report.Rewards"},
		{"credentials: a null user", "POST", jdp, "/credentials", adminTok, []byte(`{"users":["a",null]}`), nil, 400, "users[1]"},
		{"credentials: key in another case", "POST", jdp, "/credentials", adminTok, []byte(`{"Users":["a"]}`), nil, 400, "Users"},
		{"batch: a null user", "POST", jdp, "/reports/batch", clientTok, []byte(`{"reports":[{"user":null,"credential":"c","idempotency_key":"k","report":{}}]}`), nil, 400, "reports[0].user"},
		{"batch: key in another case", "POST", jdp, "/reports/batch", clientTok, []byte(`{"Reports":[]}`), nil, 400, "Reports"},
		{"unknown path", "GET", "", "/v1/nope", "", nil, nil, 404, "path"},
		{"unknown path outside the API", "GET", "", "/admin", "", nil, nil, 404, "path"},
		{"method the path does not take", "DELETE", "", "/v1/experiments", adminTok, nil, nil, 405, "method"},
		{"PUT on a policy", "PUT", jdp, "/policy", adminTok, []byte(`{}`), nil, 405, "method"},
		{"another authorization scheme", "POST", jdp, "/credentials", "", []byte(`{"users":["a"]}`), map[string]string{"Authorization": "Basic " + adminTok}, 401, "Authorization"},
	} {
		cases++
		t.Run(c.name, func(t *testing.T) {
			path := "/v1/experiments"
			if c.exp != "" {
				path += "/" + c.exp + c.path
			} else if c.path != "" {
				path = c.path // a path outside /v1/experiments
			}
			code, body := rawReq(t, url, c.method, path, c.token, c.body, c.hdr)
			if code != c.status {
				t.Fatalf("status %d, want %d: %s", code, c.status, body)
			}
			var e struct {
				Error struct{ Code, Field, Message string }
			}
			if err := json.Unmarshal([]byte(body), &e); err != nil || e.Error.Message == "" {
				t.Fatalf("body %q is not a JSON error", body)
			}
			rows = append(rows, []string{c.name, c.method + " " + names.Replace(path), describeBody(c.body), tokenName(c.token),
				describeHeaders(c.hdr, credName), fmt.Sprint(code), e.Error.Code, e.Error.Field, newID.ReplaceAllString(names.Replace(e.Error.Message), "experiment {new}")})
			if c.field != "" && e.Error.Field != c.field {
				t.Errorf("field %q, want %q (%s)", e.Error.Field, c.field, e.Error.Message)
			}
			if after := state(); after != before {
				t.Fatalf("the state changed:\n%s\n%s", before, after)
			}
		})
	}
	if len(rows) != cases {
		t.Logf("%d of %d cases ran: %s not compared", len(rows), cases, hostileDoc)
		return
	}
	checkHostileDoc(t, renderHostileRequests(rows))
}

// TestMembershipIsPrivate: a caller without a user's credential learns nothing of whether she
// contributed: the answers for a contributor and a non-contributor are identical, byte for
// byte. With her own credential she learns it (a retry is acknowledged again; another key is a
// conflict).
func TestMembershipIsPrivate(t *testing.T) {
	c, url, id := seededRiverSwim(t)
	ctx := context.Background()
	if _, err := client.Simulate(ctx, c, client.SimOptions{Experiment: id, Registry: registry(), Users: 5, Seed: seedp(3)}); err != nil {
		t.Fatal(err)
	}
	creds, _ := c.Credentials(ctx, id, []string{"sim-3", "outsider", "attacker"})
	head := header(t, c, id)
	b, _ := protocol.EncodeBinary(&protocol.Trajectory{Header: head, States: make([]int, 6), Actions: make([]int, 5), Rewards: make([]float64, 5)})
	path := "/v1/experiments/" + id + "/reports"
	for _, probe := range []struct{ name, cred string }{{"the attacker's own credential", creds["attacker"]}, {"no credential", ""}, {"a forged one", "AAAA"}} {
		c1, b1 := rawReq(t, url, "POST", path, clientTok, b, map[string]string{"Dprl-User": "sim-3", "Dprl-User-Credential": probe.cred, "Idempotency-Key": "k3"})
		c2, b2 := rawReq(t, url, "POST", path, clientTok, b, map[string]string{"Dprl-User": "outsider", "Dprl-User-Credential": probe.cred, "Idempotency-Key": "k3"})
		if c1 != c2 || b1 != b2 || c1 != http.StatusForbidden {
			t.Errorf("%s: contributor %d %s, non-contributor %d %s", probe.name, c1, b1, c2, b2)
		}
	}
	code, body := rawReq(t, url, "POST", path, clientTok, b, map[string]string{"Dprl-User": "sim-3", "Dprl-User-Credential": creds["sim-3"], "Idempotency-Key": "k3"})
	if code != http.StatusOK || !strings.Contains(body, `"replayed":true`) {
		t.Errorf("her own retry: %d %s", code, body)
	}
	code, body = rawReq(t, url, "POST", path, clientTok, b, map[string]string{"Dprl-User": "sim-3", "Dprl-User-Credential": creds["sim-3"], "Idempotency-Key": "another"})
	if code != http.StatusConflict || !strings.Contains(body, "already_contributed") {
		t.Errorf("her second contribution: %d %s", code, body)
	}
}

// TestBatchSubmission: a batch commits its valid items in order and refuses the others item by
// item (naming reports[i].field), leaving the state as if only the valid ones were sent.
func TestBatchSubmission(t *testing.T) {
	c, url, id := seededRiverSwim(t)
	ctx := context.Background()
	creds, _ := c.Credentials(ctx, id, []string{"a", "b", "c"})
	head := header(t, c, id)
	good, _ := json.Marshal(&protocol.Trajectory{Header: head, States: make([]int, 6), Actions: make([]int, 5), Rewards: make([]float64, 5)})
	bad, _ := json.Marshal(&protocol.Trajectory{Header: head, States: make([]int, 2), Actions: make([]int, 5), Rewards: make([]float64, 5)})
	item := func(u, cred string, rep []byte) string {
		return fmt.Sprintf(`{"user":%q,"credential":%q,"idempotency_key":"k","report":%s}`, u, cred, rep)
	}
	body := `{"reports":[` + strings.Join([]string{item("a", creds["a"], good), item("b", creds["b"], bad), item("c", creds["a"], good), item("c", creds["c"], good), item("a", creds["a"], good)}, ",") + `]}`
	code, resp := rawReq(t, url, "POST", "/v1/experiments/"+id+"/reports/batch", clientTok, []byte(body), nil)
	if code != 200 {
		t.Fatalf("%d %s", code, resp)
	}
	var out struct {
		Results []struct {
			Status int
			Ack    *struct{ Sequence uint64 }
			Error  *struct{ Code, Field string }
		}
	}
	if err := json.Unmarshal([]byte(resp), &out); err != nil || len(out.Results) != 5 {
		t.Fatalf("%v: %s", err, resp)
	}
	want := []struct {
		status int
		field  string
	}{{201, ""}, {400, "reports[1].report.states"}, {403, "reports[2].Dprl-User-Credential"}, {201, ""}, {409, ""}}
	for i, w := range want {
		r := out.Results[i]
		if r.Status != w.status || (w.field != "" && (r.Error == nil || r.Error.Field != w.field)) {
			t.Errorf("item %d: %+v, want %d %s", i, r, w.status, w.field)
		}
	}
	if t.Failed() {
		t.FailNow()
	}
	if out.Results[0].Ack.Sequence != 1 || out.Results[3].Ack.Sequence != 2 || out.Results[4].Error.Code != "in_progress" {
		t.Errorf("sequences: %s", resp)
	}
	// A retry of the batch's first item is acknowledged again, not counted.
	code, resp = rawReq(t, url, "POST", "/v1/experiments/"+id+"/reports/batch", clientTok, []byte(`{"reports":[`+item("a", creds["a"], good)+`]}`), nil)
	if code != 200 || !strings.Contains(resp, `"replayed":true`) || !strings.Contains(resp, `"sequence":1`) {
		t.Errorf("retry: %d %s", code, resp)
	}
	led, _ := c.Ledger(ctx, id)
	if led.UsersServed != 2 {
		t.Errorf("%d users served, want 2", led.UsersServed)
	}
}
