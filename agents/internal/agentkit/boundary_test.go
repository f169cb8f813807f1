package agentkit

import (
	"errors"
	"math"
	"testing"

	"github.com/dprl/dprl/agents/protocol"
	"github.com/dprl/dprl/privacy/noise"
)

// TestReportBoundTails: an honest report exceeds the bounds with probability < 1e-30, by a
// union bound over 10¹² numbers: the continuous Gaussian's and Laplace's tails, and the
// discrete Gaussian's sub-Gaussian tail 2e^{−t²/2σ²} one σ closer (grid rounding).
func TestReportBoundTails(t *testing.T) {
	const numbers = 1e12
	if p := numbers * math.Erfc(GaussianTailSigmas/math.Sqrt2); !(p < 1e-30) {
		t.Errorf("Gaussian: %d σ: P ≤ %g, want < 1e-30", GaussianTailSigmas, p)
	}
	if p := numbers * 2 * math.Exp(-float64((GaussianTailSigmas-1)*(GaussianTailSigmas-1))/2); !(p < 1e-30) {
		t.Errorf("discrete Gaussian: %d σ: P ≤ %g, want < 1e-30", GaussianTailSigmas, p)
	}
	if p := numbers * math.Exp(-(LaplaceTailScales - 1)); !(p < 1e-30) {
		t.Errorf("Laplace: %d b: P ≤ %g, want < 1e-30", LaplaceTailScales, p)
	}
	if got := CalibratedBound(2, noise.GaussianNoise(3)); got != 2+GaussianTailSigmas*3 {
		t.Errorf("Gaussian bound %g", got)
	}
	if got := CalibratedBound(2, noise.LaplaceNoise(3)); got != 2+LaplaceTailScales*3 {
		t.Errorf("Laplace bound %g", got)
	}
	if got := CalibratedBound(2, noise.Calibration{}); got != 2 {
		t.Errorf("no-noise bound %g", got)
	}
}

func TestCheckBlocks(t *testing.T) {
	for _, c := range []struct {
		blocks [][]float64
		bound  []float64
		field  string
	}{
		{[][]float64{{1, -5}, {10}}, []float64{5, 10}, ""},
		{[][]float64{{1, -5.5}, {10}}, []float64{5, 10}, "blocks[0][1]"},
		{[][]float64{{1}, {1e308}}, []float64{5, 10}, "blocks[1][0]"},
		{[][]float64{{1}, {1}}, []float64{5}, "blocks[1][0]"},
		{[][]float64{{0}}, []float64{math.NaN()}, "blocks[0][0]"},
	} {
		err := CheckBlocks(c.blocks, c.bound)
		var fe *protocol.FieldError
		if c.field == "" && err != nil || c.field != "" && (!errors.As(err, &fe) || fe.Field != c.field) {
			t.Errorf("%v within %v: got %v, want field %q", c.blocks, c.bound, err, c.field)
		}
	}
}
