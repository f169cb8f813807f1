package service_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/dprl/dprl/agents/protocol"
	"github.com/dprl/dprl/service"
	"github.com/dprl/dprl/service/client"
)

// submitAs posts an all-zero RiverSwim (H = 5) trajectory as user with cred and idem, and
// returns the status and body.
func submitAs(t *testing.T, url, id string, head protocol.Header, user, cred, idem string) (int, string) {
	t.Helper()
	b, _ := protocol.EncodeBinary(&protocol.Trajectory{Header: head, States: make([]int, 6), Actions: make([]int, 5), Rewards: make([]float64, 5)})
	return rawReq(t, url, "POST", "/v1/experiments/"+id+"/reports", clientTok, b,
		map[string]string{"Dprl-User": user, "Dprl-User-Credential": cred, "Idempotency-Key": idem})
}

// TestRevokedCredentialIsAWrongOne: after a revocation, a revoked user's own credential gets
// the 403 of a wrong credential, byte for byte, whether she contributed or not, on the single
// and the batch endpoint; other users are unaffected; the revocation survives a restart and
// the store holds no user ID.
func TestRevokedCredentialIsAWrongOne(t *testing.T) {
	dir := t.TempDir()
	c, url, stop := liveURL(t, dir, true)
	ctx := context.Background()
	id := createRiverSwim(t, c, "practical-jdp", 100)
	head := header(t, c, id)
	creds, err := c.Credentials(ctx, id, []string{"contributor", "bystander", "other"})
	if err != nil {
		t.Fatal(err)
	}
	if code, body := submitAs(t, url, id, head, "contributor", creds["contributor"], "k1"); code != http.StatusCreated {
		t.Fatalf("first report: %d %s", code, body)
	}
	wrongCode, wrong := submitAs(t, url, id, head, "bystander", creds["other"], "k1")
	if wrongCode != http.StatusForbidden {
		t.Fatalf("a wrong credential: %d %s", wrongCode, wrong)
	}
	code, body := rawReq(t, url, "POST", "/v1/experiments/"+id+"/credentials/revoke", adminTok, []byte(`{"users":["contributor","bystander","bystander"]}`), nil)
	if code != http.StatusOK || !strings.Contains(body, `"revoked":3`) || !strings.Contains(body, `"newly_revoked":2`) || strings.Contains(body, "contributor") {
		t.Fatalf("revoke: %d %s", code, body)
	}
	check := func(when string) {
		t.Helper()
		for _, u := range []string{"contributor", "bystander"} {
			for _, idem := range []string{"k1", "k2"} {
				if code, body := submitAs(t, url, id, head, u, creds[u], idem); code != wrongCode || body != wrong {
					t.Errorf("%s: revoked %s (key %s): %d %s, a wrong credential gets %d %s", when, u, idem, code, body, wrongCode, wrong)
				}
			}
		}
		if code, body := submitAs(t, url, id, head, "other", creds["other"], "k1"); code != http.StatusCreated && code != http.StatusOK {
			t.Errorf("%s: a user not revoked: %d %s", when, code, body)
		}
		item, _ := json.Marshal(map[string]any{"reports": []map[string]any{{"user": "contributor", "credential": creds["contributor"], "idempotency_key": "k1",
			"report": protocol.Trajectory{Header: head, States: make([]int, 6), Actions: make([]int, 5), Rewards: make([]float64, 5)}}}})
		code, body := rawReq(t, url, "POST", "/v1/experiments/"+id+"/reports/batch", clientTok, item, nil)
		if code != http.StatusOK || !strings.Contains(body, `"status":403`) || !strings.Contains(body, "not this user's credential") {
			t.Errorf("%s: a revoked user in a batch: %d %s", when, code, body)
		}
	}
	check("after the revocation")
	for _, bad := range []struct{ tok, body string }{
		{clientTok, `{"users":["x"]}`}, {adminTok, `{"users":[]}`}, {adminTok, `{"users":["a b"]}`}, {adminTok, `{"user":["x"]}`},
	} {
		if code, body := rawReq(t, url, "POST", "/v1/experiments/"+id+"/credentials/revoke", bad.tok, []byte(bad.body), nil); code/100 != 4 || !strings.Contains(body, `"field"`) {
			t.Errorf("revoke %s: %d %s", bad.body, code, body)
		}
	}
	stop()
	c, url, _ = liveURL(t, dir, true)
	check("after a restart")
	led, err := c.Ledger(ctx, id)
	if err != nil || led.UsersServed != 2 {
		t.Errorf("%d users served (%v), want 2", led.UsersServed, err)
	}
}

// TestRotateKey: rotating the credential key (offline) keeps every experiment, its log, its
// ledger and policy and the participation index; credentials minted before are refused and
// new ones work; a user who contributed before the rotation is still refused a second
// contribution (409) with her new credential, and her retry is recognised.
func TestRotateKey(t *testing.T) {
	dir := t.TempDir()
	c, url, stop := liveURL(t, dir, true)
	ctx := context.Background()
	id := createRiverSwim(t, c, "practical-jdp", 100)
	if _, err := client.Simulate(ctx, c, client.SimOptions{Experiment: id, Registry: registry(), Users: 5, Seed: seedp(3)}); err != nil {
		t.Fatal(err)
	}
	head := header(t, c, id)
	old, err := c.Credentials(ctx, id, []string{"sim-2", "fresh", "revoked"})
	if err != nil {
		t.Fatal(err)
	}
	rawReq(t, url, "POST", "/v1/experiments/"+id+"/credentials/revoke", adminTok, []byte(`{"users":["revoked"]}`), nil)
	state := func() string {
		_, l := rawReq(t, url, "GET", "/v1/experiments", "", nil, nil)
		return l + string(policy(t, c, id))
	}
	before := state()
	stop()
	if _, err := service.RotateKey(dir, time.Second); err != nil {
		t.Fatal(err)
	}
	v, err := service.RotateKey(dir, time.Second)
	if err != nil || v != 3 {
		t.Fatalf("second rotation: version %d, %v", v, err)
	}
	if _, err := service.RotateKey(t.TempDir(), time.Second); err == nil {
		t.Error("rotate-key on an empty directory: no error")
	}
	c, url, _ = liveURL(t, dir, true)
	if after := state(); after != before {
		t.Fatalf("the rotation changed the public state:\n%s\n%s", before, after)
	}
	code, body := submitAs(t, url, id, head, "fresh", old["fresh"], "k")
	if code != http.StatusForbidden || !strings.Contains(body, "rotated") {
		t.Errorf("a credential of before the rotation: %d %s", code, body)
	}
	cur, err := c.Credentials(ctx, id, []string{"sim-2", "fresh", "revoked"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(cur["fresh"], "3.") || cur["fresh"] == old["fresh"] {
		t.Errorf("credentials after two rotations: %q (before %q)", cur["fresh"], old["fresh"])
	}
	if code, body := submitAs(t, url, id, head, "sim-2", cur["sim-2"], "another"); code != http.StatusConflict || !strings.Contains(body, "already_contributed") {
		t.Errorf("a contributor of before the rotation, with a new credential: %d %s", code, body)
	}
	if code, body := submitAs(t, url, id, head, "revoked", cur["revoked"], "k"); code != http.StatusForbidden || !strings.Contains(body, "not this user's credential") {
		t.Errorf("a user revoked before the rotation, with a new credential: %d %s", code, body)
	}
	if code, body := submitAs(t, url, id, head, "fresh", cur["fresh"], "k"); code != http.StatusCreated || !strings.Contains(body, `"sequence":6`) {
		t.Errorf("a new user with a new credential: %d %s", code, body)
	}
	for _, forged := range []string{"2." + strings.TrimPrefix(cur["fresh"], "3."), "1." + old["fresh"], "x." + old["fresh"], "3.", "3"} {
		if code, body := submitAs(t, url, id, head, "fresh", forged, "k"); code != http.StatusForbidden {
			t.Errorf("credential %q: %d %s", forged, code, body)
		}
	}
}
