package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dprl/dprl/agents/protocol"
	"github.com/dprl/dprl/experiment/engine"
	"github.com/dprl/dprl/experiment/engine/servetest"
	"github.com/dprl/dprl/internal/longtest"
	"github.com/dprl/dprl/service/client"
	"github.com/dprl/dprl/service/servicetest"
	"github.com/dprl/dprl/service/store"
)

// killVersionsCase is one experiment of TestServeKill9Versions.
type killVersionsCase struct {
	req  client.CreateRequest
	exp  string
	reps []protocol.Report // user k's report at k−1
	seen *seenPolicies
}

// seenPolicies is every (ETag, policy body) any client of one experiment ever saw, checked as
// it grows: an ETag always stands for the same body.
type seenPolicies struct {
	mu     sync.Mutex
	bodies map[string][]byte
	max    uint64
	errs   []string
}

// record notes that the server answered etag with body; a different body under a known ETag is
// an error.
func (s *seenPolicies) record(etag string, body []byte) {
	var p client.Policy
	if err := json.Unmarshal(body, &p); err != nil {
		s.fail("policy body: %v", err)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if etag != `"`+strconv.FormatUint(p.Version, 10)+`"` {
		s.errs = append(s.errs, fmt.Sprintf("ETag %s for version %d", etag, p.Version))
	}
	if old, ok := s.bodies[etag]; ok && !bytes.Equal(old, body) {
		s.errs = append(s.errs, fmt.Sprintf("ETag %s: content changed:\n%s\n%s", etag, old, body))
	}
	s.bodies[etag] = bytes.Clone(body)
	s.max = max(s.max, p.Version)
}

func (s *seenPolicies) fail(format string, args ...any) {
	s.mu.Lock()
	s.errs = append(s.errs, fmt.Sprintf(format, args...))
	s.mu.Unlock()
}

// fetchPolicy gets exp's policy at base, with If-None-Match inm if not empty: the status, the
// ETag and the body.
func fetchPolicy(ctx context.Context, base, exp, inm string) (int, string, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/v1/experiments/"+exp+"/policy", nil)
	if err != nil {
		return 0, "", nil, err
	}
	if inm != "" {
		req.Header.Set("If-None-Match", inm)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("ETag"), b, err
}

// killReports plays K users of req in process (seed 3) and returns their reports (valid reports
// of the family whatever the server publishes).
func killReports(t *testing.T, req client.CreateRequest) []protocol.Report {
	t.Helper()
	spec := servedSpec(t, req, 3)
	sv, err := engine.CheckServed(newRegistry(), &spec)
	if err != nil {
		t.Fatal(err)
	}
	return servetest.PlayReports(t, sv, &spec, engine.Streams{Seed: 3}, req.Capacity)
}

// servedSpec is the RunSpec a seeded server builds for req with seed.
func servedSpec(t *testing.T, req client.CreateRequest, seed uint64) engine.RunSpec {
	t.Helper()
	s := engine.RunSpec{Family: req.Family, Name: "served", Agents: []string{req.Agent}, Runs: engine.Runs{Episodes: req.Capacity, Seeds: []uint64{seed}},
		Env: engine.EnvSpec{Name: req.Env.Name, Params: req.Env.Params}, Privacy: engine.PrivacySpec{Epsilons: []float64{req.Epsilon}, Delta: req.Delta}}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	return s
}

// referenceSession is the session a seeded server builds for req with seed, as it is before
// any report: the uninterrupted curator the server's log is replayed into.
func referenceSession(t *testing.T, req client.CreateRequest, seed uint64) protocol.Session {
	t.Helper()
	spec := servedSpec(t, req, seed)
	sv, err := engine.CheckServed(newRegistry(), &spec)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := sv.Session(&spec, engine.Streams{Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	return ref.Session
}

// newCurator returns the reference curator of req with seed (the session a seeded server
// builds) after its first publication.
func newCurator(t *testing.T, req client.CreateRequest, seed uint64) *servicetest.Curator {
	t.Helper()
	c, err := servicetest.NewCurator(referenceSession(t, req, seed))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestServeKill9: a real server process is killed with SIGKILL at random points while 8
// simulated users submit concurrently, and restarted on the same data directory each time;
// the users retry with their idempotency keys. At the end every user's report is
// acknowledged exactly once (a retry of each is acknowledged again, none counted twice), and
// the published policy equals that of an uninterrupted curator fed the same acknowledged
// reports in the same order (its log), built from the same seed — so no noise was redrawn.
func TestServeKill9(t *testing.T) {
	longtest.Skip(t, "kill -9 of a live server while users submit, ≈ 20 s")
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	// Snapshots every 500 reports (restarts restore one and replay the rest; kills may land
	// in a snapshot), the raw reports retained for the reference replay below.
	srv := startFixed(t, data, "--retain-reports", "--snapshot-every", "500")
	ctx := context.Background()
	c := client.New(srv.p.url, testAdmin, testClient, nil)
	const K = 20000
	seed := uint64(11)
	l := must(t, c.Create, riverSwimJDP(10, K, &seed, true))
	var (
		res    *client.SimResult
		simErr error
		wg     sync.WaitGroup
		mu     sync.Mutex
		done   int64
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		res, simErr = client.Simulate(ctx, c, client.SimOptions{Experiment: l.Experiment, Registry: newRegistry(), Concurrency: 8, Seed: &seed,
			Progress: func(n int64) { mu.Lock(); done += n; mu.Unlock() }})
	}()
	rng := rand.New(rand.NewPCG(1, 2))
	kills := 0
	for kills < 3 {
		// Kill when the users reached a random point of the next fifth of the capacity (by
		// progress, not by time: on an idle machine the users finish within a second or two).
		at := int64(kills+1)*K/8 + int64(rng.IntN(K/16))
		var d int64
		for {
			mu.Lock()
			d = done
			mu.Unlock()
			if d >= at {
				break
			}
			time.Sleep(2 * time.Millisecond)
		}
		t.Logf("kill %d: target %d, progress %d", kills+1, at, d)
		if d >= K-500 {
			break
		}
		srv.restart(t)
		kills++
	}
	wg.Wait()
	if simErr != nil {
		t.Fatal(simErr)
	}
	if kills < 2 {
		t.Fatalf("only %d kills happened before the users finished: the test proves little", kills)
	}
	led, err := c.Ledger(ctx, l.Experiment)
	if err != nil {
		t.Fatal(err)
	}
	if led.UsersServed != l.Capacity || res.Accepted != l.Capacity {
		t.Fatalf("%d users served, %d acknowledged to the users, capacity %d", led.UsersServed, res.Accepted, l.Capacity)
	}
	// Every acknowledged report is stored: a retry with the same key is acknowledged again.
	users := make([]string, 0, 50)
	for k := 1; k <= l.Capacity; k += l.Capacity / 50 {
		users = append(users, "sim-"+strconv.Itoa(k))
	}
	creds, err := c.Credentials(ctx, l.Experiment, users)
	if err != nil {
		t.Fatal(err)
	}
	head := must(t, c.Policy, l.Experiment).Header
	for _, u := range users {
		rep := &protocol.Trajectory{Header: head, States: make([]int, 11), Actions: make([]int, 10), Rewards: make([]float64, 10)}
		k := strings.TrimPrefix(u, "sim-")
		a, err := c.Submit(ctx, l.Experiment, client.Submission{User: u, Credential: creds[u], IdempotencyKey: "k" + k, Report: rep, Regret: 0})
		if err != nil || !a.Replayed {
			t.Fatalf("user %s's retry: %+v %v", u, a, err)
		}
	}
	final := must(t, c.Policy, l.Experiment)
	srv.p.stop(t)
	// The uninterrupted reference: a curator built from the same seed, fed the log in order.
	st, err := store.Open(data, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ref := newCurator(t, riverSwimJDP(10, K, nil, false), seed)
	err = st.Replay(l.Experiment, func(_ uint64, r *store.Record) error { return ref.Receive(r.Report) })
	if err != nil || ref.Received != l.Capacity {
		t.Fatalf("replaying the log: %v (%d records)", err, ref.Received)
	}
	if ref.Last != final.Version || string(ref.Rule()) != string(final.Rule) {
		t.Fatalf("after %d kills the served policy (version %d) differs from the uninterrupted one (version %d)", kills, final.Version, ref.Last)
	}
	t.Logf("%d kills; %d users; policy version %d", kills, ref.Received, ref.Last)
}

// TestServeKill9Versions: real `dprl serve` processes are killed with SIGKILL at random times
// (at least 6 times) while clients of two experiments (tabular practical-ldp; linmix
// practical-vtr/jdp, which releases a version after every user) fetch policies and submit
// reports, retrying with their idempotency keys; an observer polls the policies with and
// without If-None-Match. Every (ETag, body) any client ever saw is recorded. After each
// restart every recorded ETag must still stand for the same content (If-None-Match gives 304
// only for the published ETag, whose body is the one recorded; no version seen is withdrawn);
// at the end no acknowledged report is lost or counted twice (the log holds each acknowledged
// user once, at the sequence she was told, and a retry is acknowledged again) and every
// version ever seen is what an uninterrupted curator fed the log publishes.
func TestServeKill9Versions(t *testing.T) {
	longtest.Skip(t, "kill -9 of a live server at random times, every version seen checked, ≈ 30 s")
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	// Snapshots every 500 reports (kills land around them), the raw reports retained for the
	// reference replay of the whole log at the end.
	srv := startFixed(t, data, "--retain-reports", "--snapshot-every", "500")
	base := srv.p.url
	ctx := context.Background()
	c := client.New(base, testAdmin, testClient, nil)
	const seed = 5
	cases := []*killVersionsCase{
		{req: client.CreateRequest{Family: "tabular", Agent: "practical-ldp", Env: client.Env{Name: "riverswim", Params: map[string]float64{"horizon": 5}}, Epsilon: 1, Delta: 1e-5, Capacity: 3000}},
		{req: client.CreateRequest{Family: "linmix", Agent: "practical-vtr/jdp", Env: client.Env{Name: "two-state-hard", Params: map[string]float64{"dim": 3, "horizon": 4}}, Epsilon: 1, Delta: 1e-5, Capacity: 3000}},
	}
	for _, kc := range cases {
		kc.reps = killReports(t, kc.req)
		s := uint64(seed)
		kc.req.Seed = &s
		l, err := c.Create(ctx, kc.req)
		if err != nil {
			t.Fatal(err)
		}
		kc.exp, kc.seen = l.Experiment, &seenPolicies{bodies: map[string][]byte{}}
	}
	type ackKey struct {
		exp  string
		user int
	}
	var (
		acksMu sync.Mutex
		acks   = map[ackKey]uint64{}
		ackErr []string
		stop   atomic.Bool
		wg     sync.WaitGroup
	)
	// The users: 3 clients per experiment, each user fetches the policy (recorded), then
	// submits her report until acknowledged.
	for _, kc := range cases {
		var next atomic.Int64
		users := len(kc.reps)
		ids := make([]string, users)
		for k := range ids {
			ids[k] = "u" + strconv.Itoa(k+1)
		}
		creds, err := c.Credentials(ctx, kc.exp, ids)
		if err != nil {
			t.Fatal(err)
		}
		for range 3 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					k := int(next.Add(1))
					if k > users || stop.Load() {
						return
					}
					for !stop.Load() {
						code, etag, body, err := fetchPolicy(ctx, base, kc.exp, "")
						if err == nil && code == http.StatusOK {
							kc.seen.record(etag, body)
							break
						}
						time.Sleep(20 * time.Millisecond)
					}
					id := ids[k-1]
					for !stop.Load() {
						a, err := c.Submit(ctx, kc.exp, client.Submission{User: id, Credential: creds[id], IdempotencyKey: "k" + id, Report: kc.reps[k-1], Regret: math.NaN()})
						if err != nil {
							time.Sleep(20 * time.Millisecond)
							continue
						}
						acksMu.Lock()
						if seq, ok := acks[ackKey{kc.exp, k}]; ok && seq != a.Sequence {
							ackErr = append(ackErr, fmt.Sprintf("%s user %d acknowledged as %d then %d", kc.exp, k, seq, a.Sequence))
						}
						acks[ackKey{kc.exp, k}] = a.Sequence
						acksMu.Unlock()
						break
					}
				}
			}()
		}
	}
	// The observer: polls every policy, revalidating a random ETag it saw.
	obsDone := make(chan struct{})
	go func() {
		defer close(obsDone)
		rng := rand.New(rand.NewPCG(5, 6))
		for !stop.Load() {
			for _, kc := range cases {
				kc.seen.mu.Lock()
				var inm string
				n := rng.IntN(len(kc.seen.bodies) + 1)
				for e := range kc.seen.bodies {
					if n == 0 {
						inm = e
						break
					}
					n--
				}
				kc.seen.mu.Unlock()
				code, etag, body, err := fetchPolicy(ctx, base, kc.exp, inm)
				switch {
				case err != nil:
				case code == http.StatusOK:
					kc.seen.record(etag, body)
				case code == http.StatusNotModified && etag != inm:
					kc.seen.fail("If-None-Match %s answered 304 with ETag %s", inm, etag)
				}
			}
			time.Sleep(time.Millisecond)
		}
	}()
	// The kills, each followed by the check of every ETag seen.
	rng := rand.New(rand.NewPCG(7, 8))
	kills := 0
	for kills < 6 {
		time.Sleep(time.Duration(150+rng.IntN(450)) * time.Millisecond)
		srv.restart(t)
		kills++
		for _, kc := range cases {
			checkSeen(t, ctx, base, kc)
		}
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(3 * time.Minute):
		stop.Store(true)
		t.Fatal("the users did not finish within 3 minutes")
	}
	stop.Store(true)
	<-obsDone
	acksMu.Lock()
	defer acksMu.Unlock()
	if len(ackErr) > 0 {
		t.Fatal(ackErr)
	}
	// Every acknowledged report is stored: a retry is acknowledged again, with its sequence.
	for _, kc := range cases {
		checkSeen(t, ctx, base, kc)
		l, err := c.Ledger(ctx, kc.exp)
		if err != nil {
			t.Fatal(err)
		}
		if l.UsersServed != len(kc.reps) {
			t.Fatalf("%s: %d users served, %d users acknowledged", kc.exp, l.UsersServed, len(kc.reps))
		}
		var ids []string
		for k := 1; k <= len(kc.reps); k += 97 {
			ids = append(ids, "u"+strconv.Itoa(k))
		}
		creds, err := c.Credentials(ctx, kc.exp, ids)
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range ids {
			k, _ := strconv.Atoi(id[1:])
			a, err := c.Submit(ctx, kc.exp, client.Submission{User: id, Credential: creds[id], IdempotencyKey: "k" + id, Report: kc.reps[k-1], Regret: math.NaN()})
			if err != nil || !a.Replayed || a.Sequence != acks[ackKey{kc.exp, k}] {
				t.Fatalf("%s: user %s's retry: %+v %v (acknowledged as %d)", kc.exp, id, a, err, acks[ackKey{kc.exp, k}])
			}
		}
	}
	srv.p.stop(t)
	st, err := store.Open(data, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	versions := 0
	for _, kc := range cases {
		// The log holds each acknowledged user once, at her sequence (the same report bytes),
		// and nothing else.
		bySeq := map[uint64]int{}
		for key, seq := range acks {
			if key.exp == kc.exp {
				if u, ok := bySeq[seq]; ok {
					t.Fatalf("%s: users %d and %d acknowledged as report %d", kc.exp, u, key.user, seq)
				}
				bySeq[seq] = key.user
			}
		}
		ref := newCurator(t, kc.req, seed)
		n := 0
		err = st.Replay(kc.exp, func(seq uint64, r *store.Record) error {
			n++
			u, ok := bySeq[seq]
			if !ok {
				return fmt.Errorf("record %d was acknowledged to no user", seq)
			}
			mine, err := protocol.EncodeBinary(kc.reps[u-1])
			if err != nil || !bytes.Equal(mine, r.Report) {
				return fmt.Errorf("record %d is not user %d's report", seq, u)
			}
			return ref.Receive(r.Report)
		})
		if err != nil || n != len(bySeq) {
			t.Fatalf("%s: replaying the log: %v (%d records, %d acknowledged users)", kc.exp, err, n, len(bySeq))
		}
		for etag, body := range kc.seen.bodies {
			var p client.Policy
			json.Unmarshal(body, &p)
			var a, b bytes.Buffer
			json.Compact(&a, ref.Rules[p.Version])
			json.Compact(&b, p.Rule)
			if !bytes.Equal(a.Bytes(), b.Bytes()) || a.Len() == 0 {
				t.Fatalf("%s: version %d (ETag %s) was shown with a rule the durable log does not give", kc.exp, p.Version, etag)
			}
		}
		versions += len(kc.seen.bodies)
	}
	t.Logf("%d kills; %d versions seen and checked; %d acknowledged reports", kills, versions, len(acks))
}

// checkSeen checks the published policy of kc against everything its clients saw: the current
// version is at least every version seen; every ETag seen gets 304 only if it is the current
// one, and the current body is the one recorded for its ETag.
func checkSeen(t *testing.T, ctx context.Context, base string, kc *killVersionsCase) {
	t.Helper()
	kc.seen.mu.Lock()
	seenMax := kc.seen.max
	kc.seen.mu.Unlock()
	code, etag, body, err := fetchPolicy(ctx, base, kc.exp, "")
	if err != nil || code != http.StatusOK {
		t.Fatalf("%s: policy: %d %v", kc.exp, code, err)
	}
	kc.seen.record(etag, body)
	kc.seen.mu.Lock()
	defer kc.seen.mu.Unlock()
	if len(kc.seen.errs) > 0 {
		t.Fatalf("%s: %v", kc.exp, kc.seen.errs)
	}
	var p client.Policy
	json.Unmarshal(body, &p)
	if p.Version < seenMax {
		t.Fatalf("%s: version %d published, version %d was seen before: withdrawn", kc.exp, p.Version, seenMax)
	}
	for e := range kc.seen.bodies {
		code, got, b, err := fetchPolicy(ctx, base, kc.exp, e)
		if err != nil {
			t.Fatal(err)
		}
		switch code {
		case http.StatusNotModified:
			if got != e {
				t.Fatalf("%s: If-None-Match %s answered 304 with ETag %s", kc.exp, e, got)
			}
		case http.StatusOK:
			if old, ok := kc.seen.bodies[got]; ok && !bytes.Equal(old, b) {
				t.Fatalf("%s: ETag %s now stands for other content", kc.exp, got)
			}
		default:
			t.Fatalf("%s: policy with If-None-Match: %d", kc.exp, code)
		}
	}
}
