// Command dprl runs differentially private reinforcement-learning experiments (dprl list,
// run, reproduce, sweep, audit, compare; docs/cli.md). It only parses flags and prints: the
// libraries check the input and do the work. Errors are printed to stderr with exit status 2
// for bad input (inputerr.Error and the like) and 1 otherwise.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/dprl/dprl/experiment/engine"
	"github.com/dprl/dprl/experiment/families"
	"github.com/dprl/dprl/experiment/rundir"
	"github.com/dprl/dprl/internal/inputerr"
	"github.com/dprl/dprl/internal/membudget"
	"github.com/dprl/dprl/report/compare"
)

// newRegistry returns the registry of every family (package experiment/families).
func newRegistry() *engine.Registry { return families.New() }

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run executes the CLI and returns the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	cmd := newRoot(stdout, stderr)
	cmd.SetArgs(args)
	if err := cmd.Execute(); err != nil {
		fmt.Fprintf(stderr, "dprl: error: %v\n", err)
		if inputerr.Is(err) || compare.IsInputError(err) || isCobraUsage(err) || errors.Is(err, rundir.ErrEarlierRun) || errors.Is(err, rundir.ErrBadOut) ||
			membudget.IsError(err) {
			return 2
		}
		return 1
	}
	return 0
}

func isCobraUsage(err error) bool {
	s := err.Error()
	return strings.HasPrefix(s, "unknown command") || strings.HasPrefix(s, "unknown flag") ||
		strings.Contains(s, "accepts ") || strings.HasPrefix(s, "invalid argument")
}
