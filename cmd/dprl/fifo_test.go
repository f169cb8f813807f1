//go:build unix

package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dprl/dprl/internal/boundedread/boundedreadtest"
)

// runCLIWithin runs the CLI and fails the test if it has not returned within 30 s. On a
// timeout it releases fifo (boundedreadtest.Within), so that the regression fails instead of
// hanging the test binary.
func runCLIWithin(t *testing.T, fifo string, args ...string) (code int, stderr string) {
	t.Helper()
	boundedreadtest.Within(t, fmt.Sprintf("%q", args), 30*time.Second, fifo, func() { code, _, stderr = runCLI(t, args...) })
	return code, stderr
}

// TestFIFOInputsRefused: a FIFO given as a model file (--env-file, every family), as a run or
// sweep configuration, or as a model file named in a configuration is refused at once with
// exit status 2 and a message naming the field and the kind of file; none of them may block.
func TestFIFOInputsRefused(t *testing.T) {
	dir := t.TempDir()
	fifo := boundedreadtest.FIFO(t, filepath.Join(dir, "input.yaml"))
	cfg := putFile(t, dir, "cfg.yaml", "name: x\nenv: {name: file, path: "+fifo+"}\nepisodes: 10\nseeds: [1, 2]\ncurves: [{agent: ucbvi}]\n")
	out := filepath.Join(dir, "out")
	for _, c := range []struct {
		name string
		args []string
		want []string
	}{
		{"tabular env-file", []string{"run", "--env", "file", "--env-file", fifo, "--episodes", "10", "--seeds", "1", "--quiet", "--out", out}, []string{"env", "named pipe"}},
		{"linmdp env-file", []string{"run", "--family", "linmdp", "--agent", "lsvi-ucb", "--env", "file", "--env-file", fifo, "--episodes", "10", "--seeds", "1", "--quiet", "--out", out}, []string{"--env-file", "named pipe"}},
		{"linmix env-file", []string{"run", "--family", "linmix", "--agent", "ucrl-vtr/none", "--env", "file", "--env-file", fifo, "--episodes", "10", "--seeds", "1", "--quiet", "--out", out}, []string{"--env-file", "named pipe"}},
		{"run config", []string{"run", "--config", fifo, "--quiet", "--out", out}, []string{"--config", "not a regular file"}},
		{"config naming a FIFO model", []string{"run", "--config", cfg, "--quiet", "--out", out}, []string{"env.path", "named pipe"}},
		{"sweep plan", []string{"sweep", "plan", fifo}, []string{"config", "named pipe"}},
		{"sweep run", []string{"sweep", "run", fifo, "--out", out, "--shard", "0/1", "--quiet"}, []string{"config", "named pipe"}},
		{"sweep merge", []string{"sweep", "merge", fifo, "--out", out}, []string{"config", "named pipe"}},
		{"reproduce config", []string{"reproduce", "linear-mdp", "--config", fifo, "--quiet", "--out", out}, []string{"--config", "not a regular file"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			code, stderr := runCLIWithin(t, fifo, c.args...)
			if code != 2 {
				t.Errorf("exit %d, want 2 (stderr %q)", code, stderr)
			}
			for _, w := range c.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr %q does not mention %q", stderr, w)
				}
			}
			if el := time.Since(start); el > 30*time.Second {
				t.Errorf("took %v", el)
			}
		})
	}
}

// TestLargeConfigRefused: a sweep or run configuration over the 64 MiB limit (a sparse file)
// is refused at once with exit status 2 naming the limit, without being read (`sweep plan`
// used to read any size).
func TestLargeConfigRefused(t *testing.T) {
	big := boundedreadtest.Sparse(t, filepath.Join(t.TempDir(), "big.yaml"))
	for _, args := range [][]string{
		{"sweep", "plan", big},
		{"sweep", "run", big, "--out", filepath.Join(filepath.Dir(big), "out"), "--shard", "0/1"},
		{"run", "--config", big},
		{"run", "--env", "file", "--env-file", big, "--episodes", "10", "--seeds", "1"},
	} {
		start := time.Now()
		code, stderr := runCLIWithin(t, "", args...)
		if code != 2 || !strings.Contains(stderr, "64 MiB") {
			t.Errorf("%q: exit %d, stderr %q; want 2 naming the 64 MiB limit", args, code, stderr)
		}
		if el := time.Since(start); el > 30*time.Second {
			t.Errorf("%q took %v: the file was read", args, el)
		}
	}
}
