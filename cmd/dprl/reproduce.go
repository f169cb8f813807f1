package main

import (
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/dprl/dprl/experiment/engine"
	"github.com/dprl/dprl/internal/inputerr"
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
				return inputerr.New("reproduce: name an experiment (available: %s)", names)
			}
			return inputerr.New("unknown reproduction %q (available: %s)", args[0], names)
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
		f := engine.ReproduceFlags{Name: name, Config: config, Seeds: seeds, Episodes: episodes, Changed: fl.Changed, Set: map[string]string{}}
		for _, x := range opts {
			if fl.Changed(x.Name) && !common[x.Name] {
				f.Set[x.Name] = fl.Lookup(x.Name).Value.String()
			}
		}
		fam, block, source, inputs, err := r.ReproduceBlock(f)
		if err != nil {
			return err
		}
		l := localRun(workers, out, fl.Changed("out"), o, stderr, quiet)
		l.Inputs = inputs
		return runPrint(stdout, l, func() (*engine.Planned, error) { return r.PlanBlock(fam, block, source) })
	}
	return cmd
}
