// Package longtest gates the long checks of dprl's test suite: full golden reproductions,
// audit escalations, kill -9 matrices and every other test too slow for the README's
// `go test ./...` (at most 2 minutes on 2 idle cores). They run when DPRL_LONG is set, which
// .ci/run does when it runs them by name; a plain `go test ./...` skips them and says how to
// run them.
package longtest

import (
	"os"
	"testing"
)

// Env is the environment variable that enables the long checks.
const Env = "DPRL_LONG"

// Enabled reports whether the long checks run (DPRL_LONG is set and not "0").
func Enabled() bool {
	v := os.Getenv(Env)
	return v != "" && v != "0"
}

// Skip skips t unless the long checks run; what says what the check does and how long it
// takes, for the skip message.
func Skip(t testing.TB, what string) {
	t.Helper()
	if !Enabled() {
		t.Skipf("long check (%s): runs in .ci/run, or with %s=1 go test -run '^%s$'", what, Env, t.Name())
	}
}
