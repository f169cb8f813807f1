package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"

	"github.com/spf13/cobra"

	lmexp "github.com/dprl/dprl/experiment/linmix"
)

// listLinearMixture prints the linear-mixture family's environments and agents for `dprl list`.
func listLinearMixture(w io.Writer) {
	fmt.Fprintln(w, "Linear-mixture environments (dprl reproduce linear-mixture; linear-mixture spec §7):")
	fmt.Fprintln(w, "  two-state-hard   S={x0,x1}, A={±1}^{d-1}, P(x1|x0,a)=q+⟨μ,a⟩ (spec §7.1; default d=5, H=10, q=0.1, ρ=0.5)")
	fmt.Fprintln(w, "  hard-to-learn    Zhou, Gu & Szepesvári (2021) instance as in the public LDP-UCRL-VTR code: S=H+2, A=2^{d-1}, seeded")
	fmt.Fprintln(w, "  riverswim        RiverSwim viewed as a linear mixture, d=S²A (spec §7.2)")
	fmt.Fprintln(w, "  base-mixture     mixture of d seeded base kernels (spec §7.3)")
	fmt.Fprintln(w, "  file             a linear mixture MDP from JSON/YAML (model/linmix/testdata/tiny.yaml)")
	fmt.Fprintln(w, "Linear-mixture agents (algorithm/mode[-calibration]):")
	fmt.Fprintln(w, "  ucrl-vtr/none          UCRL-VTR baseline (Ayoub et al. as used by Luyo et al. §3, λ=H²)")
	fmt.Fprintln(w, "  ucrl-vtr/jdp           Luyo et al. Alg. 1, JDP: Gaussian tree noise on Gram and target, Cor. 5 constants")
	fmt.Fprintln(w, "  ucrl-vtr/ldp           Luyo et al. Alg. 1, LDP: user-side Gaussian noise, Cor. 6 constants")
	fmt.Fprintln(w, "  ucrl-vtr/jdp-laplace   pure ε-JDP Laplace variant (Remark 1; constants DERIVED in the spec §3.5)")
	fmt.Fprintln(w, "  ucrl-vtr/ldp-laplace   pure ε-LDP Laplace variant (Remark 1; constants DERIVED in the spec §3.5)")
	fmt.Fprintln(w, "  ucrl-vtr/{jdp,ldp}-zcdp  zCDP-calibrated Gaussian, valid for every ε (spec P7, DERIVED)")
	fmt.Fprintln(w, "  ucrl-vtr+/{none,jdp,ldp}  Luyo et al. Alg. 3 (variance-aware, RECONSTRUCTED in the spec §4), Cor. 10/11")
	fmt.Fprintln(w, "  linopt-vi/{none,jdp,ldp}  Zhou's (Private-)LinOpt-VI, four counters per step; LDP version DERIVED (spec §5.7)")
	fmt.Fprintln(w, "  linopt-po/{none,jdp,ldp}  Zhou's (Private-)LinOpt-PO, softmax mirror-descent policy; LDP DERIVED")
}

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
			if cmd.Flags().Changed("episodes") {
				cfg.Episodes = episodes
			}
			if cmd.Flags().Changed("seeds") {
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
			if err := checkWorkers(workers); err != nil {
				return err
			}
			if workers == 0 {
				workers = runtime.GOMAXPROCS(0)
			}
			if err := o.check(); err != nil {
				return err
			}
			if !cmd.Flags().Changed("out") {
				out = "runs/linear-mixture"
			}
			if err := prepareOut(out, o.force); err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
			defer stop()
			opts := lmexp.Options{Workers: workers, Output: o.options()}
			var finish func()
			opts.Progress, finish = progress(stderr, cfg.Name, "episodes", quiet)
			res, err := lmexp.Run(ctx, cfg, opts)
			finish()
			if err != nil {
				return err
			}
			man, summary, err := res.Write(out, os.Args)
			if err != nil {
				return fmt.Errorf("writing %s: %w", out, err)
			}
			fmt.Fprint(stdout, summary)
			fmt.Fprintf(stdout, "\nWrote %s (manifest.json, summary.md, summary.claims.json, %d figures, curves/*/*.csv) in %.1f s.\n", out, len(man.Figures), res.Seconds)
			return nil
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
