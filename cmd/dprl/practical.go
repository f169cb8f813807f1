package main

import (
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	pexp "github.com/dprl/dprl/experiment/practical"
)

func newPracticalTabularCmd(stdout, stderr io.Writer) *cobra.Command {
	var out, seeds, config string
	var episodes, workers int
	var long, quiet bool
	var o outputFlags
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
			if err := checkWorkers(workers); err != nil {
				return err
			}
			if err := o.check(); err != nil {
				return err
			}
			if err := cfg.Validate(); err != nil {
				return usageError{err}
			}
			for i, e := range cfg.Epsilons {
				if err := checkEpsilon(fmt.Sprintf("epsilons[%d]", i), e, false); err != nil {
					return err
				}
			}
			if !cmd.Flags().Changed("out") {
				out = "runs/practical-tabular"
			}
			p, err := pexp.PlanConfig(cfg)
			if err != nil {
				return usageError{err}
			}
			start := time.Now()
			text, err := executePlan(p, workers, out, o, cfg.Inputs, stderr, quiet)
			if err != nil {
				return err
			}
			fmt.Fprintf(stdout, "%s in %.1f s.\n", text, time.Since(start).Seconds())
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
	o.add(cmd, "auto")
	return cmd
}
