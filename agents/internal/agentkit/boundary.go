package agentkit

import (
	"fmt"
	"math"

	"github.com/dprl/dprl/agents/protocol"
	"github.com/dprl/dprl/privacy/noise"
)

// The report boundary of an LDP curator (issue 25 item 2). A locally private report is an
// honest contribution (bounded by the agent's clipping) plus the user's own noise, so each of
// its numbers lies, except with a negligible probability, within a public bound: the largest
// honest contribution to that number plus many noise scales. A curator refuses a report with
// a number beyond the bound, so that no report can make a later statistic non-finite (1e308
// added twice is +Inf) or push the planner out of its domain. The check reads only the
// privatised report and public parameters: it is post-processing of the user's LDP output
// and costs no privacy; an honest report is refused with probability below 1e-30.
const (
	// GaussianTailSigmas is the number of standard deviations of Gaussian noise a report
	// number may lie beyond its largest honest value. The continuous Gaussian has
	// P(|Z| > 24σ) = erfc(24/√2) ≈ 1.1e-127, and the discrete Gaussian a Secure source draws
	// (on a grid γ ≤ σ, data rounded to it: at most one more σ) has P(|Y| ≥ t) ≤ 2e^{−t²/2σ²},
	// ≈ 2e^{−264} ≈ 3e-115 at t = 23σ; a union bound over a report of at most 10¹² numbers
	// leaves < 1e-100 ≪ 1e-30.
	GaussianTailSigmas = 24
	// LaplaceTailScales is the same for Laplace noise of scale b: P(|L| > 120b) = e^{−120} ≈
	// 7.7e-53 for the continuous Laplace and at most that (up to the grid step, < b) for a
	// Secure source's discrete one; over 10¹² numbers < 1e-40 ≪ 1e-30.
	LaplaceTailScales = 120
)

// GaussianReportBound is the bound of a report number whose honest value has absolute value
// at most honest and to which the user added Gaussian noise of standard deviation σ.
func GaussianReportBound(honest, sigma float64) float64 {
	return honest + GaussianTailSigmas*sigma
}

// LaplaceReportBound is the bound of a report number whose honest value has absolute value at
// most honest and to which the user added Laplace noise of scale b.
func LaplaceReportBound(honest, b float64) float64 {
	return honest + LaplaceTailScales*b
}

// CheckBlocks refuses blocks (a Privatized report's, already of the header's lengths and
// finite) with a number whose absolute value exceeds bound[i] for its block i: a
// *protocol.FieldError naming blocks[i][j]. A block without a bound is refused.
func CheckBlocks(blocks [][]float64, bound []float64) error {
	for i, b := range blocks {
		lim := math.NaN()
		if i < len(bound) {
			lim = bound[i]
		}
		for j, x := range b {
			if !(math.Abs(x) <= lim) {
				return &protocol.FieldError{Field: fmt.Sprintf("blocks[%d][%d]", i, j),
					Msg: fmt.Sprintf("%g is beyond %g, the largest value an honest privatised report takes except with probability < 1e-30 (its largest contribution plus the noise's tail); refused", x, lim)}
			}
		}
	}
	return nil
}

// CalibratedBound is the bound of a report number whose honest value has absolute value at
// most honest and to which the user added noise of calibration c (times mult ≤ 1): Laplace or
// Gaussian as above, honest alone without noise.
func CalibratedBound(honest float64, c noise.Calibration) float64 {
	switch c.Kind {
	case noise.Laplace:
		return LaplaceReportBound(honest, c.Scale)
	case noise.Gaussian:
		return GaussianReportBound(honest, c.Scale)
	}
	return honest
}
