package service_test

import (
	"context"
	"encoding/base32"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/dprl/dprl/agents/protocol"
	"github.com/dprl/dprl/service"
	"github.com/dprl/dprl/service/client"
	"github.com/dprl/dprl/service/store"
)

// exchange is one request's answer: what a caller sees (status, headers, body).
type exchange struct {
	what string
	text string
}

// recorder sends requests and keeps every answer.
type recorder struct {
	t    *testing.T
	url  string
	seen []exchange
}

func (r *recorder) do(method, path, token string, body []byte, hdr map[string]string) (int, string) {
	r.t.Helper()
	resp, b := service.DoForTest(r.t, method, r.url+path, token, body, hdr)
	var h strings.Builder
	resp.Header.Write(&h)
	r.seen = append(r.seen, exchange{fmt.Sprintf("%s %s → %d", method, path, resp.StatusCode), h.String() + "\n" + string(b)})
	return resp.StatusCode, string(b)
}

// secrets are the texts a test server must not show, by what each is.
type secrets map[string]string

// newSecrets returns the secrets of every test server: its tokens.
func newSecrets() secrets {
	return secrets{"admin token": adminTok, "client token": clientTok}
}

// addEncoded adds the bytes b as hex, base64, base64url and base32 (unpadded).
func (p secrets) addEncoded(what string, b []byte) {
	p[what+" (hex)"] = hex.EncodeToString(b)
	p[what+" (base64)"] = base64.RawStdEncoding.EncodeToString(b)
	p[what+" (base64url)"] = base64.RawURLEncoding.EncodeToString(b)
	p[what+" (base32)"] = strings.TrimRight(base32.StdEncoding.EncodeToString(b), "=")
}

// TestNothingSecretLeaks drives a production server (no seed: the experiments have keys)
// through a whole workflow — create (JDP, LDP, an inline model), mint, single and batch
// submissions, simulated users, a revocation, every kind of error, ledger, policy (and 304),
// list, metrics, health, the OpenAPI document and the status page — capturing every log line,
// and checks that no log line, response (headers and body, except the admin's minting answer,
// whose job is to return credentials), metric or page holds a user ID, a credential, a user
// digest, the participation or credential key, an experiment's key or a token, raw or in
// hex, base64, base64url or base32.
func TestNothingSecretLeaks(t *testing.T) {
	dir := t.TempDir()
	var lg logLines
	c, url, stop := serveLogged(t, dir, &lg)
	r := &recorder{t: t, url: url}
	ctx := context.Background()

	create := func(body string) string {
		code, out := r.do("POST", "/v1/experiments", adminTok, []byte(body), nil)
		var l struct{ Experiment string }
		if code != http.StatusCreated || json.Unmarshal([]byte(out), &l) != nil {
			t.Fatalf("create: %d %s", code, out)
		}
		return l.Experiment
	}
	jdp := create(`{"family":"tabular","agent":"practical-jdp","env":{"name":"riverswim","params":{"horizon":5}},"epsilon":1,"delta":1e-5,"capacity":10}`)
	ldp := create(`{"family":"tabular","agent":"practical-ldp","env":{"name":"riverswim","params":{"horizon":5}},"epsilon":1,"delta":1e-5,"capacity":50}`)
	model := `{"name":"chain","states":2,"actions":2,"horizon":3,"rewards":"deterministic","homogeneous":true,"init":[1,0],` +
		`"transitions":[[[1,0],[0,1]],[[1,0],[0,1]]],"reward":[[0,0],[0,1]]}`
	create(`{"family":"tabular","agent":"practical-jdp","env":{"name":"file","model":` + model + `},"epsilon":1,"delta":1e-5,"capacity":10}`)

	users := []string{"uid-Quokka-7731-alice", "uid-Wombat-0419-bob", "uid-Numbat-5526-carol", "uid-Dingo-9902-dave"}
	for i := range 8 {
		users = append(users, fmt.Sprintf("uid-Marsupial-%04d-x", 1000+37*i))
	}
	creds, err := c.Credentials(ctx, jdp, users) // the admin's answer: credentials, by design
	if err != nil {
		t.Fatal(err)
	}
	ldpCreds, err := c.Credentials(ctx, ldp, users[:2])
	if err != nil {
		t.Fatal(err)
	}
	head := header(t, c, jdp)
	traj := protocol.Trajectory{Header: head, States: []int{0, 1, 2, 1, 0, 0}, Actions: []int{1, 1, 0, 0, 1}, Rewards: []float64{0, 0.5, 0, 0, 1}}
	bin, _ := protocol.EncodeBinary(&traj)
	submit := func(u, cred, idem string, body []byte) (int, string) {
		return r.do("POST", "/v1/experiments/"+jdp+"/reports", clientTok, body, map[string]string{"Dprl-User": u, "Dprl-User-Credential": cred, "Idempotency-Key": idem})
	}
	if code, out := submit(users[0], creds[users[0]], "idem-a", bin); code != http.StatusCreated {
		t.Fatalf("a report: %d %s", code, out)
	}
	submit(users[0], creds[users[0]], "idem-a", bin)                     // a retry
	submit(users[0], creds[users[0]], "idem-b", bin)                     // 409 already contributed
	submit(users[1], creds[users[0]], "idem-c", bin)                     // 403 another user's credential
	submit(users[1], creds[users[1]], "idem-d", []byte(`{"header":{}}`)) // 400
	submit(users[1], creds[users[1]], "", bin)                           // 400 no idempotency key
	submit(users[1], "", "idem-e", bin)                                  // 403
	r.do("POST", "/v1/experiments/"+jdp+"/reports", "wrong-token-0123456789", bin, map[string]string{"Dprl-User": users[1], "Dprl-User-Credential": creds[users[1]], "Idempotency-Key": "x"})
	r.do("POST", "/v1/experiments/nosuch/reports", clientTok, bin, map[string]string{"Dprl-User": users[1], "Dprl-User-Credential": creds[users[1]], "Idempotency-Key": "x"})
	tj, _ := json.Marshal(traj)
	item := func(u, cred, idem string) string {
		return fmt.Sprintf(`{"user":%q,"credential":%q,"idempotency_key":%q,"report":%s}`, u, cred, idem, tj)
	}
	batch := `{"reports":[` + strings.Join([]string{item(users[1], creds[users[1]], "b1"), item(users[2], creds[users[2]], "b2"), item(users[2], creds[users[2]], "b3"),
		item(users[3], creds[users[4]], "b4"), item(users[0], creds[users[0]], "b5")}, ",") + `]}`
	if code, out := r.do("POST", "/v1/experiments/"+jdp+"/reports/batch", clientTok, []byte(batch), nil); code != http.StatusOK {
		t.Fatalf("batch: %d %s", code, out)
	}
	if code, out := r.do("POST", "/v1/experiments/"+jdp+"/credentials/revoke", adminTok, []byte(`{"users":["`+users[3]+`","`+users[1]+`"]}`), nil); code != http.StatusOK {
		t.Fatalf("revoke: %d %s", code, out)
	}
	submit(users[3], creds[users[3]], "r1", bin) // revoked
	var rest []string
	for _, u := range users[4:10] { // the calibration covers K − 1 = 9 users
		rest = append(rest, item(u, creds[u], "r-"+u[len(u)-6:]))
	}
	if code, out := r.do("POST", "/v1/experiments/"+jdp+"/reports/batch", clientTok, []byte(`{"reports":[`+strings.Join(rest, ",")+`]}`), nil); code != http.StatusOK || strings.Count(out, `"status":201`) != 6 {
		t.Fatalf("batch to the capacity: %d %s", code, out)
	}
	if code, out := submit(users[10], creds[users[10]], "r3", bin); code != http.StatusConflict {
		t.Fatalf("beyond the capacity: %d %s", code, out)
	}
	r.do("POST", "/v1/experiments/"+jdp+"/credentials/revoke", adminTok, []byte(`{"users":["bad user"]}`), nil)
	r.do("POST", "/v1/experiments/"+jdp+"/credentials", clientTok, []byte(`{"users":["`+users[11]+`"]}`), nil) // 401

	// LDP: simulated users (the Go client's randomiser) and one by hand with a bad report.
	if _, err := client.Simulate(ctx, c, client.SimOptions{Experiment: ldp, Registry: registry(), Users: 6, Epsilon: 1, Delta: 1e-5}); err != nil {
		t.Fatal(err)
	}
	r.do("POST", "/v1/experiments/"+ldp+"/reports", clientTok, []byte(`{"header":{"kind":"privatized"}}`),
		map[string]string{"Dprl-User": users[0], "Dprl-User-Credential": ldpCreds[users[0]], "Idempotency-Key": "l1"})

	// Every public read.
	for _, id := range []string{jdp, ldp} {
		r.do("GET", "/v1/experiments/"+id, "", nil, nil)
		r.do("GET", "/v1/experiments/"+id+"/ledger", "", nil, nil)
		r.do("GET", "/v1/experiments/"+id+"/policy", "", nil, nil)
		_, after, _ := strings.Cut(r.seen[len(r.seen)-1].text, "Etag: ")
		etag, _, _ := strings.Cut(after, "\r\n")
		r.do("GET", "/v1/experiments/"+id+"/policy", "", nil, map[string]string{"If-None-Match": etag})
	}
	for _, p := range []string{"/v1/experiments", "/metrics", "/healthz", "/readyz", "/v1/openapi.json", "/", "/v1/experiments/nosuch"} {
		r.do("GET", p, "", nil, nil)
	}
	stop()
	// A restart logs its replays.
	_, _, stop = serveLogged(t, dir, &lg)

	// The secrets, read from the store after the server released it.
	st := stoppedStore(t, dir, stop)
	defer st.Close()
	private := newSecrets()
	secret := func(what string, b []byte) {
		private.addEncoded(what, b)
		private[what+" (raw)"] = string(b)
	}
	for _, u := range users {
		private["user ID "+u] = u
		private["credential of "+u] = creds[u]
	}
	for u, cr := range ldpCreds {
		private["LDP credential of "+u] = cr
	}
	for i := 1; i <= 6; i++ {
		private[fmt.Sprintf("simulated user %d", i)] = fmt.Sprintf("sim-%d\"", i)
	}
	uk, ck := st.UserKey(), st.CredentialKey()
	secret("participation key", uk[:])
	secret("credential key", ck.Key[:])
	defs, err := st.Experiments()
	if err != nil || len(defs) != 3 {
		t.Fatalf("%d experiments: %v", len(defs), err)
	}
	for _, d := range defs {
		if len(d.Key) != 32 {
			t.Fatalf("%s: a %d-byte key", d.ID, len(d.Key))
		}
		secret("key of "+d.ID, d.Key)
		if err := st.Replay(d.ID, func(seq uint64, rec *store.Record) error {
			secret(fmt.Sprintf("user digest %d of %s", seq, d.ID), rec.User[:])
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	for _, code := range []string{"→ 200", "→ 201", "→ 304", "→ 400", "→ 401", "→ 403", "→ 404", "→ 409"} {
		n := 0
		for _, x := range r.seen {
			if strings.HasSuffix(x.what, code) {
				n++
			}
		}
		if n == 0 {
			t.Errorf("no answer %s in the workflow", code)
		}
	}
	if len(r.seen) < 30 || len(lg.lines) < 6 {
		t.Fatalf("only %d answers and %d log lines captured: the workflow is broken", len(r.seen), len(lg.lines))
	}
	texts := make([]exchange, 0, len(r.seen)+len(lg.lines))
	texts = append(texts, r.seen...)
	for i, l := range lg.lines {
		texts = append(texts, exchange{fmt.Sprintf("log line %d", i+1), l})
	}
	for _, x := range texts {
		lower := strings.ToLower(x.text)
		for what, v := range private {
			if strings.Contains(x.text, v) || (strings.HasSuffix(what, "(hex)") && strings.Contains(lower, v)) {
				t.Errorf("%s shows the %s:\n%s", x.what, what, x.text)
			}
		}
	}
	t.Logf("%d answers and %d log lines scanned for %d secrets", len(r.seen), len(lg.lines), len(private))
}
