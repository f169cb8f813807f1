package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"go.yaml.in/yaml/v3"

	agents "github.com/dprl/dprl/agents/tabular"
	"github.com/dprl/dprl/experiment"
	"github.com/dprl/dprl/experiment/engine"
	"github.com/dprl/dprl/experiment/rundir"
	"github.com/dprl/dprl/internal/strictdecode"
)

func newRoot(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:           "dprl",
		Short:         "Differentially private exploration in reinforcement learning",
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       experiment.Version,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return usageError{err} })
	addMemoryFlag(root)
	root.AddCommand(newRunCmd(stdout, stderr), newReproduceCmd(stdout, stderr), newListCmd(stdout), newAuditCmd(stdout, stderr),
		newSweepCmd(stdout, stderr), newCompareCmd(stdout))
	return root
}

func isCobraUsage(err error) bool {
	s := err.Error()
	return strings.HasPrefix(s, "unknown command") || strings.HasPrefix(s, "unknown flag") ||
		strings.Contains(s, "accepts ") || strings.HasPrefix(s, "invalid argument")
}

// execute runs a tabular experiment through the engine with a progress bar on a terminal and
// plain log lines otherwise, then writes the run directory; it returns the text to print. An
// interrupted run in out resumes. Every input (the configuration's Validate: ε, sizes, memory),
// --workers, --log-y and the output directory (an earlier completed run there needs --force) are
// checked before any compute.
func execute(cfg *experiment.Config, workers int, out string, o outputFlags, stderr io.Writer, quiet bool) (string, error) {
	if err := preflight(workers, out, true, o); err != nil {
		return "", err
	}
	p, err := experiment.PlanConfig(cfg)
	if err != nil {
		return "", usageError{err}
	}
	return executePlan(p, workers, out, o, cfg.Inputs, stderr, quiet)
}

func newRunCmd(stdout, stderr io.Writer) *cobra.Command {
	var (
		configPath, out, env, envFile, agent, calib, seeds, preset, emode, noiseKind, family string
		horizon, episodes, workers, states, actions, branching                               int
		eps, beta, mult, density, delta                                                      float64
		envParams                                                                            []string
		envSeed                                                                              uint64
		quiet                                                                                bool
		o                                                                                    outputFlags
	)
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run one configuration (environment, agent, privacy setting, K, seeds)",
		Long: "Run one configuration, either from flags or from a YAML experiment file (--config).\n" +
			"Seeds run in parallel; the same seed gives bit-identical results whatever --workers is.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			var cfg *experiment.Config
			var err error
			if cmd.Flags().Changed("config") {
				// The configuration file is the whole experiment: a flag that would change it
				// is refused rather than ignored.
				if err := rejectChanged(cmd, "beside --config (set it in the configuration file)", runConfigFlags...); err != nil {
					return err
				}
				if err := checkInputFile("--config", configPath); err != nil {
					return err
				}
				data, err := strictdecode.ReadFile(configPath)
				if err != nil {
					return badInput("--config: %v", err)
				}
				fam, block, err := engine.SplitFamily(data, experiment.FamilyName)
				if err != nil {
					return usageError{err}
				}
				if cmd.Flags().Changed("family") && family != fam {
					return badInput("--family %s: the configuration file says family: %s", family, fam)
				}
				inputs := []rundir.Input{rundir.HashBytes("config", configPath, data)}
				if fam != experiment.FamilyName || engine.IsRunSpec(block) {
					return runFamily(newRegistry(), fam, block, configPath, inputs, workers, out, cmd.Flags().Changed("out"), o, stdout, stderr, quiet)
				}
				if cfg, err = experiment.ParseConfig(block); err != nil {
					return usageError{err}
				}
				cfg.Inputs = inputs
				cfg.Env.Path = engine.RelativeTo(configPath, cfg.Env.Path)
			} else {
				_, practicalErr := agents.LookupPractical(agent)
				if family != experiment.FamilyName || practicalErr == nil {
					if _, err := newRegistry().Lookup(family); err != nil {
						return badInput("--family: %v", err)
					}
					s, err := runSpecFromFlags(cmd, runSpecFlags{family: family, env: env, envFile: envFile, agent: agent, calib: calib,
						noise: noiseKind, seeds: seeds, params: envParams, eps: eps, delta: delta, mult: mult, episodes: episodes})
					if err != nil {
						return err
					}
					return runSpec(s, workers, out, cmd.Flags().Changed("out"), o, stdout, stderr, quiet)
				}
				if cmd.Flags().Changed("delta") {
					return badInput("--delta: the papers' tabular agents are pure ε-DP (δ is for dprl's (ε, δ) practical agents, e.g. --agent practical-jdp)")
				}
				params, err := parseEnvParams(envParams)
				if err != nil {
					return err
				}
				if err := applyTabularParams(cmd, params); err != nil {
					return err
				}
				if err := checkRunFlags(cmd, env, agent, beta, mult); err != nil {
					return err
				}
				sd, err := parseSeeds(seeds)
				if err != nil {
					return err
				}
				if env != "file" && (horizon < 1 || horizon > 10000) {
					return badInput("env.horizon (--horizon): must be in [1, 10000], got %d", horizon)
				}
				cfg = &experiment.Config{Name: "run", Episodes: episodes, Seeds: sd, Beta: beta, Noise: noiseKind,
					Env: experiment.EnvConfig{Name: env, Horizon: horizon, Path: envFile, States: states, Actions: actions,
						Branching: branching, Density: density, EnvSeed: envSeed},
					Bonus:  experiment.BonusSpec{Preset: preset, Multiplier: mult},
					Curves: []experiment.CurveSpec{{Agent: agent, Epsilon: eps, Calibration: calib, EMode: emode}}}
				if env == "file" {
					cfg.Env.Horizon = 0 // the file's own H
				}
				// Through the same parser (validation, defaults) as a configuration file.
				data, _ := yaml.Marshal(cfg)
				if cfg, err = experiment.ParseConfig(data); err != nil {
					return usageError{err}
				}
			}
			if !cmd.Flags().Changed("out") {
				out = "runs/" + cfg.Name
				if !cmd.Flags().Changed("config") {
					out = defaultRunDir(experiment.FamilyName, agent, cfg)
				}
			}
			start := time.Now()
			text, err := execute(cfg, workers, out, o, stderr, quiet)
			if err != nil {
				return err
			}
			fmt.Fprintf(stdout, "%s in %.1f s.\n", text, time.Since(start).Seconds())
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&configPath, "config", "", "YAML experiment file (overrides the other flags); its family: selects the agent family (default tabular)")
	f.StringVar(&family, "family", experiment.FamilyName, "agent family (see dprl list); the shared flags (--env, --env-file, --env-param, --agent, --epsilon, --delta, --calibration, --noise, --multiplier, --episodes, --seeds) work for every family")
	f.StringVar(&out, "out", "", "run directory (default: runs/<name> of --config; from flags, runs/<family>-<agent>-<hash of the configuration>)")
	f.StringVar(&env, "env", "riverswim", "environment (tabular: riverswim, garnet or file; other families: dprl list, default the family's reference environment)")
	f.StringVar(&envFile, "env-file", "", "model file (JSON or YAML) for --env file")
	f.StringArrayVar(&envParams, "env-param", nil, "environment parameter NAME=NUMBER (repeatable; dprl list names each environment's parameters)")
	f.Float64Var(&delta, "delta", 1e-5, "δ of (ε, δ) agents (families other than tabular)")
	f.IntVar(&horizon, "horizon", 20, "horizon H (riverswim, garnet)")
	f.IntVar(&states, "states", 10, "garnet: number of states")
	f.IntVar(&actions, "actions", 3, "garnet: number of actions")
	f.IntVar(&branching, "branching", 3, "garnet: next states per (s,a)")
	f.Float64Var(&density, "reward-density", 0.3, "garnet: fraction of (s,a) with a random reward")
	f.Uint64Var(&envSeed, "env-seed", 1, "garnet: generator seed")
	f.StringVar(&agent, "agent", "ucbvi", "agent (see dprl list)")
	f.Float64Var(&eps, "epsilon", 0, "privacy budget ε (private agents)")
	f.StringVar(&calib, "calibration", "exact", "noise calibration: exact, paper or unit (strict: old name of exact; see dprl list)")
	f.Float64Var(&beta, "beta", 0.1, "failure probability β")
	f.StringVar(&preset, "preset", "practical", "bonus preset: practical or theory")
	f.Float64Var(&mult, "multiplier", 1, "bonus multiplier (does not change noise)")
	f.StringVar(&emode, "e-mode", "", "count-error bound E: theory or practical (default: the preset's)")
	f.IntVar(&episodes, "episodes", 10000, "number of episodes K")
	f.StringVar(&seeds, "seeds", "1-5", "seeds, e.g. 1-5 or 1,2,3")
	f.IntVar(&workers, "workers", 0, "parallel runs (0 = all cores)")
	f.StringVar(&noiseKind, "noise", "seeded", "noise source: seeded (reproducible experiments) or secure (crypto-seeded, granular)")
	f.BoolVar(&quiet, "quiet", false, "no progress output")
	o.add(cmd, "auto")
	return cmd
}
