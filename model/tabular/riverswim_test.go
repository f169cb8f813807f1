package tabular

import (
	"math"
	"testing"
)

// Golden values from the tabular spec §7.2 (computed exactly there).
func TestRiverSwimGolden(t *testing.T) {
	m, err := RiverSwim(20)
	if err != nil {
		t.Fatal(err)
	}
	v := m.Optimal()
	want := []float64{3.397264, 4.052651, 5.301868, 6.678367, 8.094000, 9.521445}
	for s, w := range want {
		if math.Abs(v.V[0][s]-w) > 1e-6 {
			t.Errorf("V*_1(s%d) = %.7f, want %.6f", s, v.V[0][s], w)
		}
	}
	ws0 := []float64{3.397264, 3.012293, 2.637425, 2.274865, 1.927224, 1.597555, 1.289358,
		1.006547, 0.753329, 0.533970, 0.352384, 0.211498, 0.112394, 0.053423, 0.030000, 0.025000,
		0.020000, 0.015000, 0.010000, 0.005000}
	for h, w := range ws0 {
		if math.Abs(v.V[h][0]-w) > 1e-6 {
			t.Errorf("V*_%d(s0) = %.7f, want %.6f", h+1, v.V[h][0], w)
		}
	}
	reg := NewRegret(m)
	fixed := func(a int) *Policy {
		p := NewDeterministic(6, 20)
		for h := range p.Act {
			for s := range p.Act[h] {
				p.Act[h][s] = a
			}
		}
		return p
	}
	if g := reg.Of(fixed(1)); math.Abs(g-0.000627) > 1e-6 {
		t.Errorf("always-right regret %.7f, want 0.000627", g)
	}
	if g := reg.Of(fixed(0)); math.Abs(g-3.297264) > 1e-6 {
		t.Errorf("always-left regret %.7f, want 3.297264", g)
	}
	unif := &Policy{Prob: make([][]float64, 20)}
	for h := range unif.Prob {
		unif.Prob[h] = []float64{.5, .5, .5, .5, .5, .5, .5, .5, .5, .5, .5, .5}
	}
	if g := reg.Of(unif); math.Abs(g-3.353475) > 1e-6 {
		t.Errorf("uniform regret %.7f, want 3.353475", g)
	}
}
