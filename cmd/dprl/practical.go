package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"

	"github.com/spf13/cobra"

	pexp "github.com/dprl/dprl/experiment/practical"
)

func newPracticalTabularCmd(stdout, stderr io.Writer) *cobra.Command {
	var out, seeds, config string
	var episodes, workers int
	var long, quiet, force bool
	cmd := &cobra.Command{
		Use:   "practical-tabular",
		Short: "dprl's own practical private tabular agents (practical-jdp/ldp/psrl-jdp) vs UCBVI and the papers' DP-UCBVI, RiverSwim + Garnets, ε grid",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			var cfg *pexp.Config
			var err error
			if cmd.Flags().Changed("config") {
				if err := checkInputFile("--config", config); err != nil {
					return err
				}
				cfg, err = pexp.LoadConfig(config)
			} else {
				cfg, err = pexp.DefaultConfig()
			}
			if err != nil {
				return usageError{err}
			}
			if cmd.Flags().Changed("episodes") {
				cfg.Episodes, cfg.LDPEpisodes, cfg.Garnet.Episodes = episodes, episodes, episodes
			}
			if cmd.Flags().Changed("seeds") {
				if cfg.Seeds, err = parseSeeds(seeds); err != nil {
					return err
				}
			}
			cfg.Long = long
			if err := cfg.Validate(); err != nil {
				return usageError{err}
			}
			for i, e := range cfg.Epsilons {
				if err := checkEpsilon(fmt.Sprintf("epsilons[%d]", i), e, false); err != nil {
					return err
				}
			}
			if err := checkWorkers(workers); err != nil {
				return err
			}
			if workers == 0 {
				workers = runtime.GOMAXPROCS(0)
			}
			if !cmd.Flags().Changed("out") {
				out = "runs/practical-tabular"
			}
			// experiment/practical's Write does not prepare the directory itself: an earlier
			// run in --out is refused (or, with --force, removed) here, before any compute.
			if err := prepareOut(out, force); err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
			defer stop()
			opts := pexp.Options{Workers: workers}
			var finish func()
			opts.Progress, finish = progress(stderr, cfg.Name, "episodes", quiet)
			res, err := pexp.Run(ctx, cfg, opts)
			finish()
			if err != nil {
				return err
			}
			man, summary, err := res.Write(out, os.Args)
			if err != nil {
				return fmt.Errorf("writing %s: %w", out, err)
			}
			fmt.Fprint(stdout, summary)
			fmt.Fprintf(stdout, "\nWrote %s (manifest.json, summary.md, %d figures, %d CSV files) in %.1f s.\n", out, len(man.Figures), len(man.CSV), res.Seconds)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&out, "out", "", "run directory (default runs/practical-tabular)")
	f.StringVar(&config, "config", "", "YAML configuration (default: the embedded experiment/practical/configs/practical-tabular.yaml)")
	f.StringVar(&seeds, "seeds", "", "override the RiverSwim seeds, e.g. 1-5")
	f.IntVar(&episodes, "episodes", 0, "override every K (quick runs)")
	f.IntVar(&workers, "workers", 0, "parallel runs (0 = all cores)")
	f.BoolVar(&long, "long", false, "run the LDP curves for ldp_long_episodes (10⁶) instead of ldp_episodes")
	f.BoolVar(&quiet, "quiet", false, "no progress output")
	f.BoolVar(&force, "force", false, "replace an earlier run in the output directory (its manifest, summaries, figures and CSV files are removed first)")
	return cmd
}
