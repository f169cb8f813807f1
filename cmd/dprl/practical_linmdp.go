package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"strings"
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
			if err := checkWorkers(workers); err != nil {
				return err
			}
			if workers == 0 {
				workers = runtime.GOMAXPROCS(0)
			}
			if err := o.check(); err != nil {
				return err
			}
			if !cmd.Flags().Changed("out") {
				out = "runs/" + suite.Name
			}
			if err := prepareOut(out, o.force); err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
			defer stop()
			opts := explin.Options{Workers: workers, Output: o.options()}
			if !quiet {
				start := time.Now()
				last := int64(-1)
				opts.Progress = func(done, total int64) {
					if pct := done * 10 / max(total, 1); pct != last {
						last = pct
						fmt.Fprintf(stderr, "dprl: %s: %d/%d episodes (%d%%), elapsed %.0fs\n", suite.Name, done, total, pct*10, time.Since(start).Seconds())
					}
				}
			}
			man, summary, err := explin.RunPracticalSuite(ctx, suite, opts, out, os.Args)
			if err != nil {
				return err
			}
			fmt.Fprint(stdout, summary)
			fmt.Fprintf(stdout, "\nWrote %s (manifest.json, summary.md, %s, */curves/*.csv) in %.1f s.\n", out, strings.Join(man.Figures, ", "), man.Seconds)
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
