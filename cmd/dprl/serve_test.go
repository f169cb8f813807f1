package main

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/dprl/dprl/internal/longtest"
	"github.com/dprl/dprl/service/client"
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
