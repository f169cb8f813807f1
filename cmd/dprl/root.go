package main

import (
	"io"
	"strings"

	"github.com/spf13/cobra"

	agents "github.com/dprl/dprl/agents/tabular"
	"github.com/dprl/dprl/experiment/engine"
	tabexp "github.com/dprl/dprl/experiment/tabular"
	"github.com/dprl/dprl/internal/inputerr"
)

func newRoot(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:           "dprl",
		Short:         "Differentially private exploration in reinforcement learning",
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       tabexp.Version,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return inputerr.Error{Err: err} })
	addMemoryFlag(root)
	root.AddCommand(newRunCmd(stdout, stderr), newReproduceCmd(stdout, stderr), newListCmd(stdout), newAuditCmd(stdout, stderr),
		newSweepCmd(stdout, stderr), newCompareCmd(stdout), newReportCmd(stdout), newServeCmd(stdout, stderr), newClientCmd(stdout, stderr))
	return root
}

// runConfigFlags are the `dprl run` flags that describe the experiment, refused beside
// --config.
func runConfigFlags() []string {
	return []string{"env", "env-file", "horizon", "states", "actions", "branching", "reward-density", "env-seed", "agent",
		"epsilon", "calibration", "beta", "preset", "multiplier", "e-mode", "episodes", "seeds", "noise", "env-param", "delta"}
}

// newRunCmd is `dprl run`: a configuration file (any family's RunSpec or sweep block), the
// shared flags (engine.RunFlags → RunSpec → the family), or the papers' tabular agents' flags
// (tabexp.Flags).
func newRunCmd(stdout, stderr io.Writer) *cobra.Command {
	var (
		configPath, out string
		workers         int
		quiet           bool
		o               outputFlags
		fl              tabexp.Flags // every flag of the run but the ones above
	)
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run one configuration (environment, agent, privacy setting, K, seeds)",
		Long: "Run one configuration, either from flags or from a YAML experiment file (--config).\n" +
			"Seeds run in parallel; the same seed gives bit-identical results whatever --workers is.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ch := cmd.Flags().Changed
			l, family := localRun(workers, out, ch("out"), o, stderr, quiet), fl.Family
			if ch("config") {
				// The configuration file is the whole experiment: a flag that would change it
				// is refused rather than ignored.
				if err := rejectChanged(cmd, "beside --config (set it in the configuration file)", runConfigFlags()...); err != nil {
					return err
				}
				fam, block, inputs, err := engine.ReadRunConfig(configPath, tabexp.FamilyName)
				if err != nil {
					return err
				}
				if ch("family") && family != fam {
					return inputerr.New("--family %s: the configuration file says family: %s", family, fam)
				}
				l.Inputs = inputs
				return runPrint(stdout, l, func() (*engine.Planned, error) { return newRegistry().PlanBlock(fam, block, configPath) })
			}
			if _, err := agents.LookupPractical(fl.Agent); family != tabexp.FamilyName || err == nil {
				if _, err := newRegistry().Lookup(family); err != nil {
					return inputerr.New("--family: %v", err)
				}
				f := tabexp.SpecFlags(fl.RunFlags)
				f.Changed, f.Value = ch, func(flag string) string { return cmd.Flags().Lookup(flag).Value.String() }
				s, err := f.Spec()
				if err != nil {
					return err
				}
				if !ch("out") {
					l.Out, l.OutSet = engine.DefaultRunDir(s.Family, strings.Join(s.Agents, "+"), s), true
				}
				return runPrint(stdout, l, func() (*engine.Planned, error) { return newRegistry().PlanFlags(s) })
			}
			fl.Changed = ch
			cfg, err := fl.FromFlags(cmd.Flags().Set)
			if err != nil {
				return err
			}
			if !ch("out") {
				l.Out, l.OutSet = engine.DefaultRunDir(tabexp.FamilyName, fl.Agent, cfg), true
			}
			return runPrint(stdout, l, func() (*engine.Planned, error) { return tabexp.PlanConfig(cfg) })
		},
	}
	f := cmd.Flags()
	f.StringVar(&configPath, "config", "", "YAML experiment file (overrides the other flags); its family: selects the agent family (default tabular)")
	f.StringVar(&fl.Family, "family", tabexp.FamilyName, "agent family (see dprl list); the shared flags (--env, --env-file, --env-param, --agent, --epsilon, --delta, --calibration, --noise, --multiplier, --episodes, --seeds) work for every family")
	f.StringVar(&out, "out", "", "run directory (default: runs/<name> of --config; from flags, runs/<family>-<agent>-<hash of the configuration>)")
	f.StringVar(&fl.Env, "env", "riverswim", "environment (tabular: riverswim, garnet or file; other families: dprl list, default the family's reference environment)")
	f.StringVar(&fl.EnvFile, "env-file", "", "model file (JSON or YAML) for --env file")
	f.StringArrayVar(&fl.EnvParams, "env-param", nil, "environment parameter NAME=NUMBER (repeatable; dprl list names each environment's parameters)")
	f.Float64Var(&fl.Delta, "delta", 1e-5, "δ of (ε, δ) agents (families other than tabular)")
	f.IntVar(&fl.Horizon, "horizon", 20, "horizon H (riverswim, garnet)")
	f.IntVar(&fl.States, "states", 10, "garnet: number of states")
	f.IntVar(&fl.Actions, "actions", 3, "garnet: number of actions")
	f.IntVar(&fl.Branching, "branching", 3, "garnet: next states per (s,a)")
	f.Float64Var(&fl.Density, "reward-density", 0.3, "garnet: fraction of (s,a) with a random reward")
	f.Uint64Var(&fl.EnvSeed, "env-seed", 1, "garnet: generator seed")
	f.StringVar(&fl.Agent, "agent", "ucbvi", "agent (see dprl list)")
	f.Float64Var(&fl.Epsilon, "epsilon", 0, "privacy budget ε (private agents)")
	f.StringVar(&fl.Calibration, "calibration", "exact", "noise calibration: exact, paper or unit (strict: old name of exact; see dprl list)")
	f.Float64Var(&fl.Beta, "beta", 0.1, "failure probability β")
	f.StringVar(&fl.Preset, "preset", "practical", "bonus preset: practical or theory")
	f.Float64Var(&fl.Multiplier, "multiplier", 1, "bonus multiplier (does not change noise)")
	f.StringVar(&fl.EMode, "e-mode", "", "count-error bound E: theory or practical (default: the preset's)")
	f.IntVar(&fl.Episodes, "episodes", 10000, "number of episodes K")
	f.StringVar(&fl.Seeds, "seeds", "1-5", "seeds, e.g. 1-5 or 1,2,3")
	f.IntVar(&workers, "workers", 0, "parallel runs (0 = all cores)")
	f.StringVar(&fl.Noise, "noise", "seeded", "noise source: seeded (reproducible experiments) or secure (crypto-seeded, granular)")
	f.BoolVar(&quiet, "quiet", false, "no progress output")
	o.add(cmd, "auto")
	return cmd
}
