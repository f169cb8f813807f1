package rliable

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/dprl/dprl/report/internal/plotcheck"
)

// TestPlotIntervalsInsideCanvas: every marker, bar and label of the compare figure (dprl
// compare --fig) lies inside the canvas, the markers below the title (the top marker was cut by
// the title and the rightmost marker and label by the right edge).
func TestPlotIntervalsInsideCanvas(t *testing.T) {
	name := func(i int) string {
		return fmt.Sprintf("run-%d/riverswim-jdp/practical-jdp_eps_%d", i, i)
	}
	for _, n := range []int{1, 2, 5, 12, 30} {
		labels := make([]string, n)
		ivs := make([]Interval, n)
		for i := range ivs {
			labels[i] = name(i)
			p := 100 + 6000*float64(i%3)/2
			ivs[i] = Interval{Point: p, Lo: p - 5, Hi: p + 5} // narrow: the marker is the extreme
		}
		labels[n-1] = "a-much-longer-run-directory-name/riverswim-ldp/practical-ldp_eps_10"
		title := "IQM of final regret R(K) across seeds, 95% stratified bootstrap CI"
		p, w, h, err := intervalsPlot(title, "R(K)", labels, ivs)
		if err != nil {
			t.Fatal(err)
		}
		items := plotcheck.Record(w, h, func(c draw.Canvas) { drawIntervals(c, p) })
		for _, it := range plotcheck.Outside(items, w, h, vg.Points(0.5)) {
			t.Errorf("n=%d: drawn outside the %v × %v canvas: kind %d %q at %+v", n, w, h, it.Kind, it.Text, it.Box)
		}
		var titleBox *vg.Rectangle
		markers := 0
		for _, it := range items {
			if it.Kind == plotcheck.Text && it.Text == title {
				titleBox = &it.Box
			}
		}
		if titleBox == nil {
			t.Fatalf("n=%d: title not drawn", n)
		}
		gap := vg.Points(2) // between a marker and the title or the canvas edge
		for _, it := range items {
			if it.Kind == plotcheck.Stroke && it.Arc {
				markers++
				b := it.Box
				if b.Max.Y+gap > titleBox.Min.Y {
					t.Errorf("n=%d: marker at %+v reaches the title (bottom %v)", n, b, titleBox.Min.Y)
				}
				if b.Min.X < gap || b.Max.X > w-gap || b.Min.Y < gap {
					t.Errorf("n=%d: marker at %+v touches the edge of the %v × %v canvas", n, b, w, h)
				}
			}
		}
		if markers != n {
			t.Errorf("n=%d: %d markers drawn", n, markers)
		}
	}
}

// TestPlotIntervalsFiles: PlotIntervals writes a PNG or an SVG and refuses other extensions.
func TestPlotIntervalsFiles(t *testing.T) {
	dir := t.TempDir()
	ivs := []Interval{{Point: 1, Lo: 0.5, Hi: 2}, {Point: 3, Lo: 2, Hi: 4}}
	for _, ext := range []string{".png", ".svg"} {
		path := filepath.Join(dir, "fig"+ext)
		if err := PlotIntervals(path, "t", "y", []string{"a", "b"}, ivs); err != nil {
			t.Fatal(err)
		}
		if st, err := os.Stat(path); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", path, err)
		}
	}
	if err := PlotIntervals(filepath.Join(dir, "fig.pdf"), "t", "y", []string{"a", "b"}, ivs); err == nil || !strings.Contains(err.Error(), ".png or .svg") {
		t.Errorf("pdf: %v", err)
	}
	if err := PlotIntervals(filepath.Join(dir, "fig.png"), "t", "y", []string{"a"}, ivs); err == nil {
		t.Error("label count mismatch accepted")
	}
}
