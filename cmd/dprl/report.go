package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/dprl/dprl/experiment/engine"
	"github.com/dprl/dprl/experiment/rundir"
	"github.com/dprl/dprl/internal/boundedread"
	"github.com/dprl/dprl/internal/inputerr"
)

// maxReportInput bounds the input file of dprl report (10³ curves × 10³ seeds at a few
// hundred recorded episodes stay below it).
const maxReportInput = 512 << 20

// newReportCmd is `dprl report`: it writes the run directory of curves measured elsewhere (the
// Python package's runner) with the one writer, in the one schema (docs/run-directory.md).
func newReportCmd(stdout io.Writer) *cobra.Command {
	var input, out, logY string
	var force bool
	cmd := &cobra.Command{
		Use:   "report --input FILE --out DIR",
		Short: "Write a run directory (figures, summary.md, meta.json, manifest.json) from curves measured elsewhere (the Python runner)",
		Long: "Write the run directory of curves measured outside dprl run (e.g. by dprl.gym in Python) with the writer every family\n" +
			"uses, in the one run-directory schema (docs/run-directory.md): curves/<env>/<curve>.csv, regret-<env>.png/.svg,\n" +
			"summary.md, config.resolved.yaml, regret_long.csv, meta.json and manifest.json (last). FILE is a JSON document of\n" +
			"schema " + engine.ReportInputSchema + " (docs/run-directory.md, \"dprl report\"): every curve's per-seed cumulative\n" +
			"regret at its recorded episodes and its record (agent, environment, ε, δ, reference, episodes/s, the privacy ledger's report).",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if input == "" {
				return inputerr.New("--input: name the report input file")
			}
			if out == "" {
				return inputerr.New("--out: name the run directory")
			}
			data, err := boundedread.ReadField("--input", input, maxReportInput)
			if err != nil {
				return inputerr.Wrap(err)
			}
			in, err := engine.ParseReportInput(data)
			if err != nil {
				return inputerr.Wrap(fmt.Errorf("--input %s: %w", input, err))
			}
			o := rundir.Options{Force: force, LogY: logY}
			if err := o.Validate(); err != nil {
				return inputerr.Wrap(err)
			}
			release, err := rundir.Lock(out)
			if err != nil {
				return err
			}
			defer release()
			man, err := engine.WriteReport(out, in, o)
			if err != nil {
				return err
			}
			fmt.Fprintf(stdout, "Wrote %s (%s: %d curves, %s)\n", out, engine.RunSchema, len(man.Curves), engine.ManifestFile)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&input, "input", "", "report input (JSON, schema "+engine.ReportInputSchema+")")
	f.StringVar(&out, "out", "", "run directory to write")
	f.BoolVar(&force, "force", false, "replace an earlier dprl run in the output directory (only the files dprl wrote)")
	f.StringVar(&logY, "log-y", "auto", "y axis of the regret figures: auto, log or linear")
	return cmd
}
