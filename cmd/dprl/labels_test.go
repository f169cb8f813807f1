package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestClientSimulateLabels: `dprl client simulate` creates its experiment as a simulation; a
// non-private agent is refused with an ε (the server's 400 naming epsilon) and created only
// with --non-private, which takes neither --epsilon nor --delta (exit 2) and is labelled
// NON-PRIVATE (capacity K − 1 = 49 for practical-ucbvi).
func TestClientSimulateLabels(t *testing.T) {
	useTestTokens(t)
	srv := startServe(t, filepath.Join(t.TempDir(), "data"), "127.0.0.1:0")
	base := []string{"client", "simulate", "--server", srv.url,
		"--family", "tabular", "--env", "riverswim", "--env-param", "horizon=5", "--capacity", "50", "--agent", "practical-ucbvi"}
	if code, _, stderr := runCLI(t, append(base, "--epsilon", "1")...); code == 0 || !strings.Contains(stderr, "(epsilon)") {
		t.Errorf("a non-private agent with --epsilon 1: exit %d: %s", code, stderr)
	}
	if code, _, stderr := runCLI(t, append(base, "--non-private", "--epsilon", "1")...); code != 2 {
		t.Errorf("--non-private with --epsilon: exit %d, want 2: %s", code, stderr)
	}
	code, stdout, stderr := runCLI(t, append(base, "--non-private")...)
	if code != 0 || !strings.Contains(stderr, "NON-PRIVATE") || !strings.Contains(stdout, "49 reports acknowledged") {
		t.Errorf("--non-private: exit %d: %s %s", code, stdout, stderr)
	}
	srv.stop(t)
}
