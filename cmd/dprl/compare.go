package main

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/dprl/dprl/report/compare"
)

// newCompareCmd is `dprl compare`, a thin wrapper of package report/compare.
func newCompareCmd(stdout io.Writer) *cobra.Command {
	var asJSON, allowEnv bool
	var fig string
	var globs []string
	cmd := &cobra.Command{
		Use:   "compare RUN...",
		Short: "Compare the final regret of the curves of run directories: IQM with stratified bootstrap CIs and probability of improvement (rliable)",
		Long: "Compare the final regret R(K) of the curves of run directories written by dprl run, dprl reproduce or dprl sweep merge\n" +
			"(the curves their manifest lists, docs/run-directory.md; the regret_long.csv or curves/*.csv of older runs): the IQM across\n" +
			"seeds with a stratified bootstrap CI, and the\n" +
			"probability of improvement of every pair of curves (rliable). The curves must end at the same episode K and be on the\n" +
			"same environment (config.resolved.yaml); --allow-different-env compares different environments with a warning.",
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return compare.Report(stdout, args, compare.Options{Globs: globs, AllowDifferentEnv: allowEnv, Warn: cmd.ErrOrStderr()}, fig, asJSON)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&asJSON, "json", false, "print JSON instead of Markdown")
	f.StringVar(&fig, "fig", "", "write a figure of the IQMs with their CIs (.png or .svg)")
	f.StringArrayVar(&globs, "curve", nil, "only curves whose name (the curve column of regret_long.csv: path under curves/, no .csv) matches this shell pattern (repeatable)")
	f.BoolVar(&allowEnv, "allow-different-env", false, "compare curves of different environments (with a warning) instead of refusing")
	return cmd
}
