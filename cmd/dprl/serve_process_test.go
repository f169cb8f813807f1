package main

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dprl/dprl/internal/childproc"
)

// The tests of `dprl serve` run it as a real process: this file starts, stops, kills and
// restarts those processes, and holds the client calls the tests make of them.

const (
	testAdmin  = "test-admin-token-0123456789"
	testClient = "test-client-token-0123456789"
)

// serveProcess is `dprl serve` running as a real process (this test binary re-executed).
type serveProcess struct {
	cmd *exec.Cmd
	url string
}

// startServe starts `dprl serve --seeded` on data at addr ("127.0.0.1:0" for any port) and
// waits until it listens.
func startServe(t *testing.T, data, addr string) *serveProcess {
	t.Helper()
	useTestTokens(t)
	return startServeArgs(t, []string{"serve", "--seeded", "--data", data, "--addr", addr})
}

// useTestTokens puts the test tokens in the environment ($DPRL_ADMIN_TOKEN,
// $DPRL_CLIENT_TOKEN) for the rest of the test: tokens never go on a command line.
func useTestTokens(t *testing.T) {
	t.Setenv("DPRL_ADMIN_TOKEN", testAdmin)
	t.Setenv("DPRL_CLIENT_TOKEN", testClient)
}

// startServeArgs starts `dprl <args>` (a serve command) and waits until it listens.
func startServeArgs(t *testing.T, args []string) *serveProcess {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCLIHelper$")
	cmd.Env = append(os.Environ(), "DPRL_TEST_CLI=1", "DPRL_TEST_ARGS="+strings.Join(args, "\x1f"))
	url := childproc.Start(t, cmd, "dprl "+strings.Join(args, " "), "listening on ", 60*time.Second, nil, nil)
	return &serveProcess{cmd: cmd, url: url}
}

// stop sends SIGTERM and waits: the server drains and exits 0.
func (p *serveProcess) stop(t *testing.T) {
	t.Helper()
	p.cmd.Process.Signal(syscall.SIGTERM)
	if err := p.cmd.Wait(); err != nil {
		t.Fatalf("dprl serve after SIGTERM: %v", err)
	}
}

// kill sends SIGKILL and waits for the process to be gone.
func (p *serveProcess) kill() {
	p.cmd.Process.Signal(syscall.SIGKILL)
	p.cmd.Wait()
}

// fixedServer is a `dprl serve --seeded` process on the data directory data at a fixed
// address, restarted on the same ones after a kill; extra are its further flags (--store
// postgres://… for a server of a shared database).
type fixedServer struct {
	addr, data string
	extra      []string
	p          *serveProcess
}

// startFixed starts a fixedServer on data at a free address (the test tokens in the
// environment).
func startFixed(t *testing.T, data string, extra ...string) *fixedServer {
	t.Helper()
	useTestTokens(t)
	s := &fixedServer{addr: freeAddr(t), data: data, extra: extra}
	s.start(t)
	return s
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// start (re)starts the server at its address on its data directory.
func (s *fixedServer) start(t *testing.T) {
	t.Helper()
	s.p = startServeArgs(t, append([]string{"serve", "--seeded", "--data", s.data, "--addr", s.addr}, s.extra...))
}

func (s *fixedServer) base() string { return "http://" + s.addr }

func (s *fixedServer) kill() { s.p.kill() }

// restart kills the server with SIGKILL and starts it again.
func (s *fixedServer) restart(t *testing.T) {
	t.Helper()
	s.kill()
	s.start(t)
}

// startShared starts n servers on the database at url (the test tokens in the environment).
func startShared(t *testing.T, url string, n int, extra ...string) []*fixedServer {
	t.Helper()
	var out []*fixedServer
	for i := 0; i < n; i++ {
		out = append(out, startFixed(t, filepath.Join(t.TempDir(), "data"), append([]string{"--store", url}, extra...)...))
	}
	return out
}

// must returns what call (a client's method: c.Create, c.Policy, c.Ledger …) returns for arg,
// failing the test on its error.
func must[A, T any](t *testing.T, call func(context.Context, A) (T, error), arg A) T {
	t.Helper()
	v, err := call(context.Background(), arg)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
