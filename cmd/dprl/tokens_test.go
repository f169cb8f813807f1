package main

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dprl/dprl/agents/protocol"
	"github.com/dprl/dprl/service/client"
)

// TestTokensNeverOnTheCommandLine: a token flag of dprl serve or dprl client simulate is
// refused with exit status 2 and a message naming the alternatives (never quoting the token),
// before anything is created; a tokens file readable by others is refused; one of mode 0600
// is used.
func TestTokensNeverOnTheCommandLine(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("DPRL_ADMIN_TOKEN", "")
	t.Setenv("DPRL_CLIENT_TOKEN", "")
	const secret = "a-secret-token-on-argv-0123456789"
	data := filepath.Join(dir, "data")
	open := filepath.Join(dir, "open.json")
	os.WriteFile(open, []byte(`{"admin":"`+testAdmin+`","client":"`+testClient+`"}`), 0o644)
	os.Chmod(open, 0o644)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"serve", "--data", data, "--admin-token", secret, "--client-token", secret + "x"}, "--admin-token: tokens are never taken on the command line"},
		{[]string{"serve", "--data", data, "--client-token", secret}, "--client-token: tokens are never taken on the command line"},
		{[]string{"client", "simulate", "--experiment", "x", "--client-token", secret}, "$DPRL_CLIENT_TOKEN"},
		{[]string{"client", "simulate", "--experiment", "x", "--admin-token", secret}, "--tokens-file"},
		{[]string{"serve", "--data", data, "--tokens-file", open}, "chmod 600"},
		{[]string{"client", "simulate", "--experiment", "x", "--tokens-file", open}, "mode 0644"},
		{[]string{"serve", "--data", data, "--tokens-file", filepath.Join(dir, "missing.json")}, "--tokens-file"},
	} {
		code, stdout, stderr := runCLI(t, c.args...)
		if code != 2 || !strings.Contains(stderr, c.want) || strings.Contains(stdout+stderr, secret) || strings.Contains(stderr, testAdmin) {
			t.Errorf("dprl %s: exit %d, %s", strings.Join(c.args, " "), code, stderr)
		}
	}
	if _, err := os.Stat(data); !os.IsNotExist(err) {
		t.Errorf("a refused serve created its data directory (%v)", err)
	}
	// A tokens file of mode 0600 is used (the environment is empty).
	tf := filepath.Join(dir, "tokens.json")
	if err := os.WriteFile(tf, []byte(`{"admin":"`+testAdmin+`","client":"`+testClient+`"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	p := startServeArgs(t, []string{"serve", "--seeded", "--data", data, "--addr", "127.0.0.1:0", "--tokens-file", tf})
	c := client.New(p.url, testAdmin, testClient, nil)
	seed := uint64(1)
	l, err := c.Create(context.Background(), client.CreateRequest{Family: "tabular", Agent: "practical-jdp", Env: client.Env{Name: "riverswim"}, Epsilon: 1, Delta: 1e-5, Capacity: 20, Seed: &seed})
	if err != nil {
		t.Fatalf("the tokens of the file: %v", err)
	}
	code, stdout, stderr := runCLI(t, "client", "simulate", "--server", p.url, "--experiment", l.Experiment, "--users", "3", "--seed", "1", "--tokens-file", tf)
	if code != 0 {
		t.Errorf("client simulate --tokens-file: exit %d %s %s", code, stdout, stderr)
	}
	p.stop(t)
	if _, err := os.Stat(filepath.Join(data, "tokens.json")); !os.IsNotExist(err) {
		t.Errorf("tokens generated in the data directory although a tokens file was given (%v)", err)
	}
}

// TestServeRotateKey: `dprl serve rotate-key` refuses a data directory in use (exit 2) and one
// without a database; on a stopped server's directory it rotates the credential key: after a
// restart the experiment and its ledger are unchanged, a credential minted before is refused,
// a new one works, and a user who contributed before is still refused a second report.
func TestServeRotateKey(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	p := startServe(t, data, "127.0.0.1:0")
	ctx := context.Background()
	c := client.New(p.url, testAdmin, testClient, nil)
	seed := uint64(1)
	l := must(t, c.Create, riverSwimJDP(5, 20, &seed, false))
	pol, err := c.Policy(ctx, l.Experiment)
	if err != nil {
		t.Fatal(err)
	}
	rep := &protocol.Trajectory{Header: pol.Header, States: make([]int, 6), Actions: make([]int, 5), Rewards: make([]float64, 5)}
	old, err := c.Credentials(ctx, l.Experiment, []string{"early", "late"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Submit(ctx, l.Experiment, client.Submission{User: "early", Credential: old["early"], IdempotencyKey: "1", Report: rep, Regret: math.NaN()}); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runCLI(t, "serve", "rotate-key", "--data", data); code != 2 || !strings.Contains(stderr, "in use") {
		t.Errorf("rotate-key while served: exit %d %s", code, stderr)
	}
	if code, _, stderr := runCLI(t, "serve", "rotate-key", "--data", filepath.Join(dir, "none")); code != 2 || !strings.Contains(stderr, "--data") {
		t.Errorf("rotate-key without a database: exit %d %s", code, stderr)
	}
	led1, _ := json.Marshal(must(t, c.Ledger, l.Experiment))
	p.stop(t)
	code, stdout, stderr := runCLI(t, "serve", "rotate-key", "--data", data)
	if code != 0 || !strings.Contains(stdout, "credential key version 2") {
		t.Fatalf("rotate-key: exit %d %s %s", code, stdout, stderr)
	}
	p = startServe(t, data, "127.0.0.1:0")
	c = client.New(p.url, testAdmin, testClient, nil)
	if led2, _ := json.Marshal(must(t, c.Ledger, l.Experiment)); string(led2) != string(led1) {
		t.Errorf("the ledger changed:\n%s\n%s", led1, led2)
	}
	_, err = c.Submit(ctx, l.Experiment, client.Submission{User: "late", Credential: old["late"], IdempotencyKey: "1", Report: rep, Regret: math.NaN()})
	if !client.IsCode(err, "forbidden") {
		t.Errorf("a credential of before the rotation: %v", err)
	}
	cur, err := c.Credentials(ctx, l.Experiment, []string{"early", "late"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Submit(ctx, l.Experiment, client.Submission{User: "late", Credential: cur["late"], IdempotencyKey: "1", Report: rep, Regret: math.NaN()}); err != nil {
		t.Errorf("a new credential: %v", err)
	}
	_, err = c.Submit(ctx, l.Experiment, client.Submission{User: "early", Credential: cur["early"], IdempotencyKey: "2", Report: rep, Regret: math.NaN()})
	if !client.IsCode(err, "already_contributed") {
		t.Errorf("a contributor of before the rotation with a new credential: %v", err)
	}
	if a, err := c.Submit(ctx, l.Experiment, client.Submission{User: "early", Credential: cur["early"], IdempotencyKey: "1", Report: rep, Regret: math.NaN()}); err != nil || !a.Replayed || a.Sequence != 1 {
		t.Errorf("her retry of before the rotation, with a new credential: %+v %v", a, err)
	}
	p.stop(t)
}

// TestServeBackup: `dprl serve backup` through the running server (--server; the admin token
// from the environment) and from a stopped server's directory; an existing file is refused
// unless --replace, and the restored directory serves the same ledger (service's
// TestBackupRestore checks a backup taken under load).
func TestServeBackup(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	p := startServe(t, data, "127.0.0.1:0")
	c := client.New(p.url, testAdmin, testClient, nil)
	l := must(t, c.Create, riverSwimJDP(5, 20, nil, false))
	out := filepath.Join(dir, "backup.db")
	if code, _, stderr := runCLI(t, "serve", "backup", "--data", data, "--out", out); code != 2 || !strings.Contains(stderr, "--server") {
		t.Errorf("offline backup while served: exit %d %s", code, stderr)
	}
	if code, stdout, stderr := runCLI(t, "serve", "backup", "--data", data, "--server", p.url, "--out", out); code != 0 || !strings.Contains(stdout, "checked") {
		t.Fatalf("backup through the server: exit %d %s %s", code, stdout, stderr)
	}
	if code, _, stderr := runCLI(t, "serve", "backup", "--data", data, "--server", p.url, "--out", out); code != 2 || !strings.Contains(stderr, "--replace") {
		t.Errorf("backup over an existing file: exit %d %s", code, stderr)
	}
	led1, _ := json.Marshal(must(t, c.Ledger, l.Experiment))
	p.stop(t)
	if code, _, stderr := runCLI(t, "serve", "backup", "--data", data, "--out", out, "--replace"); code != 0 {
		t.Fatalf("offline backup with --replace: exit %d %s", code, stderr)
	}
	restored := filepath.Join(dir, "restored")
	if err := os.MkdirAll(restored, 0o700); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(restored, "dprl.db"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	p = startServe(t, restored, "127.0.0.1:0")
	c = client.New(p.url, testAdmin, testClient, nil)
	if led2, _ := json.Marshal(must(t, c.Ledger, l.Experiment)); string(led2) != string(led1) {
		t.Errorf("the restored ledger differs:\n%s\n%s", led1, led2)
	}
	p.stop(t)
}
