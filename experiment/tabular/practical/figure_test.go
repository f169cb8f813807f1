package practical

import (
	"slices"
	"strings"
	"testing"
)

// TestPrivacyCostFigure: the privacy-cost-vs-ε figure labels each curve with its K (the LDP
// runs can be longer than the JDP ones), labels every ε of the grid on its log x axis, and its
// y label does not mark the log scale itself (PlotCurves adds "(log scale)" once).
func TestPrivacyCostFigure(t *testing.T) {
	eps := []float64{0.1, 0.5, 1}
	runs := func(final float64) []SeedRun {
		return []SeedRun{{Seed: 1, Final: final}, {Seed: 2, Final: final * 1.1}}
	}
	r := &Result{Config: &Config{Episodes: 100, Epsilons: eps}}
	r.Curves = append(r.Curves,
		&Curve{Group: "riverswim-jdp", Agent: "ucbvi", Episodes: 100, Runs: runs(10)},
		&Curve{Group: "riverswim-ldp", Agent: "ucbvi", Episodes: 700, Runs: runs(20)})
	for _, e := range eps {
		r.Curves = append(r.Curves,
			&Curve{Group: "riverswim-jdp", Agent: "practical-jdp", Epsilon: e, Episodes: 100, Runs: runs(50 / e)},
			&Curve{Group: "riverswim-ldp", Agent: "practical-ldp", Epsilon: e, Episodes: 700, Runs: runs(500 / e)})
	}
	pc, err := r.privacyCostCurves()
	if err != nil {
		t.Fatal(err)
	}
	if len(pc) != 2 {
		t.Fatalf("%d curves, want JDP and LDP", len(pc))
	}
	for i, want := range []string{"JDP", "LDP"} {
		if !strings.HasPrefix(pc[i].Label, want) {
			t.Errorf("curve %d is %q, want %s", i, pc[i].Label, want)
		}
	}
	if !strings.HasSuffix(pc[0].Label, "K = 100") || !strings.HasSuffix(pc[1].Label, "K = 700") {
		t.Errorf("labels %q, %q do not state their K (100 and 700)", pc[0].Label, pc[1].Label)
	}
	if !slices.Equal(pc[1].X, eps) {
		t.Errorf("LDP ε = %v, want %v", pc[1].X, eps)
	}
	opts := r.privacyCostOptions()
	if !opts.LogX || !opts.LogY || !slices.Equal(opts.XTicks, eps) {
		t.Errorf("options %+v: want log axes and a tick at every ε of %v", opts, eps)
	}
	if strings.Contains(privacyCostYLabel, "log") {
		t.Errorf("y label %q marks the log scale itself: PlotCurves adds it", privacyCostYLabel)
	}
}
