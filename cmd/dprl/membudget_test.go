package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"github.com/dprl/dprl/internal/longtest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dprl/dprl/internal/membudget"
)

// addressSpaceLimit is the RLIMIT_AS of issue 18 #3's crash reports (3 GiB).
const addressSpaceLimit = "3221225472"

// buildDprl builds the dprl binary into dir.
func buildDprl(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "dprl")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// runLimited runs the dprl binary bin under prlimit --as (RLIMIT_AS of 3 GiB) in dir and
// returns its exit status, stderr and wall time.
func runLimited(t *testing.T, bin, dir string, args ...string) (int, string, time.Duration) {
	t.Helper()
	prlimit, err := exec.LookPath("prlimit")
	if err != nil {
		t.Skip("prlimit (util-linux) not found")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, prlimit, append([]string{"--as=" + addressSpaceLimit, bin}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOMAXPROCS=2") // the workers of the reports' 2-core machine
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	err = cmd.Run()
	took := time.Since(start)
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, stderr.String(), took
	case errors.As(err, &ee):
		return ee.ExitCode(), stderr.String(), took
	}
	t.Fatalf("running dprl: %v", err)
	return 0, "", 0
}

// TestMemoryBudgetRefusesCrashCases runs the accepted inputs of issue 18 #3 that crashed the
// Go runtime ("fatal error: out of memory", exit status 2 with a stack trace) under a 3 GiB
// address-space limit. Each must now be refused before it allocates: exit status 2 within a
// few seconds, an error naming the parameter to lower and the estimate, and no trace of the
// runtime. A small run under the same limit still succeeds.
func TestMemoryBudgetRefusesCrashCases(t *testing.T) {
	if _, err := exec.LookPath("prlimit"); err != nil {
		t.Skip("prlimit (util-linux) not found")
	}
	dir := t.TempDir()
	bin := buildDprl(t, dir)
	seeds := filepath.Join(dir, "seeds.yaml")
	f, err := os.Create(seeds)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	fmt.Fprintf(w, "family: tabular\nagents: [ucbvi]\nepisodes: 100\nseeds:\n")
	for i := 0; i < 6_000_000; i++ { // 53 MB, under the 64 MiB file limit
		fmt.Fprintf(w, "- %d\n", i)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	cases := []struct {
		name  string
		args  []string
		param string // the parameter the error names
	}{
		{"tabular: maximal K, many seeds", []string{"run", "--episodes", "10000000", "--seeds", "1-50"}, "--episodes"},
		{"tabular: largest Garnet, the papers' dp-ucbvi-jdp", []string{"run", "--env", "garnet", "--states", "4096", "--actions", "1", "--horizon", "1",
			"--agent", "dp-ucbvi-jdp", "--epsilon", "1", "--episodes", "100"}, "--states"},
		{"tabular: largest Garnet, practical-jdp", []string{"run", "--env", "garnet", "--states", "200", "--actions", "50", "--horizon", "8",
			"--agent", "practical-jdp", "--epsilon", "1", "--episodes", "100000", "--workers", "8"}, "--states"},
		{"lq: maximal K, many seeds", []string{"run", "--family", "lq", "--agent", "private-ofu-rl", "--epsilon", "1", "--episodes", "10000000", "--seeds", "1-20"}, "--episodes"},
		{"linmdp: lsvi-ucb at maximal K", []string{"run", "--family", "linmdp", "--agent", "lsvi-ucb", "--episodes", "10000000", "--seeds", "1-20"}, "--episodes"},
		{"linmdp: large state space, ngo", []string{"run", "--family", "linmdp", "--env", "randomsimplex", "--env-param", "n=2000", "--env-param", "a=1",
			"--env-param", "d=100", "--env-param", "horizon=1000", "--agent", "ngo", "--epsilon", "1", "--episodes", "10", "--seeds", "1"}, "env.params"},
		{"linmix: largest two-state-hard", []string{"run", "--family", "linmix", "--env", "two-state-hard", "--env-param", "dim=16", "--env-param", "horizon=500",
			"--agent", "ucrl-vtr+/jdp", "--epsilon", "1", "--episodes", "1000", "--seeds", "1"}, "env.params"},
		{"linmix: base mixture with S·A reward features, linopt-vi", []string{"run", "--family", "linmix", "--env", "base-mixture", "--env-param", "states=128",
			"--env-param", "actions=64", "--env-param", "dim=2", "--env-param", "horizon=2", "--agent", "linopt-vi/none", "--episodes", "10", "--seeds", "1"}, "env.params"},
		{"audit: --runs at its maximum", []string{"audit", "--all", "--runs", "1000000", "--quiet"}, "--runs"},
		{"YAML: millions of seeds under 64 MiB", []string{"run", "--config", seeds}, "seeds"},
	}
	estimate := regexp.MustCompile(`estimated [0-9.]+ [KMGT]iB \(([0-9]+) bytes`)
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := append(c.args, "--out", filepath.Join(dir, fmt.Sprintf("out%d", i)))
			code, stderr, took := runLimited(t, bin, dir, args...)
			if code != 2 {
				t.Fatalf("exit status %d, want 2; stderr:\n%.2000s", code, stderr)
			}
			for _, bad := range []string{"fatal error", "goroutine ", "runtime:", "panic"} {
				if strings.Contains(stderr, bad) {
					t.Fatalf("stderr holds %q:\n%.2000s", bad, stderr)
				}
			}
			if !strings.Contains(stderr, c.param) {
				t.Errorf("stderr does not name %s:\n%s", c.param, stderr)
			}
			if c.name != "YAML: millions of seeds under 64 MiB" {
				m := estimate.FindStringSubmatch(stderr)
				if m == nil || !strings.Contains(stderr, "memory budget of") {
					t.Errorf("stderr lacks the estimate and the budget:\n%s", stderr)
				}
			} else if !strings.Contains(stderr, "YAML nodes") {
				t.Errorf("stderr lacks the node count:\n%s", stderr)
			}
			if took > 10*time.Second {
				t.Errorf("took %v (allocation before the refusal?)", took)
			}
		})
	}
	t.Run("a small run still fits", func(t *testing.T) {
		code, stderr, _ := runLimited(t, bin, dir, "run", "--episodes", "1000", "--seeds", "1-2", "--quiet", "--out", filepath.Join(dir, "small"))
		if code != 0 {
			t.Fatalf("exit status %d:\n%s", code, stderr)
		}
	})
	t.Run("--memory and DPRL_MEMORY", func(t *testing.T) {
		code, stderr, _ := runLimited(t, bin, dir, "run", "--episodes", "1000000", "--seeds", "1-2", "--quiet", "--memory", "64MiB", "--out", filepath.Join(dir, "m1"))
		if code != 2 || !strings.Contains(stderr, "--memory 64MiB") || !strings.Contains(stderr, "--episodes") {
			t.Errorf("--memory 64MiB: exit %d:\n%s", code, stderr)
		}
		code, stderr, _ = runLimited(t, bin, dir, "run", "--episodes", "1000", "--seeds", "1-2", "--quiet", "--memory", "lots", "--out", filepath.Join(dir, "m2"))
		if code != 2 || !strings.Contains(stderr, "--memory") {
			t.Errorf("--memory lots: exit %d:\n%s", code, stderr)
		}
		t.Setenv(membudget.EnvVar, "64MiB")
		code, stderr, _ = runLimited(t, bin, dir, "run", "--episodes", "1000000", "--seeds", "1-2", "--quiet", "--out", filepath.Join(dir, "m3"))
		if code != 2 || !strings.Contains(stderr, membudget.EnvVar+" 64MiB") {
			t.Errorf("DPRL_MEMORY=64MiB: exit %d:\n%s", code, stderr)
		}
		code, stderr, _ = runLimited(t, bin, dir, "--memory", "2GiB", "run", "--episodes", "1000", "--seeds", "1-2", "--quiet", "--out", filepath.Join(dir, "m4"))
		if code != 0 {
			t.Errorf("--memory 2GiB (flag over DPRL_MEMORY, capped by RLIMIT_AS): exit %d:\n%s", code, stderr)
		}
	})
}

// heapPeak samples the bytes of the heap's objects; reset restarts the peak at the current
// value (when a memory check passes: the estimate covers what follows it).
type heapPeak struct{ peak atomic.Uint64 }

func (h *heapPeak) reset() {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	h.peak.Store(s[0].Value.Uint64())
}

// run runs f while sampling every 200 µs (with the garbage collector at GOGC = 10, so that
// little garbage counts) and returns the peak since the last reset.
func (h *heapPeak) run(f func()) int64 {
	defer debug.SetGCPercent(debug.SetGCPercent(10))
	runtime.GC()
	peak := &h.peak
	h.reset()
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		for {
			metrics.Read(s)
			if v := s[0].Value.Uint64(); v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-stop:
				return
			case <-time.After(200 * time.Microsecond):
			}
		}
	}()
	f()
	close(stop)
	<-done
	return int64(peak.Load())
}

// resetWriter receives the lines of the memory checks and restarts the heap peak at each.
type resetWriter struct {
	h   *heapPeak
	mu  sync.Mutex
	buf bytes.Buffer
}

func (w *resetWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	// The peak restarts at each planning check and at the run's first check (the engine's,
	// which counts the collection; the launcher's after it does not).
	if !strings.Contains(w.buf.String(), "memory: this ") {
		w.h.reset()
	}
	return w.buf.Write(p)
}

func (w *resetWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// TestMemoryEstimateCoversPeak runs each family in this process at sizes where its big
// allocations dominate and checks that the estimate of the run's memory check (the engine's,
// before its units start; less the Overhead it allows for the binary and the runtime) covers
// the peak heap from that check to the end of the run, and is not above 4× of it (valid runs
// are not refused needlessly).
func TestMemoryEstimateCoversPeak(t *testing.T) {
	longtest.Skip(t, "runs a dozen families' runs sampling the heap, ≈ 30–50 s")
	cases := [][]string{
		{"run", "--episodes", "200000", "--seeds", "1-2"},
		{"run", "--env", "garnet", "--states", "512", "--actions", "1", "--horizon", "1", "--agent", "dp-ucbvi-jdp", "--epsilon", "1", "--episodes", "100", "--seeds", "1-2"},
		{"run", "--env", "garnet", "--states", "200", "--actions", "50", "--horizon", "8", "--agent", "practical-jdp", "--epsilon", "1", "--episodes", "100", "--seeds", "1"},
		{"run", "--env", "garnet", "--states", "100", "--actions", "20", "--horizon", "8", "--agent", "practical-ldp", "--epsilon", "1", "--episodes", "100", "--seeds", "1-2"},
		{"run", "--family", "lq", "--agent", "private-ofu-rl", "--epsilon", "1", "--episodes", "100000", "--seeds", "1-2"},
		{"run", "--family", "lq", "--agent", "practical-ofu-rl", "--epsilon", "1", "--episodes", "100000", "--seeds", "1"},
		{"run", "--family", "linmix", "--env", "two-state-hard", "--env-param", "dim=12", "--env-param", "horizon=200", "--agent", "ucrl-vtr+/jdp", "--epsilon", "1", "--episodes", "20", "--seeds", "1"},
		{"run", "--family", "linmix", "--env", "base-mixture", "--env-param", "states=32", "--env-param", "actions=16", "--env-param", "dim=4", "--env-param", "horizon=4", "--agent", "linopt-vi/none", "--episodes", "10", "--seeds", "1"},
		{"run", "--family", "linmdp", "--env", "latentriver", "--env-param", "m=20", "--env-param", "copies=50", "--env-param", "horizon=200", "--agent", "lsvi-ucb", "--episodes", "20", "--seeds", "1"},
		{"run", "--family", "linmdp", "--env", "latentriver", "--env-param", "m=20", "--env-param", "copies=50", "--env-param", "horizon=200", "--agent", "ngo", "--epsilon", "1", "--episodes", "20", "--seeds", "1-2"},
		{"run", "--family", "linmdp", "--agent", "lsvi-ucb", "--episodes", "50000", "--seeds", "1"},
		{"audit", "--runs", "2000", "linear-mixture/ucrl-vtr-plus-jdp", "--quiet"},
	}
	line := regexp.MustCompile(`dprl: memory: (this run|this audit): estimated ([0-9]+) bytes`)
	for i, args := range cases {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			var h heapPeak
			rep := &resetWriter{h: &h}
			membudget.SetReport(rep)
			defer membudget.SetReport(nil)
			out := filepath.Join(t.TempDir(), "out")
			var code int
			var stderr bytes.Buffer
			peak := h.run(func() {
				code = run(append(append([]string(nil), args...), "--workers", "2", "--out", out), new(bytes.Buffer), &stderr)
			})
			if code != 0 && !(args[0] == "audit" && code == 1) { // an audit's verdict is not this test's
				t.Fatalf("exit %d: %s", code, stderr.String())
			}
			var est int64
			for _, m := range line.FindAllStringSubmatch(rep.String(), -1) {
				v, _ := strconv.ParseInt(m[2], 10, 64)
				est = max(est, v) // the run's checks (the engine's counts the collection)
			}
			if est == 0 {
				t.Fatalf("no estimate reported: %q", rep.String())
			}
			heap := est - membudget.Overhead
			t.Logf("case %d: estimate %s (%s less the overhead), peak heap %s, ratio %.2f", i, membudget.Format(est), membudget.Format(heap), membudget.Format(peak), float64(heap)/float64(peak))
			if heap < peak {
				t.Errorf("estimate %d bytes (less the overhead) < peak heap %d bytes", heap, peak)
			}
			if heap > 4*peak {
				t.Errorf("estimate %d bytes (less the overhead) > 4 × peak heap %d bytes", heap, peak)
			}
		})
	}
}
