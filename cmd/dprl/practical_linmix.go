package main

import (
	"io"

	"github.com/spf13/cobra"

	lmexp "github.com/dprl/dprl/experiment/linmix"
)

// newPracticalLinearMixtureCmd is `dprl reproduce practical-linear-mixture` (issue 13): the
// papers' private UCRL-VTR, dprl's practical private UCRL-VTR (JDP/LDP, noise-off twin, theory
// variant; no regret proof) and the non-private baselines at ε ∈ {0.5, 1, 2, 5, 10} on
// TwoStateHard, K = 2·10⁴; --long runs the K = 2·10⁵ LDP goal.
func newPracticalLinearMixtureCmd(stdout, stderr io.Writer) *cobra.Command {
	var out, seeds, config string
	var episodes, workers int
	var quiet, long bool
	var o outputFlags
	cmd := &cobra.Command{
		Use:   "practical-linear-mixture",
		Short: "Linear mixtures: dprl's practical private UCRL-VTR (JDP/LDP, Gaussian factorisation counters, exact GDP) vs the papers' agents and baselines",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			var cfg *lmexp.Config
			var err error
			if cmd.Flags().Changed("config") {
				if long {
					return badInput("--long: has no effect beside --config (set the episodes in the configuration file); remove it")
				}
				if err := checkInputFile("--config", config); err != nil {
					return err
				}
				cfg, err = lmexp.LoadConfig(config)
			} else {
				cfg, err = lmexp.PracticalConfig(long)
			}
			if err != nil {
				return usageError{err}
			}
			if !cmd.Flags().Changed("out") {
				out = "runs/" + cfg.Name
			}
			return runLinMixConfig(cmd, cfg, seeds, episodes, workers, out, o, stdout, stderr, quiet)
		},
	}
	f := cmd.Flags()
	f.StringVar(&out, "out", "", "run directory (default runs/<config name>)")
	f.StringVar(&config, "config", "", "YAML configuration (default: the embedded experiment/linmix/configs/practical-linear-mixture.yaml)")
	f.StringVar(&seeds, "seeds", "", "override the seeds, e.g. 1-5")
	f.IntVar(&episodes, "episodes", 0, "override K (default 20000; 200000 with --long)")
	f.IntVar(&workers, "workers", 0, "parallel runs (0 = all cores)")
	f.BoolVar(&quiet, "quiet", false, "no progress output")
	f.BoolVar(&long, "long", false, "the K = 2·10⁵ LDP goal run (practical-linear-mixture-long.yaml)")
	o.add(cmd, "auto")
	return cmd
}
