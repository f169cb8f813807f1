package main

import (
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	explq "github.com/dprl/dprl/experiment/lq"
)

// newPracticalLQCmd is `dprl reproduce practical-lq`: dprl's practical Private-OFU-RL (and its
// theory-constant variant and noise-off twin) beside the paper's Private-OFU-RL and OFU-RL on
// LQ-E1, ε ∈ {0.5, 1, 2, 5, 10}.
func newPracticalLQCmd(stdout, stderr io.Writer) *cobra.Command {
	var out, seeds string
	var episodes, workers int
	var long, quiet bool
	var o outputFlags
	cmd := &cobra.Command{
		Use:   "practical-lq",
		Short: "dprl's practical Private-OFU-RL (practical-ofu-rl, no regret proof) vs the paper's Private-OFU-RL and OFU-RL on LQ-E1, ε grid (--long: 5 seeds)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := explq.DefaultPracticalExpConfig()
			if err != nil {
				return usageError{err}
			}
			if cmd.Flags().Changed("episodes") {
				if episodes < 2 || episodes > 10_000_000 {
					return badInput("--episodes: must be in [2, 10000000], got %d", episodes)
				}
				cfg.Episodes = episodes
				cfg.PaperEpisodes = min(cfg.PaperEpisodes, episodes)
				cfg.OFUEpisodes = min(cfg.OFUEpisodes, episodes)
			}
			if cmd.Flags().Changed("seeds") {
				s, err := parseSeeds(seeds)
				if err != nil {
					return err
				}
				cfg.Seeds, cfg.LongSeeds = s, nil
			}
			if err := checkWorkers(workers); err != nil {
				return err
			}
			if err := cfg.Validate(); err != nil {
				return usageError{err}
			}
			for i, e := range append(append([]float64(nil), cfg.Epsilons...), cfg.TheoryEpsilons...) {
				if err := checkEpsilon(fmt.Sprintf("epsilons[%d] (with theory_epsilons)", i), e, false); err != nil {
					return err
				}
			}
			nSeeds := len(cfg.Seeds)
			if long && len(cfg.LongSeeds) > 0 {
				nSeeds = len(cfg.LongSeeds)
			}
			// Every (agent, ε) curve keeps its cumulative regret for every seed and episode.
			if err := checkStored(2*len(cfg.Epsilons)+len(cfg.TheoryEpsilons)+2, nSeeds, cfg.Episodes); err != nil {
				return err
			}
			if err := o.check(); err != nil {
				return err
			}
			if !cmd.Flags().Changed("out") {
				out = "runs/practical-lq"
			}
			cfg.Long = long
			p, err := explq.PlanPractical(cfg)
			if err != nil {
				return usageError{err}
			}
			start := time.Now()
			text, err := executePlan(p, workers, out, o, nil, stderr, quiet)
			if err != nil {
				return err
			}
			fmt.Fprintf(stdout, "%s in %.1f s.\n", text, time.Since(start).Seconds())
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&out, "out", "", "run directory (default runs/practical-lq)")
	f.StringVar(&seeds, "seeds", "", "override the seeds, e.g. 1-5")
	f.IntVar(&episodes, "episodes", 0, "override K of the practical agents (default 100000; the paper's agents are capped at it)")
	f.IntVar(&workers, "workers", 0, "parallel runs (0 = all cores)")
	f.BoolVar(&long, "long", false, "run the long seeds (5 seeds)")
	f.BoolVar(&quiet, "quiet", false, "no progress output")
	o.add(cmd, "log")
	return cmd
}
