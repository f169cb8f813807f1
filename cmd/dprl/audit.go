package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path"
	"strings"

	"github.com/spf13/cobra"

	"github.com/dprl/dprl/experiment/rundir"
	"github.com/dprl/dprl/privacy/audit"
	"github.com/dprl/dprl/rng"
)

func newAuditCmd(stdout, stderr io.Writer) *cobra.Command {
	var (
		all, list, quiet bool
		family, out      string
		runs, workers    int
		seed             uint64
		conf             float64
	)
	var force bool
	cmd := &cobra.Command{
		Use:   "audit [target ...]",
		Short: "Empirically audit the privacy claims of the mechanisms and private agents",
		Long: "Runs each target many times on two neighbouring inputs, chooses output events on half of the runs and\n" +
			"bounds ε from below on the other half (Clopper–Pearson, Bonferroni), plus a one-run canary audit\n" +
			"(Steinke, Nasr & Jagielski 2023) where the target supports it. Deliberately broken variants are\n" +
			"included to show the auditor's power: they must be flagged. Writes audit.md and audit.json.\n" +
			"Exit status 1 if a correct target is refuted or a broken variant is missed.",
		RunE: func(cmd *cobra.Command, args []string) error {
			ts := auditTargets()
			if list {
				if len(args) > 0 {
					return badInput("--list: lists every target and takes no target names")
				}
				if err := rejectChanged(cmd, "with --list (it only lists the targets)", "all", "family", "runs", "confidence", "workers", "seed", "out"); err != nil {
					return err
				}
				for _, t := range ts {
					b := ""
					if t.Broken {
						b = " [broken variant]"
					}
					fmt.Fprintf(stdout, "%-50s ε=%g δ=%g%s\n    %s\n", t.Name, t.Claim.Epsilon, t.Claim.Delta, b, t.Description)
				}
				return nil
			}
			var sel []audit.Target
			switch {
			case all && (len(args) > 0 || family != ""):
				return badInput("audit: --all cannot be combined with target names or --family")
			case all:
				sel = ts
			case family != "":
				// The families of dprl run (linmdp, linmix) name the audit targets' families
				// linear-mdp and linear-mixture (the prefix of their target names).
				want := map[string]string{"linmdp": "linear-mdp", "linmix": "linear-mixture"}[family]
				if want == "" {
					want = family
				}
				for _, t := range ts {
					if t.Family == want {
						sel = append(sel, t)
					}
				}
				if len(sel) == 0 {
					return badInput("audit: --family %q has no targets (see dprl audit --list)", family)
				}
			case len(args) > 0:
				for _, a := range args {
					n := 0
					for _, t := range ts {
						if ok, _ := path.Match(a, t.Name); ok || t.Name == a {
							sel = append(sel, t)
							n++
						}
					}
					if n == 0 {
						return badInput("audit: unknown target %q (see dprl audit --list; shell-style patterns like 'tabular/*' work)", a)
					}
				}
			default:
				return badInput("audit: name targets, a --family, or --all (see dprl audit --list)")
			}
			if runs != 0 && (runs < 200 || runs > maxAuditRuns) {
				return badInput("audit: --runs must be 0 (each target's default) or in [200, %d], got %d", maxAuditRuns, runs)
			}
			if !(conf > 0 && conf < 1) {
				return badInput("audit: --confidence must be in (0, 1), got %v", conf)
			}
			if err := checkWorkers(workers); err != nil {
				return err
			}
			if err := checkAuditMemory(sel, runs, workers, seed); err != nil {
				return err // --runs (and --workers) bound by the memory budget
			}
			if err := checkOut(out); err != nil {
				return err
			}
			// audit.md and audit.json are outputs like a run's: never over a user's file, over
			// an earlier audit only with --force.
			release, err := rundir.Lock(out)
			if err != nil {
				return err
			}
			defer release()
			if err := rundir.PrepareOutputs(out, force, "audit.md", "audit.json"); err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
			defer stop()
			opts := audit.Options{Runs: runs, Confidence: conf, Workers: workers, Seed: rng.NewSeed(seed)}
			// Runs done / total across every selected target, with ETA (bar on a terminal,
			// a line per 10 % otherwise); one line per finished target as before.
			runsUpdate, runsFinish := progress(stderr, "audit", "runs", quiet)
			defer runsFinish()
			if runsUpdate != nil {
				opts.Progress = func(done, total int) { runsUpdate(int64(done), int64(total)) }
			}
			prog := func(done, total int, r audit.Result) {
				if !quiet {
					fmt.Fprintf(stderr, "dprl: audit %d/%d %-48s ε_LB = %.3f (claim %g)  %s  %.1fs\n", done, total, r.Target, r.EpsilonLB, r.Claim.Epsilon, r.Verdict(), r.Seconds)
				}
			}
			rep, err := audit.RunAll(ctx, sel, opts, audit.CanaryOptions{}, prog)
			if err != nil {
				return err
			}
			rep.Seed = seed
			if err := rep.Write(out); err != nil {
				return fmt.Errorf("writing %s: %w", out, err)
			}
			fmt.Fprint(stdout, rep.Markdown())
			fmt.Fprintf(stdout, "Wrote %s/audit.md and %s/audit.json.\n", strings.TrimSuffix(out, "/"), strings.TrimSuffix(out, "/"))
			if !rep.OK {
				return fmt.Errorf("audit failed: a correct target was refuted or a broken variant was missed")
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.BoolVar(&all, "all", false, "audit every registered target")
	f.BoolVar(&list, "list", false, "list the registered targets and exit")
	f.StringVar(&family, "family", "", "audit one family: mechanism, tabular, linmdp, linmix, lq (the families of dprl run; linear-mdp and linear-mixture also work)")
	f.IntVar(&runs, "runs", 0, "runs per side (0 = each target's default; >= 200)")
	f.Float64Var(&conf, "confidence", 0.99, "confidence of the lower bounds, in (0, 1)")
	f.IntVar(&workers, "workers", 0, "parallel runs (0 = all cores); results do not depend on it")
	f.Uint64Var(&seed, "seed", 1, "audit seed")
	f.StringVar(&out, "out", "runs/audit", "output directory")
	f.BoolVar(&quiet, "quiet", false, "no progress output")
	f.BoolVar(&force, "force", false, "replace an earlier audit (or run) in the output directory: the files dprl wrote there are removed first")
	return cmd
}
