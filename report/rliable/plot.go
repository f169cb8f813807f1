package rliable

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

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
		return fmt.Errorf("rliable: PlotIntervals: %w", err)
	}
	bars, err := plotter.NewYErrorBars(struct {
		plotter.XYs
		plotter.YErrors
	}{pts, errs})
	if err != nil {
		return fmt.Errorf("rliable: PlotIntervals: %w", err)
	}
	p.Add(bars, sc, plotter.NewGrid())
	p.NominalX(labels...)
	p.X.Tick.Label.Rotation = 0.6
	p.X.Tick.Label.XAlign = -1 // text ends at the tick
	p.X.Tick.Label.YAlign = -0.5
	w := vg.Length(max(6, 0.45*float64(len(ivs)))) * vg.Inch
	wt, err := p.WriterTo(w, 4.5*vg.Inch, format)
	if err != nil {
		return fmt.Errorf("rliable: PlotIntervals: %w", err)
	}
	if err := atomicfile.WriteFile(path, func(f io.Writer) error { _, err := wt.WriteTo(f); return err }, 0o644); err != nil {
		return fmt.Errorf("rliable: PlotIntervals %s: %w", path, err)
	}
	return nil
}
