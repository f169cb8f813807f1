package main

import (
	"io"

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
			return runLinMDPSuite(cmd, suite, seeds, episodes, workers, out, o, stdout, stderr, quiet)
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
