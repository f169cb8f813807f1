// Command dprl runs differentially private reinforcement-learning experiments.
//
//	dprl reproduce qiao-fig1          # Qiao & Wang (2023) Figure 1 on RiverSwim
//	dprl run --agent dp-ucbvi-jdp --epsilon 1 --episodes 20000 --seeds 1-5
//	dprl list                         # environments, agents, privatizers
//
// Errors are printed to stderr with a non-zero exit status (2 for bad input, 1 otherwise).
package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/dprl/dprl/experiment/rundir"
	"github.com/dprl/dprl/internal/membudget"
)

// usageError marks bad input (exit status 2).
type usageError struct{ err error }

func (u usageError) Error() string { return u.err.Error() }
func (u usageError) Unwrap() error { return u.err }

func badInput(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

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
		if errors.As(err, &u) || isCobraUsage(err) || errors.Is(err, rundir.ErrEarlierRun) || errors.Is(err, rundir.ErrBadOut) ||
			membudget.IsError(err) {
			return 2
		}
		return 1
	}
	return 0
}
