package linmix

import (
	"bytes"
	"fmt"
	"math"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot/vg"

	agents "github.com/dprl/dprl/agents/linmix"
	"github.com/dprl/dprl/experiment/engine"
	"github.com/dprl/dprl/experiment/rundir"
	"github.com/dprl/dprl/privacy/ledger"
	"github.com/dprl/dprl/report"
)

// Version is the dprl version recorded in this experiment's manifest.
const Version = rundir.Version

// CurveSummary is the per-curve summary of a finished run.
type CurveSummary struct {
	*Curve
	CSV       string  `json:"csv"`
	FinalMean float64 `json:"final_mean"`
	// FinalLo and FinalHi are the 95 % interval of R(K), null for one seed.
	FinalLo rundir.Number `json:"final_ci95_lo"`
	FinalHi rundir.Number `json:"final_ci95_hi"`
	// N is the number of seeds.
	N int `json:"-"`
	// LastTenth is the mean per-episode regret over the last 10 % of episodes.
	LastTenth float64 `json:"last_tenth_per_episode"`
	// Exponent is the growth exponent of the mean cumulative regret over k ∈ [K/10, K]; null
	// when undefined (see Undefined).
	Exponent rundir.Number `json:"growth_exponent"`
	// GrowthTheory is the papers' exponent of the curve's algorithm and mode (its agent-table
	// row); null (Undefined says "none") without a theorem.
	GrowthTheory rundir.Number `json:"growth_exponent_theory"`
	// Undefined says why a number is null.
	Undefined rundir.Undefined `json:"undefined,omitempty"`
	// Saturated is the mean fraction of (k,h,s) whose optimistic value sits at the cap.
	Saturated float64 `json:"saturated_fraction"`
	// PDFallbacks is the total number of PD repairs over all seeds.
	PDFallbacks int `json:"pd_fallbacks"`
}

// Claim is one of the papers' claims checked on the measured data.
type Claim struct {
	ID       string `json:"id"`
	Env      string `json:"env"`
	Setting  string `json:"setting"`
	Text     string `json:"text"`
	Holds    bool   `json:"holds"`
	Evidence string `json:"evidence"`
}

// Summaries computes the per-curve summaries.
func (r *Result) Summaries() ([]CurveSummary, error) {
	K := r.Config.Episodes
	x := make([]float64, len(r.Checkpoints))
	i90 := len(r.Checkpoints) - 1
	for i, k := range r.Checkpoints {
		x[i] = float64(k)
		if k >= (9*K+9)/10 && i < i90 {
			i90 = i
		}
	}
	if r.Checkpoints[i90] > (9*K+9)/10 {
		for i := len(r.Checkpoints) - 1; i >= 0; i-- {
			if r.Checkpoints[i] <= 9*K/10 {
				i90 = i
				break
			}
		}
	}
	var out []CurveSummary
	for _, c := range r.Curves {
		b, err := report.MeanBand(c.Runs, 0.95)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.Label, err)
		}
		n := len(b.Mean) - 1
		s := CurveSummary{Curve: c, FinalMean: b.Mean[n], N: b.N}
		s.FinalLo, s.FinalHi = rundir.CI(b.N, b.Lo[n], b.Hi[n])
		if b.N == 1 {
			s.Undefined = rundir.Undefined{"final_ci95_lo": rundir.NoCI, "final_ci95_hi": rundir.NoCI}
		}
		s.LastTenth = (b.Mean[n] - b.Mean[i90]) / float64(max(K-r.Checkpoints[i90], 1))
		if e, err := report.GrowthExponent(x, b.Mean, float64(K)/10, float64(K)); err == nil {
			s.Exponent = rundir.Number(e)
		} else {
			s.Exponent = s.Undefined.Set("growth_exponent", math.NaN(),
				"undefined: fewer than two checkpoints in [K/10, K] with positive mean regret (e.g. zero regret)")
		}
		s.GrowthTheory = TheoryExponent(c.Algorithm, c.Mode).Number(&s.Undefined, "growth_exponent_theory")
		for _, d := range c.Diagnostics {
			s.Saturated += d.SaturatedFraction / float64(len(c.Diagnostics))
			s.PDFallbacks += d.PDFallbacks
		}
		out = append(out, s)
	}
	return out, nil
}

func envTag(i int, name string) string {
	t := name
	if j := strings.IndexByte(t, '('); j > 0 {
		t = t[:j]
	}
	return fmt.Sprintf("%d-%s", i+1, t)
}

func sanitize(s string) string {
	r := strings.NewReplacer("/", "_", " ", "_", "=", "", "+", "plus", "ε", "eps", "β", "b")
	return r.Replace(s)
}

// find returns the summary with the given env, algorithm, mode, calibration, ε and c_β.
func find(ss []CurveSummary, env int, alg, mode, calib string, eps, bm float64) *CurveSummary {
	for i := range ss {
		s := &ss[i]
		if s.Env == env && s.Algorithm == alg && s.Mode == mode && s.Calibration == calib && s.Epsilon == eps && s.BetaMult == bm {
			return s
		}
	}
	return nil
}

// Claims checks the papers' central claims on the measured data, per environment and per
// multiplier setting.
func (r *Result) Claims(ss []CurveSummary) []Claim {
	var out []Claim
	c := r.Config
	var eps []float64
	for _, cv := range c.Curves {
		if cv.Algorithm == "ucrl-vtr" && cv.Mode == "jdp" && (cv.Calibration == "" || cv.Calibration == "paper") {
			eps = cv.Epsilons
		}
	}
	for ei := range c.Envs {
		for _, bm := range c.BetaMults {
			setting := fmt.Sprintf("cβ=%g", bm)
			if bm == 1 {
				setting += " (theory)"
			} else {
				setting += fmt.Sprintf(", c_shift=%g (tuned)", c.ShiftMult)
			}
			envName := ""
			np := find(ss, ei, "ucrl-vtr", "none", "paper", 0, bm)
			if np != nil {
				envName = np.EnvName
				out = append(out, Claim{ID: "C0", Env: envName, Setting: setting,
					Text:  "non-private UCRL-VTR learns: last-10% regret per episode below half the uniform policy's",
					Holds: np.LastTenth < np.Uniform/2,
					Evidence: fmt.Sprintf("last-10%% regret/episode %.4g vs uniform %.4g; growth exponent %.2f (theory 0.5)",
						np.LastTenth, np.Uniform, np.Exponent)})
			}
			for _, e := range eps {
				j := find(ss, ei, "ucrl-vtr", "jdp", "paper", e, bm)
				l := find(ss, ei, "ucrl-vtr", "ldp", "paper", e, bm)
				if j == nil || l == nil {
					continue
				}
				envName = j.EnvName
				out = append(out, Claim{ID: "C1", Env: envName, Setting: setting + fmt.Sprintf(", ε=%g", e),
					Text:  "JDP regret grows like √K (Luyo Cor. 5): measured growth exponent over [K/10, K] ≤ 0.6",
					Holds: j.Exponent <= 0.6,
					Evidence: fmt.Sprintf("exponent %.3f (theory 0.5); R(K) = %.4g; bonus saturated in %.0f%% of (k,h,s)",
						j.Exponent, j.FinalMean, 100*j.Saturated)})
				out = append(out, Claim{ID: "C2", Env: envName, Setting: setting + fmt.Sprintf(", ε=%g", e),
					Text:     "LDP regret grows like K^{3/4} (Luyo Cor. 6): measured exponent in [0.65, 0.85]",
					Holds:    l.Exponent >= 0.65 && l.Exponent <= 0.85,
					Evidence: fmt.Sprintf("exponent %.3f (theory 0.75); R(K) = %.4g; saturated %.0f%%", l.Exponent, l.FinalMean, 100*l.Saturated)})
				out = append(out, Claim{ID: "C3", Env: envName, Setting: setting + fmt.Sprintf(", ε=%g", e),
					Text:     "the price of LDP exceeds that of JDP: R_LDP(K) > R_JDP(K) (95% intervals disjoint)",
					Holds:    l.FinalLo > j.FinalHi,
					Evidence: fmt.Sprintf("JDP %.4g [%.4g, %.4g], LDP %.4g [%.4g, %.4g]", j.FinalMean, j.FinalLo, j.FinalHi, l.FinalMean, l.FinalLo, l.FinalHi)})
				for _, mode := range []string{"jdp", "ldp"} {
					v := find(ss, ei, "ucrl-vtr", mode, "paper", e, bm)
					p := find(ss, ei, "ucrl-vtr+", mode, "paper", e, bm)
					if v == nil || p == nil {
						continue
					}
					out = append(out, Claim{ID: "C4", Env: envName, Setting: setting + fmt.Sprintf(", ε=%g, %s", e, mode),
						Text:     "variance-aware UCRL-VTR+ brings no gain under privacy (Luyo App. D): R_VTR+(K) is not below R_VTR(K)'s 95% interval",
						Holds:    p.FinalMean >= float64(v.FinalLo),
						Evidence: fmt.Sprintf("VTR+ %.4g vs VTR %.4g [%.4g, %.4g]%s", p.FinalMean, v.FinalMean, v.FinalLo, v.FinalHi, vacuous(p, v))})
				}
			}
			if bm == 1 {
				// C5: with the theory constants no private agent learns: its last-10% regret per
				// episode is at least 90% of the uniform policy's (the no-learning line).
				worst, n, names := math.Inf(1), 0, ""
				for i := range ss {
					s := &ss[i]
					if s.Env == ei && s.BetaMult == 1 && s.Mode != "none" {
						n++
						r := s.LastTenth / s.Uniform
						if r < worst {
							worst, names = r, s.Label
						}
					}
				}
				if n > 0 {
					out = append(out, Claim{ID: "C5", Env: envName, Setting: setting,
						Text:     "with the theory constants no private agent learns at this K (spec P4): last-10% regret per episode ≥ 0.9 × uniform for every private curve",
						Holds:    worst >= 0.9,
						Evidence: fmt.Sprintf("smallest ratio over %d private curves: %.3f (%s)", n, worst, names)})
				}
			}
		}
	}
	return out
}

// practicalGoals checks issue 13's linear-mixture goals on the practical-vtr curves at ε = 1:
// G1 (JDP) R(K) ≤ 50 % of the uniform policy's regret at K; G2 (LDP) learns: last-decile
// regret per episode ≤ half the uniform policy's (the measured value is stated either way).
func (r *Result) practicalGoals(ss []CurveSummary) []Claim {
	var out []Claim
	K := float64(r.Config.Episodes)
	for i := range ss {
		s := &ss[i]
		if s.Algorithm != PracticalAlgorithm || s.Epsilon != 1 || s.Practical == nil || s.Practical.Theory {
			continue
		}
		switch s.Mode {
		case "jdp":
			lim := 0.5 * s.Uniform * K
			out = append(out, Claim{ID: "G1", Env: s.EnvName, Setting: s.Label, Text: fmt.Sprintf("(1, %g)-JDP: R(K) ≤ 50%% of the uniform policy's %.5g", r.Config.Delta, s.Uniform*K),
				Holds: s.FinalMean <= lim, Evidence: fmt.Sprintf("R(%d) = %.5g (limit %.5g); last-decile regret %.4f per episode", r.Config.Episodes, s.FinalMean, lim, s.LastTenth)})
		case "ldp":
			out = append(out, Claim{ID: "G2", Env: s.EnvName, Setting: s.Label, Text: "(1, δ)-LDP learns: last-decile regret ≤ half the uniform policy's per episode",
				Holds: s.LastTenth <= 0.5*s.Uniform, Evidence: fmt.Sprintf("last-decile regret %.4f per episode (uniform %.4f) at K = %d; R(K) = %.5g", s.LastTenth, s.Uniform, r.Config.Episodes, s.FinalMean)})
		}
	}
	return out
}

// Extras is the linear-mixture family's own section of the manifest
// (engine.RunManifest.Extras): the papers' claims and dprl's practical goals, checked on the
// measured data (also in summary.claims.json).
type Extras struct {
	Claims      []Claim `json:"claims"`
	Checkpoints int     `json:"checkpoints"`
}

// Write stores the run in dir in the one run-directory layout (engine.WriteRun):
// curves/<i>-<env>/<curve>.csv at the checkpoints, regret-<i>-<env>.png/.svg with the
// no-learning line (plus regret-<i>-<env>-theory/-tuned when an environment runs several c_β),
// summary.md, summary.claims.json and manifest.json, written last. Every file is written
// atomically. dir must not hold an earlier run unless r.Output.Force is set.
func (r *Result) Write(dir string, command []string) (*engine.RunManifest, string, error) {
	ss, err := r.Summaries()
	if err != nil {
		return nil, "", err
	}
	if err := r.Output.Prepare(dir); err != nil {
		return nil, "", err
	}
	claims := append(r.Claims(ss), r.practicalGoals(ss)...)
	if claims == nil {
		claims = []Claim{}
	}
	horizons := make([]int, len(r.Config.Envs))
	for _, c := range r.Curves {
		horizons[c.Env] = c.Horizon
	}
	out := &engine.RunOutput{Family: "linmix", Experiment: r.Config.Name, Provenance: rundir.NewProvenance(r.Inputs), Command: command,
		Config: r.Config.used(horizons), Workers: r.Workers, WallSeconds: r.Seconds, Output: r.Output}
	names := make([]string, len(r.Config.Seeds))
	for i, s := range r.Config.Seeds {
		names[i] = fmt.Sprintf("seed%d", s)
	}
	x := report.EpisodeAxis(r.Checkpoints)
	groups := map[string][]report.Curve{}
	finals := map[string][]float64{}
	uniform := map[string]float64{}
	sets := map[string]map[string]bool{}
	var order []string
	ci := "mean ± 95% CI"
	if len(r.Config.Seeds) == 1 {
		ci = "1 seed: " + rundir.NoCI
	}
	for i := range ss {
		s := &ss[i]
		tag := envTag(s.Env, s.EnvName)
		b, _ := report.MeanBand(s.Runs, 0.95)
		s.CSV = filepath.ToSlash(filepath.Join(engine.CurvesDir, tag, sanitize(s.Label)+".csv"))
		g, err := guarantee(s.Curve)
		if err != nil {
			return nil, "", fmt.Errorf("curve %q: %w", s.Label, err)
		}
		co := engine.CurveOutput{Dir: tag, File: sanitize(s.Label), Steps: r.Checkpoints, Runs: s.Runs, Names: names[:len(s.Runs)], Band: b,
			Legend: curveLegend(s), Style: curveStyle(s)}
		co.Label, co.Agent, co.Env, co.Episodes, co.Privacy = s.Label, s.Algorithm+"/"+s.Mode, tag, r.Config.Episodes, g
		co.Seeds = append([]uint64(nil), r.Config.Seeds[:len(s.Runs)]...)
		co.Epsilon, co.Delta = engine.NominalPrivacy(s.Mode != "none" && s.Epsilon > 0, s.Epsilon, g.Delta)
		co.Reference = engine.Reference{Kind: engine.RefUniform, RegretPerEpisode: rundir.Number(s.Uniform)}
		co.EpisodesPerSecond = rundir.Number(episodesPerSecond(r.Config.Episodes, s.Seconds))
		if !co.EpisodesPerSecond.Defined() {
			co.Undefined = rundir.Undefined{"episodes_per_second": "a seed was not timed"}
		}
		co.Extras = map[string]any{"linmix": s}
		out.Curves = append(out.Curves, co)
		set := "tuned"
		if s.BetaMult == 1 {
			set = "theory"
		}
		if sets[tag] == nil {
			sets[tag] = map[string]bool{}
		}
		sets[tag][set] = true
		fg := "regret-" + tag + "-" + set
		if _, ok := groups[fg]; !ok {
			order = append(order, fg)
		}
		groups[fg] = append(groups[fg], report.Curve{Label: curveLegend(s), X: x, Band: b, Style: curveStyle(s)})
		finals[fg] = append(finals[fg], s.FinalMean)
		uniform[fg] = s.Uniform
	}
	out.FigureTitle = func(tag string) string {
		return fmt.Sprintf("%s: %s, K=%d, %d seeds, %s", r.Config.Name, "regret-"+tag, r.Config.Episodes, len(r.Config.Seeds), ci)
	}
	out.PlotOptions = func(_ string, fs []float64) report.PlotOptions {
		return report.PlotOptions{Width: 13 * vg.Inch, Height: 7 * vg.Inch, LogY: r.Output.UseLogY(fs)}
	}
	for _, g := range order {
		tag := strings.TrimSuffix(strings.TrimSuffix(strings.TrimPrefix(g, "regret-"), "-theory"), "-tuned")
		if len(sets[tag]) < 2 {
			continue // the environment's one figure, regret-<tag>, shows these curves
		}
		curves := groups[g]
		if u := uniform[g]; u > 0 {
			curves = append(curves, report.NoLearningCurve(x, u))
		}
		path, err := rundir.Within(dir, g)
		if err != nil {
			return nil, "", err
		}
		title := fmt.Sprintf("%s: %s, K=%d, %d seeds, %s", r.Config.Name, g, r.Config.Episodes, len(r.Config.Seeds), ci)
		if err := report.PlotCurves(path, title, "episode k", "cumulative regret", curves,
			report.PlotOptions{Width: 13 * vg.Inch, Height: 7 * vg.Inch, LogY: r.Output.UseLogY(finals[g])}); err != nil {
			return nil, "", err
		}
		out.Figures = append(out.Figures, g+".png", g+".svg")
	}
	summary := r.summaryMarkdown(ss, claims)
	if err := rundir.WriteJSON(filepath.Join(dir, "summary.claims.json"), claims); err != nil {
		return nil, "", err
	}
	out.Files = append(out.Files, "summary.claims.json")
	out.Summary = summary
	out.Extras = map[string]any{"linmix": Extras{Claims: claims, Checkpoints: len(r.Checkpoints)}}
	man, err := engine.WriteRun(dir, out)
	if err != nil {
		return nil, "", err
	}
	return man, summary, nil
}

// episodesPerSecond is the mean over seeds of K / the seed's wall time; NaN when a seed has no
// time.
func episodesPerSecond(K int, seconds []float64) float64 {
	if len(seconds) == 0 {
		return math.NaN()
	}
	sum := 0.0
	for _, t := range seconds {
		if !(t > 0) {
			return math.NaN()
		}
		sum += float64(K) / t
	}
	return sum / float64(len(seconds))
}

// guarantee states a curve's guarantee in the one privacy report type: the practical agent's
// privacy ledger report, or for the papers' agents engine.Guarantee of their constants (their
// ledger report, Constants.Ledger; a Laplace calibration is pure ε-DP).
func guarantee(c *Curve) (ledger.Report, error) {
	if c.Guarantee != nil {
		return *c.Guarantee, nil
	}
	if c.Mode == "none" {
		return engine.Guarantee(agents.Constants{NoiseKind: "none"})
	}
	return engine.Guarantee(c.Constants)
}

func (r *Result) summaryMarkdown(ss []CurveSummary, claims []Claim) string {
	var b bytes.Buffer
	c := r.Config
	fmt.Fprintf(&b, "# %s\n\nK = %d episodes, %d seeds (%v), δ = %g, p = %g, c_β ∈ %v (1 = theory), tuned runs use c_shift = %g. Wall time %.1f s on %d workers.\n\n",
		c.Name, c.Episodes, len(c.Seeds), c.Seeds, c.Delta, c.P, c.BetaMults, c.ShiftMult, r.Seconds, r.Workers)
	envs := map[int]bool{}
	for _, s := range ss {
		if envs[s.Env] {
			continue
		}
		envs[s.Env] = true
		fmt.Fprintf(&b, "## %s\n\nV*_1(s_1) = %.6f; uniform random policy: %.4f regret per episode (the no-learning line, %.4g at K).\n\n", s.EnvName, s.VStar, s.Uniform, s.Uniform*float64(c.Episodes))
		var rows [][]string
		for _, t := range ss {
			if t.Env != s.Env {
				continue
			}
			exp := "n/a"
			if t.Exponent.Defined() {
				exp = fmt.Sprintf("%.2f", float64(t.Exponent))
			}
			exp += fmt.Sprintf(" (%s)", TheoryExponent(t.Algorithm, t.Mode))
			rows = append(rows, []string{t.Label, fmt.Sprintf("%.4g", t.FinalMean), rundir.FormatCI(t.N, "%.4g", float64(t.FinalLo), float64(t.FinalHi)),
				fmt.Sprintf("%.4f", t.LastTenth), exp, fmt.Sprintf("%.2f", t.Saturated),
				fmt.Sprint(t.PDFallbacks), betaString(t.Constants), privacyString(t)})
		}
		_ = report.WriteMarkdownTable(&b, []string{"curve", "R(K)", ciHeader(len(c.Seeds)), "regret/ep last 10%", "growth exp. (theory)", "saturated", "PD repairs", "β used", "privacy"}, rows)
		b.WriteString("\n")
	}
	b.WriteString("## Claims\n\n")
	var rows [][]string
	for _, cl := range claims {
		h := "does not hold"
		if cl.Holds {
			h = "holds"
		}
		rows = append(rows, []string{cl.ID, cl.Env, cl.Setting, cl.Text, h, cl.Evidence})
	}
	_ = report.WriteMarkdownTable(&b, []string{"id", "env", "setting", "claim", "verdict", "evidence"}, rows)
	b.WriteString("\nTheoretical growth exponents (in parentheses; none for practical-vtr, which has no regret proof): non-private and JDP 0.5 (√K), LDP 0.75 (K^{3/4}); a measured exponent near 1 means no learning yet (linear regret). ")
	b.WriteString("Under the theory constants the bonuses saturate (spec P4), so every private curve is the no-learning line at these K; this is a faithful reproduction of how vacuous the constants are, not a bug. ")
	b.WriteString("Curves named practical-vtr are " + agents.PracticalLabel + ": pooled, value-normalised VTR through Gaussian factorisation counters (JDP) or user-side Gaussian noise (LDP), exact μ-GDP accounting under replace-one (the privacy column is the accountant's statement), λ_t and β_t from the noise actually added; -theory is the union-bound variant with c_β = 1, mode none the noise-off twin. ")
	b.WriteString("The papers' agents register their statistics with the privacy ledger, which composes the noise actually added (replace-one; Zhou's agents also under zero-out, their calibration's convention): the privacy column and the legends state its ε, and a curve it does not certify at its nominal ε is dotted. Luyo's Gaussian calibrations are stated for ε < 1 only; their σ's are so large that the ledger certifies far less than the nominal ε, also at ε ≥ 1.\n")
	return b.String()
}

// ciHeader is the header of the interval column.
func ciHeader(seeds int) string {
	if seeds == 1 {
		return "95% CI (" + rundir.NoCI + ")"
	}
	return "95% CI"
}

// curveStyle is the figure line style: solid for non-private curves, dashed for private curves
// whose calibration covers the nominal ε, dotted when it does not (the same convention in
// every family).
func curveStyle(s *CurveSummary) report.Style {
	switch {
	case s.Mode == "none":
		return report.StyleNonPrivate
	case s.Constants.Covered:
		return report.StylePrivate
	}
	return report.StyleNotPrivateAtNominal
}

// curveLegend labels a curve. Zhou's agents (calibration stated under zero-out neighbours)
// state their effective ε under both relations; a curve whose nominal ε is outside its
// calibration's proven range says so; any other effective ε that differs from the nominal one
// is stated with its (replace-one) relation.
func curveLegend(s *CurveSummary) string {
	k := s.Constants
	switch {
	case s.Mode == "none":
		return s.Label
	case k.EpsilonZeroOut > 0 || k.EpsilonReplaceOne > 0:
		return s.Label + ", " + report.EffectiveEpsilon(k.EpsilonZeroOut, "zero-out") + ", " + report.EffectiveEpsilon(k.EpsilonReplaceOne, "replace-one")
	case !k.Covered && k.EffectiveEpsilon == s.Epsilon:
		return s.Label + ", ε outside the calibration's proven range (not covered)"
	case k.EffectiveEpsilon > 0 && k.EffectiveEpsilon != s.Epsilon:
		return s.Label + ", " + report.EffectiveEpsilon(k.EffectiveEpsilon, "replace-one")
	}
	return s.Label
}

func betaString(c agents.Constants) string {
	var p []string
	for _, v := range c.Beta {
		p = append(p, fmt.Sprintf("%.3g", v))
	}
	return strings.Join(p, ", ")
}

func privacyString(s CurveSummary) string {
	if s.Mode == "none" {
		return "non-private"
	}
	return s.Constants.Privacy
}

// vacuous notes when a comparison holds only because neither curve learns.
func vacuous(a, b *CurveSummary) string {
	if a.LastTenth >= 0.9*a.Uniform && b.LastTenth >= 0.9*b.Uniform {
		return " — vacuously: neither learns at this K"
	}
	return ""
}
