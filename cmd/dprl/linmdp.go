package main

import (
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	explin "github.com/dprl/dprl/experiment/linmdp"
)

// newLinearMDPCmd is `dprl reproduce linear-mdp`.
func newLinearMDPCmd(stdout, stderr io.Writer) *cobra.Command {
	var out, seeds, config string
	var episodes, workers int
	var quiet bool
	var o outputFlags
	cmd := &cobra.Command{
		Use:   "linear-mdp",
		Short: "Linear MDPs: LSVI-UCB vs Ngo et al. (low switching) and Luyo et al. (batched) private LSVI-UCB, regret vs K at several ε",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			var suite *explin.Suite
			var err error
			if config != "" {
				if err := checkInputFile("--config", config); err != nil {
					return err
				}
				// LoadSuite records the file and its SHA-256 in every manifest.
				suite, err = explin.LoadSuite(config)
			} else {
				suite, err = explin.DefaultSuite()
			}
			if err != nil {
				return usageError{err}
			}
			return runLinMDPSuite(cmd, suite, seeds, episodes, workers, out, o, stdout, stderr, quiet)
		},
	}
	f := cmd.Flags()
	f.StringVar(&out, "out", "", "run directory (default runs/linear-mdp)")
	f.StringVar(&config, "config", "", "YAML configuration replacing the embedded one")
	f.StringVar(&seeds, "seeds", "", "override the seeds of every block, e.g. 1-5")
	f.IntVar(&episodes, "episodes", 0, "override K in every block (default: main 20000, long 200000)")
	f.IntVar(&workers, "workers", 0, "parallel runs (0 = all cores)")
	f.BoolVar(&quiet, "quiet", false, "no progress output")
	o.add(cmd, "auto")
	return cmd
}

// runLinMDPSuite is what `reproduce linear-mdp` and `reproduce practical-linear-mdp` share once
// they hold a suite: apply --seeds and --episodes to every block, validate everything (every
// ε included) before any compute, and execute the suite's plan on the engine.
func runLinMDPSuite(cmd *cobra.Command, suite *explin.Suite, seeds string, episodes, workers int, out string, o outputFlags, stdout, stderr io.Writer, quiet bool) error {
	var seedList []uint64
	if cmd.Flags().Changed("seeds") {
		var err error
		if seedList, err = parseSeeds(seeds); err != nil {
			return err
		}
	}
	for _, b := range suite.Blocks {
		if cmd.Flags().Changed("episodes") {
			b.Episodes = episodes
		}
		if seedList != nil {
			b.Seeds = seedList
		}
	}
	if err := suite.Validate(); err != nil {
		return usageError{err}
	}
	for _, b := range suite.Blocks {
		for i, e := range b.Epsilons {
			if err := checkEpsilon(fmt.Sprintf("%s: epsilons[%d]", b.Name, i), e, false); err != nil {
				return err
			}
		}
	}
	if !cmd.Flags().Changed("out") {
		out = "runs/" + suite.Name
	}
	if err := preflight(workers, out, true, o); err != nil {
		return err
	}
	p, err := explin.PlanSuite(suite)
	if err != nil {
		return usageError{err}
	}
	start := time.Now()
	text, err := executePlan(p, workers, out, o, suite.Inputs, stderr, quiet)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s in %.1f s.\n", text, time.Since(start).Seconds())
	return nil
}
