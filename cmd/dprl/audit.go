package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/dprl/dprl/internal/auditregistry"
	"github.com/dprl/dprl/internal/inputerr"
	"github.com/dprl/dprl/internal/progress"
)

// newAuditCmd is `dprl audit`, a thin wrapper of package internal/auditregistry.
func newAuditCmd(stdout, stderr io.Writer) *cobra.Command {
	var (
		all, list, quiet bool
		family           string
		r                auditregistry.Run
	)
	cmd := &cobra.Command{
		Use:   "audit [target ...]",
		Short: "Empirically audit the privacy claims of the mechanisms and private agents",
		Long: "Runs each target many times on two neighbouring inputs, chooses output events on half of the runs and\n" +
			"bounds ε from below on the other half (Clopper–Pearson, Bonferroni), plus a one-run canary audit\n" +
			"(Steinke, Nasr & Jagielski 2023) where the target supports it. Deliberately broken variants are\n" +
			"included to show the auditor's power: they must be flagged. Writes audit.md and audit.json.\n" +
			"Exit status 1 if a correct target is refuted or a broken variant is missed.",
		RunE: func(cmd *cobra.Command, args []string) error {
			if list {
				if len(args) > 0 {
					return inputerr.New("--list: lists every target and takes no target names")
				}
				if err := rejectChanged(cmd, "with --list (it only lists the targets)", "all", "family", "runs", "confidence", "workers", "seed", "out"); err != nil {
					return err
				}
				auditregistry.WriteList(stdout)
				return nil
			}
			sel, err := auditregistry.Select(all, family, args)
			if err != nil {
				return err
			}
			// Runs done / total across every target with ETA; one line per finished target.
			update, finish := progress.New(stderr, "audit", "runs", quiet)
			defer finish()
			if r.Progress = update; !quiet {
				r.Done = auditregistry.TargetLog(stderr)
			}
			rep, err := r.Audit(sel)
			if err != nil {
				return err
			}
			out := strings.TrimSuffix(r.Out, "/")
			fmt.Fprint(stdout, rep.Markdown())
			fmt.Fprintf(stdout, "Wrote %s/audit.md and %s/audit.json.\n", out, out)
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
	f.IntVar(&r.Runs, "runs", 0, "runs per side (0 = each target's default; >= 200)")
	f.Float64Var(&r.Confidence, "confidence", 0.99, "confidence of the lower bounds, in (0, 1)")
	f.IntVar(&r.Workers, "workers", 0, "parallel runs (0 = all cores); results do not depend on it")
	f.Uint64Var(&r.Seed, "seed", 1, "audit seed")
	f.StringVar(&r.Out, "out", "runs/audit", "output directory")
	f.BoolVar(&quiet, "quiet", false, "no progress output")
	f.BoolVar(&r.Force, "force", false, "replace an earlier audit (or run) in the output directory: the files dprl wrote there are removed first")
	return cmd
}
