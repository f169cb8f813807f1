package tabular

import (
	"fmt"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot/vg"

	agents "github.com/dprl/dprl/agents/tabular"
	"github.com/dprl/dprl/experiment/engine"
	"github.com/dprl/dprl/experiment/internal/uniform"
	"github.com/dprl/dprl/experiment/rundir"
	model "github.com/dprl/dprl/model/tabular"
	"github.com/dprl/dprl/report"
)

// Version is the dprl version recorded in manifests.
const Version = rundir.Version

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

// Extras is the tabular family's own section of the manifest (engine.RunManifest.Extras):
// what only the papers' suite records besides the one per-curve record.
type Extras struct {
	// VStar is V*_1(s_1); NoLearning the per-episode regret of the uniformly random policy
	// (also every curve's reference).
	VStar      float64 `json:"v_star"`
	NoLearning float64 `json:"no_learning_regret_per_episode"`
	Precision  string  `json:"precision"`
	// Claims are qiao-fig1's claims (summary: qiao-fig1), also in summary.claims.json.
	Claims map[string][]Claim `json:"claims,omitempty"`
	// Extra is what the caller adds (Write's extra argument).
	Extra map[string]any `json:"extra,omitempty"`
}

// CurveExtras is the tabular family's own part of a curve's record.
type CurveExtras struct {
	// Calibration, EMode and Levels complete the ledger's report (privacy): how the Laplace
	// scale was derived from ε, the count-error bound, the tree levels.
	Calibration string             `json:"calibration,omitempty"`
	EMode       string             `json:"e_mode,omitempty"`
	Levels      int                `json:"levels,omitempty"`
	Groups      []string           `json:"groups"`
	Bonus       agents.BonusConfig `json:"bonus"`
	// Runs are the per-seed results (final regret, policy changes, planner diagnostics, the
	// last count-error bound, wall time).
	Runs []SeedRun `json:"runs"`
}

// Write stores the result in dir in the one run-directory layout (engine.WriteRun):
// curves/<env>/<label>.csv, regret-<env>.png/.svg with the no-learning line, one more figure
// per named curve group other than "main" (regret-<group>), summary.md (qiao-fig1's summary
// first, and summary.claims.json, when the configuration's Summary is qiao-fig1) and
// manifest.json, written last. Every file is written atomically. dir must not hold an earlier
// run unless r.Output.Force is set (rundir.Prepare).
func (r *Result) Write(dir string, command []string, extra map[string]any) (*engine.RunManifest, error) {
	if err := r.Output.Prepare(dir); err != nil {
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
	ex := Extras{VStar: r.VStar, NoLearning: r.NoLearning, Extra: extra,
		Precision: "CSV values are shortest round-trip decimal representations of float64"}
	out := &engine.RunOutput{Family: "tabular", Experiment: r.Config.Name, Provenance: rundir.NewProvenance(r.Inputs),
		Command: command, Config: r.used(), Workers: r.Workers, WallSeconds: r.Seconds, Output: r.Output}
	groups := map[string][]report.Curve{}
	finals := map[string][]float64{}
	var order []string
	for i, c := range r.Curves {
		names, runs := report.SeedColumns(len(c.Runs), func(j int) (uint64, []float64) { return c.Runs[j].Seed, c.Runs[j].Cum })
		b := bands[i]
		co := engine.CurveOutput{File: sanitize(c.Spec.Label), Steps: episodes, Runs: runs, Names: names, Band: b,
			Legend: curveLegend(c), Style: curveStyle(c.Privacy)}
		co.Label, co.Agent, co.Env, co.Episodes = c.Spec.Label, c.Spec.Agent, r.Env, K
		co.Epsilon, co.Delta = engine.NominalPrivacy(c.Privacy.Model != "none", c.Spec.Epsilon, 0) // pure ε-DP: δ null
		co.Privacy = c.Privacy.Ledger
		co.Reference = engine.Reference{Kind: engine.RefUniform, RegretPerEpisode: rundir.Number(r.NoLearning)}
		speed := 0.0
		for _, s := range c.Runs {
			co.Seeds = append(co.Seeds, s.Seed)
			speed += float64(K) / s.Seconds
		}
		co.EpisodesPerSecond = rundir.Number(speed / float64(len(c.Runs)))
		co.Extras = map[string]any{"tabular": CurveExtras{Calibration: c.Privacy.Calibration, EMode: c.Privacy.EMode,
			Levels: c.Privacy.Levels, Groups: c.Spec.Groups, Bonus: c.Bonus, Runs: c.Runs}}
		out.Curves = append(out.Curves, co)
		for _, g := range c.Spec.Groups {
			if g == "main" {
				continue
			}
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
	out.FigureTitle = func(string) string {
		return fmt.Sprintf("%s: %s, K=%d, %d seeds, bonus %s, %s", r.Config.Name, r.Env, K, len(r.Config.Seeds), r.Curves[0].Bonus.Preset, ci)
	}
	for _, g := range order {
		name := "regret-" + sanitize(g)
		title := out.FigureTitle(r.Env) + " [" + g + "]"
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
		out.Figures = append(out.Figures, name+".png", name+".svg")
	}
	if r.Config.Summary == "qiao-fig1" {
		text, claims, err := QiaoSummary(r)
		if err != nil {
			return nil, err
		}
		if err := rundir.WriteJSON(filepath.Join(dir, "summary.claims.json"), claims); err != nil {
			return nil, err
		}
		r.qiao = &qiaoOutput{dir: dir, claims: claims, text: text}
		out.Summary, ex.Claims = text, claims
		out.Files = append(out.Files, "summary.claims.json")
	} else {
		out.Summary = fmt.Sprintf("# %s: %s on %s\n\nK = %d, seeds %v, H = %d, V*_1(s_1) = %.6g; the uniformly random policy loses %.6g per episode (the dashed line of the figures).\n",
			r.Config.Name, curveNames(r.Curves), r.Env, K, r.Config.Seeds, r.Horizon, r.VStar, r.NoLearning)
	}
	out.Extras = map[string]any{"tabular": ex}
	return engine.WriteRun(dir, out)
}

// curveNames lists the curves' labels for the summary's title.
func curveNames(cs []CurveResult) string {
	names := make([]string, len(cs))
	for i, c := range cs {
		names[i] = c.Spec.Label
	}
	return strings.Join(names, ", ")
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
