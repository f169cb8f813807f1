package experiment

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"

	"gonum.org/v1/plot/vg"

	"github.com/dprl/dprl/internal/atomicfile"
	"github.com/dprl/dprl/report"
)

// Version is the dprl version recorded in manifests.
const Version = "0.1.0"

// CurveSummary is the per-curve part of a manifest.
type CurveSummary struct {
	CurveResult
	// CSV is the file holding the curve's per-episode cumulative regret.
	CSV string `json:"csv"`
	// FinalMean and the 95% confidence interval of the final cumulative regret.
	FinalMean float64 `json:"final_mean"`
	FinalLo   float64 `json:"final_ci95_lo"`
	FinalHi   float64 `json:"final_ci95_hi"`
}

// Manifest is written as manifest.json into the run directory, last, so that its presence
// means the run directory is complete.
type Manifest struct {
	Dprl      string         `json:"dprl_version"`
	Go        string         `json:"go_version"`
	Build     string         `json:"build,omitempty"`
	Command   []string       `json:"command,omitempty"`
	Config    *Config        `json:"config"`
	Env       string         `json:"env"`
	VStar     float64        `json:"v_star"`
	Workers   int            `json:"workers"`
	Seconds   float64        `json:"wall_seconds"`
	Curves    []CurveSummary `json:"curves"`
	Figures   []string       `json:"figures"`
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

// Write stores the result in dir: one CSV per curve (curves/<label>.csv), one PNG and SVG
// figure per curve group, and manifest.json (written last). Every file is written atomically.
func (r *Result) Write(dir string, command []string, extra map[string]any) (*Manifest, error) {
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
	man := &Manifest{Dprl: Version, Go: runtime.Version(), Command: command, Config: r.Config, Env: r.Env,
		VStar: r.VStar, Workers: r.Workers, Seconds: r.Seconds, Extra: extra,
		Precision: "CSV values are shortest round-trip decimal representations of float64"}
	if bi, ok := debug.ReadBuildInfo(); ok {
		man.Build = bi.Main.Version
	}
	groups := map[string][]report.Curve{}
	var order []string
	for i, c := range r.Curves {
		names := make([]string, len(c.Runs))
		runs := make([][]float64, len(c.Runs))
		for j, s := range c.Runs {
			names[j] = fmt.Sprintf("seed_%d", s.Seed)
			runs[j] = s.Cum
		}
		rel := filepath.Join("curves", sanitize(c.Spec.Label)+".csv")
		if err := report.WriteCurveCSV(filepath.Join(dir, rel), episodes, runs, names, bands[i]); err != nil {
			return nil, err
		}
		b := bands[i]
		man.Curves = append(man.Curves, CurveSummary{CurveResult: c, CSV: rel,
			FinalMean: b.Mean[K-1], FinalLo: b.Lo[K-1], FinalHi: b.Hi[K-1]})
		for _, g := range c.Spec.Groups {
			if _, ok := groups[g]; !ok {
				order = append(order, g)
			}
			groups[g] = append(groups[g], report.Curve{Label: curveLegend(c), X: x, Band: b,
				Dashes: c.Privacy.Model != "none" && !c.Privacy.PrivateAtNominal})
		}
	}
	for _, g := range order {
		name := "regret"
		if g != "main" {
			name = "regret-" + sanitize(g)
		}
		title := fmt.Sprintf("%s: %s, K=%d, %d seeds, bonus %s, mean ± 95%% CI", r.Config.Name, r.Env, K, len(r.Config.Seeds), r.Curves[0].Bonus.Preset)
		if g != "main" {
			title += " [" + g + "]"
		}
		if err := report.PlotCurves(filepath.Join(dir, name), title, "episode", "cumulative regret", groups[g], report.PlotOptions{Width: 11 * vg.Inch, Height: 6 * vg.Inch}); err != nil {
			return nil, err
		}
		man.Figures = append(man.Figures, name+".png", name+".svg")
	}
	data, err := json.MarshalIndent(man, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := atomicfile.WriteBytes(filepath.Join(dir, "manifest.json"), append(data, '\n'), 0o644); err != nil {
		return nil, err
	}
	return man, nil
}

// curveLegend labels a curve, stating its effective ε when it is not private at the nominal ε.
func curveLegend(c CurveResult) string {
	l := c.Spec.Label
	p := c.Privacy
	if p.Model != "none" && !p.PrivateAtNominal {
		l += fmt.Sprintf(" (eff. eps=%.4g)", p.EpsilonReplaceOne)
	}
	return l
}
