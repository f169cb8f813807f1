package main

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestServeChecksAddressAndTLSFirst: a busy port and a bad TLS certificate are refused as bad
// input (exit 2, naming the flag) before anything is created — no data directory, no tokens
// file — and before "listening" is printed.
func TestServeChecksAddressAndTLSFirst(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	dir := t.TempDir()
	junk := filepath.Join(dir, "junk.pem")
	if err := os.WriteFile(junk, []byte("not a certificate\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		args []string
		flag string
	}{
		{"busy port", []string{"--addr", busy.Addr().String()}, "--addr"},
		{"bad address", []string{"--addr", "127.0.0.1:notaport"}, "--addr"},
		{"bad certificate", []string{"--addr", "127.0.0.1:0", "--tls-cert", junk, "--tls-key", junk}, "--tls-cert"},
		{"missing certificate", []string{"--addr", "127.0.0.1:0", "--tls-cert", filepath.Join(dir, "nope.pem"), "--tls-key", junk}, "--tls-cert"},
		{"certificate without key", []string{"--addr", "127.0.0.1:0", "--tls-cert", junk}, "--tls-key"},
	} {
		t.Run(c.name, func(t *testing.T) {
			data := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-"))
			code, stdout, stderr := runCLI(t, append([]string{"serve", "--data", data}, c.args...)...)
			if code != 2 || !strings.Contains(stderr, c.flag) {
				t.Errorf("exit %d, stderr %q: want 2 naming %s", code, stderr, c.flag)
			}
			if strings.Contains(stdout, "listening") {
				t.Errorf("printed %q before failing", stdout)
			}
			if _, err := os.Stat(data); !os.IsNotExist(err) {
				t.Errorf("the data directory %s was created (%v)", data, err)
			}
		})
	}
}

// TestClientNeedsTokens: `dprl client simulate` without tokens says where they are (exit 2,
// before any request) instead of failing with the server's 401; --data names a directory
// without tokens.json as the cause.
func TestClientNeedsTokens(t *testing.T) {
	t.Setenv("DPRL_ADMIN_TOKEN", "")
	t.Setenv("DPRL_CLIENT_TOKEN", "")
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "--data DIR"},
		{[]string{"--data", dir}, "--data: " + filepath.Join(dir, "tokens.json") + " does not exist"},
		{[]string{"--admin-token", testAdmin}, "--admin-token: tokens are never taken on the command line"},
	} {
		args := append([]string{"client", "simulate", "--server", "http://127.0.0.1:1"}, c.args...)
		if code, _, stderr := runCLI(t, args...); code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("%q: exit %d, stderr %q; want 2 naming %q", args, code, stderr, c.want)
		}
	}
}

// TestClientSimulateMismatchAndReplays: simulating users of another environment than the
// experiment's is refused before any user plays (exit 2 naming the mismatch), where it used
// to panic; a second run with the same users reports their reports as replays (200 replayed),
// not as acknowledged.
func TestClientSimulateMismatchAndReplays(t *testing.T) {
	useTestTokens(t)
	srv := startServeArgs(t, []string{"serve", "--data", filepath.Join(t.TempDir(), "data"), "--addr", "127.0.0.1:0"})
	base := []string{"client", "simulate", "--server", srv.url}
	code, stdout, stderr := runCLI(t, append(base, "--env", "riverswim", "--env-param", "horizon=5", "--capacity", "20", "--users", "5")...)
	if code != 0 || !strings.Contains(stdout, "5 reports acknowledged,") {
		t.Fatalf("first run: exit %d: %s%s", code, stdout, stderr)
	}
	exp := strings.TrimSuffix(strings.Fields(stdout)[1], ":")
	for _, env := range [][]string{{"--env", "riverswim", "--env-param", "horizon=7"}, {"--env", "garnet"}} {
		code, stdout, stderr = runCLI(t, append(append(base, "--experiment", exp, "--users", "3"), env...)...)
		if code != 2 || !strings.Contains(stderr, "does not fit experiment "+exp) || !strings.Contains(stderr, "header.dims.") || strings.Contains(stderr+stdout, "panic") {
			t.Errorf("%q: exit %d: %s%s; want 2 naming the mismatch", env, code, stdout, stderr)
		}
	}
	code, stdout, stderr = runCLI(t, append(base, "--experiment", exp, "--users", "7")...)
	if code != 0 || !strings.Contains(stdout, "2 reports acknowledged, 5 replays") {
		t.Errorf("second run with the same users: exit %d: %s%s; want 2 acknowledged and 5 replays", code, stdout, stderr)
	}
}
