package report

import (
	"bytes"
	"fmt"
	"image/png"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// regretCurves returns k regret-like curves of n episodes, each summarising
// three seeds, with growth exponents spread around 0.5.
func regretCurves(t testing.TB, k, n int) []Curve {
	t.Helper()
	x := make([]float64, n)
	for i := range x {
		x[i] = float64(i + 1)
	}
	curves := make([]Curve, k)
	for c := range curves {
		runs := make([][]float64, 3)
		for s := range runs {
			runs[s] = make([]float64, n)
			for i := range runs[s] {
				ep := float64(i + 1)
				runs[s][i] = float64(c+1) * math.Pow(ep, 0.45+0.02*float64(c)) * (1 + 0.08*float64(s-1)) *
					(1 + 0.05*math.Sin(ep/float64(n)*6+float64(s)))
			}
		}
		b, err := MeanBand(runs, 0.95)
		if err != nil {
			t.Fatal(err)
		}
		curves[c] = Curve{Label: fmt.Sprintf("config %d (ε=%.1f)", c, 0.1*float64(c+1)), X: x, Band: b, Dashes: c%3 == 2}
	}
	return curves
}

// checkImages verifies that base.png decodes to a w×h image and that
// base.svg looks like SVG.
func checkImages(t *testing.T, base string, w, h vg.Length) {
	t.Helper()
	data, err := os.ReadFile(base + ".png")
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("decode PNG: %v", err)
	}
	wantW := int(math.Round(float64(w/vg.Inch) * vgimg.DefaultDPI))
	wantH := int(math.Round(float64(h/vg.Inch) * vgimg.DefaultDPI))
	if b := img.Bounds(); b.Dx() != wantW || b.Dy() != wantH {
		t.Errorf("PNG is %dx%d, want %dx%d", b.Dx(), b.Dy(), wantW, wantH)
	}
	svg, err := os.ReadFile(base + ".svg")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(svg, []byte("<?xml")) && !bytes.HasPrefix(svg, []byte("<svg")) {
		t.Errorf("SVG starts with %.40q", svg)
	}
	if !bytes.Contains(svg, []byte("</svg>")) {
		t.Error("SVG is not terminated")
	}
}

func TestPlotCurves(t *testing.T) {
	withZeros := regretCurves(t, 2, 500)
	for _, c := range withZeros {
		c.Band.Mean[0], c.Band.Lo[0], c.Band.Hi[0] = 0, -1, 1 // regret 0 at episode 1
		c.Band.Lo[10] = -3                                    // interval reaching below 0
	}
	single, err := MeanBand([][]float64{{1, 3, 6, 10}}, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		curves []Curve
		opts   PlotOptions
		w, h   vg.Length
	}{
		{name: "three curves", curves: regretCurves(t, 3, 1000), w: DefaultPlotWidth, h: DefaultPlotHeight},
		{name: "custom size", curves: regretCurves(t, 3, 100), opts: PlotOptions{Width: 4 * vg.Inch, Height: 3 * vg.Inch}, w: 4 * vg.Inch, h: 3 * vg.Inch},
		{name: "log-log with zeros and negative bounds", curves: withZeros, opts: PlotOptions{LogX: true, LogY: true}, w: DefaultPlotWidth, h: DefaultPlotHeight},
		{name: "log y only", curves: regretCurves(t, 2, 300), opts: PlotOptions{LogY: true}, w: DefaultPlotWidth, h: DefaultPlotHeight},
		{name: "many curves, legend outside", curves: regretCurves(t, 14, 400), w: DefaultPlotWidth, h: DefaultPlotHeight},
		{name: "many curves, tiny canvas shrinks legend", curves: regretCurves(t, 14, 50), opts: PlotOptions{Width: 5 * vg.Inch, Height: 2 * vg.Inch}, w: 5 * vg.Inch, h: 2 * vg.Inch},
		{name: "single run has no band", curves: []Curve{{Label: "one seed", X: []float64{1, 2, 3, 4}, Band: single}}, w: DefaultPlotWidth, h: DefaultPlotHeight},
		{name: "mean only", curves: []Curve{{Label: "m", X: []float64{1, 2}, Band: Band{Mean: []float64{3, 4}}}}, w: DefaultPlotWidth, h: DefaultPlotHeight},
		{name: "single point on log axes", curves: []Curve{{Label: "p", X: []float64{5}, Band: Band{Mean: []float64{7}}}}, opts: PlotOptions{LogX: true, LogY: true}, w: DefaultPlotWidth, h: DefaultPlotHeight},
		{name: "constant curve", curves: []Curve{{Label: "c", X: []float64{1, 2, 3}, Band: Band{Mean: []float64{0, 0, 0}}}}, w: DefaultPlotWidth, h: DefaultPlotHeight},
		{name: "downsampled to 2 points", curves: regretCurves(t, 2, 1000), opts: PlotOptions{MaxPoints: 2}, w: DefaultPlotWidth, h: DefaultPlotHeight},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			base := filepath.Join(dir, "fig")
			if err := PlotCurves(base, "Cumulative regret", "episode", "regret", tc.curves, tc.opts); err != nil {
				t.Fatalf("PlotCurves: %v", err)
			}
			checkImages(t, base, tc.w, tc.h)
			entries, err := os.ReadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			if len(entries) != 2 {
				t.Errorf("directory holds %d entries, want fig.png and fig.svg only", len(entries))
			}
		})
	}
}

func TestPlotCurvesErrors(t *testing.T) {
	good := regretCurves(t, 3, 100)
	modify := func(f func(cs []Curve)) []Curve {
		cs := slices.Clone(good)
		f(cs)
		return cs
	}
	wide := regretCurves(t, MaxInsideLegend+1, 50)
	wide[0].Label = strings.Repeat("very long label ", 20)
	tests := []struct {
		name   string
		curves []Curve
		opts   PlotOptions
		errSub string
	}{
		{name: "no curves", curves: nil, errSub: "no curves"},
		{name: "X shorter than mean", curves: modify(func(cs []Curve) { cs[1].X = cs[1].X[:10] }), errSub: "len(X) = 10 but len(Band.Mean) = 100"},
		{name: "Lo shorter than Hi", curves: modify(func(cs []Curve) { cs[0].Band.Lo = cs[0].Band.Lo[:5] }), errSub: "len(Band.Lo) = 5 but len(Band.Hi) = 100"},
		{name: "band shorter than X", curves: modify(func(cs []Curve) {
			cs[2].Band.Lo, cs[2].Band.Hi = cs[2].Band.Lo[:5], cs[2].Band.Hi[:5]
		}), errSub: "len(Band.Lo) = 5"},
		{name: "empty curve", curves: []Curve{{Label: "e"}}, errSub: "no points"},
		{name: "NaN mean", curves: []Curve{{Label: "n", X: []float64{1, 2}, Band: Band{Mean: []float64{1, math.NaN()}}}}, errSub: "NaN"},
		{name: "infinite x", curves: []Curve{{Label: "i", X: []float64{1, math.Inf(1)}, Band: Band{Mean: []float64{1, 2}}}}, errSub: "infinite"},
		{name: "nothing positive on log y", curves: []Curve{{Label: "z", X: []float64{1, 2}, Band: Band{Mean: []float64{0, -1}}}}, opts: PlotOptions{LogY: true}, errSub: "no positive points"},
		{name: "nothing positive on log x", curves: []Curve{{Label: "z", X: []float64{0, -2}, Band: Band{Mean: []float64{1, 2}}}}, opts: PlotOptions{LogX: true}, errSub: "no positive points"},
		{name: "MaxPoints one", curves: good, opts: PlotOptions{MaxPoints: 1}, errSub: "MaxPoints"},
		{name: "negative MaxPoints", curves: good, opts: PlotOptions{MaxPoints: -5}, errSub: "MaxPoints"},
		{name: "negative size", curves: good, opts: PlotOptions{Width: -1}, errSub: "negative plot size"},
		{name: "outside legend too wide", curves: wide, errSub: "legend"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			base := filepath.Join(dir, "fig")
			err := PlotCurves(base, "t", "x", "y", tc.curves, tc.opts)
			if err == nil || !strings.Contains(err.Error(), tc.errSub) {
				t.Fatalf("error = %v, want one containing %q", err, tc.errSub)
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 0 {
				t.Errorf("directory holds %d entries after error, want none", len(entries))
			}
		})
	}
}

func TestDownsample(t *testing.T) {
	seq := func(n int) []int {
		s := make([]int, n)
		for i := range s {
			s[i] = i
		}
		return s
	}
	tests := []struct {
		name  string
		idx   []int
		limit int
		log   bool
		want  []int
	}{
		{"short enough", []int{3, 5, 9}, 3, false, []int{3, 5, 9}},
		{"short enough, log", []int{3, 5, 9}, 3, true, []int{3, 5, 9}},
		{"two of many", seq(100), 2, false, []int{0, 99}},
		{"two of many, log", seq(100), 2, true, []int{0, 99}},
		{"three of five", seq(5), 3, false, []int{0, 2, 4}},
		{"rounded positions", seq(10), 4, false, []int{0, 3, 6, 9}},
		{"maps through idx", []int{10, 20, 30, 40, 50}, 3, false, []int{10, 30, 50}},
		{"log spacing", seq(1000), 4, true, []int{0, 9, 99, 999}},
		{"log spacing, small", seq(10), 5, true, []int{0, 1, 2, 5, 9}},
		{"log spacing pushes past collisions", seq(10), 8, true, []int{0, 1, 2, 3, 4, 5, 6, 9}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := downsample(tc.idx, tc.limit, tc.log); !slices.Equal(got, tc.want) {
				t.Errorf("downsample = %v, want %v", got, tc.want)
			}
		})
	}
	// Large inputs: exact count, first and last kept, strictly increasing.
	for _, n := range []int{2001, 50000, 123457} {
		for _, log := range []bool{false, true} {
			got := downsample(seq(n), DefaultMaxPoints, log)
			if len(got) != DefaultMaxPoints || got[0] != 0 || got[len(got)-1] != n-1 {
				t.Fatalf("n=%d log=%v: len %d, first %d, last %d", n, log, len(got), got[0], got[len(got)-1])
			}
			for i := 1; i < len(got); i++ {
				if got[i] <= got[i-1] {
					t.Fatalf("n=%d log=%v: not increasing at %d", n, log, i)
				}
			}
		}
	}
}

// BenchmarkPlotCurves renders four 50,000-episode curves to PNG and SVG.
func BenchmarkPlotCurves(b *testing.B) {
	curves := regretCurves(b, 4, 50000)
	base := filepath.Join(b.TempDir(), "fig")
	b.ResetTimer()
	for b.Loop() {
		if err := PlotCurves(base, "regret", "episode", "regret", curves, PlotOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

// colourDistance is the Euclidean distance of two colours in RGB space (0–441).
func colourDistance(a, b [3]float64) float64 {
	return math.Sqrt((a[0]-b[0])*(a[0]-b[0]) + (a[1]-b[1])*(a[1]-b[1]) + (a[2]-b[2])*(a[2]-b[2]))
}

// TestPaletteDistinct: a figure of N curves gets N distinct colours, clearly apart, for every
// N up to well beyond the largest figure any reproduction draws (linear-mixture: 24 curves);
// reference curves are black and take no palette colour.
func TestPaletteDistinct(t *testing.T) {
	for n := 1; n <= 64; n++ {
		curves := make([]Curve, n+1)
		for i := range curves[:n] {
			curves[i].Style = Style(i % 3)
		}
		curves[n].Style = StyleReference
		cols := curveColors(curves)
		if c := cols[n]; c.R != 0 || c.G != 0 || c.B != 0 {
			t.Fatalf("n=%d: reference curve colour %v, want black", n, c)
		}
		minD := 35.0 // clearly distinguishable up to the largest reproduction figure (24 curves)
		if n > 24 {
			minD = 12 // still distinct beyond
		}
		for i := 0; i < n; i++ {
			a := [3]float64{float64(cols[i].R), float64(cols[i].G), float64(cols[i].B)}
			if colourDistance(a, [3]float64{}) < minD {
				t.Errorf("n=%d: curve %d colour %v is (near) the reference black", n, i, cols[i])
			}
			for j := 0; j < i; j++ {
				b := [3]float64{float64(cols[j].R), float64(cols[j].G), float64(cols[j].B)}
				if d := colourDistance(a, b); d < minD {
					t.Errorf("n=%d: curves %d and %d share a colour (%v vs %v, distance %.1f)", n, j, i, cols[j], cols[i], d)
				}
			}
		}
	}
}

// TestLineStyles: the line style is fixed by what the curve is, the same in every family, and
// the caption names exactly the styles present.
func TestLineStyles(t *testing.T) {
	if StyleNonPrivate.Dashes() != nil {
		t.Error("non-private curves must be solid")
	}
	seen := map[string]Style{}
	for _, s := range []Style{StylePrivate, StyleNotPrivateAtNominal, StyleReference} {
		d := fmt.Sprint(s.Dashes())
		if s.Dashes() == nil {
			t.Errorf("style %d is solid", s)
		}
		if o, ok := seen[d]; ok {
			t.Errorf("styles %d and %d share dashes %s", o, s, d)
		}
		seen[d] = s
	}
	if (Curve{Dashes: true}).style() != StylePrivate {
		t.Error("legacy Dashes must mean private")
	}
	got := StyleCaption([]Curve{{Style: StylePrivate}, {Style: StyleNonPrivate}})
	if got != "line style: solid = non-private, dashed = private" {
		t.Errorf("caption %q", got)
	}
	if e := EffectiveEpsilon(2, "replace-one"); e != "ε_eff = 2 (replace-one)" {
		t.Errorf("effective-ε label %q", e)
	}
}

// TestLegendOutsideData: for any number of curves the legend lies entirely to the right of
// the plot area (so it cannot cover data) and inside the canvas.
func TestLegendOutsideData(t *testing.T) {
	for _, n := range []int{1, 3, 6, 14, 24} {
		curves := regretCurves(t, n, 50)
		p, legend, err := buildPlot("t", "x", "y", curves, PlotOptions{})
		if err != nil {
			t.Fatal(err)
		}
		w, h := 11*vg.Inch, 6*vg.Inch
		_, lay, err := render(p, legend, w, h, "png")
		if err != nil {
			t.Fatalf("n=%d: %v", n, err)
		}
		if lay.Legend.Min.X < lay.Plot.Max.X {
			t.Errorf("n=%d: legend starts at x=%v inside the plot (ends at %v)", n, lay.Legend.Min.X, lay.Plot.Max.X)
		}
		if lay.Legend.Max.X > w || lay.Legend.Min.Y < 0 || lay.Legend.Max.Y > h || lay.Plot.Max.X <= w/2 {
			t.Errorf("n=%d: layout %+v outside a %v × %v canvas or plot too narrow", n, lay, w, h)
		}
	}
}

// TestLogYKeepsNonPositiveCurve: with a log y axis a zero-regret curve is not silently dropped:
// it stays in the legend, marked as not drawn.
func TestLogYKeepsNonPositiveCurve(t *testing.T) {
	curves := regretCurves(t, 2, 20)
	curves = append(curves, Curve{Label: "zero", X: curves[0].X, Band: Band{Mean: make([]float64, 20)}})
	if _, _, err := buildPlot("t", "x", "y", curves, PlotOptions{LogY: true}); err != nil {
		t.Fatal(err)
	}
	pc, err := prepareCurve(curves[2], PlotOptions{LogY: true, MaxPoints: 10})
	if err != nil || !strings.Contains(pc.label, "not drawn") || len(pc.x) != 0 {
		t.Errorf("zero curve on log y: %+v, %v; want it listed as not drawn", pc, err)
	}
}

// referenceFigure renders a figure the way PlotCurves did before its PNG got a faster path:
// draw's own canvas for format, painted white through the rasteriser, encoded by image/png for
// a PNG, from one plot drawn first as PNG and then as SVG.
func referenceFigure(t *testing.T, title string, curves []Curve, opts PlotOptions) (pngData, svgData []byte) {
	t.Helper()
	p, legend, err := buildPlot(title, "episode", "regret", curves, opts)
	if err != nil {
		t.Fatal(err)
	}
	opts, _ = withDefaults(opts)
	var out [2]bytes.Buffer
	for i, format := range []string{"png", "svg"} {
		cw, err := draw.NewFormattedCanvas(opts.Width, opts.Height, format)
		if err != nil {
			t.Fatal(err)
		}
		dc := draw.New(cw)
		fillBackground(dc)
		if _, err := drawFigure(dc, p, legend, opts.Width, opts.Height); err != nil {
			t.Fatal(err)
		}
		if _, err := cw.WriteTo(&out[i]); err != nil {
			t.Fatal(err)
		}
	}
	return out[0].Bytes(), out[1].Bytes()
}

// TestPlotCurvesSameFigure: the figures PlotCurves writes (PNG through pngenc without the
// second white fill, PNG and SVG drawn concurrently from two plots) are the reference
// rendering's: the PNG decodes to the same pixels, the SVG is the same bytes.
func TestPlotCurvesSameFigure(t *testing.T) {
	tests := []struct {
		name   string
		curves []Curve
		opts   PlotOptions
	}{
		{"regret, log y", append(regretCurves(t, 3, 300), NoLearningCurve(regretCurves(t, 1, 300)[0].X, 2)), PlotOptions{Width: 11 * vg.Inch, Height: 6 * vg.Inch, LogY: true}},
		{"many curves, default size", regretCurves(t, 12, 80), PlotOptions{}},
		{"privacy cost, log axes", epsCurves([]float64{0.1, 0.5, 1, 2, 5, 10}), PlotOptions{LogX: true, LogY: true, Width: 9 * vg.Inch, Height: 5 * vg.Inch}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			base := filepath.Join(t.TempDir(), "fig")
			title := "riverswim: cumulative regret, mean ± 95% CI"
			if err := PlotCurves(base, title, "episode", "regret", tc.curves, tc.opts); err != nil {
				t.Fatal(err)
			}
			refPNG, refSVG := referenceFigure(t, title, tc.curves, tc.opts)
			gotSVG, err := os.ReadFile(base + ".svg")
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(gotSVG, refSVG) {
				t.Error("SVG differs from the reference rendering")
			}
			gotPNG, err := os.ReadFile(base + ".png")
			if err != nil {
				t.Fatal(err)
			}
			got, err := png.Decode(bytes.NewReader(gotPNG))
			if err != nil {
				t.Fatal(err)
			}
			want, err := png.Decode(bytes.NewReader(refPNG))
			if err != nil {
				t.Fatal(err)
			}
			if got.Bounds() != want.Bounds() {
				t.Fatalf("PNG bounds %v, reference %v", got.Bounds(), want.Bounds())
			}
			diff := 0
			for y := want.Bounds().Min.Y; y < want.Bounds().Max.Y; y++ {
				for x := want.Bounds().Min.X; x < want.Bounds().Max.X; x++ {
					r1, g1, b1, a1 := got.At(x, y).RGBA()
					r2, g2, b2, a2 := want.At(x, y).RGBA()
					if r1 != r2 || g1 != g2 || b1 != b2 || a1 != a2 {
						diff++
					}
				}
			}
			if diff > 0 {
				t.Errorf("PNG: %d pixels differ from the reference rendering", diff)
			}
		})
	}
}

// BenchmarkTinyRunFigure times the parts of the regret figure of a 1 000-episode run (one
// curve of 100 checkpoints and the no-learning line, 11 × 6 inches, log y), the figure of
// scripts/bench-practical-jdp.sh's tiny run: drawing the PNG, encoding it, drawing and
// encoding the SVG, and PlotCurves as a whole (both, concurrently, written and fsynced).
func BenchmarkTinyRunFigure(b *testing.B) {
	curves := regretCurves(b, 1, 100)
	curves = append(curves, NoLearningCurve(curves[0].X, 3.35))
	opts := PlotOptions{Width: 11 * vg.Inch, Height: 6 * vg.Inch, LogY: true}
	build := func() (*plot.Plot, plot.Legend) {
		p, legend, err := buildPlot("riverswim: cumulative regret, mean ± 95% CI", "episode", "cumulative regret", curves, opts)
		if err != nil {
			b.Fatal(err)
		}
		return p, legend
	}
	b.Run("png-draw", func(b *testing.B) {
		for b.Loop() {
			p, legend := build()
			if _, _, err := render(p, legend, opts.Width, opts.Height, "png"); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("png-encode", func(b *testing.B) {
		p, legend := build()
		wt, _, err := render(p, legend, opts.Width, opts.Height, "png")
		if err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			if _, err := wt.WriteTo(io.Discard); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("svg", func(b *testing.B) {
		for b.Loop() {
			p, legend := build()
			wt, _, err := render(p, legend, opts.Width, opts.Height, "svg")
			if err != nil {
				b.Fatal(err)
			}
			if _, err := wt.WriteTo(io.Discard); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("PlotCurves", func(b *testing.B) {
		base := filepath.Join(b.TempDir(), "fig")
		for b.Loop() {
			if err := PlotCurves(base, "riverswim: cumulative regret, mean ± 95% CI", "episode", "cumulative regret", curves, opts); err != nil {
				b.Fatal(err)
			}
		}
	})
}
