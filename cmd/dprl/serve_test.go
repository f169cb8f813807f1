package main

import (
	"context"
	"encoding/csv"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dprl/dprl/agents/protocol"
	"github.com/dprl/dprl/internal/longtest"
	"github.com/dprl/dprl/service/client"
	"github.com/dprl/dprl/service/store"
)

// riverSwimJDP is the request of an experiment of tabular practical-jdp on RiverSwim of the
// given horizon and capacity at (ε, δ) = (1, 1e-5), with seed (nil: the server draws it), a
// simulation or not.
func riverSwimJDP(horizon, capacity int, seed *uint64, simulation bool) client.CreateRequest {
	return client.CreateRequest{Family: "tabular", Agent: "practical-jdp", Env: client.Env{Name: "riverswim", Params: map[string]float64{"horizon": float64(horizon)}},
		Epsilon: 1, Delta: 1e-5, Capacity: capacity, Seed: seed, Simulation: simulation}
}

// readCSV returns the records of a CSV file without its header.
func readCSV(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil || len(recs) < 2 {
		t.Fatalf("%s: %v (%d rows)", path, err, len(recs))
	}
	return recs[1:]
}

// TestServeSameAsRun: `dprl client simulate` against `dprl serve` in seeded mode, users
// arriving in order, reproduces the cumulative regret curve of `dprl run` with the same agent,
// ε, K and seed bit for bit (every checkpoint of its regret_long.csv).
func TestServeSameAsRun(t *testing.T) {
	serveSameAsRun(t, []servedCase{
		{"tabular", "practical-jdp", "2000", []string{"--env", "riverswim"}, false},
		{"tabular", "practical-ldp", "2000", []string{"--env", "riverswim"}, false},
	})
}

// TestServeSameAsRunBenchmarks is TestServeSameAsRun on the episodic Gymnasium benchmarks,
// whose episodes end at terminal states (issue 26 item 6): CliffWalking and Taxi at H = 200
// through dprl serve give dprl run's regret bit for bit — on Taxi practical-jdp and its
// non-private twin practical-ucbvi, the two agents python/tests/test_long_taxi.py plays with
// Gymnasium's users. A long check, ≈ 10 s.
func TestServeSameAsRunBenchmarks(t *testing.T) {
	longtest.Skip(t, "served = dprl run on CliffWalking and Taxi, ≈ 10 s")
	serveSameAsRun(t, []servedCase{
		{"tabular", "practical-jdp", "2000", []string{"--env", "cliffwalking"}, false},
		{"tabular", "practical-ldp", "1000", []string{"--env", "frozenlake8x8"}, false},
		{"tabular", "practical-jdp", "300", []string{"--env", "taxi"}, false},
		{"tabular", "practical-ucbvi", "300", []string{"--env", "taxi"}, true},
	})
}

// TestServeSameAsRunLinear is TestServeSameAsRun for one practical agent of each other family
// (both kinds of linmix's practical-vtr): a long check, ≈ 6 s.
func TestServeSameAsRunLinear(t *testing.T) {
	longtest.Skip(t, "served = dprl run for the linear families and LQ, ≈ 6 s")
	serveSameAsRun(t, []servedCase{
		{"linmdp", "practical-lsvi", "300", []string{"--env", "latentriver", "--env-param", "m=2", "--env-param", "copies=3", "--env-param", "horizon=5"}, false},
		{"linmix", "practical-vtr/jdp", "2000", []string{"--env", "two-state-hard", "--env-param", "dim=3", "--env-param", "horizon=4"}, false},
		{"linmix", "practical-vtr/ldp", "2000", []string{"--env", "two-state-hard", "--env-param", "dim=3", "--env-param", "horizon=4"}, false},
		{"lq", "practical-ofu-rl", "300", nil, false},
	})
}

type servedCase struct {
	family, agent, K string
	env              []string
	nonPrivate       bool // a non-private agent: no --epsilon, --delta; served with --non-private
}

func serveSameAsRun(t *testing.T, cases []servedCase) {
	dir := t.TempDir()
	srv := startServe(t, filepath.Join(dir, "data"), "127.0.0.1:0")
	for _, c := range cases {
		t.Run(c.family+"/"+c.agent, func(t *testing.T) {
			name := strings.ReplaceAll(c.agent, "/", "-")
			if len(c.env) == 2 && c.env[0] == "--env" {
				name += "-" + c.env[1]
			}
			run := filepath.Join(dir, c.family+"-"+name+"-run")
			privacy := []string{"--epsilon", "1", "--delta", "1e-5"}
			if c.nonPrivate {
				privacy = nil
			}
			args := append(append([]string{"run", "--family", c.family, "--agent", c.agent, "--episodes", c.K, "--seeds", "7", "--out", run, "--quiet"}, privacy...), c.env...)
			if code, _, stderr := runCLI(t, args...); code != 0 {
				t.Fatalf("dprl run: %s", stderr)
			}
			sim := filepath.Join(dir, c.family+"-"+name+"-sim.csv")
			if c.nonPrivate {
				privacy = []string{"--non-private"}
			}
			args = append(append([]string{"client", "simulate", "--server", srv.url, "--family", c.family, "--agent", c.agent,
				"--capacity", c.K, "--seed", "7", "--out", sim}, privacy...), c.env...)
			if code, stdout, stderr := runCLI(t, args...); code != 0 {
				t.Fatalf("dprl client simulate: %s %s", stdout, stderr)
			}
			cum := map[string]string{}
			for _, r := range readCSV(t, sim) {
				cum[r[0]] = r[2]
			}
			rows := readCSV(t, filepath.Join(run, "regret_long.csv"))
			for _, r := range rows { // family,curve,seed,episode,regret
				want, _ := strconv.ParseFloat(r[4], 64)
				got, err := strconv.ParseFloat(cum[r[3]], 64)
				if err != nil || got != want {
					t.Fatalf("episode %s: cumulative regret %s through the service, %s by dprl run", r[3], cum[r[3]], r[4])
				}
			}
			if len(rows) < 10 {
				t.Fatalf("only %d checkpoints compared", len(rows))
			}
		})
	}
	srv.stop(t)
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
	err = st.Replay(l.Experiment, func(_ uint64, r *store.Record) error { return ref.receive(r.Report) })
	if err != nil || ref.n != l.Capacity {
		t.Fatalf("replaying the log: %v (%d records)", err, ref.n)
	}
	if ref.last != final.Version || string(ref.want[ref.last]) != string(final.Rule) {
		t.Fatalf("after %d kills the served policy (version %d) differs from the uninterrupted one (version %d)", kills, final.Version, ref.last)
	}
	t.Logf("%d kills; %d users; policy version %d", kills, ref.n, ref.last)
}
