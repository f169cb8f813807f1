package experiment

import (
	"fmt"
	"os"
	"path/filepath"

	"gonum.org/v1/plot/vg"

	agents "github.com/dprl/dprl/agents/tabular"
	"github.com/dprl/dprl/experiment/internal/uniform"
	"github.com/dprl/dprl/experiment/rundir"
	model "github.com/dprl/dprl/model/tabular"
	"github.com/dprl/dprl/report"
)

// Version is the dprl version recorded in manifests.
const Version = rundir.Version

// CurveSummary is the per-curve part of a manifest.
type CurveSummary struct {
	CurveResult
	// CSV is the file holding the curve's per-episode cumulative regret.
	CSV string `json:"csv"`
	// FinalMean and the 95% confidence interval of the final cumulative regret; the
	// interval is null for a single seed (see Undefined).
	FinalMean rundir.Number `json:"final_mean"`
	FinalLo   rundir.Number `json:"final_ci95_lo"`
	FinalHi   rundir.Number `json:"final_ci95_hi"`
	// Undefined says why a number above is null.
	Undefined rundir.Undefined `json:"undefined,omitempty"`
}

// CI formats the final 95 % interval for text output: "95% CI [lo, hi]", or "n=1, no CI"
// for one seed.
func (c CurveSummary) CI() string {
	if len(c.Runs) == 1 {
		return rundir.NoCI
	}
	return "95% CI " + rundir.FormatCI(len(c.Runs), "%.1f", float64(c.FinalLo), float64(c.FinalHi))
}

// Manifest is written as manifest.json into the run directory, last, so that its presence
// means the run directory is complete.
type Manifest struct {
	rundir.Provenance
	Command []string `json:"command,omitempty"`
	// Config is the configuration actually used: a file environment's own H, no parameter
	// the run did not use (Garnet parameters of other environments, ε and calibration of
	// non-private curves).
	Config *Config `json:"config"`
	Env    string  `json:"env"`
	// NoLearning is the per-episode regret of the uniformly random policy (the no-learning
	// reference line of the figures).
	NoLearning float64        `json:"no_learning_regret_per_episode"`
	VStar      float64        `json:"v_star"`
	Workers    int            `json:"workers"`
	Seconds    float64        `json:"wall_seconds"`
	Curves     []CurveSummary `json:"curves"`
	Figures    []string       `json:"figures"`
	// Files lists every file of the run directory other than the manifest.
	Files     []string       `json:"files"`
	Extra     map[string]any `json:"extra,omitempty"`
	Precision string         `json:"precision"`
}

// Bands returns the pointwise mean and 95% confidence band of every curve.
func (r *Result) Bands() ([]report.Band, error) {
	out := make([]report.Band, len(r.Curves))
	for i, c := range r.Curves {
		runs := make([][]float64, len(c.Runs))
		for j, s := range c.Runs {
			runs[j] = s.Cum
		}
		b, err := report.MeanBand(runs, 0.95)
		if err != nil {
			return nil, fmt.Errorf("curve %q: %w", c.Spec.Label, err)
		}
		out[i] = b
	}
	return out, nil
}

// used returns the configuration actually used by the run: the environment's own H, only the
// parameters of the chosen environment, and no privacy fields on non-private curves.
func (r *Result) used() *Config {
	c := *r.Config
	c.Inputs = nil
	e := c.Env
	c.Env = EnvConfig{Name: e.Name}
	c.registry().CopyParams(e.Name, &c.Env, &e)
	if c.Env.Horizon = r.Horizon; c.Env.Horizon == 0 {
		c.Env.Horizon = e.Horizon
	}
	c.Curves = make([]CurveSpec, len(r.Config.Curves))
	private := false
	for i, cv := range r.Config.Curves {
		if info, err := agents.Lookup(cv.Agent); err == nil && info.Model == agents.NonPrivate {
			cv.Epsilon, cv.Calibration, cv.EMode = 0, "", ""
		} else {
			private = true
		}
		c.Curves[i] = cv
	}
	if !private {
		c.Noise = ""
	}
	return &c
}

// noLearning returns the expected per-episode regret of an agent that never learns: it plays
// uniformly random actions (Q̃ ≡ H with random ties). Every (h, s) is visited at most once per
// episode, so this is V*_1 − V^{uniform}_1 of the stochastic uniform policy.
func noLearning(m *model.MDP, vstar float64) float64 {
	return vstar - uniform.Value(m.H, m.S, m.A, m.Init, func(h, s, a int, next []float64) float64 {
		if m.IsTerminal(s) {
			return m.TerminalValue(h)
		}
		// The sparse row in increasing s' adds exactly what the dense row added (p = 0 terms
		// add 0), so models given densely keep their historical values bit for bit.
		q := m.Reward(h, s, a)
		nx, pr := m.Row(h, s, a)
		for j, s2 := range nx {
			q += pr[j] * next[s2]
		}
		return q
	})
}

// Write stores the result in dir: one CSV per curve (curves/<label>.csv), one PNG and SVG
// figure per curve group, the summary of the configuration's Summary kind (qiao-fig1:
// summary.md and summary.claims.json), and manifest.json, written last. Every file is written
// atomically. dir must not hold an earlier run unless r.Output.Force is set (rundir.Prepare).
func (r *Result) Write(dir string, command []string, extra map[string]any) (*Manifest, error) {
	if err := r.Output.Validate(); err != nil {
		return nil, err
	}
	if err := rundir.Prepare(dir, r.Output.Force); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Join(dir, "curves"), 0o755); err != nil {
		return nil, err
	}
	bands, err := r.Bands()
	if err != nil {
		return nil, err
	}
	K := r.Config.Episodes
	episodes := make([]int, K)
	x := make([]float64, K)
	for k := range episodes {
		episodes[k] = k + 1
		x[k] = float64(k + 1)
	}
	man := &Manifest{Provenance: rundir.NewProvenance(r.Inputs), Command: command, Config: r.used(), Env: r.Env,
		VStar: r.VStar, Workers: r.Workers, Seconds: r.Seconds, Extra: extra, NoLearning: r.NoLearning,
		Precision: "CSV values are shortest round-trip decimal representations of float64"}
	groups := map[string][]report.Curve{}
	finals := map[string][]float64{}
	var order []string
	for i, c := range r.Curves {
		names, runs := report.SeedColumns(len(c.Runs), func(j int) (uint64, []float64) { return c.Runs[j].Seed, c.Runs[j].Cum })
		rel := filepath.Join("curves", sanitize(c.Spec.Label)+".csv")
		path, err := rundir.Within(dir, rel)
		if err != nil {
			return nil, err
		}
		if err := report.WriteCurveCSV(path, episodes, runs, names, bands[i]); err != nil {
			return nil, err
		}
		man.Files = append(man.Files, rel)
		b := bands[i]
		cs := CurveSummary{CurveResult: c, CSV: rel, FinalMean: rundir.Number(b.Mean[K-1])}
		cs.FinalLo, cs.FinalHi = rundir.CI(b.N, b.Lo[K-1], b.Hi[K-1])
		if b.N == 1 {
			cs.Undefined = rundir.Undefined{"final_ci95_lo": rundir.NoCI, "final_ci95_hi": rundir.NoCI}
		}
		man.Curves = append(man.Curves, cs)
		for _, g := range c.Spec.Groups {
			if _, ok := groups[g]; !ok {
				order = append(order, g)
			}
			groups[g] = append(groups[g], report.Curve{Label: curveLegend(c), X: x, Band: b, Style: curveStyle(c.Privacy)})
			finals[g] = append(finals[g], b.Mean[K-1])
		}
	}
	ci := "mean ± 95% CI"
	if len(r.Config.Seeds) == 1 {
		ci = "1 seed: " + rundir.NoCI
	}
	for _, g := range order {
		name := "regret"
		if g != "main" {
			name = "regret-" + sanitize(g)
		}
		title := fmt.Sprintf("%s: %s, K=%d, %d seeds, bonus %s, %s", r.Config.Name, r.Env, K, len(r.Config.Seeds), r.Curves[0].Bonus.Preset, ci)
		if g != "main" {
			title += " [" + g + "]"
		}
		curves := groups[g]
		if r.NoLearning > 0 {
			curves = append(curves, report.NoLearningCurve(x, r.NoLearning))
		}
		opts := report.PlotOptions{Width: 11 * vg.Inch, Height: 6 * vg.Inch, LogY: r.Output.UseLogY(finals[g])}
		path, err := rundir.Within(dir, name)
		if err != nil {
			return nil, err
		}
		if err := report.PlotCurves(path, title, "episode", "cumulative regret", curves, opts); err != nil {
			return nil, err
		}
		man.Figures = append(man.Figures, name+".png", name+".svg")
	}
	man.Files = append(man.Files, man.Figures...)
	if r.Config.Summary == "qiao-fig1" {
		claims, text, err := writeQiaoSummary(r, filepath.Join(dir, "summary.md"))
		if err != nil {
			return nil, err
		}
		r.qiao = &qiaoOutput{dir: dir, claims: claims, text: text}
		man.Files = append(man.Files, "summary.md", "summary.claims.json")
	}
	if err := rundir.WriteManifest(dir, r.Output, man); err != nil {
		return nil, err
	}
	return man, nil
}

// curveStyle is the line style of a curve: solid for non-private agents, dashed for private
// agents that are private at their nominal ε, dotted for agents whose calibration is not
// private at the nominal ε (the legend states their effective ε). The same convention holds
// in every family.
func curveStyle(p agents.PrivacyReport) report.Style {
	switch {
	case p.Model == "none":
		return report.StyleNonPrivate
	case p.PrivateAtNominal:
		return report.StylePrivate
	}
	return report.StyleNotPrivateAtNominal
}

// curveLegend labels a curve, stating its effective ε and the neighbouring relation when it is
// not private at the nominal ε.
func curveLegend(c CurveResult) string {
	l := c.Spec.Label
	p := c.Privacy
	if p.Model != "none" && !p.PrivateAtNominal {
		l += " (" + report.EffectiveEpsilon(p.EpsilonReplaceOne, "replace-one") + ")"
	}
	return l
}
