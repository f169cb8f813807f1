package report

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/dprl/dprl/report/internal/plotcheck"
)

// recordFigure builds and draws a figure on a recording canvas and returns what was drawn.
func recordFigure(t *testing.T, title, xlabel, ylabel string, curves []Curve, opts PlotOptions) []plotcheck.Item {
	t.Helper()
	p, legend, err := buildPlot(title, xlabel, ylabel, curves, opts)
	if err != nil {
		t.Fatal(err)
	}
	opts, _ = withDefaults(opts)
	var derr error
	items := plotcheck.Record(opts.Width, opts.Height, func(c draw.Canvas) {
		fillBackground(c)
		_, derr = drawFigure(c, p, legend, opts.Width, opts.Height)
	})
	if derr != nil {
		t.Fatal(derr)
	}
	return items
}

// epsCurves are two privacy-cost-vs-ε curves like the practical-tabular reproduction's.
func epsCurves(eps []float64) []Curve {
	mk := func(scale float64) Band {
		b := Band{N: 2}
		for i := range eps {
			m := scale * (1 + 3/(1+eps[i]))
			b.Mean, b.Lo, b.Hi = append(b.Mean, m), append(b.Lo, m/2), append(b.Hi, m*1.5)
		}
		return b
	}
	return []Curve{
		{Label: "JDP: practical-jdp − UCBVI, K = 50000", X: eps, Band: mk(300), Style: StylePrivate},
		{Label: "LDP: practical-ldp − UCBVI, K = 50000", X: eps, Band: mk(2000), Style: StylePrivate},
	}
}

const privacyCostTitle = "privacy cost R_private(K) − R_UCBVI(K) vs ε (RiverSwim), mean ± 95% CI"

// TestFigureInsideCanvas: every mark and every piece of text of a figure (title lines, axis
// labels, tick labels, legend) lies inside the canvas, also when the title is wider than the
// plot area beside the legend (the privacy-cost figure's title was cut on the left).
func TestFigureInsideCanvas(t *testing.T) {
	eps := []float64{0.1, 0.5, 1, 2, 5, 10}
	long := strings.Repeat("a very long title that does not fit ", 4)
	tests := []struct {
		name   string
		title  string
		ylabel string
		curves []Curve
		opts   PlotOptions
	}{
		{"privacy cost, default size", privacyCostTitle, "privacy cost", epsCurves(eps), PlotOptions{LogX: true, LogY: true}},
		{"privacy cost, 9 in", privacyCostTitle, "privacy cost", epsCurves(eps), PlotOptions{LogX: true, LogY: true, Width: 9 * vg.Inch, Height: 5 * vg.Inch}},
		{"title wider than the canvas", long, "regret", regretCurves(t, 3, 100), PlotOptions{}},
		{"many curves", "regret", "regret", regretCurves(t, 14, 100), PlotOptions{Width: 11 * vg.Inch, Height: 6 * vg.Inch, LogY: true}},
		// plot.Draw reserves room for a y label at the arithmetic mean of a log axis.
		{"long label on a log axis", "t", "privacy cost (per-seed values < 1 drawn at 1) and more words", epsCurves(eps), PlotOptions{LogX: true, LogY: true, Width: 9 * vg.Inch, Height: 5 * vg.Inch}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			opts, _ := withDefaults(tc.opts)
			items := recordFigure(t, tc.title, "ε", tc.ylabel, tc.curves, tc.opts)
			titleSeen := false
			for _, it := range items {
				if it.Kind == plotcheck.Text && it.Text != "" && strings.HasPrefix(tc.title, it.Text) {
					titleSeen = true
				}
			}
			if !titleSeen {
				t.Error("title not drawn")
			}
			for _, it := range plotcheck.Outside(items, opts.Width, opts.Height, vg.Points(0.5)) {
				t.Errorf("drawn outside the %v × %v canvas: kind %d %q at %+v", opts.Width, opts.Height, it.Kind, it.Text, it.Box)
			}
		})
	}
}

// TestLogScaleLabelOnce: a log axis says "(log scale)" exactly once, also when the caller's
// label already says so ("privacy cost (log)" gave "privacy cost (log) (log scale)").
func TestLogScaleLabelOnce(t *testing.T) {
	for _, label := range []string{"privacy cost", "privacy cost (log)", "privacy cost (log scale)", "privacy cost, log scale"} {
		p, _, err := buildPlot("t", "ε", label, epsCurves([]float64{0.1, 1, 10}), PlotOptions{LogX: true, LogY: true})
		if err != nil {
			t.Fatal(err)
		}
		for _, got := range []string{p.Y.Label.Text, p.X.Label.Text} {
			if n := strings.Count(got, "log scale"); n != 1 || strings.Contains(got, "(log)") {
				t.Errorf("y label %q, x label \"ε\": a log axis is labelled %q; want \"log scale\" exactly once and no \"(log)\"", label, got)
			}
		}
	}
	p, _, err := buildPlot("t", "episode", "regret", regretCurves(t, 1, 10), PlotOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(p.Y.Label.Text, "log") || strings.Contains(p.X.Label.Text, "log") {
		t.Errorf("linear axes labelled %q, %q", p.X.Label.Text, p.Y.Label.Text)
	}
}

// tickLabels returns the labelled ticks (value → label) of the x or y axis of the figure of
// curves, over the axis range.
func tickLabels(t *testing.T, curves []Curve, opts PlotOptions, x bool) map[float64]string {
	t.Helper()
	p, _, err := buildPlot("t", "x", "y", curves, opts)
	if err != nil {
		t.Fatal(err)
	}
	a := &p.Y
	if x {
		a = &p.X
	}
	out := map[float64]string{}
	for _, tk := range a.Tick.Marker.Ticks(a.Min, a.Max) {
		if tk.Label != "" && tk.Value >= a.Min*(1-1e-12) && tk.Value <= a.Max*(1+1e-12) {
			out[tk.Value] = tk.Label
		}
	}
	return out
}

// TestLogTicksLabelGrid: on a log x axis with a small grid of x values (the ε grid), every
// value of the grid, including the smallest (0.1 had no label), has a labelled tick.
func TestLogTicksLabelGrid(t *testing.T) {
	for _, eps := range [][]float64{{0.1, 0.5, 1, 2, 5, 10}, {0.1, 1, 10}, {0.3, 0.1, 3}, {0.01, 0.1, 1, 10, 100}} {
		got := tickLabels(t, epsCurves(eps), PlotOptions{LogX: true, LogY: true}, true)
		for _, e := range eps {
			found := false
			for v, l := range got {
				if math.Abs(v-e) <= 1e-9*e && l == fmt.Sprint(e) {
					found = true
				}
			}
			if !found {
				t.Errorf("grid %v: no tick labelled %v (labels %v)", eps, e, got)
			}
		}
	}
	// Explicit ticks override the grid.
	got := tickLabels(t, epsCurves([]float64{0.1, 0.5, 1, 2, 5, 10}), PlotOptions{LogX: true, XTicks: []float64{0.1, 1, 10}}, true)
	if len(got) != 3 {
		t.Errorf("XTicks {0.1, 1, 10}: labels %v", got)
	}
}

// TestLogTicksReadable: a log axis spanning less than two decades has at least two labelled
// ticks (a privacy-cost y axis from 1 300 to 12 000 had the single label 10000), and one
// spanning many decades labels the powers of ten, including the lowest.
func TestLogTicksReadable(t *testing.T) {
	for _, r := range [][2]float64{{1300, 12000}, {0.1, 10}, {2, 3}, {1, 100000}, {1e-3, 1e8}, {0.1, 1}} {
		ticks := logTicker{}.Ticks(r[0], r[1])
		var labels []float64
		for _, tk := range ticks {
			if tk.Label != "" && tk.Value >= r[0]*(1-1e-12) && tk.Value <= r[1]*(1+1e-12) {
				labels = append(labels, tk.Value)
			}
		}
		if len(labels) < 2 {
			t.Errorf("range %v: labelled ticks %v, want at least 2", r, labels)
		}
		if len(labels) > 12 {
			t.Errorf("range %v: %d labelled ticks, too many", r, len(labels))
		}
		if r[0] == 0.1 && !slices.Contains(labels, 0.1) {
			t.Errorf("range %v: 0.1 not labelled (labels %v)", r, labels)
		}
	}
}

// TestReferenceDrawnUnderData: the reference line (no learning) is drawn before every data
// line and band, so a data curve on top of it (the papers' DP-UCBVI, which does not learn at
// this K) stays visible.
func TestReferenceDrawnUnderData(t *testing.T) {
	curves := regretCurves(t, 4, 200)
	ref := make([]float64, 200)
	for i := range ref {
		ref[i] = curves[3].Band.Mean[i] // exactly on the last data curve
	}
	curves = append(curves, Curve{Label: "no learning", X: curves[0].X, Band: Band{Mean: ref}, Style: StyleReference})
	items := recordFigure(t, "regret", "episode", "regret", curves, PlotOptions{Width: 11 * vg.Inch, Height: 6 * vg.Inch})
	cols := curveColors(curves)
	refAt, firstData := -1, -1
	for i, it := range items {
		if it.Kind != plotcheck.Stroke && it.Kind != plotcheck.Fill {
			continue
		}
		if it.Kind == plotcheck.Stroke && refAt < 0 && slices.Equal(it.Dashes, StyleReference.Dashes()) && plotcheck.SameColor(it.Color, cols[4]) {
			refAt = i
		}
		for _, c := range cols[:4] {
			same := plotcheck.SameColor(it.Color, c)
			band := c
			band.A = uint8(math.Round(bandAlpha * 0xff))
			if (same || plotcheck.SameColor(it.Color, band)) && firstData < 0 {
				firstData = i
			}
		}
	}
	if refAt < 0 || firstData < 0 {
		t.Fatalf("reference line at %d, first data at %d: not found", refAt, firstData)
	}
	if refAt > firstData {
		t.Errorf("reference line drawn at step %d, after the first data curve (step %d): it hides the data", refAt, firstData)
	}
}
