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
						fmt.Fprintf(stderr, "dprl: %s: %d/%d runs of the block (%d%%), elapsed %.0fs\n", suite.Name, done, total, pct*10, time.Since(start).Seconds())
					}
				}
			}
			man, summary, err := explin.RunSuite(ctx, suite, opts, out, os.Args)
			if err != nil {
				return err
			}
			fmt.Fprint(stdout, summary)
			fmt.Fprintf(stdout, "\nWrote %s (manifest.json, summary.md, %s, */curves/*.csv) in %.1f s.\n", out, strings.Join(man.Figures, ", "), man.Seconds)
			return nil
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
