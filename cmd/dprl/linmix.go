package main

import (
	"fmt"
	"io"
	"time"

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
			if !cmd.Flags().Changed("out") {
				out = "runs/linear-mixture"
			}
			return runLinMixConfig(cmd, cfg, seeds, episodes, workers, out, o, stdout, stderr, quiet)
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

// runLinMixConfig is what `reproduce linear-mixture` and `reproduce practical-linear-mixture`
// share once they hold a configuration and an output directory: apply --episodes and --seeds,
// validate everything (every ε included) before any compute, and execute the plan on the
// engine.
func runLinMixConfig(cmd *cobra.Command, cfg *lmexp.Config, seeds string, episodes, workers int, out string, o outputFlags, stdout, stderr io.Writer, quiet bool) error {
	if cmd.Flags().Changed("episodes") {
		cfg.Episodes = episodes
	}
	if cmd.Flags().Changed("seeds") {
		var err error
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
	p, err := lmexp.PlanConfig(cfg)
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
}
