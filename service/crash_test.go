package service

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/dprl/dprl/agents/protocol"
	"github.com/dprl/dprl/experiment/engine"
	"github.com/dprl/dprl/experiment/engine/servetest"
	"github.com/dprl/dprl/experiment/families"
	"github.com/dprl/dprl/internal/childproc"
	"github.com/dprl/dprl/internal/longtest"
	"github.com/dprl/dprl/service/client"
	"github.com/dprl/dprl/service/servicetest"
	"github.com/dprl/dprl/service/store"
)

// The crash-point harness. A crash case is a served experiment, a point of the commit path and
// the report at which to crash there: the test binary re-executes itself as a server (TestMain
// with crashChildEnv, which exists only in this test binary) whose fault hook, at the first
// occurrence of the point at or after the n-th received report, tells the parent and waits;
// the parent records everything a client can see at that instant (policy with and without
// If-None-Match, ledger, metrics, page), then the child SIGKILLs itself. A server restarted on
// the same data directory must show every version seen before with the same content, never
// less than was seen, and take the rest of the users (new ones first, so that other reports
// fill the log positions of the lost ones, then the unanswered ones again): no acknowledged
// report lost or counted twice, and every version ever seen equal to the one an uninterrupted
// curator fed the final log publishes (so no release was shown for two histories).

const crashChildEnv = "DPRL_TEST_CRASH_CHILD"

func TestMain(m *testing.M) {
	if cfg := os.Getenv(crashChildEnv); cfg != "" {
		os.Exit(crashChild(cfg))
	}
	code := m.Run()
	runAtExit()
	os.Exit(code)
}

// crashConfig is what the parent tells a crash child.
type crashConfig struct {
	Dir    string    `json:"dir"`
	Point  hookPoint `json:"point"`
	Report int       `json:"report"`
}

// crashChild is the re-executed server: it serves on a free port (printing "listening URL");
// at the crash point it prints "crash N" and holds the committer there; it kills itself with
// SIGKILL when the parent writes a line or closes its stdin (so no child outlives its test).
func crashChild(raw string) int {
	var cfg crashConfig
	if err := json.Unmarshal([]byte(raw), &cfg); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	var mu sync.Mutex
	received := 0
	hooks := &faultHooks{f: func(p hookPoint) error {
		mu.Lock()
		defer mu.Unlock()
		if p == hookAfterReceive {
			received++
		}
		if p == cfg.Point && received >= cfg.Report {
			fmt.Printf("crash %d\n", received)
			select {} // held at the crash point until the parent's word kills the process
		}
		return nil
	}}
	go func() {
		// A line from the parent (or its end) kills this process at once, wherever the
		// committer is: SIGKILL, no deferred function, no flush.
		bufio.NewReader(os.Stdin).ReadString('\n')
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
	}()
	s, err := New(Config{Dir: cfg.Dir, Registry: families.New(), AdminToken: crashAdmin, ClientToken: crashClient, hooks: hooks})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	fmt.Printf("listening http://%s\n", ln.Addr())
	http.Serve(ln, s.Handler())
	return 1
}

const (
	crashAdmin  = "crash-admin-token-0123456789"
	crashClient = "crash-client-token-0123456789"
)

// crashPoints are the commit path's steps, in order, with their names.
var crashPoints = []struct {
	p    hookPoint
	name string
}{
	{hookAfterReceive, "after-receive"},
	{hookAfterStage, "after-stage"},
	{hookBeforeAppend, "before-append"},
	{hookBeforeCommit, "before-commit"},
	{hookAfterCommit, "after-commit"},
	{hookAfterAppend, "after-append"},
	{hookAfterPublish, "after-publish"},
}

// crashFamily is a served experiment of the harness and its users' reports.
type crashFamily struct {
	name string
	req  client.CreateRequest
}

// crashFamilies are the practical agents of every servable family (small environments).
var crashFamilies = []crashFamily{
	{"tabular-practical-jdp", client.CreateRequest{Family: "tabular", Agent: "practical-jdp", Env: client.Env{Name: "riverswim", Params: map[string]float64{"horizon": 5}}}},
	{"tabular-practical-ldp", client.CreateRequest{Family: "tabular", Agent: "practical-ldp", Env: client.Env{Name: "riverswim", Params: map[string]float64{"horizon": 5}}}},
	{"linmdp-practical-lsvi", client.CreateRequest{Family: "linmdp", Agent: "practical-lsvi", Env: client.Env{Name: "latentriver", Params: map[string]float64{"m": 2, "copies": 3, "horizon": 5}}}},
	{"linmix-practical-vtr-jdp", client.CreateRequest{Family: "linmix", Agent: "practical-vtr/jdp", Env: client.Env{Name: "two-state-hard", Params: map[string]float64{"dim": 3, "horizon": 4}}}},
	{"linmix-practical-vtr-ldp", client.CreateRequest{Family: "linmix", Agent: "practical-vtr/ldp", Env: client.Env{Name: "two-state-hard", Params: map[string]float64{"dim": 3, "horizon": 4}}}},
	{"lq-practical-ofu-rl", client.CreateRequest{Family: "lq", Agent: "practical-ofu-rl"}},
}

const (
	crashK     = 40 // the experiments' K
	crashUsers = 16 // users played per case
	crashPer   = 2  // users per batch submission
)

// crashReports plays crashUsers users of f in process (seed 7) and returns their reports'
// JSON: valid reports of the family, whatever policy the server publishes.
func crashReports(t *testing.T, f crashFamily) [][]byte {
	t.Helper()
	spec := engine.RunSpec{Family: f.req.Family, Name: "crash", Agents: []string{f.req.Agent}, Runs: engine.Runs{Episodes: crashK, Seeds: []uint64{7}},
		Env: engine.EnvSpec{Name: f.req.Env.Name, Params: f.req.Env.Params}, Privacy: engine.PrivacySpec{Epsilons: []float64{1}, Delta: 1e-5}}
	if err := spec.Validate(); err != nil {
		t.Fatal(err)
	}
	sv, err := engine.CheckServed(families.New(), &spec)
	if err != nil {
		t.Fatal(err)
	}
	reps := servetest.PlayReports(t, sv, &spec, engine.Streams{Seed: 7}, crashUsers)
	out := make([][]byte, len(reps))
	for i, rep := range reps {
		var err error
		if out[i], err = protocol.EncodeJSON(rep); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// observer is what the clients ever saw of one experiment, and the checks that nothing seen
// changes or disappears.
type observer struct {
	t       *testing.T
	exp     string
	bodies  map[string][]byte // ETag → the policy body served under it
	version uint64            // the highest version seen
	users   int               // the highest users_served seen
	release map[uint64]int    // every release seen: version → users at its publication
	acks    map[string]uint64 // user → the sequence number acknowledged to her
}

func newObserver(t *testing.T) *observer {
	return &observer{t: t, bodies: map[string][]byte{}, release: map[uint64]int{}, acks: map[string]uint64{}}
}

func get(t *testing.T, url string, hdr map[string]string) (*http.Response, []byte) {
	t.Helper()
	return DoForTest(t, http.MethodGet, url, "", nil, hdr)
}

var (
	metricUsers   = regexp.MustCompile(`(?m)^dprl_users_served\{experiment="[a-z0-9]+"\} (\d+)$`)
	metricVersion = regexp.MustCompile(`(?m)^dprl_policy_version\{experiment="[a-z0-9]+"\} (\d+)$`)
	pageUsers     = regexp.MustCompile(`class="users">(\d+)<`)
	pageVersion   = regexp.MustCompile(`class="version">(\d+) `)
)

// observe reads everything public about the experiment at base (no report is being committed
// or the committer is held at a crash point) and checks it against what was seen before.
func (o *observer) observe(base, when string) {
	t := o.t
	t.Helper()
	resp, body := get(t, base+"/v1/experiments/"+o.exp+"/policy", nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s: policy: %d %s", when, resp.StatusCode, body)
	}
	etag := resp.Header.Get("ETag")
	var p client.Policy
	if err := json.Unmarshal(body, &p); err != nil {
		t.Fatal(err)
	}
	if etag != `"`+strconv.FormatUint(p.Version, 10)+`"` {
		t.Fatalf("%s: ETag %s for version %d", when, etag, p.Version)
	}
	if p.Version < o.version {
		t.Fatalf("%s: version %d published, but version %d was seen before: a published version was withdrawn", when, p.Version, o.version)
	}
	o.version = p.Version
	if old, ok := o.bodies[etag]; ok && !bytes.Equal(old, body) {
		t.Fatalf("%s: the content behind ETag %s changed:\nbefore %s\nnow    %s", when, etag, old, body)
	}
	o.bodies[etag] = body
	// A client holding any ETag seen gets 304 only for the very content it holds.
	for e, b := range o.bodies {
		resp, got := get(t, base+"/v1/experiments/"+o.exp+"/policy", map[string]string{"If-None-Match": e})
		switch {
		case resp.StatusCode == http.StatusNotModified && e != etag:
			t.Fatalf("%s: If-None-Match %s answered 304 while %s is published", when, e, etag)
		case resp.StatusCode == http.StatusNotModified && !bytes.Equal(b, body):
			t.Fatalf("%s: If-None-Match %s answered 304 for new content", when, e)
		case resp.StatusCode == http.StatusOK && !bytes.Equal(got, body):
			t.Fatalf("%s: the policy changed between two reads", when)
		case resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusNotModified:
			t.Fatalf("%s: policy with If-None-Match: %d", when, resp.StatusCode)
		}
	}
	_, lb := get(t, base+"/v1/experiments/"+o.exp+"/ledger", nil)
	var l client.Ledger
	if err := json.Unmarshal(lb, &l); err != nil {
		t.Fatal(err)
	}
	if l.PolicyVersion != p.Version || l.UsersServed < o.users || l.UsersServed < len(o.acks) {
		t.Fatalf("%s: ledger version %d (policy %d), users served %d (seen %d, acknowledged %d)", when, l.PolicyVersion, p.Version, l.UsersServed, o.users, len(o.acks))
	}
	o.users = l.UsersServed
	rel := map[uint64]int{}
	for _, r := range l.Releases {
		rel[r.Version] = r.Users
	}
	for v, u := range o.release {
		if got, ok := rel[v]; !ok || got != u {
			t.Fatalf("%s: release %d (after user %d) seen before, now %d, %v in the ledger", when, v, u, got, ok)
		}
	}
	o.release = rel
	_, mb := get(t, base+"/metrics", nil)
	_, pb := get(t, base+"/", nil)
	for _, c := range []struct {
		what string
		re   *regexp.Regexp
		text []byte
		want int
	}{
		{"metric dprl_users_served", metricUsers, mb, l.UsersServed},
		{"metric dprl_policy_version", metricVersion, mb, int(l.PolicyVersion)},
		{"page users served", pageUsers, pb, l.UsersServed},
		{"page policy version", pageVersion, pb, int(l.PolicyVersion)},
	} {
		m := c.re.FindSubmatch(c.text)
		if m == nil || string(m[1]) != strconv.Itoa(c.want) {
			t.Fatalf("%s: %s %q, the ledger says %d", when, c.what, m, c.want)
		}
	}
}

// submit posts users' reports as one batch submission and records the acknowledgements. It
// returns the users not acknowledged (a 503 or a transport error: the server went away).
func (o *observer) submit(base string, reports [][]byte, creds map[string]string, users []int) []int {
	t := o.t
	t.Helper()
	code, results, err := postBatch(base, o.exp, reports, creds, users)
	if code == 0 {
		return users // the server died while committing: no answer
	}
	if err != nil || code != http.StatusOK || len(results) != len(users) {
		t.Fatalf("batch submission: %d %v", code, err)
	}
	var left []int
	for i, r := range results {
		id := "u" + strconv.Itoa(users[i])
		switch {
		case r.Status == http.StatusServiceUnavailable:
			left = append(left, users[i])
		case (r.Status == http.StatusCreated || r.Status == http.StatusOK) && r.Ack != nil:
			if r.Ack.Replayed != (r.Status == http.StatusOK) {
				t.Fatalf("user %s: status %d, replayed %v", id, r.Status, r.Ack.Replayed)
			}
			if seq, ok := o.acks[id]; ok && seq != r.Ack.Sequence {
				t.Fatalf("user %s acknowledged as report %d, then as report %d", id, seq, r.Ack.Sequence)
			}
			if _, ok := o.acks[id]; ok && r.Status == http.StatusCreated {
				t.Fatalf("user %s's acknowledged report accepted again (201)", id)
			}
			o.acks[id] = r.Ack.Sequence
		default:
			t.Fatalf("user %s: %d %+v", id, r.Status, r.Error)
		}
	}
	return left
}

// postBatch submits users' reports (user u: ID "u<u>", idempotency key "k<u>", report
// reports[u-1]) as one batch submission to experiment exp at base and returns the answer's
// status and results. The status is 0 when no answer came (the server went away).
func postBatch(base, exp string, reports [][]byte, creds map[string]string, users []int) (int, []batchResult, error) {
	var req struct {
		Reports []batchItem `json:"reports"`
	}
	for _, u := range users {
		id := "u" + strconv.Itoa(u)
		req.Reports = append(req.Reports, batchItem{User: id, Credential: creds[id], IdempotencyKey: "k" + strconv.Itoa(u), Report: reports[u-1]})
	}
	b, _ := json.Marshal(req)
	hr, err := http.NewRequest(http.MethodPost, base+"/v1/experiments/"+exp+"/reports/batch", bytes.NewReader(b))
	if err != nil {
		return 0, nil, err
	}
	hr.Header.Set("Authorization", "Bearer "+crashClient)
	hr.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(hr)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	var out struct {
		Results []batchResult `json:"results"`
	}
	err = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out.Results, err
}

// crashChildProc is a running crash child.
type crashChildProc struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	url   string
	crash chan string // "crash N" when the hook holds the committer; closed at exit
}

func startCrashChild(t *testing.T, cfg crashConfig) *crashChildProc {
	t.Helper()
	raw, _ := json.Marshal(cfg)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), crashChildEnv+"="+string(raw))
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	c := &crashChildProc{cmd: cmd, stdin: in, crash: make(chan string, 1)}
	c.url = childproc.Start(t, cmd, "the crash child", "listening ", 30*time.Second, func(line string) {
		if strings.HasPrefix(line, "crash ") {
			c.crash <- line
		}
	}, func() { close(c.crash) })
	t.Cleanup(func() { c.stdin.Close() })
	return c
}

// kill lets the child kill itself (SIGKILL at its crash point) and checks it died so.
func (c *crashChildProc) kill(t *testing.T) {
	t.Helper()
	c.stdin.Write([]byte("die\n"))
	err := c.cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("the crash child ended with %v, not SIGKILL", err)
	}
}

// inProcess is a server of this process on dir behind httptest (no hooks unless given).
func inProcess(t *testing.T, dir string, hooks *faultHooks) (string, *Server, func()) {
	t.Helper()
	s, hs, stop := StartForTest(t, Config{Dir: dir, Registry: families.New(), AdminToken: crashAdmin, ClientToken: crashClient, hooks: hooks})
	return hs.URL, s, stop
}

// create creates f's experiment at base and mints its users' credentials.
func (o *observer) create(base string, f crashFamily) map[string]string {
	t := o.t
	t.Helper()
	c := client.New(base, crashAdmin, crashClient, nil)
	req := f.req
	req.Epsilon, req.Delta, req.Capacity = 1, 1e-5, crashK
	l, err := c.Create(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	o.exp = l.Experiment
	var ids []string
	for u := 1; u <= crashUsers; u++ {
		ids = append(ids, "u"+strconv.Itoa(u))
	}
	creds, err := c.Credentials(context.Background(), o.exp, ids)
	if err != nil {
		t.Fatal(err)
	}
	return creds
}

// finish plays the users after next (new users first, in batches), then the unanswered ones
// again, observing after each batch; then it retries two acknowledged users (acknowledged
// again with their sequence numbers) and checks the log and every version seen against an
// uninterrupted curator fed the log.
func (o *observer) finish(base string, s *Server, reports [][]byte, creds map[string]string, next int, unanswered []int) {
	t := o.t
	t.Helper()
	var left []int
	for u := next; u <= crashUsers; u += crashPer {
		batch := []int{}
		for v := u; v < u+crashPer && v <= crashUsers; v++ {
			batch = append(batch, v)
		}
		left = append(left, o.submit(base, reports, creds, batch)...)
		o.observe(base, fmt.Sprintf("after users %v", batch))
	}
	left = append(unanswered, left...)
	for len(left) > 0 {
		again := o.submit(base, reports, creds, left)
		if len(again) == len(left) {
			t.Fatalf("users %v refused (503) twice in a row: the server did not recover", left)
		}
		left = again
		o.observe(base, "after the unanswered users' retries")
	}
	if len(o.acks) != crashUsers {
		t.Fatalf("%d users acknowledged, want %d", len(o.acks), crashUsers)
	}
	before := len(o.acks)
	if left := o.submit(base, reports, creds, []int{1, crashUsers}); len(left) > 0 || len(o.acks) != before {
		t.Fatalf("retries of acknowledged users: %v unanswered", left)
	}
	o.observe(base, "at the end")
	o.checkLog(s)
}

// checkLog checks the experiment's durable log against the acknowledgements (each user once,
// at the sequence number she was told) and replays it into an uninterrupted curator: every
// version any client saw is the one that curator publishes, and so is the final policy.
func (o *observer) checkLog(s *Server) {
	t := o.t
	t.Helper()
	x := s.lookup(o.exp)
	n := 0
	err := s.st.(*store.Store).Replay(o.exp, func(seq uint64, r *store.Record) error {
		n++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n != len(o.acks) {
		t.Fatalf("the log holds %d reports, %d users were acknowledged", n, len(o.acks))
	}
	for id, seq := range o.acks {
		r, err := s.st.(*store.Store).Record(o.exp, seq)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(r.User[:], s.userMAC("dprl/user/v1", o.exp, id)) {
			t.Fatalf("user %s was acknowledged as report %d, which is another user's", id, seq)
		}
	}
	spec := x.spec
	ref, err := x.sv.Session(&spec, streams(x.def, &spec))
	if err != nil {
		t.Fatal(err)
	}
	cur, err := servicetest.NewCurator(ref.Session)
	if err != nil {
		t.Fatal(err)
	}
	err = s.st.(*store.Store).Replay(o.exp, func(_ uint64, r *store.Record) error { return cur.Receive(r.Report) })
	if err != nil {
		t.Fatal(err)
	}
	for etag, body := range o.bodies {
		var p client.Policy
		if err := json.Unmarshal(body, &p); err != nil {
			t.Fatal(err)
		}
		w, ok := cur.Rules[p.Version]
		var a, b bytes.Buffer
		json.Compact(&a, w)
		json.Compact(&b, p.Rule)
		if !ok || !bytes.Equal(a.Bytes(), b.Bytes()) {
			t.Fatalf("version %d (ETag %s) was shown with a rule the durable log does not give (noise of one release shown for another history)", p.Version, etag)
		}
	}
	if o.version != cur.Last {
		t.Fatalf("final version %d, the uninterrupted curator's %d", o.version, cur.Last)
	}
}

// crashCase runs one crash case: f's experiment on a crash child that crashes at point p of
// the commit of report n; a restart on the same data; the rest of the users; the checks.
func crashCase(t *testing.T, f crashFamily, reports [][]byte, p hookPoint, n int) {
	dir := t.TempDir()
	child := startCrashChild(t, crashConfig{Dir: dir, Point: p, Report: n})
	o := newObserver(t)
	creds := o.create(child.url, f)
	o.observe(child.url, "after creation")
	var unanswered []int
	next := 1
	crashed := false
	for !crashed {
		if next > crashUsers {
			t.Fatal("every user reported and the crash point was never reached")
		}
		batch := []int{}
		for v := next; v < next+crashPer && v <= crashUsers; v++ {
			batch = append(batch, v)
		}
		next += len(batch)
		done := make(chan []int, 1)
		go func() { done <- o.submit(child.url, reports, creds, batch) }()
		select {
		case left := <-done:
			if len(left) > 0 {
				t.Fatalf("users %v unanswered before the crash", left)
			}
			o.observe(child.url, fmt.Sprintf("after users %v", batch))
		case _, ok := <-child.crash:
			if !ok {
				t.Fatal("the crash child exited")
			}
			o.observe(child.url, "at the crash point")
			child.kill(t)
			if left := <-done; len(left) != len(batch) {
				t.Fatalf("users %v answered by a server that crashed before answering", batch)
			}
			unanswered, crashed = batch, true
		}
	}
	base, s, _ := inProcess(t, dir, nil)
	o.observe(base, "after the restart")
	o.finish(base, s, reports, creds, next, unanswered)
}

// crashMatrix runs the crash cases of families × points × reports.
func crashMatrix(t *testing.T, fams []crashFamily, reports []int) {
	for _, f := range fams {
		reps := crashReports(t, f)
		for _, p := range crashPoints {
			for _, n := range reports {
				t.Run(fmt.Sprintf("%s/%s/report-%d", f.name, p.name, n), func(t *testing.T) {
					crashCase(t, f, reps, p.p, n)
				})
			}
		}
	}
}

// TestCrashPoints: a real crash (SIGKILL) at every step of the commit path of one tabular
// experiment, in the batch of its third report (a release): nothing seen before the crash is
// withdrawn or changed after the restart, no acknowledged report is lost or counted twice,
// and every version ever seen is what an uninterrupted curator fed the durable log publishes.
// TestCrashPointsAllFamilies runs the whole matrix.
func TestCrashPoints(t *testing.T) {
	crashMatrix(t, crashFamilies[:1], []int{3})
}

// TestCrashPointsAllFamilies is TestCrashPoints for the practical agents of every servable
// family (tabular JDP and LDP, linmdp, linmix JDP and LDP, lq), at every step of the commit
// path, in the batches of reports 1, 3 and 7 (21 crash points a family, 126 in all).
func TestCrashPointsAllFamilies(t *testing.T) {
	longtest.Skip(t, "126 real crashes at every commit step × 3 batches × 6 served agents")
	crashMatrix(t, crashFamilies, []int{1, 3, 7})
}

// commitFails reports whether an error of the hook at p fails the commit (the others are
// logged: the step they follow cannot fail the commit).
func commitFails(p hookPoint) bool {
	return p == hookBeforeAppend || p == hookBeforeCommit || p == hookAfterAppend
}

// TestCommitErrorPublishesNothing: the error path, in process, for the practical agent of
// every servable family. A fault hook returns an error once, at each step of the commit path
// of the batch of report 3 (a release); where that fails the commit, the batch is answered
// 503 and nothing visible changes (policy, ETag, ledger, metrics, page); the next batch is
// taken (the curator rebuilt from the durable log), the refused users are taken on retry, no
// version seen differs from an uninterrupted curator fed the log, and a restart shows the
// same.
func TestCommitErrorPublishesNothing(t *testing.T) {
	const n = 3
	for _, f := range crashFamilies {
		reps := crashReports(t, f)
		for _, cp := range crashPoints {
			t.Run(f.name+"/"+cp.name, func(t *testing.T) {
				dir := t.TempDir()
				var mu sync.Mutex
				received, fired := 0, false
				hooks := &faultHooks{f: func(p hookPoint) error {
					mu.Lock()
					defer mu.Unlock()
					if p == hookAfterReceive {
						received++
					}
					if p == cp.p && received >= n && !fired {
						fired = true
						return errors.New("injected fault at " + cp.name)
					}
					return nil
				}}
				base, s, stop := inProcess(t, dir, hooks)
				o := newObserver(t)
				creds := o.create(base, f)
				o.observe(base, "after creation")
				next := 1
				var refused []int
				for !fired {
					batch := []int{next}
					if next+1 <= crashUsers {
						batch = append(batch, next+1)
					}
					next += len(batch)
					v, body, users := o.version, o.bodies[`"`+strconv.FormatUint(o.version, 10)+`"`], o.users
					left := o.submit(base, reps, creds, batch)
					mu.Lock()
					now := fired
					mu.Unlock()
					switch {
					case now && commitFails(cp.p):
						if len(left) == 0 {
							t.Fatalf("users %v: none refused after a failed commit", batch)
						}
						o.observe(base, "after the failed commit")
						// (The submission may have been split into two commits, one failed.)
						if len(left) == len(batch) && (o.version != v || o.users != users || !bytes.Equal(o.bodies[`"`+strconv.FormatUint(v, 10)+`"`], body)) {
							t.Fatalf("a failed commit changed what is visible: version %d → %d, users %d → %d", v, o.version, users, o.users)
						}
						refused = left
					case len(left) > 0:
						t.Fatalf("users %v refused", left)
					default:
						o.observe(base, fmt.Sprintf("after users %v", batch))
					}
				}
				if commitFails(cp.p) != (refused != nil) {
					t.Fatalf("hook at %s: users %v refused", cp.name, refused)
				}
				o.finish(base, s, reps, creds, next, refused)
				stop()
				base, _, _ = inProcess(t, dir, nil)
				o.observe(base, "after a restart")
			})
		}
	}
}
