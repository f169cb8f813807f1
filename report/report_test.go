package report

import (
	"bytes"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestMeanBand(t *testing.T) {
	b, err := MeanBand([][]float64{{1, 2}, {3, 4}, {5, 9}}, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	// Column 0: mean 3, sd 2, t_{0.975,2} = 4.302653, half-width 4.302653·2/√3.
	half := 4.302652729911275 * 2 / math.Sqrt(3)
	if b.Mean[0] != 3 || math.Abs(b.SD[0]-2) > 1e-12 || math.Abs(b.Hi[0]-3-half) > 1e-9 || math.Abs(3-b.Lo[0]-half) > 1e-9 {
		t.Fatalf("band %+v", b)
	}
	one, _ := MeanBand([][]float64{{7}}, 0.95)
	if one.Lo[0] != 7 || one.Hi[0] != 7 {
		t.Fatalf("single run band %+v", one)
	}
	for _, bad := range [][][]float64{nil, {{}}, {{1, 2}, {1}}} {
		if _, err := MeanBand(bad, 0.95); err == nil {
			t.Errorf("MeanBand(%v) accepted", bad)
		}
	}
	if _, err := MeanBand([][]float64{{1}}, 1); err == nil {
		t.Error("level 1 accepted")
	}
}

func TestGrowthExponent(t *testing.T) {
	var x, y []float64
	for k := 1; k <= 1000; k++ {
		x = append(x, float64(k))
		y = append(y, 3*math.Pow(float64(k), 0.5))
	}
	g, err := GrowthExponent(x, y, 100, 1000)
	if err != nil || math.Abs(g-0.5) > 1e-9 {
		t.Fatalf("exponent %g, %v", g, err)
	}
	if _, err := GrowthExponent(x, y, 2000, 3000); err == nil {
		t.Error("empty range accepted")
	}
}

func TestCSVRoundTrip(t *testing.T) {
	p := filepath.Join(t.TempDir(), "c.csv")
	runs := [][]float64{{0.1, 1.0 / 3}, {2, math.Pi}}
	b, _ := MeanBand(runs, 0.95)
	if err := WriteCurveCSV(p, []int{1, 2}, runs, []string{"seed_1", "seed_2"}, b); err != nil {
		t.Fatal(err)
	}
	ep, cols, err := ReadCurveCSV(p)
	if err != nil {
		t.Fatal(err)
	}
	if len(ep) != 2 || cols["seed_1"][1] != 1.0/3 || cols["seed_2"][1] != math.Pi || cols["mean"][0] != b.Mean[0] {
		t.Fatalf("round trip lost precision: %v %v", ep, cols)
	}
	if err := WriteCurveCSV(p, []int{1}, runs, []string{"a", "b"}, b); err == nil {
		t.Error("mismatched lengths accepted")
	}
}

func TestPlotCurves(t *testing.T) {
	dir := t.TempDir()
	var curves []Curve
	for i := 0; i < 3; i++ {
		var runs [][]float64
		for s := 0; s < 3; s++ {
			r := make([]float64, 5000)
			for k := range r {
				r[k] = float64(i+1) * math.Sqrt(float64(k)) * (1 + 0.05*float64(s))
			}
			runs = append(runs, r)
		}
		b, _ := MeanBand(runs, 0.95)
		x := make([]float64, 5000)
		for k := range x {
			x[k] = float64(k + 1)
		}
		curves = append(curves, Curve{Label: "c" + string(rune('a'+i)), X: x, Band: b, Dashes: i == 2})
	}
	base := filepath.Join(dir, "fig")
	if err := PlotCurves(base, "t", "episode", "regret", curves, PlotOptions{}); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(base + ".png")
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil || img.Bounds().Dx() < 500 {
		t.Fatalf("bad PNG: %v", err)
	}
	svg, _ := os.ReadFile(base + ".svg")
	if !strings.Contains(string(svg[:200]), "<svg") && !strings.HasPrefix(string(svg), "<?xml") {
		t.Fatalf("bad SVG header %q", svg[:50])
	}
	if err := PlotCurves(base, "t", "x", "y", nil, PlotOptions{}); err == nil {
		t.Error("empty curve list accepted")
	}
	curves[0].X = curves[0].X[:10]
	if err := PlotCurves(base, "t", "x", "y", curves, PlotOptions{}); err == nil {
		t.Error("mismatched curve accepted")
	}
}

func TestMarkdownTable(t *testing.T) {
	var b bytes.Buffer
	if err := WriteMarkdownTable(&b, []string{"a", "bb"}, [][]string{{"ccc", "d"}}); err != nil {
		t.Fatal(err)
	}
	want := "| a   | bb |\n| --- | -- |\n| ccc | d  |\n"
	if b.String() != want {
		t.Fatalf("got\n%s", b.String())
	}
	if err := WriteMarkdownTable(&b, []string{"a"}, [][]string{{"x", "y"}}); err == nil {
		t.Error("ragged row accepted")
	}
}
