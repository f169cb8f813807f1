package accounting

import (
	"math"
	"strings"
	"testing"
)

func TestComposeSums(t *testing.T) {
	pure := []struct {
		in   []PureDP
		want float64
	}{
		{[]PureDP{{1}}, 1},
		{[]PureDP{{0.25}, {0.25}, {0.5}}, 1},
		{[]PureDP{{0.1}, {2}, {3.5}, {0.4}}, 6},
	}
	for _, tt := range pure {
		got, err := ComposePure(tt.in...)
		if err != nil || relErr(got.Epsilon, tt.want) > 1e-15 {
			t.Errorf("ComposePure(%v) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
	approx := []struct {
		in         []ApproxDP
		eps, delta float64
	}{
		{[]ApproxDP{{1, 1e-5}}, 1, 1e-5},
		{[]ApproxDP{{0.5, 1e-6}, {0.5, 2e-6}, {1, 7e-6}}, 2, 1e-5},
		{[]ApproxDP{{3, 0.4}, {3, 0.5}}, 6, 0.9},
	}
	for _, tt := range approx {
		got, err := ComposeApprox(tt.in...)
		if err != nil || relErr(got.Epsilon, tt.eps) > 1e-15 || relErr(got.Delta, tt.delta) > 1e-15 {
			t.Errorf("ComposeApprox(%v) = %v, %v; want (%v, %v)", tt.in, got, err, tt.eps, tt.delta)
		}
	}
	zcdp := []struct {
		in   []ZCDP
		want float64
	}{
		{[]ZCDP{{0.5}}, 0.5},
		{[]ZCDP{{0.125}, {0.125}, {0.25}}, 0.5},
		{[]ZCDP{{1}, {2}, {3}}, 6},
	}
	for _, tt := range zcdp {
		got, err := ComposeZCDP(tt.in...)
		if err != nil || relErr(got.Rho, tt.want) > 1e-15 {
			t.Errorf("ComposeZCDP(%v) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
}

func TestComposeApproxDeltaOverflow(t *testing.T) {
	tests := [][]ApproxDP{
		{{1, 0.5}, {1, 0.5}},
		{{1, 0.9}, {1, 0.2}},
	}
	for _, in := range tests {
		if _, err := ComposeApprox(in...); err == nil || !strings.Contains(err.Error(), "delta") {
			t.Errorf("ComposeApprox(%v) error = %v, want delta error", in, err)
		}
	}
	if _, err := AdvancedComposition(0.1, 0.1, 10, 0.5); err == nil || !strings.Contains(err.Error(), "delta") {
		t.Errorf("AdvancedComposition with total delta 1.5: error = %v", err)
	}
}

func TestAdvancedCompositionKnown(t *testing.T) {
	tests := []struct {
		eps0, delta0 float64
		k            int
		deltaPrime   float64
	}{
		{0.1, 1e-6, 100, 1e-5},
		{0.01, 0, 1000, 1e-6},
		{1, 1e-8, 1, 0.5},
		{0.5, 1e-9, 50, 1e-9},
	}
	for _, tt := range tests {
		k := float64(tt.k)
		wantEps := math.Sqrt(2*k*math.Log(1/tt.deltaPrime))*tt.eps0 + k*tt.eps0*(math.Exp(tt.eps0)-1)
		wantDelta := k*tt.delta0 + tt.deltaPrime
		got, err := AdvancedComposition(tt.eps0, tt.delta0, tt.k, tt.deltaPrime)
		if err != nil {
			t.Fatal(err)
		}
		if relErr(got.Epsilon, wantEps) > 1e-12 || relErr(got.Delta, wantDelta) > 1e-15 {
			t.Errorf("AdvancedComposition(%v,%v,%v,%v) = %v, want (%v, %v)", tt.eps0, tt.delta0, tt.k, tt.deltaPrime, got, wantEps, wantDelta)
		}
		kov, err := AdvancedCompositionKOV(tt.eps0, tt.delta0, tt.k, tt.deltaPrime)
		if err != nil {
			t.Fatal(err)
		}
		wantKOV := k*tt.eps0*(math.Exp(tt.eps0)-1)/(math.Exp(tt.eps0)+1) + tt.eps0*math.Sqrt(2*k*math.Log(1/tt.deltaPrime))
		wantKOVDelta := 1 - math.Pow(1-tt.delta0, k)*(1-tt.deltaPrime)
		if relErr(kov.Epsilon, wantKOV) > 1e-12 || relErr(kov.Delta, wantKOVDelta) > 1e-6 {
			t.Errorf("KOV = %v, want (%v, %v)", kov, wantKOV, wantKOVDelta)
		}
		// KOV is never worse than DRV, and justifies the seed-001 F.4 variant mε0² + ε0√(2m ln(1/δ′)).
		if kov.Epsilon > got.Epsilon || kov.Delta > got.Delta*(1+1e-12) {
			t.Errorf("KOV %v worse than DRV %v", kov, got)
		}
		f4 := k*tt.eps0*tt.eps0 + tt.eps0*math.Sqrt(2*k*math.Log(1/tt.deltaPrime))
		if kov.Epsilon > f4*(1+1e-15) {
			t.Errorf("KOV eps %v > seed-001 F.4 variant %v", kov.Epsilon, f4)
		}
	}
}

// Split then compose never exceeds the target and loses at most rounding.
func TestSplitThenCompose(t *testing.T) {
	ks := []int{1, 2, 3, 7, 10, 49, 100, 1000, 12345}
	targets := []ApproxDP{{0.1, 1e-5}, {0.3, 0.3}, {1, 1e-9}, {7, 0.07}, {1e-7, 1e-300}}
	for _, tgt := range targets {
		for _, k := range ks {
			ps, err := PureDP{tgt.Epsilon}.Split(k)
			if err != nil {
				t.Fatal(err)
			}
			as, err := tgt.Split(k)
			if err != nil {
				t.Fatal(err)
			}
			zs, err := ZCDP{tgt.Epsilon}.Split(k)
			if err != nil {
				t.Fatal(err)
			}
			pp := make([]PureDP, k)
			aa := make([]ApproxDP, k)
			zz := make([]ZCDP, k)
			for i := range k {
				pp[i], aa[i], zz[i] = ps, as, zs
			}
			pc, err1 := ComposePure(pp...)
			ac, err2 := ComposeApprox(aa...)
			zc, err3 := ComposeZCDP(zz...)
			if err1 != nil || err2 != nil || err3 != nil {
				t.Fatal(err1, err2, err3)
			}
			for _, c := range []struct {
				what      string
				got, want float64
			}{
				{"pure eps", pc.Epsilon, tgt.Epsilon},
				{"approx eps", ac.Epsilon, tgt.Epsilon},
				{"approx delta", ac.Delta, tgt.Delta},
				{"zcdp rho", zc.Rho, tgt.Epsilon},
			} {
				if c.got > c.want || relErr(c.got, c.want) > 1e-12 {
					t.Errorf("target %v k=%d %s: composed %v vs target %v", tgt, k, c.what, c.got, c.want)
				}
			}
			if relErr(ps.Epsilon, tgt.Epsilon/float64(k)) > 1e-12 {
				t.Errorf("share %v far from eps/k", ps.Epsilon)
			}
		}
	}
}

// The seed-001 recipe and the exact bisection both compose back to at most the target; the
// exact split hits the target ε within 1e-9 and is never stingier than the recipe.
func TestAdvancedCompositionSplit(t *testing.T) {
	epss := []float64{1e-4, 0.01, 0.1, 0.5, 0.9, 0.999}
	deltas := []float64{1e-12, 1e-9, 1e-5, 0.01, 0.3}
	ks := []int{1, 2, 3, 10, 64, 1000, 100000}
	for _, eps := range epss {
		for _, delta := range deltas {
			for _, k := range ks {
				tgt := ApproxDP{eps, delta}
				e0, d0, err := AdvancedCompositionSplit(tgt, k)
				if err != nil {
					t.Fatalf("split %v k=%d: %v", tgt, k, err)
				}
				wantE0 := eps / math.Sqrt(8*float64(k)*math.Log(2/delta))
				if relErr(e0, wantE0) > 1e-12 || relErr(d0, delta/(2*float64(k))) > 1e-12 {
					t.Errorf("split %v k=%d = (%v, %v), want (%v, %v)", tgt, k, e0, d0, wantE0, delta/(2*float64(k)))
				}
				got, err := AdvancedComposition(e0, d0, k, delta/2)
				if err != nil {
					t.Fatal(err)
				}
				if got.Epsilon > eps || got.Delta > delta {
					t.Errorf("recipe %v k=%d composes to %v", tgt, k, got)
				}

				x0, xd0, err := AdvancedCompositionSplitExact(tgt, k)
				if err != nil {
					t.Fatalf("exact split %v k=%d: %v", tgt, k, err)
				}
				gotX, err := AdvancedComposition(x0, xd0, k, delta/2)
				if err != nil {
					t.Fatal(err)
				}
				if gotX.Epsilon > eps || gotX.Delta > delta {
					t.Errorf("exact split %v k=%d composes to %v", tgt, k, gotX)
				}
				if relErr(gotX.Epsilon, eps) > 1e-9 {
					t.Errorf("exact split %v k=%d composes to eps %v, want %v within 1e-9", tgt, k, gotX.Epsilon, eps)
				}
				if x0 < e0 {
					t.Errorf("exact eps0 %v < recipe eps0 %v", x0, e0)
				}
			}
		}
	}
}

func TestAdvancedCompositionSplitLargeEpsilon(t *testing.T) {
	tests := []ApproxDP{{1, 1e-5}, {2, 1e-6}, {20, 1e-3}, {500, 0.5}}
	for _, tgt := range tests {
		if _, _, err := AdvancedCompositionSplit(tgt, 10); err == nil || !strings.Contains(err.Error(), "epsilon of target") {
			t.Errorf("recipe with %v: error = %v, want epsilon error", tgt, err)
		}
		for _, k := range []int{1, 10, 1000} {
			e0, d0, err := AdvancedCompositionSplitExact(tgt, k)
			if err != nil {
				t.Fatalf("exact %v k=%d: %v", tgt, k, err)
			}
			got, err := AdvancedComposition(e0, d0, k, tgt.Delta/2)
			if err != nil {
				t.Fatal(err)
			}
			if got.Epsilon > tgt.Epsilon || got.Delta > tgt.Delta || relErr(got.Epsilon, tgt.Epsilon) > 1e-9 {
				t.Errorf("exact %v k=%d composes to %v", tgt, k, got)
			}
		}
	}
}
