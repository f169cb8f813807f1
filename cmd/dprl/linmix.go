package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"

	"github.com/spf13/cobra"

	lmexp "github.com/dprl/dprl/experiment/linmix"
)

func newLinearMixtureCmd(stdout, stderr io.Writer) *cobra.Command {
	var out, seeds, config string
	var episodes, workers int
	var quiet bool
	var o outputFlags
	cmd := &cobra.Command{
		Use:   "linear-mixture",
		Short: "Linear mixture MDPs: UCRL-VTR vs private UCRL-VTR (JDP, LDP, Laplace), UCRL-VTR+, LinOpt-VI/PO on TwoStateHard and HardToLearn",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			var cfg *lmexp.Config
			var err error
			if config != "" {
				if err := checkInputFile("--config", config); err != nil {
					return err
				}
				cfg, err = lmexp.LoadConfig(config)
			} else {
				cfg, err = lmexp.DefaultConfig()
			}
			if err != nil {
				return usageError{err}
			}
			if cmd.Flags().Changed("episodes") {
				cfg.Episodes = episodes
			}
			if cmd.Flags().Changed("seeds") {
				if cfg.Seeds, err = parseSeeds(seeds); err != nil {
					return err
				}
			}
			if err := cfg.Validate(); err != nil {
				return usageError{err}
			}
			for i, cv := range cfg.Curves {
				for j, e := range cv.Epsilons {
					if err := checkEpsilon(fmt.Sprintf("curves[%d].epsilons[%d]", i, j), e, false); err != nil {
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
				out = "runs/linear-mixture"
			}
			if err := prepareOut(out, o.force); err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
			defer stop()
			opts := lmexp.Options{Workers: workers, Output: o.options()}
			var finish func()
			opts.Progress, finish = progress(stderr, cfg.Name, "episodes", quiet)
			res, err := lmexp.Run(ctx, cfg, opts)
			finish()
			if err != nil {
				return err
			}
			man, summary, err := res.Write(out, os.Args)
			if err != nil {
				return fmt.Errorf("writing %s: %w", out, err)
			}
			fmt.Fprint(stdout, summary)
			fmt.Fprintf(stdout, "\nWrote %s (manifest.json, summary.md, summary.claims.json, %d figures, curves/*/*.csv) in %.1f s.\n", out, len(man.Figures), res.Seconds)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&out, "out", "", "run directory (default runs/linear-mixture)")
	f.StringVar(&config, "config", "", "YAML configuration (default: the embedded experiment/linmix/configs/linear-mixture.yaml)")
	f.StringVar(&seeds, "seeds", "", "override the seeds, e.g. 1-5")
	f.IntVar(&episodes, "episodes", 0, "override K (default 20000)")
	f.IntVar(&workers, "workers", 0, "parallel runs (0 = all cores)")
	f.BoolVar(&quiet, "quiet", false, "no progress output")
	o.add(cmd, "auto")
	return cmd
}
