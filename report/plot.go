package report

import (
	"errors"
	"fmt"
	"image/color"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/dprl/dprl/internal/atomicfile"
	"github.com/dprl/dprl/report/internal/pngenc"
)

// Defaults used by PlotCurves for zero-valued PlotOptions fields.
const (
	// DefaultPlotWidth is the default width of a plot.
	DefaultPlotWidth = 7 * vg.Inch
	// DefaultPlotHeight is the default height of a plot.
	DefaultPlotHeight = 4.5 * vg.Inch
	// DefaultMaxPoints is the default maximum number of points drawn per curve.
	DefaultMaxPoints = 2000
	// MaxInsideLegend is kept for compatibility: legends are never drawn
	// inside the data area any more (they would cover data); every legend is
	// placed in a column to the right of the axes.
	MaxInsideLegend = 0
)

// Styling constants.
const (
	lineWidth    = 1.5   // points; width of the mean line
	bandAlpha    = 0.2   // opacity of the confidence band fill
	tableauSize  = 10    // figures with at most this many curves use Tableau 10
	plotFilePerm = 0o644 // permission of the written image files
	legendPad    = 6     // points; padding around an outside legend
	minLegendPt  = 5     // points; smallest legend font when shrinking
	thumbPt      = 24    // points; width of a legend thumbnail
	titlePad     = 4     // points; space above the title
	marginPt     = 3     // points; margin left of and below the plot, so no text touches the edge
	maxGridTicks = 12    // a log x axis with at most this many distinct x values labels each
	minTickRatio = 1.2   // grid labels closer than this ratio to the previous one are dropped
)

// Curve is one configuration to plot: the mean of Band against X as a line,
// and the confidence interval [Band.Lo, Band.Hi] as a translucent band in the
// same colour. Band.Lo and Band.Hi may both be empty to draw the line alone.
// Style says what kind of curve it is and so how its line is drawn.
type Curve struct {
	Label string
	X     []float64
	Band  Band
	// Style selects the line: see Style. The zero value is StyleNonPrivate
	// (solid), or StylePrivate (dashed) when the legacy Dashes is set.
	Style Style
	// Dashes is the legacy form of Style: StylePrivate.
	Dashes bool
}

// Style is the meaning of a curve, which fixes its line style in every
// family's figures, so a line style always means what the caption says.
type Style int

// Line styles. A figure's title gets a caption line naming the styles it
// uses (StyleCaption).
const (
	// StyleNonPrivate: a non-private agent; solid line.
	StyleNonPrivate Style = iota
	// StylePrivate: a private agent, private at its nominal ε; dashed line.
	StylePrivate
	// StyleNotPrivateAtNominal: a "private" agent whose calibration does not
	// give its nominal ε (its label states the effective ε); dotted line.
	StyleNotPrivateAtNominal
	// StyleReference: a reference line (no learning, zero control); black,
	// dash-dot, drawn without a band.
	StyleReference
)

// styleDashes are the dash patterns of the styles.
var styleDashes = map[Style][]vg.Length{
	StyleNonPrivate:          nil,
	StylePrivate:             {vg.Points(7), vg.Points(3)},
	StyleNotPrivateAtNominal: {vg.Points(1.5), vg.Points(2.5)},
	StyleReference:           {vg.Points(8), vg.Points(3), vg.Points(2), vg.Points(3)},
}

// styleNames are the caption words of the styles.
var styleNames = map[Style]string{
	StyleNonPrivate:          "solid = non-private",
	StylePrivate:             "dashed = private",
	StyleNotPrivateAtNominal: "dotted = not private at the nominal ε",
	StyleReference:           "black dash-dot = reference",
}

// Dashes returns the dash pattern of the style (nil for a solid line).
func (s Style) Dashes() []vg.Length { return styleDashes[s] }

// style resolves the legacy Dashes flag.
func (c Curve) style() Style {
	if c.Style == StyleNonPrivate && c.Dashes {
		return StylePrivate
	}
	return c.Style
}

// StyleCaption returns the caption line naming the styles used by curves,
// e.g. "line style: solid = non-private, dashed = private".
func StyleCaption(curves []Curve) string {
	used := map[Style]bool{}
	for _, c := range curves {
		used[c.style()] = true
	}
	var parts []string
	for s := StyleNonPrivate; s <= StyleReference; s++ {
		if used[s] {
			parts = append(parts, styleNames[s])
		}
	}
	return "line style: " + strings.Join(parts, ", ")
}

// EffectiveEpsilon is the one wording of an effective-ε label in every
// family: the value and the neighbouring relation it holds under, e.g.
// "ε_eff = 2 (replace-one)".
func EffectiveEpsilon(eps float64, relation string) string {
	return fmt.Sprintf("ε_eff = %.4g (%s)", eps, relation)
}

// PlotOptions controls PlotCurves. The zero value gives linear axes, a
// DefaultPlotWidth × DefaultPlotHeight canvas and at most DefaultMaxPoints
// points per curve.
type PlotOptions struct {
	// LogX and LogY select logarithmic axes. Points that cannot be shown on
	// a log axis (x ≤ 0 with LogX, mean ≤ 0 with LogY) are dropped, and with
	// LogY band bounds ≤ 0 are raised to the smallest positive value plotted.
	// The label of a log axis ends in " (log scale)" (added once; a label
	// already ending in "(log)" or "(log scale)" is not marked twice). Log
	// axes label the powers of ten, and 2 and 5 × 10^k when they span less
	// than two decades.
	LogX, LogY bool
	// XTicks, if not empty, are the x values to label (finite, and positive
	// with LogX). Without it, a log x axis whose curves share at most 12
	// distinct x values (a grid such as the ε grid) labels every one of them.
	XTicks []float64
	// Width and Height are the canvas size; zero selects the default.
	// PNG output is rendered at 96 dots per inch.
	Width, Height vg.Length
	// MaxPoints is the maximum number of points drawn per curve (0 selects
	// DefaultMaxPoints; otherwise it must be at least 2). Longer curves are
	// downsampled uniformly in index (geometrically spaced in index with
	// LogX), always keeping the first and last point.
	MaxPoints int
}

// palette is Tableau 10, for figures of at most tableauSize curves. Black is
// kept for reference lines.
var palette = [tableauSize]uint32{
	0x1f77b4, 0xff7f0e, 0x2ca02c, 0xd62728, 0x9467bd, 0x8c564b, 0xe377c2, 0x7f7f7f, 0xbcbd22, 0x17becf,
}

// paletteColor returns the colour of curve i of n: the i-th Tableau 10 colour
// when n ≤ 10; otherwise n colours evenly spaced in hue with three
// alternating lightness levels, so no two curves of a figure share a colour.
func paletteColor(i, n int) color.NRGBA {
	if n <= tableauSize {
		v := palette[i]
		return color.NRGBA{R: uint8(v >> 16), G: uint8(v >> 8), B: uint8(v), A: 0xff}
	}
	// Hues evenly spaced, visited with a stride coprime to n near n·0.38 (the golden
	// section), so curves next to each other in the legend differ strongly in hue.
	stride := int(math.Round(float64(n) * 0.382))
	for gcd(stride, n) != 1 {
		stride++
	}
	h := float64((i*stride)%n) / float64(n)
	l := []float64{0.35, 0.55, 0.72}[((i*stride)%n)%3]
	return hsl(h, 0.75, l)
}

// gcd is the greatest common divisor of a, b > 0.
func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// hsl converts hue h ∈ [0,1), saturation s and lightness l to a colour.
func hsl(h, s, l float64) color.NRGBA {
	c := (1 - math.Abs(2*l-1)) * s
	hp := h * 6
	x := c * (1 - math.Abs(math.Mod(hp, 2)-1))
	var r, g, b float64
	switch int(hp) % 6 {
	case 0:
		r, g = c, x
	case 1:
		r, g = x, c
	case 2:
		g, b = c, x
	case 3:
		g, b = x, c
	case 4:
		r, b = x, c
	default:
		r, b = c, x
	}
	m := l - c/2
	u := func(v float64) uint8 { return uint8(math.Round(255 * math.Min(1, math.Max(0, v+m)))) }
	return color.NRGBA{R: u(r), G: u(g), B: u(b), A: 0xff}
}

// curveColors assigns the colours of a figure's curves: reference curves are
// black, the others get distinct palette colours in order.
func curveColors(curves []Curve) []color.NRGBA {
	n := 0
	for _, c := range curves {
		if c.style() != StyleReference {
			n++
		}
	}
	out := make([]color.NRGBA, len(curves))
	k := 0
	for i, c := range curves {
		if c.style() == StyleReference {
			out[i] = color.NRGBA{A: 0xff}
			continue
		}
		out[i] = paletteColor(k, n)
		k++
	}
	return out
}

// PlotCurves draws curves on one set of axes and writes the figure to
// pathNoExt+".png" and pathNoExt+".svg", each atomically (a failure leaves
// the previous file, if any, in place; the other of the two may already have
// been replaced), durably when it returns. The two are drawn and written
// concurrently.
//
// Each curve is drawn as its mean line over a translucent band [Lo, Hi] of
// the same colour, with a legend entry showing both. No two curves of a
// figure share a colour (reference curves are black); the line style follows
// the curve's Style, and the title gets a caption line naming the styles
// used. The legend is always a column to the right of the axes, so it never
// covers data (its font is shrunk if needed to fit the height). Curves are
// downsampled to opts.MaxPoints points. With LogY a curve without positive
// values stays in the legend, marked as not drawn.
//
// It is an error if curves is empty, if a curve has no points, if a curve's
// X, Band.Mean, Band.Lo and Band.Hi lengths disagree (Lo and Hi may both be
// empty), if values are NaN or infinite, if a curve has no point that can be
// drawn on the requested log x axis or no curve has a point that can be drawn
// on a log y axis, or if opts is invalid.
func PlotCurves(pathNoExt string, title, xlabel, ylabel string, curves []Curve, opts PlotOptions) error {
	if err := plotCurves(pathNoExt, title, xlabel, ylabel, curves, opts); err != nil {
		return fmt.Errorf("report: PlotCurves %s: %w", pathNoExt, err)
	}
	return nil
}

// plotCurves implements PlotCurves without the error prefix. The PNG (raster
// and encoding: most of the cost) and the SVG are drawn and written on two
// goroutines, each from its own plot (drawing adjusts a plot's font sizes to
// the layout), so a figure takes the time of its PNG on two cores.
func plotCurves(pathNoExt string, title, xlabel, ylabel string, curves []Curve, opts PlotOptions) error {
	p, legend, err := buildPlot(title, xlabel, ylabel, curves, opts)
	if err != nil {
		return err
	}
	p2, legend2, err := buildPlot(title, xlabel, ylabel, curves, opts)
	if err != nil {
		return err
	}
	opts, _ = withDefaults(opts)
	// One batch: each file is fsynced before its rename (a crash leaves the old or the new
	// figure), the two at once, and their directory once for both.
	var batch atomicfile.Batch
	defer batch.Sync()
	write := func(p *plot.Plot, legend plot.Legend, format string) error {
		wt, _, err := render(p, legend, opts.Width, opts.Height, format)
		if err != nil {
			return err
		}
		return batch.WriteFile(pathNoExt+"."+format, func(w io.Writer) error {
			_, err := wt.WriteTo(w)
			return err
		}, plotFilePerm)
	}
	svgErr := make(chan error, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil { // as render does for drawing, also for writing
				svgErr <- fmt.Errorf("writing svg: %v", r)
			}
		}()
		svgErr <- write(p2, legend2, "svg")
	}()
	return errors.Join(write(p, legend, "png"), <-svgErr)
}

// buildPlot validates the curves and builds the plot and its legend.
func buildPlot(title, xlabel, ylabel string, curves []Curve, opts PlotOptions) (*plot.Plot, plot.Legend, error) {
	opts, err := withDefaults(opts)
	if err != nil {
		return nil, plot.Legend{}, err
	}
	if len(curves) == 0 {
		return nil, plot.Legend{}, errors.New("no curves")
	}
	prepared := make([]preparedCurve, len(curves))
	drawable := 0
	for i, c := range curves {
		if prepared[i], err = prepareCurve(c, opts); err != nil {
			return nil, plot.Legend{}, err
		}
		if len(prepared[i].x) > 0 {
			drawable++
		}
	}
	if drawable == 0 {
		return nil, plot.Legend{}, fmt.Errorf("curve %q has no positive points to draw on a log axis", curves[0].Label)
	}
	if opts.LogY {
		clampLogBands(prepared)
	}
	colors := curveColors(curves)

	p := plot.New()
	p.Title.Text = title + "\n" + StyleCaption(curves)
	p.X.Label.Text = xlabel
	p.Y.Label.Text = ylabel
	xticks := opts.XTicks
	if opts.LogX {
		p.X.Scale = plot.LogScale{}
		p.X.Label.Text = logLabel(xlabel)
		if len(xticks) == 0 {
			xticks = gridTicks(prepared)
		}
		p.X.Tick.Marker = logTicker{at: xticks}
	} else if len(xticks) > 0 {
		p.X.Tick.Marker = labelTicks(xticks)
	}
	if opts.LogY {
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = logTicker{}
		p.Y.Label.Text = logLabel(ylabel)
	}
	grid := plotter.NewGrid()
	grid.Vertical.Color = color.Gray{Y: 0xdd}
	grid.Horizontal.Color = color.Gray{Y: 0xdd}
	p.Add(grid)

	legend := plot.NewLegend()
	legend.ThumbnailWidth = vg.Points(thumbPt)
	legend.Top, legend.Left = true, true

	// Reference lines first, under the data (a curve on the reference line stays
	// visible), then all bands, then all data lines, so no band hides another
	// curve's line.
	lines := make([]*plotter.Line, len(prepared))
	bands := make([]*plotter.Polygon, len(prepared))
	for i, pc := range prepared {
		col := colors[i]
		if pc.lo != nil && pc.style != StyleReference {
			ring := make(plotter.XYs, 0, 2*len(pc.x))
			for j := range pc.x {
				ring = append(ring, plotter.XY{X: pc.x[j], Y: pc.lo[j]})
			}
			for j := len(pc.x) - 1; j >= 0; j-- {
				ring = append(ring, plotter.XY{X: pc.x[j], Y: pc.hi[j]})
			}
			poly, err := plotter.NewPolygon(ring)
			if err != nil {
				return nil, plot.Legend{}, fmt.Errorf("curve %q band: %w", pc.label, err)
			}
			fill := col
			fill.A = uint8(math.Round(bandAlpha * 0xff))
			poly.Color = fill
			poly.LineStyle = draw.LineStyle{Color: color.Transparent, Width: 0}
			bands[i] = poly
		}
		style := draw.LineStyle{Color: col, Width: vg.Points(lineWidth), Dashes: pc.style.Dashes()}
		if len(pc.x) == 0 {
			// Nothing to draw on the log axis: listed in the legend, saying so.
			lines[i] = &plotter.Line{LineStyle: style}
			continue
		}
		xys := make(plotter.XYs, len(pc.x))
		for j := range pc.x {
			xys[j] = plotter.XY{X: pc.x[j], Y: pc.mean[j]}
		}
		line, err := plotter.NewLine(xys)
		if err != nil {
			return nil, plot.Legend{}, fmt.Errorf("curve %q: %w", pc.label, err)
		}
		line.LineStyle = style
		lines[i] = line
	}
	drawn := func(i int) bool { return len(prepared[i].x) > 0 }
	for i := range lines {
		if drawn(i) && prepared[i].style == StyleReference {
			p.Add(lines[i])
		}
	}
	for _, band := range bands {
		if band != nil {
			p.Add(band)
		}
	}
	for i := range lines {
		if drawn(i) && prepared[i].style != StyleReference {
			p.Add(lines[i])
		}
	}
	for i, line := range lines {
		if bands[i] != nil {
			legend.Add(prepared[i].label, bands[i], line)
		} else {
			legend.Add(prepared[i].label, line)
		}
	}
	widenDegenerateLogRange(&p.X, opts.LogX)
	widenDegenerateLogRange(&p.Y, opts.LogY)
	return p, legend, nil
}

// logLabel returns the label of a log axis: label with " (log scale)" once,
// whatever mark of the log scale label already carried.
func logLabel(label string) string {
	s := strings.TrimSpace(label)
	for {
		t := s
		for _, suffix := range []string{"(log scale)", "(log)", "log scale", "log-scale"} {
			if len(s) >= len(suffix) && strings.EqualFold(s[len(s)-len(suffix):], suffix) {
				s = strings.TrimRight(s[:len(s)-len(suffix)], " ,;")
			}
		}
		if s == t {
			break
		}
	}
	if s == "" {
		return "(log scale)"
	}
	return s + " (log scale)"
}

// gridTicks returns the distinct x values of the drawn curves, sorted, when there
// are at most maxGridTicks of them (a grid such as the ε grid), without those
// closer than minTickRatio to the previous one (their labels would collide);
// otherwise nil.
func gridTicks(curves []preparedCurve) []float64 {
	var xs []float64
	for _, pc := range curves {
		for _, x := range pc.x {
			if !slices.Contains(xs, x) {
				if xs = append(xs, x); len(xs) > maxGridTicks {
					return nil
				}
			}
		}
	}
	slices.Sort(xs)
	var out []float64
	for _, x := range xs {
		if len(out) == 0 || x >= out[len(out)-1]*minTickRatio {
			out = append(out, x)
		}
	}
	return out
}

// tickLabel formats a tick value: the shortest decimal that reads back as v.
func tickLabel(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// labelTicks labels exactly the given values (on a linear axis).
type labelTicks []float64

// Ticks implements plot.Ticker.
func (t labelTicks) Ticks(lo, hi float64) []plot.Tick {
	out := make([]plot.Tick, len(t))
	for i, v := range t {
		out[i] = plot.Tick{Value: v, Label: tickLabel(v)}
	}
	return out
}

// logTicker places the ticks of a log axis: unlabelled minor ticks at i·10^k
// (i = 1…9) and labels at the values of at when it is set; otherwise labels at
// the powers of ten, also at 2 and 5 × 10^k when the range spans less than two
// decades, at every i·10^k when less than half a decade, and at the ends of the
// range when that still gives fewer than two labels. (plot.LogTicks truncates
// log10 of the range's ends toward zero, so a range starting at 0.1 had no label
// at 0.1, and it labels only powers of ten.)
type logTicker struct{ at []float64 }

// Ticks implements plot.Ticker.
func (t logTicker) Ticks(lo, hi float64) []plot.Tick {
	if !(lo > 0) || !(hi >= lo) || math.IsInf(hi, 0) {
		return nil
	}
	const tol = 1e-9
	inRange := func(v float64) bool { return v >= lo*(1-tol) && v <= hi*(1+tol) }
	k0 := int(math.Floor(math.Log10(lo) + tol))
	k1 := int(math.Ceil(math.Log10(hi) - tol))
	decades := math.Log10(hi / lo)
	// Every stride-th power of ten is labelled, so at most about 10 are.
	stride := max(1, (k1-k0+9)/10)
	levels := []func(i, k int) bool{
		func(i, k int) bool { return i == 1 && (k-k0)%stride == 0 },
		func(i, k int) bool { return i == 1 || i == 2 || i == 5 },
		func(i, k int) bool { return true },
	}
	level := 0
	switch {
	case decades < 0.5:
		level = 2
	case decades < 2:
		level = 1
	}
	var ticks []plot.Tick
	for ; ; level++ {
		ticks = ticks[:0]
		labelled := 0
		for k := k0; k <= k1; k++ {
			for i := 1; i <= 9; i++ {
				v, _ := strconv.ParseFloat(fmt.Sprintf("%de%d", i, k), 64) // exact decimal i·10^k
				if !inRange(v) {
					continue
				}
				tk := plot.Tick{Value: v}
				if t.at == nil && levels[min(level, 2)](i, k) {
					tk.Label = tickLabel(v)
					labelled++
				}
				ticks = append(ticks, tk)
			}
		}
		if t.at != nil || labelled >= 2 || level >= 2 {
			break
		}
	}
	if t.at != nil {
		for _, v := range t.at {
			ticks = append(ticks, plot.Tick{Value: v, Label: tickLabel(v)})
		}
	} else if labelled := countLabels(ticks); labelled < 2 {
		ticks = append(ticks, plot.Tick{Value: lo, Label: strconv.FormatFloat(lo, 'g', 3, 64)},
			plot.Tick{Value: hi, Label: strconv.FormatFloat(hi, 'g', 3, 64)})
	}
	return ticks
}

// countLabels counts the labelled ticks.
func countLabels(ticks []plot.Tick) int {
	n := 0
	for _, tk := range ticks {
		if tk.Label != "" {
			n++
		}
	}
	return n
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
	for _, v := range opts.XTicks {
		if math.IsNaN(v) || math.IsInf(v, 0) || (opts.LogX && v <= 0) {
			return opts, fmt.Errorf("XTicks holds %v, which cannot be labelled on the x axis", v)
		}
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
	style           Style
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
		if opts.LogX {
			return preparedCurve{}, fmt.Errorf("curve %q has no positive points to draw on a log axis", c.Label)
		}
		return preparedCurve{label: c.Label + " (no positive values: not drawn on the log axis)", style: c.style()}, nil
	}
	idx = downsample(idx, opts.MaxPoints, opts.LogX)

	pc := preparedCurve{
		label: c.Label,
		style: c.style(),
		x:     make([]float64, len(idx)),
		mean:  make([]float64, len(idx)),
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

// Layout is where a figure's parts go on the canvas (canvas coordinates, origin
// bottom left): the title across the top, the plot (axes and data) below it and
// the legend column beside the plot.
type Layout struct {
	Title, Plot, Legend vg.Rectangle
	// title is the title text as drawn: wrapped to fit the canvas width.
	title string
}

// layout computes the layout of p and its legend on a w × h canvas, shrinking
// the legend font if the legend is taller than the canvas. The legend is
// always a column to the right of the plot, so it never covers data. The title
// is centred over the plot when it fits there, otherwise over the whole canvas;
// lines wider than the canvas are wrapped at spaces, and the font is shrunk if
// a single word is still too wide.
func layout(dc draw.Canvas, p *plot.Plot, legend *plot.Legend, w, h vg.Length) (Layout, error) {
	pad := vg.Points(legendPad)
	margin := vg.Points(marginPt)
	var lay Layout
	top := h - pad // top of the legend column
	plotTop := h
	if p.Title.Text != "" {
		ts := &p.Title.TextStyle
		lay.title = wrapText(ts, p.Title.Text, w-2*pad)
		th := ts.Rectangle(lay.title).Size().Y
		tTop := h - vg.Points(titlePad)
		lay.Title = vg.Rectangle{Min: vg.Point{X: pad, Y: tTop - th}, Max: vg.Point{X: w - pad, Y: tTop}}
		plotTop = tTop - th - p.Title.Padding
		top = plotTop
	}
	avail := top - pad
	if r := legend.Rectangle(dc); r.Size().Y > avail && avail > 0 {
		size := legend.TextStyle.Font.Size * avail / r.Size().Y
		legend.TextStyle.Font.Size = vg.Length(math.Max(float64(size), minLegendPt))
	}
	lw := legend.Rectangle(dc).Size().X + 2*pad
	if lw > w/2 {
		return Layout{}, fmt.Errorf("legend (%v wide) does not fit beside the plot (%v wide); shorten the labels or widen the plot", lw, w)
	}
	lay.Plot = vg.Rectangle{Min: vg.Point{X: margin, Y: margin}, Max: vg.Point{X: w - lw, Y: plotTop}}
	lay.Legend = vg.Rectangle{Min: vg.Point{X: w - lw + pad, Y: pad}, Max: vg.Point{X: w - pad, Y: top}}
	// An axis label longer than its axis would be cut: shrink its font to fit.
	if yl := &p.Y.Label.TextStyle; p.Y.Label.Text != "" {
		if wd, room := yl.Width(p.Y.Label.Text), lay.Plot.Size().Y-2*pad; wd > room && room > 0 {
			yl.Font.Size = yl.Font.Size * room / wd
		}
	}
	if xl := &p.X.Label.TextStyle; p.X.Label.Text != "" {
		if wd, room := xl.Width(p.X.Label.Text), lay.Plot.Size().X-2*pad; wd > room && room > 0 {
			xl.Font.Size = xl.Font.Size * room / wd
		}
	}
	if p.Title.Text != "" {
		// Centred over the plot if every line fits there, else over the canvas.
		tw := p.Title.TextStyle.Rectangle(lay.title).Size().X
		cx := (lay.Plot.Min.X + lay.Plot.Max.X) / 2
		if tw > lay.Plot.Size().X {
			cx = w / 2
		}
		lay.Title.Min.X, lay.Title.Max.X = cx-tw/2, cx+tw/2
	}
	return lay, nil
}

// wrapText breaks the lines of text at spaces so that each is at most width
// wide in style ts, and shrinks ts's font if a single word is still wider. It
// returns the wrapped text.
func wrapText(ts *text.Style, txt string, width vg.Length) string {
	var out []string
	for _, line := range strings.Split(txt, "\n") {
		cur := ""
		for _, word := range strings.Fields(line) {
			next := word
			if cur != "" {
				next = cur + " " + word
			}
			if cur != "" && ts.Width(next) > width {
				out = append(out, cur)
				next = word
			}
			cur = next
		}
		out = append(out, cur)
	}
	wrapped := strings.Join(out, "\n")
	if wd := ts.Rectangle(wrapped).Size().X; wd > width && wd > 0 {
		ts.Font.Size = ts.Font.Size * width / wd
	}
	return wrapped
}

// render draws p with legend in a column to the right of it on a w × h
// canvas in format and returns the layout used. Any panic raised by the
// plotting library while drawing is converted into an error.
func render(p *plot.Plot, legend plot.Legend, w, h vg.Length, format string) (wt io.WriterTo, lay Layout, err error) {
	defer func() {
		if r := recover(); r != nil {
			wt, err = nil, fmt.Errorf("rendering %s: %v", format, r)
		}
	}()
	var cw vg.CanvasWriterTo
	if format == "png" {
		// A raster canvas starts white, and pngenc writes the same pixels as
		// image/png in a fraction of its time.
		cw = pngenc.NewCanvas(w, h)
	} else {
		if cw, err = draw.NewFormattedCanvas(w, h, format); err != nil {
			return nil, Layout{}, err
		}
	}
	dc := draw.New(cw)
	if format != "png" {
		fillBackground(dc)
	} else if bg := p.BackgroundColor; bg != nil && sameColor(bg, color.White) {
		// Nor the plot's white background over the white canvas (the same pixels:
		// nothing is drawn in the plot's area before it).
		p.BackgroundColor = nil
		defer func() { p.BackgroundColor = bg }()
	}
	lay, err = drawFigure(dc, p, legend, w, h)
	if err != nil {
		return nil, Layout{}, err
	}
	return cw, lay, nil
}

// sameColor reports whether a and b are the same colour (in premultiplied 16-bit RGBA).
func sameColor(a, b color.Color) bool {
	r1, g1, b1, a1 := a.RGBA()
	r2, g2, b2, a2 := b.RGBA()
	return r1 == r2 && g1 == g2 && b1 == b2 && a1 == a2
}

// fillBackground paints the canvas white (a raster canvas already is: painting
// it again through the rasteriser cost as much as drawing the data).
func fillBackground(dc draw.Canvas) {
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())
}

// drawFigure draws p with legend in a column to the right of it on the w × h
// canvas dc, whose background is already painted, and returns the layout used.
func drawFigure(dc draw.Canvas, p *plot.Plot, legend plot.Legend, w, h vg.Length) (Layout, error) {
	lay, err := layout(dc, p, &legend, w, h)
	if err != nil {
		return Layout{}, err
	}
	// The title is drawn here, across the whole canvas, not by plot.Draw, which
	// would centre it over the plot area only and cut it when it is wider.
	title := p.Title.Text
	p.Title.Text = ""
	defer func() { p.Title.Text = title }()
	if title != "" {
		ts := p.Title.TextStyle
		ts.XAlign, ts.YAlign = draw.XCenter, draw.YTop
		dc.FillText(ts, vg.Point{X: (lay.Title.Min.X + lay.Title.Max.X) / 2, Y: lay.Title.Max.Y + ts.FontExtents().Descent}, lay.title)
	}
	pc := draw.Crop(dc, lay.Plot.Min.X, lay.Plot.Max.X-w, lay.Plot.Min.Y, lay.Plot.Max.Y-h)
	drawAxisLabels(pc, p)
	pad := vg.Points(legendPad)
	legend.Draw(draw.Crop(dc, lay.Legend.Min.X, -pad, pad, lay.Legend.Max.Y-h))
	return lay, nil
}

// drawAxisLabels draws p on c with its axis labels centred on the data area.
// plot.Draw would centre them on the axes' canvas but reserve room for them
// around the arithmetic mean of the axis range, which on a log axis is far
// from the centre, so a long label on a log axis pushed the data aside and ran
// off the canvas.
func drawAxisLabels(c draw.Canvas, p *plot.Plot) {
	xl, yl := p.X.Label.Text, p.Y.Label.Text
	p.X.Label.Text, p.Y.Label.Text = "", ""
	defer func() { p.X.Label.Text, p.Y.Label.Text = xl, yl }()
	var left, bottom vg.Length
	if yl != "" {
		left = p.Y.Label.TextStyle.Height(yl) + p.Y.Label.TextStyle.FontExtents().Descent + p.Y.Label.Padding
	}
	if xl != "" {
		bottom = p.X.Label.TextStyle.Height(xl) + p.X.Label.Padding
	}
	inner := draw.Crop(c, left, 0, bottom, 0)
	data := p.DataCanvas(inner)
	// clamp keeps a label of length n centred near v but inside [lo, hi].
	clamp := func(v, n, lo, hi vg.Length) vg.Length { return max(lo+n/2, min(hi-n/2, v)) }
	if yl != "" {
		sty := p.Y.Label.TextStyle
		sty.Rotation += math.Pi / 2
		y := clamp(data.Center().Y, sty.Width(yl), c.Min.Y, c.Max.Y)
		c.FillText(sty, vg.Point{X: c.Min.X + p.Y.Label.TextStyle.Height(yl), Y: y}, yl)
	}
	if xl != "" {
		sty := p.X.Label.TextStyle
		x := clamp(data.Center().X, sty.Width(xl), c.Min.X, c.Max.X)
		c.FillText(sty, vg.Point{X: x, Y: c.Min.Y + sty.FontExtents().Descent}, xl)
	}
	p.Draw(inner)
}
