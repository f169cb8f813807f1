package practical

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"gonum.org/v1/plot/vg"

	"github.com/dprl/dprl/experiment/engine"
	"github.com/dprl/dprl/experiment/rundir"
	"github.com/dprl/dprl/privacy/ledger"
	"github.com/dprl/dprl/report"
)

// Goal is one goal of issue 12 evaluated on the measured data.
type Goal struct {
	ID        string `json:"id"`
	Statement string `json:"statement"`
	Holds     bool   `json:"holds"`
	Measured  string `json:"measured"`
}

func (cv *Curve) band() (report.Band, error) {
	runs := make([][]float64, len(cv.Runs))
	for i, r := range cv.Runs {
		runs[i] = r.Cum
	}
	return report.MeanBand(runs, 0.95)
}

func (r *Result) find(group, agent string, eps float64) *Curve {
	for _, c := range r.Curves {
		if c.Group == group && c.Agent == agent && c.Epsilon == eps {
			return c
		}
	}
	return nil
}

func meanOf(cv *Curve, f func(SeedRun) float64) float64 {
	s := 0.0
	for _, r := range cv.Runs {
		s += f(r)
	}
	return s / float64(len(cv.Runs))
}

func final(r SeedRun) float64 { return r.Final }
func tail(r SeedRun) float64  { return r.LastDecile }
func speed(r SeedRun) float64 { return r.EpisodesPerSecond }

// cost returns the per-seed privacy costs R_private(K) − R_UCBVI(K) (same seeds, same users).
func cost(priv, base *Curve) []float64 {
	out := make([]float64, len(priv.Runs))
	for i := range priv.Runs {
		out[i] = priv.Runs[i].Final - base.Runs[i].Final
	}
	return out
}

// Goals evaluates the goals of issue 12 on the measured data (none for a configuration with
// explicit curves: the goals are stated on the reproduction's grid).
func (r *Result) Goals() []Goal {
	if len(r.Config.Curves) > 0 {
		return nil
	}
	var gs []Goal
	jdp := r.find("riverswim-jdp", "practical-jdp", 1)
	if jdp != nil {
		R, t := meanOf(jdp, final), meanOf(jdp, tail)
		fs := make([]float64, len(jdp.Runs))
		for i, s := range jdp.Runs {
			fs[i] = s.Final
		}
		_, lo, hi := meanCI(fs)
		margin := "n/a (one seed)"
		if !math.IsNaN(hi) {
			margin = fmt.Sprintf("%v", hi <= 16767)
		}
		gs = append(gs,
			Goal{"G1", "RiverSwim H=20, (1, 1e-5)-JDP: R(K) ≤ 16 767 (10 % of the no-learning line)", R <= 16767,
				fmt.Sprintf("R(%d) = %.0f (mean of %d seeds; 95%% CI [%.0f, %.0f]; CI upper end ≤ 16 767: %s)", jdp.Episodes, R, len(jdp.Runs), lo, hi, margin)},
			Goal{"G2", "last-decile per-episode regret ≤ 0.05", t <= 0.05, fmt.Sprintf("%.4f", t)},
			Goal{"G3", "stretch: R(K) ≤ 3 070 (10× UCBVI's 307)", R <= 3070, fmt.Sprintf("R(K) = %.0f", R)},
			Goal{"G6", "practical-jdp ≥ 20 000 episodes/s single-threaded (whole run incl. exact regret evaluation)", meanOf(jdp, speed) >= 20000, fmt.Sprintf("%.0f episodes/s (loaded machine, per run)", meanOf(jdp, speed))})
	}
	if l := r.find("riverswim-ldp", "practical-ldp", 1); l != nil {
		t, worst := meanOf(l, tail), 0.0
		for _, s := range l.Runs {
			worst = math.Max(worst, s.LastDecile)
		}
		st := fmt.Sprintf("last-decile %.3f/episode (mean of %d seeds; worst seed %.3f) at K = %d", t, len(l.Runs), worst, l.Episodes)
		ok := worst <= 1.0 && l.Episodes >= 1_000_000
		if l.Episodes < 1_000_000 {
			st += " (K < 10⁶: run with --long to evaluate this goal)"
		}
		gs = append(gs, Goal{"G4", "(1, 1e-5)-LDP learns within K = 10⁶ (last-decile per-episode regret ≤ 1.0, every seed)", ok, st})
	}
	ok, var_ := true, []string{}
	for _, s := range r.Config.Garnet.EnvSeeds {
		g := fmt.Sprintf("garnet-%d", s)
		c := r.find(g, "practical-jdp", 1)
		if c == nil {
			continue
		}
		t, u := meanOf(c, tail), r.Uniform[g]
		ok = ok && t <= 0.2*u
		var_ = append(var_, fmt.Sprintf("%s: %.3f vs uniform %.3f", g, t, u))
	}
	gs = append(gs, Goal{"G5", "the same constants learn on seeded Garnets (practical-jdp ε=1 last-decile ≤ 20 % of the uniform policy's regret)", ok, strings.Join(var_, "; ")})
	return gs
}

// Summary renders summary.md.
func (r *Result) Summary() (string, error) {
	var b bytes.Buffer
	c := r.Config
	fmt.Fprintf(&b, "# %s: dprl's own practical private agents (not the papers')\n\n", r.Config.Name)
	if len(c.Curves) > 0 {
		return r.curvesSummary(&b)
	}
	fmt.Fprintf(&b, "RiverSwim H=%d (JDP K=%d, LDP K=%d), Garnets S=%d A=%d (K=%d), δ=%g, wall time %.1f s on %d workers. "+
		"Agents named practical-* are dprl's (practical-privacy spec): private exactly as claimed (accountant: exact μ-GDP from the noise used), no regret proof. "+
		"Pooled agents assume a time-homogeneous MDP. dp-ucbvi-* are the papers' agents with the exact calibration.\n\n",
		c.Horizon, c.Episodes, r.find("riverswim-ldp", "ucbvi", 0).Episodes, c.Garnet.States, c.Garnet.Actions, c.Garnet.Episodes, c.Delta, r.Seconds, r.Workers)
	fmt.Fprintf(&b, "## Goals (issue 12)\n\n")
	var rows [][]string
	for _, g := range r.Goals() {
		v := "does not hold"
		if g.Holds {
			v = "holds"
		}
		rows = append(rows, []string{g.ID, g.Statement, v, g.Measured})
	}
	if err := report.WriteMarkdownTable(&b, []string{"id", "goal", "verdict", "measured"}, rows); err != nil {
		return "", err
	}
	if err := r.groupTables(&b); err != nil {
		return "", err
	}
	fmt.Fprintf(&b, "\n## Privacy cost R_private(K) − R_UCBVI(K) (same seeds and users)\n\n")
	rows = rows[:0]
	for _, e := range c.Epsilons {
		row := []string{fmt.Sprint(e)}
		for _, g := range []struct{ group, agent string }{{"riverswim-jdp", "practical-jdp"}, {"riverswim-ldp", "practical-ldp"}} {
			p, u := r.find(g.group, g.agent, e), r.find(g.group, "ucbvi", 0)
			if p == nil || u == nil {
				row = append(row, "—")
				continue
			}
			d := cost(p, u)
			m, lo, hi := meanCI(d)
			row = append(row, fmt.Sprintf("%.0f [%.0f, %.0f]", m, lo, hi))
		}
		rows = append(rows, row)
	}
	if err := report.WriteMarkdownTable(&b, []string{"ε", "JDP (practical-jdp)", "LDP (practical-ldp)"}, rows); err != nil {
		return "", err
	}
	return b.String(), nil
}

// groupTables writes one table of curves per environment group.
func (r *Result) groupTables(b *bytes.Buffer) error {
	for _, group := range r.groups() {
		fmt.Fprintf(b, "\n## %s (uniform policy: %.4f per episode)\n\n", group, r.Uniform[group])
		var rows [][]string
		for _, cv := range r.Curves {
			if cv.Group != group {
				continue
			}
			bd, err := cv.band()
			if err != nil {
				return err
			}
			n := bd.Len() - 1
			rows = append(rows, []string{cv.Label, fmt.Sprintf("%.0f", bd.Mean[n]), fmt.Sprintf("[%.0f, %.0f]", bd.Lo[n], bd.Hi[n]),
				fmt.Sprintf("%.4f", meanOf(cv, tail)), fmt.Sprintf("%.0f", meanOf(cv, speed)), cv.Privacy})
		}
		if err := report.WriteMarkdownTable(b, []string{"curve", "R(K) mean", "95% CI", "last-decile regret/episode", "episodes/s", "privacy (accountant)"}, rows); err != nil {
			return err
		}
	}
	return nil
}

// curvesSummary renders the summary of a configuration with explicit curves (the shared run
// schema): the setting and one table per environment (no goals: they are stated on the
// reproduction's grid).
func (r *Result) curvesSummary(b *bytes.Buffer) (string, error) {
	c := r.Config
	if c.Summary == "benchmarks" {
		return r.benchmarkSummary(b)
	}
	noise := c.Noise
	if noise == "" {
		noise = "seeded"
	}
	fmt.Fprintf(b, "H=%d, K=%d, seeds %v, δ=%g, noise %s, wall time %.1f s on %d workers. "+
		"Agents named practical-* are dprl's (practical-privacy spec): private exactly as claimed (accountant: exact μ-GDP from the noise used), no regret proof. "+
		"The practical agents pool their statistics over h on a time-homogeneous model and keep them per step otherwise. dp-ucbvi-* are the papers' agents with the exact calibration.\n",
		c.Horizon, c.Episodes, c.Seeds, c.Delta, noise, r.Seconds, r.Workers)
	if err := r.groupTables(b); err != nil {
		return "", err
	}
	return b.String(), nil
}

func meanCI(x []float64) (m, lo, hi float64) {
	// One value per seed: each seed is a run of length 1.
	runs := make([][]float64, len(x))
	for i, v := range x {
		runs[i] = []float64{v}
	}
	b, err := report.MeanBand(runs, 0.95)
	if err != nil || len(b.Lo) == 0 {
		s := 0.0
		for _, v := range x {
			s += v
		}
		m = s / float64(len(x))
		return m, math.NaN(), math.NaN()
	}
	return b.Mean[0], b.Lo[0], b.Hi[0]
}

func (r *Result) groups() []string {
	var g []string
	seen := map[string]bool{}
	for _, c := range r.Curves {
		if !seen[c.Group] {
			seen[c.Group] = true
			g = append(g, c.Group)
		}
	}
	return g
}

// Extras is the practical suite's own section of the manifest (engine.RunManifest.Extras).
type Extras struct {
	// Goals are issue 12's goals evaluated on the data (none for explicit curves).
	Goals []Goal `json:"goals"`
	// Uniform is the per-episode regret of the uniform random policy per environment group.
	Uniform map[string]float64 `json:"uniform_regret_per_episode"`
}

// CurveExtras is the practical suite's own part of a curve's record.
type CurveExtras struct {
	Group   string `json:"group"`
	EnvSeed uint64 `json:"env_seed,omitempty"`
	File    string `json:"file,omitempty"`
	// Statement is the accountant's one-line statement; Runs the per-seed results (final
	// regret, last decile, episodes/s).
	Statement string    `json:"statement"`
	Runs      []SeedRun `json:"runs"`
}

// Write stores the run in dir in the one run-directory layout (engine.WriteRun):
// curves/<group>/<label>.csv, one regret figure per group with 95 % bands and the no-learning
// reference line (y axis per r.Output.LogY), the privacy-cost-vs-ε figure, summary.md, and
// manifest.json (last, through rundir.WriteManifest with r.Output, so the engine's meta.json,
// config.resolved.yaml and regret_long.csv come just before it). Every file is written
// atomically. It returns the manifest and the summary.
func (r *Result) Write(dir string, command []string) (*engine.RunManifest, string, error) {
	if err := r.Output.Validate(); err != nil {
		return nil, "", err
	}
	out := &engine.RunOutput{Family: "tabular", Experiment: r.Config.Name, Provenance: rundir.NewProvenance(r.Inputs),
		Command: command, Config: r.Config, Workers: r.Workers, WallSeconds: r.Seconds, Output: r.Output,
		FigureTitle: func(group string) string { return fmt.Sprintf("%s: cumulative regret, mean ± 95%% CI", group) }}
	for _, cv := range r.Curves {
		bd, err := cv.band()
		if err != nil {
			return nil, "", err
		}
		names, runs := report.SeedColumns(len(cv.Runs), func(i int) (uint64, []float64) { return cv.Runs[i].Seed, cv.Runs[i].Cum })
		co := engine.CurveOutput{Dir: cv.Group, File: safe(cv.Label), Steps: Checkpoints(cv.Episodes), Runs: runs, Names: names, Band: bd,
			Style: report.StylePrivate}
		if cv.Epsilon == 0 {
			co.Style = report.StyleNonPrivate
		}
		co.Label, co.Agent, co.Env, co.Episodes, co.Privacy = cv.Label, cv.Agent, cv.Group, cv.Episodes, cv.Guarantee
		co.Epsilon, co.Delta = engine.NominalPrivacy(cv.Guarantee.Model != ledger.None && cv.Epsilon > 0, cv.Epsilon, cv.Guarantee.Delta)
		co.Reference = engine.Reference{Kind: engine.RefUniform, RegretPerEpisode: rundir.Number(r.Uniform[cv.Group])}
		for _, s := range cv.Runs {
			co.Seeds = append(co.Seeds, s.Seed)
		}
		co.EpisodesPerSecond = rundir.Number(meanOf(cv, speed))
		co.Extras = map[string]any{"practical": CurveExtras{Group: cv.Group, EnvSeed: cv.EnvSeed, File: cv.File, Statement: cv.Privacy, Runs: cv.Runs}}
		out.Curves = append(out.Curves, co)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, "", err
	}
	if pc, err := r.privacyCostCurves(); err != nil {
		return nil, "", err
	} else if len(pc) > 0 {
		if err := report.PlotCurves(filepath.Join(dir, "privacy-cost"), privacyCostTitle, "ε", privacyCostYLabel, pc, r.privacyCostOptions()); err != nil {
			return nil, "", err
		}
		out.Figures = append(out.Figures, "privacy-cost.png", "privacy-cost.svg")
	}
	sum, err := r.Summary()
	if err != nil {
		return nil, "", err
	}
	out.Summary = sum
	goals := r.Goals()
	if goals == nil {
		goals = []Goal{}
	}
	out.Extras = map[string]any{"practical": Extras{Goals: goals, Uniform: r.Uniform}}
	man, err := engine.WriteRun(dir, out)
	if err != nil {
		return nil, "", err
	}
	return man, sum, nil
}

// The privacy-cost figure's title and y label (PlotCurves adds "(log scale)" to the label; a
// seed's cost below 1, which a log axis cannot show, is drawn at 1).
const (
	privacyCostTitle  = "privacy cost R_private(K) − R_UCBVI(K) vs ε (RiverSwim), mean ± 95% CI"
	privacyCostYLabel = "privacy cost (per-seed values < 1 drawn at 1)"
)

// privacyCostOptions are the privacy-cost figure's options: log axes, a label at every ε of
// the grid, and a canvas wide enough for the title beside the legend.
func (r *Result) privacyCostOptions() report.PlotOptions {
	return report.PlotOptions{LogX: true, LogY: true, XTicks: r.Config.Epsilons, Width: 9 * vg.Inch, Height: 5 * vg.Inch}
}

// privacyCostCurves returns the curves of the privacy-cost-vs-ε figure: for JDP and LDP on
// RiverSwim, the per-seed R_private(K) − R_UCBVI(K) (at least 1, for the log axis) against ε,
// each labelled with its K (the LDP curves may run longer than the JDP ones).
func (r *Result) privacyCostCurves() ([]report.Curve, error) {
	var pc []report.Curve
	for _, g := range []struct{ group, agent, label string }{{"riverswim-jdp", "practical-jdp", "JDP: practical-jdp − UCBVI"}, {"riverswim-ldp", "practical-ldp", "LDP: practical-ldp − UCBVI"}} {
		u := r.find(g.group, "ucbvi", 0)
		var x []float64
		var runs [][]float64
		var ks []int
		for _, e := range r.Config.Epsilons {
			p := r.find(g.group, g.agent, e)
			if p == nil || u == nil {
				continue
			}
			x = append(x, e)
			if !slices.Contains(ks, p.Episodes) {
				ks = append(ks, p.Episodes)
			}
			d := cost(p, u)
			if runs == nil {
				runs = make([][]float64, len(d))
			}
			for i, v := range d {
				runs[i] = append(runs[i], math.Max(v, 1))
			}
		}
		if len(x) == 0 {
			continue
		}
		bd, err := report.MeanBand(runs, 0.95)
		if err != nil {
			return nil, err
		}
		kLabel := make([]string, len(ks))
		for i, k := range ks {
			kLabel[i] = fmt.Sprint(k)
		}
		pc = append(pc, report.Curve{Label: fmt.Sprintf("%s, K = %s", g.label, strings.Join(kLabel, ", ")), X: x, Band: bd, Style: report.StylePrivate})
	}
	return pc, nil
}

func safe(s string) string { return rundir.FileName(s) }
