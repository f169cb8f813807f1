package main

import (
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/dprl/dprl/experiment/engine"
	"github.com/dprl/dprl/experiment/rundir"
	"github.com/dprl/dprl/internal/bounds"
	"github.com/dprl/dprl/internal/strictdecode"
)

// newReproduceCmd is `dprl reproduce NAME`: one subcommand per embedded reproduction of the
// registry, each with the common flags and the options its family declares (engine.Optioner).
func newReproduceCmd(stdout, stderr io.Writer) *cobra.Command {
	r := newRegistry()
	names := strings.Join(r.ReproductionNames(), ", ")
	cmd := &cobra.Command{
		Use:   "reproduce <experiment>",
		Short: "Reproduce an experiment with its embedded configuration (" + names + ")",
		Args:  cobra.ArbitraryArgs,
		// An unknown experiment must be reported as such even when followed by flags.
		FParseErrWhitelist: cobra.FParseErrWhitelist{UnknownFlags: true},
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return badInput("reproduce: name an experiment (available: %s)", names)
			}
			return badInput("unknown reproduction %q (available: %s)", args[0], names)
		},
	}
	for _, n := range r.ReproductionNames() {
		cmd.AddCommand(newReproductionCmd(r, n, stdout, stderr))
	}
	return cmd
}

// newReproductionCmd is `dprl reproduce name`: the run of engine.Registry.ReproductionBlock
// (the embedded block or the --config file's, with the options applied, resized by --episodes
// and --seeds), the same run as a sweep of `dprl sweep config name …`.
func newReproductionCmd(r *engine.Registry, name string, stdout, stderr io.Writer) *cobra.Command {
	var out, config, seeds string
	var episodes, workers int
	var quiet bool
	var o outputFlags
	opts, short := r.ReproductionOptions(name)
	if short == "" {
		short = "Reproduce " + name
	}
	cmd := &cobra.Command{Use: name, Short: short, Args: cobra.NoArgs}
	fl := cmd.Flags()
	fl.StringVar(&out, "out", "", "run directory (default runs/<name of the configuration>)")
	fl.StringVar(&config, "config", "", "YAML configuration replacing the embedded one, of the same family (dprl sweep config "+name+" prints it)")
	fl.StringVar(&seeds, "seeds", "", "override the seeds, e.g. 1-5")
	fl.IntVar(&episodes, "episodes", 0, "override K")
	fl.IntVar(&workers, "workers", 0, "parallel runs (0 = all cores)")
	fl.BoolVar(&quiet, "quiet", false, "no progress output")
	o.add(cmd, "auto")
	common := map[string]bool{}
	for _, x := range opts {
		if g := fl.Lookup(x.Name); g != nil { // a common flag: the reproduction's default
			common[x.Name], g.DefValue = true, x.Default
			_ = g.Value.Set(x.Default)
		} else if x.Bool {
			fl.Bool(x.Name, x.Default == "true", x.Usage)
		} else {
			fl.String(x.Name, x.Default, x.Usage)
		}
	}
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		ch := fl.Changed
		set := map[string]string{}
		for _, x := range opts {
			if ch(x.Name) && !common[x.Name] {
				set[x.Name] = fl.Lookup(x.Name).Value.String()
			}
		}
		var user []byte
		var inputs []rundir.Input
		source := "embedded:" + name
		if ch("config") {
			if err := checkInputFile("--config", config); err != nil {
				return err
			}
			data, err := strictdecode.ReadFile(config)
			if err != nil {
				return badInput("--config: %v", err)
			}
			user, source, inputs = data, config, []rundir.Input{rundir.HashBytes("config", config, data)}
		}
		var sd []uint64
		var err error
		if ch("seeds") {
			if sd, err = parseSeeds(seeds); err != nil {
				return err
			}
		}
		if ch("episodes") && (episodes < 1 || episodes > bounds.MaxEpisodes) {
			return badInput("--episodes: must be in [1, %d], got %d", bounds.MaxEpisodes, episodes)
		}
		fam, block, err := r.ReproductionBlock(name, user, set, episodes, sd)
		if err != nil {
			return usageError{err}
		}
		if err := preflight(workers, out, ch("out"), o); err != nil {
			return err
		}
		p, err := r.PlanBlock(fam, block, source)
		if err != nil {
			return usageError{err}
		}
		if !ch("out") {
			out = "runs/" + p.Name()
		}
		return runPlanned(p, inputs, workers, out, o, stdout, stderr, quiet)
	}
	return cmd
}
