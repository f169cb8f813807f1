package report

import (
	"os"
	"testing"

	"gonum.org/v1/plot/vg"
)

func TestZZDebugLayout(t *testing.T) {
	eps := []float64{0.1, 0.5, 1, 2, 5, 10}
	p, legend, err := buildPlot(privacyCostTitle, "ε", "privacy cost (per-seed values < 1 drawn at 1)", epsCurves(eps), PlotOptions{LogX: true, LogY: true, Width: 9 * vg.Inch, Height: 5 * vg.Inch})
	if err != nil {
		t.Fatal(err)
	}
	wt, lay, err := render(p, legend, 9*vg.Inch, 5*vg.Inch, "png"); f, _ := os.Create("/tmp/me/dbg.png"); wt.WriteTo(f); f.Close()
	t.Logf("%+v %v", lay, err)
	t.Logf("y %v %v", p.Y.Min, p.Y.Max)
}
