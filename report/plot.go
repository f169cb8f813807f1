package report

import (
	"errors"
	"fmt"
	"image/color"
	"io"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/dprl/dprl/internal/atomicfile"
)

// Defaults used by PlotCurves for zero-valued PlotOptions fields.
const (
	// DefaultPlotWidth is the default width of a plot.
	DefaultPlotWidth = 7 * vg.Inch
	// DefaultPlotHeight is the default height of a plot.
	DefaultPlotHeight = 4.5 * vg.Inch
	// DefaultMaxPoints is the default maximum number of points drawn per curve.
	DefaultMaxPoints = 2000
	// MaxInsideLegend is the largest number of curves whose legend is drawn
	// inside the data area (top left); with more curves the legend is placed
	// in a column to the right of the plot.
	MaxInsideLegend = 6
)

// Styling constants.
const (
	lineWidth    = 1.5   // points; width of the mean line
	bandAlpha    = 0.2   // opacity of the confidence band fill
	paletteSize  = 12    // number of colours in paletteColor
	plotFilePerm = 0o644 // permission of the written image files
	legendPad    = 6     // points; padding around an outside legend
	minLegendPt  = 5     // points; smallest legend font when shrinking
	thumbPt      = 24    // points; width of a legend thumbnail
)

// Curve is one configuration to plot: the mean of Band against X as a line,
// and the confidence interval [Band.Lo, Band.Hi] as a translucent band in the
// same colour. Band.Lo and Band.Hi may both be empty to draw the line alone.
// Dashes selects a dashed line.
type Curve struct {
	Label  string
	X      []float64
	Band   Band
	Dashes bool
}

// PlotOptions controls PlotCurves. The zero value gives linear axes, a
// DefaultPlotWidth × DefaultPlotHeight canvas and at most DefaultMaxPoints
// points per curve.
type PlotOptions struct {
	// LogX and LogY select logarithmic axes. Points that cannot be shown on
	// a log axis (x ≤ 0 with LogX, mean ≤ 0 with LogY) are dropped, and with
	// LogY band bounds ≤ 0 are raised to the smallest positive value plotted.
	LogX, LogY bool
	// Width and Height are the canvas size; zero selects the default.
	// PNG output is rendered at 96 dots per inch.
	Width, Height vg.Length
	// MaxPoints is the maximum number of points drawn per curve (0 selects
	// DefaultMaxPoints; otherwise it must be at least 2). Longer curves are
	// downsampled uniformly in index (geometrically spaced in index with
	// LogX), always keeping the first and last point.
	MaxPoints int
}

// paletteColor returns the i-th colour of a fixed palette of paletteSize
// distinguishable colours (the Tableau 10 palette followed by black and navy),
// cycling for larger i.
func paletteColor(i int) color.NRGBA {
	rgb := [paletteSize]uint32{
		0x1f77b4, 0xff7f0e, 0x2ca02c, 0xd62728, 0x9467bd, 0x8c564b,
		0xe377c2, 0x7f7f7f, 0xbcbd22, 0x17becf, 0x000000, 0x000080,
	}
	v := rgb[i%paletteSize]
	return color.NRGBA{R: uint8(v >> 16), G: uint8(v >> 8), B: uint8(v), A: 0xff}
}

// curveDashes returns the dash pattern of curve i. Curves that request dashes
// get a plain dashed line; curves beyond the palette additionally cycle
// through plotutil's dash patterns so that lines sharing a colour differ.
func curveDashes(i int, dashed bool) []vg.Length {
	if cycle := i / paletteSize; cycle > 0 {
		return plotutil.Dashes(cycle)
	}
	if dashed {
		return []vg.Length{vg.Points(6), vg.Points(3)}
	}
	return nil
}

// PlotCurves draws curves on one set of axes and writes the figure to
// pathNoExt+".png" and pathNoExt+".svg", each atomically (a failure leaves
// the previous file, if any, in place; the PNG may already have been
// replaced when writing the SVG fails).
//
// Each curve is drawn as its mean line over a translucent band [Lo, Hi] of
// the same colour, with a legend entry showing both. The legend is placed at
// the top left inside the axes for up to MaxInsideLegend curves and in a
// column to the right of the axes otherwise (its font is shrunk if needed to
// fit the height). Curves are downsampled to opts.MaxPoints points.
//
// It is an error if curves is empty, if a curve has no points, if a curve's
// X, Band.Mean, Band.Lo and Band.Hi lengths disagree (Lo and Hi may both be
// empty), if values are NaN or infinite, if a curve has no point that can be
// drawn on the requested log axes, or if opts is invalid.
func PlotCurves(pathNoExt string, title, xlabel, ylabel string, curves []Curve, opts PlotOptions) error {
	if err := plotCurves(pathNoExt, title, xlabel, ylabel, curves, opts); err != nil {
		return fmt.Errorf("report: PlotCurves %s: %w", pathNoExt, err)
	}
	return nil
}

// plotCurves implements PlotCurves without the error prefix.
func plotCurves(pathNoExt string, title, xlabel, ylabel string, curves []Curve, opts PlotOptions) error {
	opts, err := withDefaults(opts)
	if err != nil {
		return err
	}
	if len(curves) == 0 {
		return errors.New("no curves")
	}
	prepared := make([]preparedCurve, len(curves))
	for i, c := range curves {
		if prepared[i], err = prepareCurve(c, opts); err != nil {
			return err
		}
	}
	if opts.LogY {
		clampLogBands(prepared)
	}

	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = xlabel
	p.Y.Label.Text = ylabel
	if opts.LogX {
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	}
	if opts.LogY {
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	}
	grid := plotter.NewGrid()
	grid.Vertical.Color = color.Gray{Y: 0xdd}
	grid.Horizontal.Color = color.Gray{Y: 0xdd}
	p.Add(grid)

	legend := plot.NewLegend()
	legend.ThumbnailWidth = vg.Points(thumbPt)
	legend.Top, legend.Left = true, true

	// All bands first, then all lines, so no band hides another curve's line.
	lines := make([]*plotter.Line, len(prepared))
	bands := make([]*plotter.Polygon, len(prepared))
	for i, pc := range prepared {
		col := paletteColor(i)
		if pc.lo != nil {
			ring := make(plotter.XYs, 0, 2*len(pc.x))
			for j := range pc.x {
				ring = append(ring, plotter.XY{X: pc.x[j], Y: pc.lo[j]})
			}
			for j := len(pc.x) - 1; j >= 0; j-- {
				ring = append(ring, plotter.XY{X: pc.x[j], Y: pc.hi[j]})
			}
			poly, err := plotter.NewPolygon(ring)
			if err != nil {
				return fmt.Errorf("curve %q band: %w", pc.label, err)
			}
			fill := col
			fill.A = uint8(math.Round(bandAlpha * 0xff))
			poly.Color = fill
			poly.LineStyle = draw.LineStyle{Color: color.Transparent, Width: 0}
			bands[i] = poly
			p.Add(poly)
		}
		xys := make(plotter.XYs, len(pc.x))
		for j := range pc.x {
			xys[j] = plotter.XY{X: pc.x[j], Y: pc.mean[j]}
		}
		line, err := plotter.NewLine(xys)
		if err != nil {
			return fmt.Errorf("curve %q: %w", pc.label, err)
		}
		line.LineStyle = draw.LineStyle{Color: col, Width: vg.Points(lineWidth), Dashes: curveDashes(i, pc.dashes)}
		lines[i] = line
	}
	for i, line := range lines {
		p.Add(line)
		if bands[i] != nil {
			legend.Add(prepared[i].label, bands[i], line)
		} else {
			legend.Add(prepared[i].label, line)
		}
	}
	widenDegenerateLogRange(&p.X, opts.LogX)
	widenDegenerateLogRange(&p.Y, opts.LogY)

	outside := len(curves) > MaxInsideLegend
	if !outside {
		legend.XOffs = vg.Points(4)
		legend.YOffs = -vg.Points(4)
		p.Legend = legend
	}

	for _, format := range []string{"png", "svg"} {
		wt, err := render(p, legend, outside, opts.Width, opts.Height, format)
		if err != nil {
			return err
		}
		err = atomicfile.WriteFile(pathNoExt+"."+format, func(w io.Writer) error {
			_, err := wt.WriteTo(w)
			return err
		}, plotFilePerm)
		if err != nil {
			return err
		}
	}
	return nil
}

// withDefaults validates opts and fills in defaults for zero fields.
func withDefaults(opts PlotOptions) (PlotOptions, error) {
	if opts.Width < 0 || opts.Height < 0 {
		return opts, fmt.Errorf("negative plot size %v × %v", opts.Width, opts.Height)
	}
	if opts.Width == 0 {
		opts.Width = DefaultPlotWidth
	}
	if opts.Height == 0 {
		opts.Height = DefaultPlotHeight
	}
	switch {
	case opts.MaxPoints == 0:
		opts.MaxPoints = DefaultMaxPoints
	case opts.MaxPoints < 2:
		return opts, fmt.Errorf("MaxPoints = %d, want 0 (default) or at least 2", opts.MaxPoints)
	}
	return opts, nil
}

// preparedCurve holds the points of one curve that will actually be drawn.
type preparedCurve struct {
	label           string
	dashes          bool
	x, mean, lo, hi []float64 // lo and hi are nil when there is no band
}

// prepareCurve validates c, drops points that cannot be drawn on log axes and
// downsamples the rest to at most opts.MaxPoints points.
func prepareCurve(c Curve, opts PlotOptions) (preparedCurve, error) {
	n := len(c.X)
	switch {
	case n == 0:
		return preparedCurve{}, fmt.Errorf("curve %q has no points", c.Label)
	case len(c.Band.Mean) != n:
		return preparedCurve{}, fmt.Errorf("curve %q: len(X) = %d but len(Band.Mean) = %d", c.Label, n, len(c.Band.Mean))
	case len(c.Band.Lo) != len(c.Band.Hi):
		return preparedCurve{}, fmt.Errorf("curve %q: len(Band.Lo) = %d but len(Band.Hi) = %d", c.Label, len(c.Band.Lo), len(c.Band.Hi))
	case len(c.Band.Lo) != 0 && len(c.Band.Lo) != n:
		return preparedCurve{}, fmt.Errorf("curve %q: len(X) = %d but len(Band.Lo) = %d", c.Label, n, len(c.Band.Lo))
	}
	idx := make([]int, 0, n)
	for i := range n {
		if opts.LogX && !(c.X[i] > 0) {
			continue
		}
		if opts.LogY && !(c.Band.Mean[i] > 0) {
			continue
		}
		idx = append(idx, i)
	}
	if len(idx) == 0 {
		return preparedCurve{}, fmt.Errorf("curve %q has no positive points to draw on a log axis", c.Label)
	}
	idx = downsample(idx, opts.MaxPoints, opts.LogX)

	pc := preparedCurve{
		label:  c.Label,
		dashes: c.Dashes,
		x:      make([]float64, len(idx)),
		mean:   make([]float64, len(idx)),
	}
	hasBand := false
	for _, i := range idx {
		if len(c.Band.Lo) != 0 && c.Band.Lo[i] != c.Band.Hi[i] {
			hasBand = true
			break
		}
	}
	if hasBand {
		pc.lo = make([]float64, len(idx))
		pc.hi = make([]float64, len(idx))
	}
	for k, i := range idx {
		pc.x[k] = c.X[i]
		pc.mean[k] = c.Band.Mean[i]
		if hasBand {
			pc.lo[k] = c.Band.Lo[i]
			pc.hi[k] = c.Band.Hi[i]
		}
	}
	return pc, nil
}

// downsample returns at most limit (≥ 2) entries of idx, always including the
// first and last. Positions are uniform in index, or, when logSpaced is set
// (for a log x axis), geometrically spaced in index so that the early part of
// the curve, which a log axis stretches, keeps its detail.
func downsample(idx []int, limit int, logSpaced bool) []int {
	n := len(idx)
	if n <= limit {
		return idx
	}
	out := make([]int, limit)
	if logSpaced {
		// Target position exp(k·ln n/(limit−1))−1, pushed forward past the
		// previous pick and capped to leave room for the remaining picks,
		// so exactly limit distinct, increasing positions result.
		step := math.Log(float64(n)) / float64(limit-1)
		prev := -1
		for k := range out {
			pos := int(math.Round(math.Exp(float64(k)*step))) - 1
			pos = min(n-limit+k, max(pos, prev+1))
			out[k] = idx[pos]
			prev = pos
		}
		return out
	}
	span, steps := int64(n-1), int64(limit-1)
	for k := range out {
		// Round k·span/steps to the nearest integer.
		out[k] = idx[(int64(k)*span+steps/2)/steps]
	}
	return out
}

// clampLogBands raises band bounds that are not positive (and so cannot be
// drawn on a log y axis) to the smallest positive mean or lower bound of any
// curve.
func clampLogBands(curves []preparedCurve) {
	floor := math.Inf(1)
	for _, pc := range curves {
		for j, m := range pc.mean {
			floor = math.Min(floor, m) // means are positive after filtering
			if pc.lo != nil && pc.lo[j] > 0 {
				floor = math.Min(floor, pc.lo[j])
			}
		}
	}
	for _, pc := range curves {
		for j := range pc.lo {
			if !(pc.lo[j] > 0) {
				pc.lo[j] = floor
			}
			if !(pc.hi[j] > 0) {
				pc.hi[j] = floor
			}
		}
	}
}

// widenDegenerateLogRange widens a log axis whose data range is a single
// value, which plot would otherwise widen additively, possibly to zero.
func widenDegenerateLogRange(a *plot.Axis, log bool) {
	if log && a.Min == a.Max && a.Min > 0 {
		a.Min /= 2
		a.Max *= 2
	}
}

// render draws p (and, when outside is set, legend in a column to the right
// of it) on a w × h canvas in format. Any panic raised by the plotting
// library while drawing is converted into an error.
func render(p *plot.Plot, legend plot.Legend, outside bool, w, h vg.Length, format string) (wt io.WriterTo, err error) {
	defer func() {
		if r := recover(); r != nil {
			wt, err = nil, fmt.Errorf("rendering %s: %v", format, r)
		}
	}()
	if !outside {
		return p.WriterTo(w, h, format)
	}
	cw, err := draw.NewFormattedCanvas(w, h, format)
	if err != nil {
		return nil, err
	}
	dc := draw.New(cw)
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())

	pad := vg.Points(legendPad)
	top := pad
	if p.Title.Text != "" {
		top += p.Title.TextStyle.Rectangle(p.Title.Text).Size().Y + p.Title.Padding
	}
	avail := h - top - pad
	if r := legend.Rectangle(dc); r.Size().Y > avail && avail > 0 {
		size := legend.TextStyle.Font.Size * avail / r.Size().Y
		legend.TextStyle.Font.Size = vg.Length(math.Max(float64(size), minLegendPt))
	}
	lw := legend.Rectangle(dc).Size().X + 2*pad
	if lw > w/2 {
		return nil, fmt.Errorf("legend (%v wide) does not fit beside the plot (%v wide); shorten the labels or widen the plot", lw, w)
	}
	p.Draw(draw.Crop(dc, 0, -lw, 0, 0))
	legend.Draw(draw.Crop(dc, w-lw+pad, -pad, pad, -top))
	return cw, nil
}
