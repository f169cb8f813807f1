package main

import (
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	explin "github.com/dprl/dprl/experiment/linmdp"
)

// newPracticalLinearMDPCmd is `dprl reproduce practical-linear-mdp`: dprl's practical private
// LSVI-UCB (low-switching and batched; no regret proof) with its twins and theory variant,
// beside the papers' agents, on E2 at K = 2·10⁵, ε ∈ {0.5, 1, 2, 5, 10}; the summary states
// which of issue 13's goals hold.
func newPracticalLinearMDPCmd(stdout, stderr io.Writer) *cobra.Command {
	var out, seeds string
	var episodes, workers int
	var long, quiet bool
	var o outputFlags
	cmd := &cobra.Command{
		Use:   "practical-linear-mdp",
		Short: "dprl's practical private LSVI-UCB (practical-lsvi, no regret proof) vs Ngo et al., Luyo et al. and non-private twins on E2, ε grid (--long: 10 seeds + LSVI-UCB)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			suite, err := explin.PracticalSuite(long)
			if err != nil {
				return usageError{err}
			}
			var seedList []uint64
			if cmd.Flags().Changed("seeds") {
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
		},
	}
	f := cmd.Flags()
	f.StringVar(&out, "out", "", "run directory (default runs/practical-linear-mdp)")
	f.StringVar(&seeds, "seeds", "", "override the seeds, e.g. 1-5")
	f.IntVar(&episodes, "episodes", 0, "override K (default 200000, the goal's setting)")
	f.IntVar(&workers, "workers", 0, "parallel runs (0 = all cores)")
	f.BoolVar(&long, "long", false, "10 seeds and LSVI-UCB (refit every episode)")
	f.BoolVar(&quiet, "quiet", false, "no progress output")
	o.add(cmd, "auto")
	return cmd
}
