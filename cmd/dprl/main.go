// Command dprl runs differentially private reinforcement-learning experiments.
//
//	dprl reproduce qiao-fig1          # Qiao & Wang (2023) Figure 1 on RiverSwim
//	dprl run --agent dp-ucbvi-jdp --epsilon 1 --episodes 20000 --seeds 1-5
//	dprl list                         # environments, agents, privatizers
//
// Errors are printed to stderr with a non-zero exit status (2 for bad input, 1 otherwise).
// The command only parses flags and prints: the libraries check the input (returning
// inputerr.Error for the user's mistakes) and do the work.
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

// usageError marks bad input (exit status 2), as inputerr.Error does for the libraries.
type usageError struct{ err error }

func (u usageError) Error() string { return u.err.Error() }
func (u usageError) Unwrap() error { return u.err }

func badInput(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

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
		var u usageError
		if errors.As(err, &u) || inputerr.Is(err) || errors.As(err, new(*compare.InputError)) || isCobraUsage(err) || errors.Is(err, rundir.ErrEarlierRun) || errors.Is(err, rundir.ErrBadOut) ||
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
