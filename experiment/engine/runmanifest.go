package engine

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"gonum.org/v1/plot/vg"

	"github.com/dprl/dprl/experiment/rundir"
	"github.com/dprl/dprl/internal/atomicfile"
	"github.com/dprl/dprl/privacy/ledger"
	"github.com/dprl/dprl/report"
)

// RunSchema names and versions the run directory's layout and manifest (docs/run-directory.md;
// JSON Schema: docs/run-directory.schema.json, generated from RunManifest and CurveRecord by
// internal/runschema). Every family, the service and the Python
// package write it; readers check it before anything else.
const RunSchema = "dprl.run/v1"

// SummaryFile is the run's human-readable summary; ManifestFile the manifest, written last.
const (
	SummaryFile  = "summary.md"
	ManifestFile = "manifest.json"
	// CurvesDir holds one CSV per curve: curves/<env>/<curve>.csv.
	CurvesDir = "curves"
)

// Reference kinds of CurveRecord.Reference: what a run that never learns would lose per
// episode, drawn as the figures' dashed line.
const (
	// RefUniform is the uniformly random policy (tabular: the no-learning reference).
	RefUniform = "uniform-policy"
	// RefZero is the zero controller (LQ).
	RefZero = "zero-policy"
	// RefNone: the family has no reference for this curve.
	RefNone = "none"
)

// Reference is a curve's no-learning reference: its kind and its expected regret per episode
// (null for RefNone).
type Reference struct {
	Kind             string        `json:"kind" jsonschema:"enum=uniform-policy|zero-policy|none"`
	RegretPerEpisode rundir.Number `json:"regret_per_episode"`
}

// CurveRecord is the one per-curve record of every run directory's manifest: the same keys
// for every agent of every family (a number that is undefined is null and Undefined says why).
// The published schema's $defs.curve is generated from it (internal/runschema, go generate
// ./docs): a new per-curve field is its line here, with its json tag and, if constrained, its
// jsonschema tag (minLength=1, minimum=0, enum=a|b, …; docs/run-directory.md).
type CurveRecord struct {
	// Label names the curve (unique in the run); Agent is the agent's name (dprl list) and Env
	// the environment it ran on (the directory below curves/).
	Label string `json:"label" jsonschema:"minLength=1"`
	Agent string `json:"agent" jsonschema:"minLength=1"`
	Env   string `json:"env" jsonschema:"minLength=1"`
	// Epsilon and Delta are the nominal (ε, δ) the curve asked for; null for a non-private
	// curve (δ also null for a pure ε-DP one). Privacy states what the noise actually gives.
	Epsilon rundir.Number `json:"epsilon" jsonschema:"exclusiveMinimum=0"`
	Delta   rundir.Number `json:"delta" jsonschema:"minimum=0,exclusiveMaximum=1"`
	// Episodes is K; Seeds the seeds, in the order of the CSV's seed columns.
	Episodes int      `json:"episodes" jsonschema:"minimum=1"`
	Seeds    []uint64 `json:"seeds" jsonschema:"minItems=1"`
	// CSV is the curve's file, curves/<env>/<curve>.csv (report.WriteCurveCSV: episode, one
	// column per seed, mean, ci95_lo, ci95_hi), relative to the run directory.
	CSV string `json:"csv" jsonschema:"relpath,pattern=^([^/]+/)?curves/[^/]+/[^/]+\\.csv$"`
	// FinalMean is the mean over seeds of R(K), the cumulative regret after K episodes, and
	// FinalLo, FinalHi its Student-t 95 % interval (null for one seed).
	FinalMean rundir.Number `json:"final_mean"`
	FinalLo   rundir.Number `json:"final_ci95_lo"`
	FinalHi   rundir.Number `json:"final_ci95_hi"`
	// LastDecile is the mean per-episode regret over the last tenth of the episodes, from the
	// recorded mean curve: (R̄(K) − R̄(k₀))/(K − k₀), k₀ the last recorded episode ≤ K − ⌈K/10⌉
	// (0 before the first).
	LastDecile rundir.Number `json:"last_decile_regret_per_episode"`
	// Reference is {kind, regret_per_episode}, what a policy that never learns loses per
	// episode: uniform-policy (tabular, linear MDP, linear mixture), zero-policy (LQ: Z(K)/K)
	// or none.
	Reference Reference `json:"reference"`
	// EpisodesPerSecond is the mean over seeds of K / the seed's wall time; null where the
	// family does not time its seeds (linear MDP: its results are compared exactly across
	// worker counts) or a seed was not timed (a resumed run's unit files written before).
	EpisodesPerSecond rundir.Number `json:"episodes_per_second" jsonschema:"minimum=0"`
	// Privacy is the guarantee as the privacy ledger composes it (ledger.Report, below): one
	// privacy object, of one type, for every agent of every family.
	Privacy ledger.Report `json:"privacy"`
	// Undefined says why a number above is null (field → reason); empty when none is.
	Undefined rundir.Undefined `json:"undefined"`
	// Extras holds what only this family records for a curve (readers that span families
	// ignore it): tabular (calibration, E mode, levels, groups, bonus, per-seed runs);
	// practical, linmdp, linmix, lq, python likewise.
	Extras map[string]any `json:"extras"`
}

// RunManifest is manifest.json of every run directory (RunSchema), written last by WriteRun:
// its presence means the directory is complete.
type RunManifest struct {
	// Schema is "dprl.run/v1" (RunSchema).
	Schema string `json:"schema" jsonschema:"const=dprl.run/v1"`
	rundir.Provenance
	// Family and Experiment name the family (tabular, linmdp, linmix or lq) and the run (the
	// configuration's name).
	Family     string `json:"family" jsonschema:"minLength=1"`
	Experiment string `json:"experiment" jsonschema:"minLength=1"`
	// Command is the command line that produced the run (empty for a run written by a library
	// call).
	Command []string `json:"command"`
	// Config is the family's resolved configuration (what the run actually used).
	Config any `json:"config" jsonschema_description:"the family's resolved configuration (family-specific)"`
	// Workers and WallSeconds describe this invocation (meta.json has the whole history).
	Workers     int     `json:"workers" jsonschema:"minimum=0"`
	WallSeconds float64 `json:"wall_seconds" jsonschema:"minimum=0"`
	// Curves has one record per curve (CurveRecord, below).
	Curves []CurveRecord `json:"curves"`
	// Figures are the figures (each as .png and .svg): regret-<env> for every environment,
	// then the family's own.
	Figures []string `json:"figures" jsonschema:"relpath"`
	// Files lists every file of the run directory other than the manifest, meta.json,
	// config.resolved.yaml and regret_long.csv (which the engine writes beside it).
	Files []string `json:"files" jsonschema:"relpath"`
	// Extras is the family's own section, one key per producer (readers that span families
	// ignore it): tabular (V*, the no-learning regret, qiao-fig1's claims), practical (issue
	// 12's goals, the uniform regret per group), linmdp (V*, checkpoints), linmix (claims), lq
	// (extended, report points, system, the zero line's file), python (producer, versions,
	// server), blocks (a suite's blocks).
	Extras map[string]any `json:"extras" jsonschema_description:"the family's own section (paper claims, goals, blocks, constants)"`
}

// NominalPrivacy returns the nominal (ε, δ) of a curve's record (CurveRecord.Epsilon and
// Delta): both null for a non-private curve, δ also null when it is not positive (pure ε-DP).
func NominalPrivacy(private bool, eps, delta float64) (rundir.Number, rundir.Number) {
	null := rundir.Number(math.NaN())
	switch {
	case !private:
		return null, null
	case !(delta > 0):
		return rundir.Number(eps), null
	}
	return rundir.Number(eps), rundir.Number(delta)
}

// CurveOutput is one curve handed to WriteRun: its record (the writer fills CSV, the final
// numbers, LastDecile and Undefined) and its data.
type CurveOutput struct {
	CurveRecord
	// Dir is the directory below curves/ (default rundir.FileName(Env)); File the CSV's base
	// name without .csv (default rundir.FileName(Label)).
	Dir, File string
	// Steps are the recorded episodes (1-based, increasing, the last = Episodes); Runs one
	// cumulative-regret series per seed at Steps; Names the CSV's seed columns
	// (report.SeedColumns); Band the pointwise mean and 95 % band.
	Steps []int
	Runs  [][]float64
	Names []string
	Band  report.Band
	// Legend and Style draw the curve in its environment's regret figure (Legend defaults to
	// Label).
	Legend string
	Style  report.Style
}

// RunOutput is what a family hands to WriteRun.
type RunOutput struct {
	Family, Experiment string
	Provenance         rundir.Provenance
	Command            []string
	Config             any
	Workers            int
	WallSeconds        float64
	Curves             []CurveOutput
	// Summary is the family's own text of summary.md (Markdown, starting with its title);
	// WriteRun appends the table of every curve. Empty: a title is made up.
	Summary string
	// Figures and Files are figures (base names) and other files the family wrote itself
	// into the directory before calling WriteRun.
	Figures, Files []string
	Extras         map[string]any
	// FigureTitle titles the regret figure of environment env (default "<experiment>: <env>:
	// cumulative regret, mean ± 95% CI").
	FigureTitle func(env string) string
	// References are reference curves drawn in an environment's figure (by Dir) besides the
	// constant no-learning line, e.g. LQ's zero-policy line Z(k).
	References map[string][]report.Curve
	// PlotOptions, if set, gives the options of an environment's figure from the curves'
	// final means (default: 11 × 6 in, y axis per Output.LogY).
	PlotOptions func(env string, finals []float64) report.PlotOptions
	// Output holds the output options: LogY of the figures; BeforeManifest (the engine's
	// meta.json, config.resolved.yaml and regret_long.csv).
	Output rundir.Options
}

// WriteRun writes a run directory in the one layout (RunSchema) into dir, which the family
// has prepared (rundir.Prepare) and may already hold the family's own figures and files: one CSV
// per curve (curves/<env>/<curve>.csv), one regret figure per environment (regret-<env>.png
// and .svg, with the no-learning reference), summary.md (the family's text, then every curve's
// row) and manifest.json, last, through rundir.WriteManifest. Every file is written
// atomically. It returns the manifest.
func WriteRun(dir string, out *RunOutput) (*RunManifest, error) {
	if err := out.Output.Validate(); err != nil {
		return nil, err
	}
	man := &RunManifest{Schema: RunSchema, Provenance: out.Provenance, Family: out.Family, Experiment: out.Experiment,
		Command: out.Command, Config: out.Config, Workers: out.Workers, WallSeconds: out.WallSeconds,
		Curves: []CurveRecord{}, Extras: out.Extras}
	if man.Command == nil {
		man.Command = []string{}
	}
	if man.Extras == nil {
		man.Extras = map[string]any{}
	}
	if man.Provenance.Inputs == nil {
		man.Provenance.Inputs = []rundir.Input{}
	}
	type envFig struct {
		curves []report.Curve
		finals []float64
		refX   []float64
		ref    float64
	}
	figs := map[string]*envFig{}
	var envOrder []string
	seen := map[string]bool{}
	for i := range out.Curves {
		c := &out.Curves[i]
		rec, err := writeCurve(dir, c)
		if err != nil {
			return nil, err
		}
		if seen[rec.CSV] {
			return nil, fmt.Errorf("curves[%d]: %s: two curves write the same file", i, rec.CSV)
		}
		seen[rec.CSV] = true
		man.Curves = append(man.Curves, rec)
		man.Files = append(man.Files, rec.CSV)
		d := c.dir()
		f := figs[d]
		if f == nil {
			f = &envFig{}
			figs[d] = f
			envOrder = append(envOrder, d)
		}
		x := report.EpisodeAxis(c.Steps)
		legend := c.Legend
		if legend == "" {
			legend = c.Label
		}
		f.curves = append(f.curves, report.Curve{Label: legend, X: x, Band: c.Band, Style: c.Style})
		f.finals = append(f.finals, c.Band.Mean[c.Band.Len()-1])
		if len(x) > len(f.refX) {
			f.refX = x
		}
		if r := float64(rec.Reference.RegretPerEpisode); rec.Reference.Kind != RefNone && r > 0 && !math.IsInf(r, 0) {
			f.ref = r
		}
	}
	for _, d := range envOrder {
		f := figs[d]
		curves := f.curves
		if f.ref > 0 && len(f.refX) > 0 {
			curves = append(curves, report.NoLearningCurve(f.refX, f.ref))
		}
		curves = append(curves, out.References[d]...)
		title := fmt.Sprintf("%s: %s: cumulative regret, mean ± 95%% CI", out.Experiment, d)
		if out.FigureTitle != nil {
			title = out.FigureTitle(d)
		}
		name := "regret-" + d
		path, err := rundir.Within(dir, name)
		if err != nil {
			return nil, err
		}
		opts := report.PlotOptions{Width: 11 * vg.Inch, Height: 6 * vg.Inch, LogY: out.Output.UseLogY(f.finals)}
		if out.PlotOptions != nil {
			opts = out.PlotOptions(d, f.finals)
		}
		if err := report.PlotCurves(path, title, "episode", "cumulative regret", curves, opts); err != nil {
			return nil, err
		}
		man.Figures = append(man.Figures, name+".png", name+".svg")
	}
	man.Figures = append(man.Figures, out.Figures...)
	man.Files = append(man.Files, man.Figures...)
	man.Files = append(man.Files, out.Files...)
	sum, err := summary(out, man)
	if err != nil {
		return nil, err
	}
	if err := atomicfile.WriteBytes(filepath.Join(dir, SummaryFile), sum, 0o644); err != nil {
		return nil, err
	}
	if !slices.Contains(man.Files, SummaryFile) {
		man.Files = append(man.Files, SummaryFile)
	}
	if man.Figures == nil {
		man.Figures = []string{}
	}
	if err := rundir.WriteManifest(dir, out.Output, man); err != nil {
		return nil, err
	}
	return man, nil
}

// Block is one block of a suite written into its own run directory (Dir, relative to the
// suite's directory) with its manifest.
type Block struct {
	Dir      string
	Manifest *RunManifest
}

// WriteSuite writes the manifest of a suite whose blocks WriteRun wrote into subdirectories of
// dir (a reproduction with several blocks): the same schema, with every block's curves (their
// CSV paths prefixed by the block's directory, <block>/curves/<env>/<curve>.csv), figures
// and files, and each block's manifest listed; summary.md is out.Summary then every curve's
// row. out.Curves must be empty: the curves are the blocks'. The blocks' extras are under
// extras.blocks.<dir>.
func WriteSuite(dir string, out *RunOutput, blocks []Block) (*RunManifest, error) {
	if len(out.Curves) > 0 {
		return nil, fmt.Errorf("suite %s: curves belong to its blocks", out.Experiment)
	}
	man := &RunManifest{Schema: RunSchema, Provenance: out.Provenance, Family: out.Family, Experiment: out.Experiment,
		Command: out.Command, Config: out.Config, Workers: out.Workers, WallSeconds: out.WallSeconds,
		Curves: []CurveRecord{}, Figures: []string{}, Extras: map[string]any{}}
	if man.Command == nil {
		man.Command = []string{}
	}
	if man.Provenance.Inputs == nil {
		man.Provenance.Inputs = []rundir.Input{}
	}
	for k, v := range out.Extras {
		man.Extras[k] = v
	}
	be := map[string]any{}
	for _, b := range blocks {
		pre := func(f string) string { return filepath.ToSlash(filepath.Join(b.Dir, f)) }
		for _, c := range b.Manifest.Curves {
			c.CSV = pre(c.CSV)
			man.Curves = append(man.Curves, c)
		}
		for _, f := range b.Manifest.Figures {
			man.Figures = append(man.Figures, pre(f))
		}
		for _, f := range append(b.Manifest.Files, ManifestFile) {
			man.Files = append(man.Files, pre(f))
		}
		be[b.Dir] = b.Manifest.Extras
	}
	man.Extras["blocks"] = be
	sum, err := summary(out, man)
	if err != nil {
		return nil, err
	}
	if err := atomicfile.WriteBytes(filepath.Join(dir, SummaryFile), sum, 0o644); err != nil {
		return nil, err
	}
	man.Files = append(man.Files, SummaryFile)
	if err := rundir.WriteManifest(dir, out.Output, man); err != nil {
		return nil, err
	}
	return man, nil
}

func (c *CurveOutput) dir() string {
	if c.Dir != "" {
		return c.Dir
	}
	return rundir.FileName(c.Env)
}

// writeCurve writes the curve's CSV and returns its completed record.
func writeCurve(dir string, c *CurveOutput) (CurveRecord, error) {
	rec := c.CurveRecord
	n := c.Band.Len()
	switch {
	case n == 0 || n != len(c.Steps):
		return rec, fmt.Errorf("curve %q: %d recorded episodes, band of %d", c.Label, len(c.Steps), n)
	case c.Steps[n-1] != c.Episodes:
		return rec, fmt.Errorf("curve %q: last recorded episode %d, K = %d", c.Label, c.Steps[n-1], c.Episodes)
	case len(c.Runs) != len(c.Seeds):
		return rec, fmt.Errorf("curve %q: %d runs for %d seeds", c.Label, len(c.Runs), len(c.Seeds))
	}
	file := c.File
	if file == "" {
		file = rundir.FileName(c.Label)
	}
	rel := filepath.ToSlash(filepath.Join(CurvesDir, c.dir(), file+".csv"))
	path, err := rundir.Within(dir, rel)
	if err != nil {
		return rec, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return rec, err
	}
	if err := report.WriteCurveCSV(path, c.Steps, c.Runs, c.Names, c.Band); err != nil {
		return rec, err
	}
	rec.CSV = rel
	if rec.Undefined == nil {
		rec.Undefined = rundir.Undefined{}
	}
	if rec.Extras == nil {
		rec.Extras = map[string]any{}
	}
	if rec.Seeds == nil {
		rec.Seeds = []uint64{}
	}
	if rec.Reference.Kind == "" {
		rec.Reference = Reference{Kind: RefNone, RegretPerEpisode: rundir.Number(math.NaN())}
	}
	rec.FinalMean = rundir.Number(c.Band.Mean[n-1])
	rec.FinalLo, rec.FinalHi = rundir.CI(c.Band.N, c.Band.Lo[n-1], c.Band.Hi[n-1])
	if c.Band.N < 2 {
		rec.Undefined["final_ci95_lo"], rec.Undefined["final_ci95_hi"] = rundir.NoCI, rundir.NoCI
	}
	rec.LastDecile = rundir.Number(LastDecile(c.Steps, c.Band.Mean))
	for _, u := range []struct {
		field, why string
		v          rundir.Number
	}{{"epsilon", "non-private curve", rec.Epsilon}, {"delta", "no δ: non-private or pure ε-DP", rec.Delta},
		{"episodes_per_second", "the family does not time its seeds", rec.EpisodesPerSecond},
		{"reference.regret_per_episode", "no no-learning reference", rec.Reference.RegretPerEpisode}} {
		if _, ok := rec.Undefined[u.field]; !u.v.Defined() && !ok {
			rec.Undefined[u.field] = u.why
		}
	}
	return rec, nil
}

// FinalCI formats a curve's final 95 % interval for text output: "95% CI [lo, hi]", or
// "n=1, no CI" for one seed.
func FinalCI(c CurveRecord) string {
	if !c.FinalLo.Defined() {
		return rundir.NoCI
	}
	return "95% CI " + rundir.FormatCI(len(c.Seeds), "%.1f", float64(c.FinalLo), float64(c.FinalHi))
}

// LastDecile returns the mean per-episode regret over the last tenth of the episodes of a
// cumulative curve recorded at steps: (cum(K) − cum(k₀))/(K − k₀), k₀ the last recorded episode
// ≤ K − ⌈K/10⌉ (0, with cum 0, when none is).
func LastDecile(steps []int, cum []float64) float64 {
	n := len(steps)
	if n == 0 || n != len(cum) {
		return math.NaN()
	}
	K := steps[n-1]
	limit := K - (K+9)/10
	k0, c0 := 0, 0.0
	for i, s := range steps {
		if s > limit {
			break
		}
		k0, c0 = s, cum[i]
	}
	if K == k0 {
		return math.NaN()
	}
	return (cum[n-1] - c0) / float64(K-k0)
}

// summary renders summary.md: the family's text, then one table of every curve per
// environment with the same columns in every family. The table holds no timing (episodes/s is
// in the manifest), so it is byte-deterministic for a given seed.
func summary(out *RunOutput, man *RunManifest) ([]byte, error) {
	var b bytes.Buffer
	if s := strings.TrimRight(out.Summary, "\n"); s != "" {
		b.WriteString(s)
		b.WriteString("\n\n")
	} else {
		fmt.Fprintf(&b, "# %s (%s)\n\n", out.Experiment, out.Family)
	}
	fmt.Fprintf(&b, "## Every curve (run directory %s)\n", RunSchema)
	var env string
	var rows [][]string
	flush := func() error {
		if len(rows) == 0 {
			return nil
		}
		fmt.Fprintf(&b, "\n### %s\n\n", env)
		err := report.WriteMarkdownTable(&b, []string{"curve", "agent", "ε", "K", "seeds", "R(K) mean [95% CI]", "last-decile regret/episode", "privacy (ledger)"}, rows)
		rows = rows[:0]
		return err
	}
	for _, c := range man.Curves {
		if c.Env != env {
			if err := flush(); err != nil {
				return nil, err
			}
			env = c.Env
		}
		eps := "—"
		if c.Epsilon.Defined() {
			eps = fmt.Sprint(float64(c.Epsilon))
		}
		r := fmt.Sprintf("%.4g", float64(c.FinalMean))
		if c.FinalLo.Defined() {
			r += fmt.Sprintf(" [%.4g, %.4g]", float64(c.FinalLo), float64(c.FinalHi))
		} else {
			r += " (" + rundir.NoCI + ")"
		}
		rows = append(rows, []string{c.Label, c.Agent, eps, fmt.Sprint(c.Episodes), fmt.Sprint(len(c.Seeds)), r,
			fmt.Sprintf("%.4g", float64(c.LastDecile)), c.Privacy.String()})
	}
	if err := flush(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
