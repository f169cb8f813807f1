package lq

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot/vg"

	agents "github.com/dprl/dprl/agents/lq"
	"github.com/dprl/dprl/experiment/engine"
	"github.com/dprl/dprl/experiment/rundir"
	model "github.com/dprl/dprl/model/lq"
	"github.com/dprl/dprl/privacy/ledger"
	"github.com/dprl/dprl/report"
)

// Version of the experiment's output format.
const Version = "lq-1"

// CurveSpec is one curve: an ε and a sensitivity convention.
type CurveSpec struct {
	// Label names the curve in files and figures.
	Label string `json:"label"`
	// Epsilon is ε (+Inf for the non-private baseline); EpsilonText its JSON form.
	Epsilon     float64 `json:"-"`
	EpsilonText string  `json:"epsilon"`
	// Neighbouring is the sensitivity convention of the curve.
	Neighbouring string `json:"neighbouring"`
}

// SeedRun is one (curve, seed) run.
type SeedRun struct {
	// Seed is the run seed; Cum the cumulative regret R(k), k = 1..K; Diag the diagnostics;
	// Final = R(K).
	Seed  uint64             `json:"seed"`
	Cum   []float64          `json:"-"`
	Diag  agents.Diagnostics `json:"diagnostics"`
	Final float64            `json:"final_regret"`
	// ZeroLineMaxRelDev is max_k |R(k) − Z(k)|/Z(k), null when undefined (Z(k) = 0, see
	// Undefined); FirstOffZero is the first k with |R(k) − Z(k)| > 1e−9·Z(k) (0 if none).
	ZeroLineMaxRelDev rundir.Number `json:"zero_line_max_rel_dev"`
	FirstOffZero      int           `json:"first_episode_off_zero_line"`
	// Undefined says why a number is null.
	Undefined rundir.Undefined `json:"undefined,omitempty"`
	// Seconds is the wall time of the seed's K episodes (agent built, exact regret included;
	// 0: not timed, a unit file written before it was recorded).
	Seconds float64 `json:"seconds"`
}

// CurveResult is a curve with all its seeds.
type CurveResult struct {
	// Spec is the curve, Constants its public constants and accounted guarantee, Runs one
	// entry per seed.
	Spec      CurveSpec        `json:"spec"`
	Constants agents.Constants `json:"constants"`
	Runs      []SeedRun        `json:"runs"`
}

// Result is a whole experiment.
type Result struct {
	// Config is the experiment configuration; Extended reports the extended sweep; Episodes,
	// Seeds and ReportAt are the values actually used; Zero is Z(k); Workers and Seconds
	// describe the execution.
	Config   *Config       `json:"config"`
	Extended bool          `json:"extended"`
	Episodes int           `json:"episodes"`
	Seeds    []uint64      `json:"seeds"`
	ReportAt []int         `json:"report_at"`
	System   string        `json:"system"`
	Curves   []CurveResult `json:"curves"`
	Zero     []float64     `json:"-"`
	Workers  int           `json:"workers"`
	Seconds  float64       `json:"wall_seconds"`
	// Horizon is the system's H.
	Horizon int `json:"horizon"`
	// Inputs are the files read (config, system file) with their SHA-256.
	Inputs []rundir.Input `json:"-"`
	// Output controls Write; Run copies it from Options.Output.
	Output rundir.Options `json:"-"`
}

// Options controls a run: Workers (0 = GOMAXPROCS), Progress and Output as
// engine.LocalOptions; Extended selects the extended sweep instead of the main experiment.
type Options struct {
	engine.LocalOptions
	Extended bool
}

// SetOutput implements engine.Outputter.
func (r *Result) SetOutput(o rundir.Options) { r.Output = o }

// ZeroLine returns Z(k), k = 1..K: the cumulative exact regret of u ≡ 0 (lq spec §5.3).
func ZeroLine(sys *model.System, K int) []float64 { return sys.ZeroLine(K) }

// Run executes the experiment on this machine through the engine (every (curve, seed) unit,
// in memory) and returns the result without writing files. Results do not depend on
// opts.Workers.
func Run(ctx context.Context, cfg *Config, opts Options) (*Result, error) {
	return engine.RunLocal(ctx, opts.LocalOptions, func() (*engine.Planned, error) { return PlanConfig(cfg, opts.Extended) }, (*plan).result)
}

func sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '-':
			return r
		}
		return '_'
	}, s)
}

// used returns the configuration actually used: for an extended run the sweep's K, seeds and
// report points in the main fields, and no unused extended block.
func (r *Result) used() *Config {
	c := *r.Config
	c.Inputs = nil
	c.Episodes, c.Seeds, c.ReportAt = r.Episodes, r.Seeds, r.ReportAt
	c.Extended = Sweep{}
	if c.System == "" {
		c.System = "lq-e1"
	}
	return &c
}

// curveStyle is the figure line style, as in every family: solid non-private, dashed private.
func curveStyle(c CurveResult) report.Style {
	if !c.Constants.Private {
		return report.StyleNonPrivate
	}
	return report.StylePrivate
}

// Extras is the LQ family's own section of the manifest (engine.RunManifest.Extras).
type Extras struct {
	// Extended reports the extended sweep; ReportAt the episodes of the summary's table;
	// Horizon the system's H; Zero the zero policy's line file.
	Extended bool   `json:"extended"`
	ReportAt []int  `json:"report_at"`
	System   string `json:"system"`
	Horizon  int    `json:"horizon"`
	ZeroLine string `json:"zero_line_csv"`
}

// Write writes the run directory in the one run-directory layout (engine.WriteRun):
// curves/<system>/<curve>.csv (per-episode cumulative regret of every seed with mean and 95 %
// band), the zero-policy line curves/<system>/zero-policy.csv, regret-<system>.{png,svg} (log
// x; log y unless r.Output.LogY says otherwise or a curve has no positive value; the zero
// line drawn), summary.md, and manifest.json last. Every file is written atomically. dir must
// not hold an earlier run unless r.Output.Force is set. The manifest records rundir.Version;
// dprlVersion is ignored (kept for callers).
func (r *Result) Write(dir, dprlVersion string, command []string) (string, error) {
	if err := r.Output.Prepare(dir); err != nil {
		return "", err
	}
	K := r.Episodes
	eps := make([]int, K)
	for k := range eps {
		eps[k] = k + 1
	}
	sys := sanitize(r.System)
	if sys == "" {
		sys = "system"
	}
	for i := range r.Curves {
		for j := range r.Curves[i].Runs {
			sr := &r.Curves[i].Runs[j]
			sr.Undefined.Set("zero_line_max_rel_dev", float64(sr.ZeroLineMaxRelDev), "undefined: the zero line Z(k) is 0 at some k")
		}
	}
	used := r.used()
	out := &engine.RunOutput{Family: "lq", Experiment: used.Name, Provenance: rundir.NewProvenance(r.Inputs), Command: command,
		Config: used, Workers: r.Workers, WallSeconds: r.Seconds, Output: r.Output}
	if out.Experiment == "" {
		out.Experiment = "lq"
	}
	var finals []float64
	bands := make([]report.Band, len(r.Curves))
	for i, c := range r.Curves {
		runs := make([][]float64, len(c.Runs))
		names := make([]string, len(c.Runs))
		seeds := make([]uint64, len(c.Runs))
		for j, s := range c.Runs {
			runs[j] = s.Cum
			names[j] = fmt.Sprintf("seed%d", s.Seed)
			seeds[j] = s.Seed
		}
		b, err := report.MeanBand(runs, 0.95)
		if err != nil {
			return "", err
		}
		bands[i] = b
		finals = append(finals, b.Mean[K-1])
		g, err := guarantee(c.Constants)
		if err != nil {
			return "", fmt.Errorf("curve %q: %w", c.Spec.Label, err)
		}
		co := engine.CurveOutput{Dir: sys, File: sanitize(c.Spec.Label), Steps: eps, Runs: runs, Names: names, Band: b, Style: curveStyle(c)}
		co.Label, co.Env, co.Episodes, co.Seeds, co.Privacy = c.Spec.Label, r.System, K, seeds, g
		co.Agent = paperAgent(c.Constants.Private)
		co.Epsilon, co.Delta = engine.NominalPrivacy(c.Constants.Private, c.Spec.Epsilon, r.Config.Delta)
		co.Reference = engine.Reference{Kind: engine.RefZero, RegretPerEpisode: rundir.Number(r.Zero[K-1] / float64(K))}
		speed := 0.0
		for _, sr := range c.Runs {
			speed += float64(K) / sr.Seconds / float64(len(c.Runs)) // +Inf (null) for an untimed seed
		}
		co.EpisodesPerSecond = rundir.Number(speed)
		if !co.EpisodesPerSecond.Defined() {
			co.Undefined = rundir.Undefined{"episodes_per_second": "a seed was not timed"}
		}
		co.Extras = map[string]any{"lq": c} // the public constants, the agent's own guarantee, every seed's diagnostics
		out.Curves = append(out.Curves, co)
	}
	zero, err := writeZeroLine(dir, sys, r.System, r.Zero, len(r.Seeds), out)
	if err != nil {
		return "", err
	}
	out.PlotOptions = func(string, []float64) report.PlotOptions {
		logY := r.Output.LogY == "log"
		if r.Output.LogY == "" || r.Output.LogY == "auto" {
			// Log–log as always for this family, unless a curve could not be drawn.
			logY = true
			for _, f := range append(finals, r.Zero[K-1]) {
				logY = logY && f > 0
			}
		}
		return report.PlotOptions{LogX: true, LogY: logY, Width: 10 * vg.Inch, Height: 6 * vg.Inch}
	}
	summary := r.Summary(bands)
	out.Summary = summary
	out.Extras = map[string]any{"lq": Extras{Extended: r.Extended, ReportAt: r.ReportAt, System: r.System, Horizon: r.Horizon, ZeroLine: zero}}
	if _, err := engine.WriteRun(dir, out); err != nil {
		return "", err
	}
	return summary, nil
}

// writeZeroLine writes the zero line Z(k), k = 1…len(zero) — the family's own file beside the
// curves of directory sys, not an agent's curve — lists it among o's files and draws it on the
// regret figure, titled with the system's name and the number of seeds. It returns the file's
// path in the run directory.
func writeZeroLine(dir, sys, system string, zero []float64, seeds int, o *engine.RunOutput) (string, error) {
	eps := make([]int, len(zero))
	xs := make([]float64, len(zero))
	for k := range eps {
		eps[k], xs[k] = k+1, float64(k+1)
	}
	path := filepath.ToSlash(filepath.Join(engine.CurvesDir, sys, "zero-policy.csv"))
	if err := os.MkdirAll(filepath.Join(dir, engine.CurvesDir, sys), 0o755); err != nil {
		return "", err
	}
	if err := report.WriteCurveCSV(filepath.Join(dir, filepath.FromSlash(path)), eps, [][]float64{zero}, []string{"Z"}, report.Band{Mean: zero, N: 1}); err != nil {
		return "", err
	}
	o.Files = append(o.Files, path)
	o.References = map[string][]report.Curve{sys: {{Label: "zero policy Z(k) (u = 0, no learning)", X: xs, Band: report.Band{Mean: zero}, Style: report.StyleReference}}}
	bands := "95% bands"
	if seeds == 1 {
		bands = "1 seed: " + rundir.NoCI
	}
	o.FigureTitle = func(string) string {
		return fmt.Sprintf("%s: cumulative regret, %d seeds, %s", system, seeds, bands)
	}
	return path, nil
}

// guarantee states a curve's guarantee in the one privacy report type (engine.Guarantee: the
// paper's agent's ledger report, which composes its two counters from their σ).
func guarantee(c agents.Constants) (ledger.Report, error) {
	return engine.Guarantee(c)
}
