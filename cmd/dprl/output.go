package main

import (
	"github.com/spf13/cobra"

	"github.com/dprl/dprl/experiment/rundir"
)

// outputFlags are the output flags of every run and reproduce command: --force (replace an
// earlier run in --out) and --log-y (the y axis of the regret figures).
type outputFlags struct {
	force bool
	logY  string
}

// add registers --force and --log-y on cmd with the given default y axis.
func (o *outputFlags) add(cmd *cobra.Command, logYDefault string) {
	f := cmd.Flags()
	f.BoolVar(&o.force, "force", false, "replace an earlier run in the output directory (its manifest, summaries, figures and CSV files are removed first)")
	f.StringVar(&o.logY, "log-y", logYDefault, "y axis of the regret figures: auto (logarithmic when the final values differ by more than a factor 100), log or linear")
}

// check validates --log-y.
func (o outputFlags) check() error {
	switch o.logY {
	case "auto", "log", "linear":
		return nil
	}
	return badInput("--log-y: must be auto, log or linear, got %q", o.logY)
}

// options returns the flags as the families' output options.
func (o outputFlags) options() rundir.Options { return rundir.Options{Force: o.force, LogY: o.logY} }
