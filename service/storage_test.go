package service_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/dprl/dprl/agents/protocol"
	"github.com/dprl/dprl/service"
	"github.com/dprl/dprl/service/client"
)

// logLines collects a server's log lines (safe for the committer's goroutines).
type logLines struct {
	mu    sync.Mutex
	lines []string
}

func (l *logLines) logf(f string, a ...any) {
	l.mu.Lock()
	l.lines = append(l.lines, fmt.Sprintf(f, a...))
	l.mu.Unlock()
}

// count is the number of lines containing sub.
func (l *logLines) count(sub string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, s := range l.lines {
		if strings.Contains(s, sub) {
			n++
		}
	}
	return n
}

// has reports whether a line contains sub.
func (l *logLines) has(sub string) bool { return l.count(sub) > 0 }

// get returns the status and body of GET url.
func get(t *testing.T, url string) (int, string) {
	t.Helper()
	return rawReq(t, url, http.MethodGet, "", "", nil, nil)
}

// metric returns the value of an unlabelled metric.
func metric(t *testing.T, base, name string) float64 {
	t.Helper()
	_, body := get(t, base+"/metrics")
	m := regexp.MustCompile(`(?m)^` + name + ` (\S+)$`).FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("metric %s missing", name)
	}
	v, _ := strconv.ParseFloat(m[1], 64)
	return v
}

// waitFor polls cond for up to 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(10 * time.Second); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// trajectory is user u's report to a riverswim experiment of horizon 10.
func trajectory(h protocol.Header, u int) *protocol.Trajectory {
	rep := &protocol.Trajectory{Header: h, States: make([]int, 11), Actions: make([]int, 10), Rewards: make([]float64, 10)}
	for i := range rep.Actions {
		rep.States[i+1], rep.Actions[i] = (u+i)%6, (u*i)%2
		rep.Rewards[i] = float64((u+i)%3) / 2
	}
	return rep
}

// storageFault checks the storage fault path end to end on a server whose commits fail while
// fault is set: reports get 503 and nothing is published; the failure is logged, /readyz
// answers 503, /healthz names it, the status page and the metrics show it; once the fault
// clears the server becomes ready again by itself (no report needed) and takes the refused
// reports again — nothing lost, nothing counted twice, and the published policy is what a
// restart replaying the durable log publishes.
// With exact, every report submitted while the fault is set must be refused; otherwise (a real
// full disk, where a commit that reuses the database's free pages still succeeds) reports are
// submitted until the first is refused.
func storageFault(t *testing.T, dir string, cfg service.Config, logs *logLines, set func(bool), want string, exact bool) {
	ctx := context.Background()
	s, err := service.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s.Handler())
	c := client.New(hs.URL, adminTok, clientTok, hs.Client())
	l, err := c.Create(ctx, client.CreateRequest{Family: "tabular", Agent: "practical-jdp", Env: client.Env{Name: "riverswim", Params: map[string]float64{"horizon": 10}},
		Epsilon: 1, Delta: 1e-5, Capacity: 200})
	if err != nil {
		t.Fatal(err)
	}
	var users []string
	for u := 1; u <= 60; u++ {
		users = append(users, fmt.Sprint("u", u))
	}
	creds, err := c.Credentials(ctx, l.Experiment, users)
	if err != nil {
		t.Fatal(err)
	}
	h := header(t, c, l.Experiment)
	submit := func(u int) (*client.Ack, error) {
		id := fmt.Sprint("u", u)
		return c.Submit(ctx, l.Experiment, client.Submission{User: id, Credential: creds[id], IdempotencyKey: "k" + id, Report: trajectory(h, u), Regret: math.NaN()})
	}
	for u := 1; u <= 20; u++ {
		if _, err := submit(u); err != nil {
			t.Fatal(err)
		}
	}
	if code, _ := get(t, hs.URL+"/readyz"); code != http.StatusOK {
		t.Fatalf("readyz %d before the fault", code)
	}

	set(true)
	refused, next := 0, 21
	for u := 21; u <= 50 && (refused == 0 || exact && u <= 25); u++ {
		_, err := submit(u)
		var e *client.Error
		switch {
		case err == nil && !exact && refused == 0:
			next = u + 1 // committed in free pages of the database
		case !errors.As(err, &e) || e.Status != http.StatusServiceUnavailable:
			t.Fatalf("user %d while commits fail: %v, want 503", u, err)
		default:
			refused++
		}
	}
	if refused == 0 {
		t.Fatal("no report was refused while the disk was full")
	}
	t.Logf("while commits fail: %d reports acknowledged (free pages), %d refused (503)", next-21, refused)
	if code, body := get(t, hs.URL+"/readyz"); code != http.StatusServiceUnavailable || !strings.Contains(body, `"storage"`) {
		t.Errorf("readyz while commits fail: %d %s", code, body)
	}
	if code, body := get(t, hs.URL+"/healthz"); code != http.StatusOK || !strings.Contains(body, want) {
		t.Errorf("healthz while commits fail: %d %s (want 200 naming %q)", code, body, want)
	}
	if _, page := get(t, hs.URL+"/"); !strings.Contains(page, `id="storage">STORAGE FAILING`) || !strings.Contains(page, want) {
		t.Errorf("the status page does not show the storage failure (%q)", want)
	}
	if v := metric(t, hs.URL, "dprl_storage_healthy"); v != 0 {
		t.Errorf("dprl_storage_healthy %g while commits fail", v)
	}
	if v := metric(t, hs.URL, "dprl_commit_failures_total"); v < 1 {
		t.Errorf("dprl_commit_failures_total %g", v)
	}
	if !logs.has("storage: commits are failing (" + want + ")") {
		t.Errorf("the failure was not logged: %q", logs.lines)
	}
	if led, _ := c.Ledger(ctx, l.Experiment); led.UsersServed != next-1 {
		t.Errorf("%d users served, want %d (the refused reports are not counted)", led.UsersServed, next-1)
	}

	set(false)
	waitFor(t, "readyz 200 after the fault cleared", func() bool { code, _ := get(t, hs.URL+"/readyz"); return code == http.StatusOK })
	if !logs.has("storage: commits succeed again") {
		t.Error("the recovery was not logged")
	}
	if _, page := get(t, hs.URL+"/"); !strings.Contains(page, `id="storage">Storage: commits succeed.`) {
		t.Error("the status page still shows a storage failure")
	}
	if v := metric(t, hs.URL, "dprl_storage_healthy"); v != 1 {
		t.Errorf("dprl_storage_healthy %g after recovery", v)
	}
	for u := next; u <= 60; u++ {
		a, err := submit(u)
		if err != nil {
			t.Fatalf("user %d after recovery: %v", u, err)
		}
		if a.Replayed || a.Sequence != uint64(u) {
			t.Fatalf("user %d: sequence %d (replayed %v), want %d: a report was lost or doubled", u, a.Sequence, a.Replayed, u)
		}
	}
	final := policy(t, c, l.Experiment)
	hs.Close()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// A restart replays the durable log: it must publish exactly what the live server did.
	cfg.Dir = dir
	s2, err := service.New(testConfig(dir))
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	c2 := client.New(serverURL(t, s2), adminTok, clientTok, nil)
	if led, _ := c2.Ledger(ctx, l.Experiment); led.UsersServed != 60 {
		t.Errorf("%d users served after the restart, want 60", led.UsersServed)
	}
	if p := policy(t, c2, l.Experiment); !bytes.Equal(p, final) {
		t.Errorf("the restarted server publishes another policy than the live one (after a failed commit the rebuilt curator is not in step with the log):\n%s\n%s", p, final)
	}
}

// TestInjectedCommitFailure: commits failing inside the store's transaction (an injected
// "no space left on device" before the commit) — see storageFault.
func TestInjectedCommitFailure(t *testing.T) {
	dir := t.TempDir()
	var fault atomic.Bool
	logs := &logLines{}
	cfg := testConfig(dir)
	cfg.Logf = logs.logf
	service.SetCommitFault(&cfg, func() error {
		if fault.Load() {
			return &os.PathError{Op: "write", Path: "dprl.db", Err: syscall.ENOSPC}
		}
		return nil
	})
	service.SetProbeInterval(&cfg, 20*time.Millisecond)
	storageFault(t, dir, cfg, logs, fault.Store, "the disk is full", true)
}

// TestFullDisk: the storage fault path on a real full disk — a small tmpfs that .ci/tmpfs-test
// mounts (as root) and names in DPRL_TMPFS_DIR; see storageFault. The disk is filled by a file
// of this test's own, removed to give the space back.
func TestFullDisk(t *testing.T) {
	tmpfs := os.Getenv("DPRL_TMPFS_DIR")
	if tmpfs == "" {
		t.Skip("needs DPRL_TMPFS_DIR, a small file system to fill: .ci/tmpfs-test mounts one and runs this test")
	}
	dir, err := os.MkdirTemp(tmpfs, "data-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	filler := filepath.Join(tmpfs, "filler-"+filepath.Base(dir))
	t.Cleanup(func() { os.Remove(filler) })
	fill := func(on bool) {
		if !on {
			if err := os.Remove(filler); err != nil {
				t.Fatal(err)
			}
			return
		}
		f, err := os.Create(filler)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		chunk := bytes.Repeat([]byte{1}, 64<<10)
		for {
			if _, err := f.Write(chunk); err != nil {
				if !errors.Is(err, syscall.ENOSPC) {
					t.Fatal(err)
				}
				break
			}
		}
		for _, n := range []int{4096, 512, 1} { // the last partial pages
			for {
				if _, err := f.Write(chunk[:n]); err != nil {
					break
				}
			}
		}
	}
	logs := &logLines{}
	cfg := testConfig(dir)
	cfg.Logf = logs.logf
	service.SetProbeInterval(&cfg, 20*time.Millisecond)
	storageFault(t, dir, cfg, logs, fill, "the disk is full", false)
}

// serveUnchecked serves a server built from cfg behind httptest until the test's cleanups,
// which close the HTTP server, then the server (its Close error is not checked: these tests
// leave it failing or damaged).
func serveUnchecked(t *testing.T, cfg service.Config) *httptest.Server {
	t.Helper()
	s, err := service.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	hs := httptest.NewServer(s.Handler())
	t.Cleanup(hs.Close)
	return hs
}

// rawRequest sends a request's head and the first part of its body on a new connection and
// returns the connection (the rest of the body is not sent: the server holds the request).
func rawRequest(t *testing.T, base, path string, length int, part []byte) net.Conn {
	t.Helper()
	u, _ := url.Parse(base)
	conn, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	head := fmt.Sprintf("POST %s HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\n", path, clientTok)
	if length >= 0 {
		head += fmt.Sprintf("Content-Length: %d\r\n\r\n", length)
	} else {
		head += "Transfer-Encoding: chunked\r\n\r\n" + fmt.Sprintf("%x\r\n", len(part))
	}
	if _, err := conn.Write(append([]byte(head), part...)); err != nil {
		t.Fatal(err)
	}
	return conn
}

// postBody posts body to path with the client token and returns the status, Retry-After and
// the error code of the answer.
func postBody(t *testing.T, base, path string, body []byte) (int, string, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, base+path, bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+clientTok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var e struct {
		Error struct{ Code, Field string } `json:"error"`
	}
	json.NewDecoder(resp.Body).Decode(&e)
	return resp.StatusCode, resp.Header.Get("Retry-After"), e.Error.Code
}

// TestInflightBudget: request bodies are reserved in the server-wide budget before they are
// read — by Content-Length, or the route's maximum (at most the budget) for a chunked body —
// a body that does not fit is answered 503 with Retry-After and the JSON error before any of
// it is read, and the reservation is released when the handler returns.
func TestInflightBudget(t *testing.T) {
	cfg := testConfig(t.TempDir())
	cfg.MaxInflightBytes = 10000
	// Cleanups run last first: the held connections close, then the HTTP server, then the server.
	hs := serveUnchecked(t, cfg)
	c := client.New(hs.URL, adminTok, clientTok, hs.Client())
	l, err := c.Create(context.Background(), client.CreateRequest{Family: "tabular", Agent: "practical-jdp", Env: client.Env{Name: "riverswim", Params: map[string]float64{"horizon": 10}},
		Epsilon: 1, Delta: 1e-5, Capacity: 100})
	if err != nil {
		t.Fatal(err)
	}
	batch := "/v1/experiments/" + l.Experiment + "/reports/batch"
	if v := metric(t, hs.URL, "dprl_inflight_body_limit_bytes"); v != 10000 {
		t.Fatalf("budget %g, want 10000", v)
	}

	held := rawRequest(t, hs.URL, batch, 8000, []byte(`{"reports":[`))
	waitFor(t, "the held body reserved", func() bool { return metric(t, hs.URL, "dprl_inflight_body_bytes") == 8000 })
	big := []byte(`{"reports":[]}` + strings.Repeat(" ", 3986)) // 4000 bytes: does not fit beside 8000
	if code, ra, ec := postBody(t, hs.URL, batch, big); code != http.StatusServiceUnavailable || ra == "" || ec != "busy" {
		t.Errorf("a body beyond the budget: %d, Retry-After %q, code %q; want 503, a Retry-After, busy", code, ra, ec)
	}
	if code, _, _ := postBody(t, hs.URL, batch, []byte(`{"reports":[]}`)); code != http.StatusBadRequest {
		t.Errorf("a small body that fits: %d, want 400 (read and refused for being empty)", code)
	}
	if v := metric(t, hs.URL, "dprl_inflight_refused_total"); v != 1 {
		t.Errorf("dprl_inflight_refused_total %g, want 1", v)
	}
	// Finishing the held body releases its reservation when its handler returns.
	held.Write(append([]byte(`]}`), bytes.Repeat([]byte(" "), 8000-len(`{"reports":[`)-2)...))
	if resp, err := http.ReadResponse(bufio.NewReader(held), nil); err != nil || resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("the held request: %v %v", resp, err)
	}
	waitFor(t, "the reservation released", func() bool { return metric(t, hs.URL, "dprl_inflight_body_bytes") == 0 })
	if code, _, _ := postBody(t, hs.URL, batch, big); code != http.StatusBadRequest {
		t.Errorf("the 4000-byte body once the budget is free: %d, want 400", code)
	}

	// A chunked body (length unknown) reserves the route's maximum, here the whole budget.
	chunked := rawRequest(t, hs.URL, batch, -1, []byte(`{"reports":[`))
	waitFor(t, "the chunked body reserved", func() bool { return metric(t, hs.URL, "dprl_inflight_body_bytes") == 10000 })
	if code, ra, _ := postBody(t, hs.URL, batch, []byte(`{"reports":[]}`)); code != http.StatusServiceUnavailable || ra == "" {
		t.Errorf("any body beside a chunked one holding the budget: %d (Retry-After %q), want 503", code, ra)
	}
	chunked.Close()
	waitFor(t, "the chunked reservation released", func() bool { return metric(t, hs.URL, "dprl_inflight_body_bytes") == 0 })
}

// TestDamagedWhileServing: a database damaged under a running server (here truncated) is found
// at the next read, refused without a crash, and reported: /healthz and /readyz answer 503 (no
// retry heals it; a restart then exits 2 naming the damage), and the page says so.
func TestDamagedWhileServing(t *testing.T) {
	dir := t.TempDir()
	logs := &logLines{}
	cfg := testConfig(dir)
	cfg.Logf = logs.logf
	service.SetProbeInterval(&cfg, 20*time.Millisecond)
	hs := serveUnchecked(t, cfg)
	ctx := context.Background()
	c := client.New(hs.URL, adminTok, clientTok, hs.Client())
	l, err := c.Create(ctx, client.CreateRequest{Family: "tabular", Agent: "practical-jdp", Env: client.Env{Name: "riverswim", Params: map[string]float64{"horizon": 10}},
		Epsilon: 1, Delta: 1e-5, Capacity: 100})
	if err != nil {
		t.Fatal(err)
	}
	creds, _ := c.Credentials(ctx, l.Experiment, []string{"a", "b"})
	h := header(t, c, l.Experiment)
	if _, err := c.Submit(ctx, l.Experiment, client.Submission{User: "a", Credential: creds["a"], IdempotencyKey: "k", Report: trajectory(h, 1), Regret: math.NaN()}); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(filepath.Join(dir, "dprl.db"), 4096); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Submit(ctx, l.Experiment, client.Submission{User: "b", Credential: creds["b"], IdempotencyKey: "k", Report: trajectory(h, 2), Regret: math.NaN()}); err == nil {
		t.Fatal("a report was acknowledged by a server whose database is truncated")
	}
	waitFor(t, "healthz 503", func() bool { code, _ := get(t, hs.URL+"/healthz"); return code == http.StatusServiceUnavailable })
	if code, _ := get(t, hs.URL+"/readyz"); code != http.StatusServiceUnavailable {
		t.Errorf("readyz %d with a damaged database", code)
	}
	if _, page := get(t, hs.URL+"/"); !strings.Contains(page, "the database is damaged") {
		t.Error("the status page does not say that the database is damaged")
	}
	if !logs.has("is damaged") {
		t.Error("the damage was not logged")
	}
}
