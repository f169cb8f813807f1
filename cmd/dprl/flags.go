package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/dprl/dprl/experiment/engine"
	"github.com/dprl/dprl/internal/inputerr"
	"github.com/dprl/dprl/internal/membudget"
	"github.com/dprl/dprl/internal/progress"
)

// addMemoryFlag adds the global flag --memory to root and resolves the memory budget before
// every command (internal/membudget: --memory, else DPRL_MEMORY, else 3/4 of the physical
// memory or of the room RLIMIT_AS, RLIMIT_DATA or the cgroup leave). Runs estimated above the
// budget are refused with exit status 2 (membudget.Error), before they allocate.
func addMemoryFlag(root *cobra.Command) {
	var memory string
	root.PersistentFlags().StringVar(&memory, "memory", "",
		"memory budget, e.g. 3GiB or 512MiB (default: $DPRL_MEMORY, else 3/4 of the physical memory or of what RLIMIT_AS, RLIMIT_DATA or the cgroup leave); a run estimated above it is refused with exit status 2")
	root.PersistentPreRunE = func(cmd *cobra.Command, args []string) error {
		return inputerr.Wrap(membudget.Apply(memory, root.PersistentFlags().Changed("memory")))
	}
}

// outputFlags are the output flags of every run and reproduce command: --force (replace an
// earlier run in --out) and --log-y (the y axis of the regret figures).
type outputFlags struct {
	force bool
	logY  string
}

// add registers --force and --log-y on cmd with the given default y axis.
func (o *outputFlags) add(cmd *cobra.Command, logYDefault string) {
	f := cmd.Flags()
	f.BoolVar(&o.force, "force", false, "replace an earlier dprl run in the output directory: the files it wrote there (its ownership record lists them) are removed first; files dprl did not write are never removed or overwritten")
	f.StringVar(&o.logY, "log-y", logYDefault, "y axis of the regret figures: auto (logarithmic when the final values differ by more than a factor 100), log or linear")
}

// localRun returns the run on this machine of the shared flags (outSet: --out was given),
// with progress on stderr.
func localRun(workers int, out string, outSet bool, o outputFlags, stderr io.Writer, quiet bool) engine.LocalRun {
	return engine.LocalRun{Workers: workers, Out: out, OutSet: outSet, Force: o.force, LogY: o.logY, Command: os.Args,
		Progress: func(name string) (func(int64, int64), func()) { return progress.New(stderr, name, "episodes", quiet) }}
}

// runPrint runs l with plan and prints its text with the wall time.
func runPrint(stdout io.Writer, l engine.LocalRun, plan func() (*engine.Planned, error)) error {
	start := time.Now()
	text, err := l.Run(plan)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s in %.1f s.\n", text, time.Since(start).Seconds())
	return nil
}

// rejectChanged refuses flags that were set explicitly but would have no effect, naming why.
func rejectChanged(cmd *cobra.Command, why string, names ...string) error {
	for _, n := range names {
		if cmd.Flags().Changed(n) {
			return inputerr.New("--%s: has no effect %s; remove it", n, why)
		}
	}
	return nil
}

// parseEnvParams parses --env-param values (engine.ParseEnvParams).
func parseEnvParams(vals []string) (map[string]float64, error) { return engine.ParseEnvParams(vals) }
