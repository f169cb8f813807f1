package rliable

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/dprl/dprl/internal/atomicfile"
)

// PlotIntervals draws one point with a vertical confidence bar per interval (labels on the x
// axis) and writes it atomically to path, a .png or .svg file. labels and ivs must have the same
// non-zero length.
func PlotIntervals(path, title, ylabel string, labels []string, ivs []Interval) error {
	if len(labels) == 0 || len(labels) != len(ivs) {
		return fmt.Errorf("rliable: PlotIntervals: %d labels for %d intervals", len(labels), len(ivs))
	}
	format := strings.TrimPrefix(strings.ToLower(filepath.Ext(path)), ".")
	if format != "png" && format != "svg" {
		return fmt.Errorf("rliable: PlotIntervals %s: the file must end in .png or .svg", path)
	}
	p, w, h, err := intervalsPlot(title, ylabel, labels, ivs)
	if err != nil {
		return fmt.Errorf("rliable: PlotIntervals: %w", err)
	}
	cw, err := draw.NewFormattedCanvas(w, h, format)
	if err != nil {
		return fmt.Errorf("rliable: PlotIntervals: %w", err)
	}
	drawIntervals(draw.New(cw), p)
	wt := io.WriterTo(cw)
	if err := atomicfile.WriteFile(path, func(f io.Writer) error { _, err := wt.WriteTo(f); return err }, 0o644); err != nil {
		return fmt.Errorf("rliable: PlotIntervals %s: %w", path, err)
	}
	return nil
}

// intervalsPlot builds the figure of PlotIntervals and returns it with its canvas size.
func intervalsPlot(title, ylabel string, labels []string, ivs []Interval) (*plot.Plot, vg.Length, vg.Length, error) {
	p := plot.New()
	p.Title.Text = title
	p.Y.Label.Text = ylabel
	pts := make(plotter.XYs, len(ivs))
	errs := make(plotter.YErrors, len(ivs))
	for i, iv := range ivs {
		pts[i].X, pts[i].Y = float64(i), iv.Point
		errs[i].Low, errs[i].High = iv.Point-iv.Lo, iv.Hi-iv.Point
	}
	sc, err := plotter.NewScatter(pts)
	if err != nil {
		return nil, 0, 0, err
	}
	bars, err := plotter.NewYErrorBars(struct {
		plotter.XYs
		plotter.YErrors
	}{pts, errs})
	if err != nil {
		return nil, 0, 0, err
	}
	p.Add(bars, sc, plotter.NewGrid())
	p.NominalX(labels...)
	p.X.Tick.Label.Rotation = labelRotation
	p.X.Tick.Label.XAlign = text.XRight // text ends at the tick
	p.X.Tick.Label.YAlign = text.YCenter
	p.Title.Padding = vg.Points(marginPt)
	// Half a slot beside the first and last interval, and 5 % of the range above and below
	// the extreme bars, so no marker or bar touches the title or the edges.
	n := float64(len(ivs))
	p.X.Min, p.X.Max = -0.5, n-0.5
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, iv := range ivs {
		lo, hi = math.Min(lo, math.Min(iv.Lo, iv.Point)), math.Max(hi, math.Max(iv.Hi, iv.Point))
	}
	span := hi - lo
	if !(span > 0) {
		span = math.Max(math.Abs(hi), 1)
	}
	p.Y.Min, p.Y.Max = lo-0.05*span, hi+0.05*span
	// Room for the rotated labels, which extend left of and below their ticks: the x range
	// starts early enough that every label ends right of the y axis (a label reaching
	// further left would make plot.Draw move the data away from the axis), and the canvas
	// is tall enough for the longest.
	sin, cos := math.Sincos(labelRotation)
	th := p.X.Tick.Label.Height("M")
	var lw vg.Length
	reach := make([]vg.Length, len(labels)) // how far each label reaches left of its tick
	for i, l := range labels {
		wd := p.X.Tick.Label.Width(l)
		lw = max(lw, wd)
		reach[i] = wd*vg.Length(cos) + th*vg.Length(sin)/2
	}
	fixed := yAxisIn*vg.Inch + 2*vg.Points(marginPt)
	slot := slotIn * vg.Inch
	var w vg.Length
	extra := 0.0  // slots left of the first interval's half slot
	for range 3 { // the slot widens when the canvas is at its minimum width
		extra = 0
		for i, r := range reach {
			extra = math.Max(extra, float64((r-(vg.Length(i)+0.5)*slot)/slot))
		}
		extra = math.Ceil(extra*4) / 4
		w = max(6*vg.Inch, vg.Length(n+extra)*slotIn*vg.Inch+fixed)
		slot = (w - fixed) / vg.Length(n+extra)
	}
	p.X.Min = -0.5 - extra
	p.Y.Padding = 0 // NominalX leaves room for the first label, centred: it ends at its tick here
	h := 3.5*vg.Inch + lw*vg.Length(sin)
	return p, w, h, nil
}

// Layout of the intervals figure.
const (
	labelRotation = math.Pi / 4 // radians; rotation of the x tick labels
	marginPt      = 6           // points; margin around the figure and below the title
	slotIn        = 0.45        // inches; width per interval, at least
	yAxisIn       = 0.9         // inches; about the width of the y axis with its labels
)

// drawIntervals draws the figure of PlotIntervals on c.
func drawIntervals(c draw.Canvas, p *plot.Plot) {
	m := vg.Points(marginPt)
	c.SetColor(color.White)
	c.Fill(c.Rectangle.Path())
	p.Draw(draw.Crop(c, m, -m, m, -m))
}
