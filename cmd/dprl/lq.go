package main

import (
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	explq "github.com/dprl/dprl/experiment/lq"
)

func newLQCmd(stdout, stderr io.Writer) *cobra.Command {
	var out, seeds, config string
	var episodes, workers int
	var extended, quiet bool
	var mult float64
	var o outputFlags
	cmd := &cobra.Command{
		Use:   "lq",
		Short: "LQ control: OFU-RL vs Private-OFU-RL on LQ-E1, regret vs K for ε ∈ {0.1, 1, 10, ∞} (--extended: ε ∈ {10, 100, 1000}, K = 10^5)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			var cfg *explq.Config
			var err error
			if cmd.Flags().Changed("config") {
				if err := checkInputFile("--config", config); err != nil {
					return err
				}
				cfg, err = explq.LoadConfig(config)
			} else {
				cfg, err = explq.DefaultConfig()
			}
			if err != nil {
				return usageError{err}
			}
			if cmd.Flags().Changed("episodes") {
				if episodes < 1 || episodes > 10_000_000 {
					return badInput("--episodes: must be in [1, 10000000], got %d", episodes)
				}
				if extended {
					cfg.Extended.Episodes = episodes
				} else {
					cfg.Episodes = episodes
				}
			}
			if cmd.Flags().Changed("seeds") {
				sd, err := parseSeeds(seeds)
				if err != nil {
					return err
				}
				if extended {
					cfg.Extended.Seeds = sd
				} else {
					cfg.Seeds = sd
				}
			}
			if cmd.Flags().Changed("multiplier") {
				if !(mult > 0) || mult > 1e6 {
					return badInput("--multiplier: must be in (0, 1e6], got %v", mult)
				}
				cfg.WidthMultiplier = mult
			}
			if err := checkWorkers(workers); err != nil {
				return err
			}
			if err := cfg.Validate(); err != nil {
				return usageError{err}
			}
			eps := cfg.Epsilons
			if extended {
				eps = append(append([]float64(nil), cfg.Extended.Epsilons...), cfg.Extended.ZeroOutEpsilons...)
			}
			for i, e := range eps {
				if err := checkEpsilon(fmt.Sprintf("epsilons[%d]", i), e, true); err != nil {
					return err
				}
			}
			if err := o.check(); err != nil {
				return err
			}
			// Every curve keeps its cumulative regret for every seed and episode.
			curves, nSeeds, K := 1+len(cfg.Epsilons), len(cfg.Seeds), cfg.Episodes
			if extended {
				curves, nSeeds, K = 1+len(cfg.Extended.Epsilons)+len(cfg.Extended.ZeroOutEpsilons), len(cfg.Extended.Seeds), cfg.Extended.Episodes
			}
			if err := checkStored(curves, nSeeds, K); err != nil {
				return err
			}
			if !cmd.Flags().Changed("out") {
				out = "runs/lq"
				if extended {
					out = "runs/lq-extended"
				}
			}
			p, err := explq.PlanConfig(cfg, extended)
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
	f.StringVar(&out, "out", "", "run directory (default runs/lq, runs/lq-extended)")
	f.StringVar(&config, "config", "", "YAML configuration (default: the embedded experiment/lq/configs/lq-e1.yaml)")
	f.StringVar(&seeds, "seeds", "", "override the seeds, e.g. 1-5")
	f.IntVar(&episodes, "episodes", 0, "override K (default 20000; extended 100000)")
	f.IntVar(&workers, "workers", 0, "parallel runs (0 = all cores)")
	f.BoolVar(&extended, "extended", false, "run the extended sweep ε ∈ {10, 100, 1000} (+ zero-out ε = 10) instead")
	f.Float64Var(&mult, "multiplier", 1, "confidence-width multiplier (1 = theory; never changes noise)")
	f.BoolVar(&quiet, "quiet", false, "no progress output")
	o.add(cmd, "auto")
	return cmd
}
