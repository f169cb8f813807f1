package report

import (
	"fmt"
	"image/color"
	"io"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/dprl/dprl/internal/atomicfile"
)

// Curve is one line of a figure: the mean with its confidence band.
type Curve struct {
	Label string
	X     []float64
	Band  Band
	// Dashes draws the mean dashed (used for settings that are not private at their nominal ε).
	Dashes bool
}

// PlotOptions tunes a figure.
type PlotOptions struct {
	LogX, LogY    bool
	Width, Height vg.Length
	// MaxPoints caps the points drawn per curve (default 2000; first and last are kept).
	MaxPoints int
}

// palette is a fixed set of distinguishable colours (Okabe–Ito, then Tableau).
var palette = []color.RGBA{
	{0, 0, 0, 255}, {230, 159, 0, 255}, {86, 180, 233, 255}, {0, 158, 115, 255}, {213, 94, 0, 255},
	{0, 114, 178, 255}, {204, 121, 167, 255}, {240, 228, 66, 255}, {148, 103, 189, 255}, {140, 86, 75, 255},
	{127, 127, 127, 255}, {188, 189, 34, 255}, {23, 190, 207, 255}, {214, 39, 40, 255},
}

// PlotCurves draws every curve's mean with a translucent band [Lo, Hi] in the same colour and
// writes pathNoExt+".png" and pathNoExt+".svg" atomically.
func PlotCurves(pathNoExt, title, xlabel, ylabel string, curves []Curve, opts PlotOptions) error {
	if len(curves) == 0 {
		return fmt.Errorf("report: no curves to plot")
	}
	if opts.MaxPoints <= 1 {
		opts.MaxPoints = 2000
	}
	if opts.Width == 0 {
		opts.Width = 10 * vg.Inch
	}
	if opts.Height == 0 {
		opts.Height = 6.5 * vg.Inch
	}
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = xlabel
	p.Y.Label.Text = ylabel
	p.Legend.Top = true
	p.Legend.Left = true
	p.Legend.TextStyle.Font.Size = vg.Points(9)
	if opts.LogX {
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = plot.LogTicks{}
	}
	if opts.LogY {
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = plot.LogTicks{}
	}
	p.Add(plotter.NewGrid())
	for i, c := range curves {
		n := len(c.X)
		if n == 0 || len(c.Band.Mean) != n || len(c.Band.Lo) != n || len(c.Band.Hi) != n {
			return fmt.Errorf("report: curve %q has %d x values and %d band points", c.Label, n, len(c.Band.Mean))
		}
		idx := downsample(n, opts.MaxPoints)
		col := palette[i%len(palette)]
		line := make(plotter.XYs, len(idx))
		poly := make(plotter.XYs, 0, 2*len(idx))
		for j, k := range idx {
			line[j] = plotter.XY{X: c.X[k], Y: c.Band.Mean[k]}
			poly = append(poly, plotter.XY{X: c.X[k], Y: c.Band.Hi[k]})
		}
		for j := len(idx) - 1; j >= 0; j-- {
			k := idx[j]
			poly = append(poly, plotter.XY{X: c.X[k], Y: c.Band.Lo[k]})
		}
		if c.Band.N > 1 {
			pg, err := plotter.NewPolygon(poly)
			if err != nil {
				return fmt.Errorf("report: curve %q: %w", c.Label, err)
			}
			pg.Color = color.RGBA{col.R, col.G, col.B, 60}
			pg.LineStyle.Width = 0
			p.Add(pg)
		}
		l, err := plotter.NewLine(line)
		if err != nil {
			return fmt.Errorf("report: curve %q: %w", c.Label, err)
		}
		l.Color = col
		l.Width = vg.Points(1.5)
		if c.Dashes {
			l.Dashes = []vg.Length{vg.Points(6), vg.Points(3)}
		}
		p.Add(l)
		p.Legend.Add(c.Label, l)
	}
	for _, ext := range []string{"png", "svg"} {
		wt, err := p.WriterTo(opts.Width, opts.Height, ext)
		if err != nil {
			return fmt.Errorf("report: %w", err)
		}
		if err := atomicfile.WriteFile(pathNoExt+"."+ext, func(w io.Writer) error {
			_, err := wt.WriteTo(w)
			return err
		}, 0o644); err != nil {
			return err
		}
	}
	return nil
}


// downsample returns at most max indices of 0..n−1, uniform in index, first and last kept.
func downsample(n, max int) []int {
	if n <= max {
		idx := make([]int, n)
		for i := range idx {
			idx[i] = i
		}
		return idx
	}
	idx := make([]int, max)
	for i := range idx {
		idx[i] = int(float64(i) * float64(n-1) / float64(max-1))
	}
	return idx
}
