package accounting

import (
	"math"
	"strings"
	"testing"
)

// Values that every "finite and > 0" parameter must reject.
func badPositive() []float64 { return []float64{math.NaN(), math.Inf(1), math.Inf(-1), 0, -1, -1e-300} }

// Values that every "in (0, 1)" parameter must reject.
func badUnit() []float64 { return []float64{math.NaN(), math.Inf(1), math.Inf(-1), 0, -1, 1, 1.5} }

// Values that "in (0, 1)" epsilons (recipes valid only for ε < 1) must reject.
func badEpsBelowOne() []float64 { return []float64{math.NaN(), math.Inf(1), math.Inf(-1), 0, -1, 1, 2} }

// Values that delta0 (allowed in [0, 1)) must reject.
func badDelta0() []float64 { return []float64{math.NaN(), math.Inf(1), math.Inf(-1), -1, 1, 1.5} }

func errOf[T any](_ T, err error) error { return err }

func errOf3[T, U any](_ T, _ U, err error) error { return err }

func TestRejectsBadFloats(t *testing.T) {
	tests := []struct {
		name  string
		param string // must appear in the error message
		bad   []float64
		call  func(v float64) error
	}{
		{"NewPureDP", "epsilon", badPositive(), func(v float64) error { return errOf(NewPureDP(v)) }},
		{"NewApproxDP/eps", "epsilon", badPositive(), func(v float64) error { return errOf(NewApproxDP(v, 1e-5)) }},
		{"NewApproxDP/delta", "delta", badUnit(), func(v float64) error { return errOf(NewApproxDP(1, v)) }},
		{"NewZCDP", "rho", badPositive(), func(v float64) error { return errOf(NewZCDP(v)) }},
		{"PureDP.Validate", "epsilon", badPositive(), func(v float64) error { return PureDP{v}.Validate() }},
		{"ApproxDP.Validate", "delta", badUnit(), func(v float64) error { return ApproxDP{1, v}.Validate() }},
		{"ZCDP.Validate", "rho", badPositive(), func(v float64) error { return ZCDP{v}.Validate() }},

		{"ZCDP.ToApproxDP/rho", "rho", badPositive(), func(v float64) error { return errOf(ZCDP{v}.ToApproxDP(1e-5)) }},
		{"ZCDP.ToApproxDP/delta", "delta", badUnit(), func(v float64) error { return errOf(ZCDP{0.5}.ToApproxDP(v)) }},
		{"ZCDPFor/eps", "epsilon of target", badPositive(), func(v float64) error { return errOf(ZCDPFor(ApproxDP{v, 1e-5})) }},
		{"ZCDPFor/delta", "delta of target", badUnit(), func(v float64) error { return errOf(ZCDPFor(ApproxDP{1, v})) }},
		{"PureDP.ToApproxDP/eps", "epsilon", badPositive(), func(v float64) error { return errOf(PureDP{v}.ToApproxDP(1e-5)) }},
		{"PureDP.ToApproxDP/delta", "delta", badUnit(), func(v float64) error { return errOf(PureDP{1}.ToApproxDP(v)) }},
		{"PureDP.ToZCDP", "rho", badPositive(), func(v float64) error { return errOf(NewZCDP(PureDP{v}.ToZCDP().Rho)) }},

		{"PureDP.Split", "epsilon", badPositive(), func(v float64) error { return errOf(PureDP{v}.Split(3)) }},
		{"ApproxDP.Split/eps", "epsilon", badPositive(), func(v float64) error { return errOf(ApproxDP{v, 1e-5}.Split(3)) }},
		{"ApproxDP.Split/delta", "delta", badUnit(), func(v float64) error { return errOf(ApproxDP{1, v}.Split(3)) }},
		{"ZCDP.Split", "rho", badPositive(), func(v float64) error { return errOf(ZCDP{v}.Split(3)) }},

		{"ComposePure", "epsilon of guarantee 1", badPositive(), func(v float64) error { return errOf(ComposePure(PureDP{1}, PureDP{v})) }},
		{"ComposeApprox/eps", "epsilon of guarantee 1", badPositive(), func(v float64) error {
			return errOf(ComposeApprox(ApproxDP{1, 1e-6}, ApproxDP{v, 1e-6}))
		}},
		{"ComposeApprox/delta", "delta of guarantee 0", badUnit(), func(v float64) error {
			return errOf(ComposeApprox(ApproxDP{1, v}, ApproxDP{1, 1e-6}))
		}},
		{"ComposeZCDP", "rho of guarantee 2", badPositive(), func(v float64) error { return errOf(ComposeZCDP(ZCDP{1}, ZCDP{1}, ZCDP{v})) }},

		{"AdvancedComposition/eps0", "eps0", badPositive(), func(v float64) error { return errOf(AdvancedComposition(v, 1e-6, 10, 1e-5)) }},
		{"AdvancedComposition/delta0", "delta0", badDelta0(),
			func(v float64) error { return errOf(AdvancedComposition(0.1, v, 10, 1e-5)) }},
		{"AdvancedComposition/deltaPrime", "deltaPrime", badUnit(), func(v float64) error { return errOf(AdvancedComposition(0.1, 1e-6, 10, v)) }},
		{"AdvancedCompositionKOV/eps0", "eps0", badPositive(), func(v float64) error { return errOf(AdvancedCompositionKOV(v, 1e-6, 10, 1e-5)) }},
		{"AdvancedCompositionKOV/delta0", "delta0", badDelta0(),
			func(v float64) error { return errOf(AdvancedCompositionKOV(0.1, v, 10, 1e-5)) }},
		{"AdvancedCompositionKOV/deltaPrime", "deltaPrime", badUnit(), func(v float64) error { return errOf(AdvancedCompositionKOV(0.1, 1e-6, 10, v)) }},
		{"AdvancedCompositionSplit/eps", "epsilon of target", badEpsBelowOne(), func(v float64) error {
			return errOf3(AdvancedCompositionSplit(ApproxDP{v, 1e-5}, 10))
		}},
		{"AdvancedCompositionSplit/delta", "delta of target", badUnit(), func(v float64) error {
			return errOf3(AdvancedCompositionSplit(ApproxDP{0.5, v}, 10))
		}},
		{"AdvancedCompositionSplitExact/eps", "epsilon of target", badPositive(), func(v float64) error {
			return errOf3(AdvancedCompositionSplitExact(ApproxDP{v, 1e-5}, 10))
		}},
		{"AdvancedCompositionSplitExact/delta", "delta of target", badUnit(), func(v float64) error {
			return errOf3(AdvancedCompositionSplitExact(ApproxDP{0.5, v}, 10))
		}},

		{"LaplaceScale/sens1", "sens1", badPositive(), func(v float64) error { return errOf(LaplaceScale(v, 1)) }},
		{"LaplaceScale/eps", "epsilon", badPositive(), func(v float64) error { return errOf(LaplaceScale(1, v)) }},
		{"GaussSigmaZCDP/sens2", "sens2", badPositive(), func(v float64) error { return errOf(GaussSigmaZCDP(v, 1)) }},
		{"GaussSigmaZCDP/rho", "rho", badPositive(), func(v float64) error { return errOf(GaussSigmaZCDP(1, v)) }},
		{"GaussSigmaClassic/sens2", "sens2", badPositive(), func(v float64) error { return errOf(GaussSigmaClassic(v, 0.5, 1e-5)) }},
		{"GaussSigmaClassic/eps", "epsilon", badEpsBelowOne(), func(v float64) error { return errOf(GaussSigmaClassic(1, v, 1e-5)) }},
		{"GaussSigmaClassic/delta", "delta", badUnit(), func(v float64) error { return errOf(GaussSigmaClassic(1, 0.5, v)) }},
		{"GaussSigmaSeed001/sens2", "sens2", badPositive(), func(v float64) error { return errOf(GaussSigmaSeed001(v, 0.5, 1e-5)) }},
		{"GaussSigmaSeed001/eps", "epsilon", badEpsBelowOne(), func(v float64) error { return errOf(GaussSigmaSeed001(1, v, 1e-5)) }},
		{"GaussSigmaSeed001/delta", "delta", badUnit(), func(v float64) error { return errOf(GaussSigmaSeed001(1, 0.5, v)) }},

		{"LaplaceSumUnionBound/b", "b", badPositive(), func(v float64) error { return errOf(LaplaceSumUnionBound(v, 4, 0.01)) }},
		{"LaplaceSumUnionBound/beta", "beta", badUnit(), func(v float64) error { return errOf(LaplaceSumUnionBound(1, 4, v)) }},
		{"LaplaceSumChanBound/b", "b", badPositive(), func(v float64) error { return errOf(LaplaceSumChanBound(v, 4, 0.01)) }},
		{"LaplaceSumChanBound/beta", "beta", badUnit(), func(v float64) error { return errOf(LaplaceSumChanBound(1, 4, v)) }},
		{"GaussScalarBound/sigma", "sigma", badPositive(), func(v float64) error { return errOf(GaussScalarBound(v, 4, 0.01)) }},
		{"GaussScalarBound/beta", "beta", badUnit(), func(v float64) error { return errOf(GaussScalarBound(1, 4, v)) }},
		{"GaussVecNormBound/sigma", "sigma", badPositive(), func(v float64) error { return errOf(GaussVecNormBound(v, 4, 3, 0.01)) }},
		{"GaussVecNormBound/beta", "beta", badUnit(), func(v float64) error { return errOf(GaussVecNormBound(1, 4, 3, v)) }},
		{"SymGaussOpNormBound/sigma", "sigma", badPositive(), func(v float64) error { return errOf(SymGaussOpNormBound(v, 4, 3, 0.01)) }},
		{"SymGaussOpNormBound/beta", "beta", badUnit(), func(v float64) error { return errOf(SymGaussOpNormBound(1, 4, 3, v)) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, v := range tt.bad {
				err := tt.call(v)
				if err == nil {
					t.Errorf("%s accepted %s = %v", tt.name, tt.param, v)
					continue
				}
				msg := err.Error()
				if !strings.HasPrefix(msg, "accounting: ") || !strings.Contains(msg, tt.param) {
					t.Errorf("%s(%v): error %q does not name %q", tt.name, v, msg, tt.param)
				}
			}
		})
	}
}

func TestRejectsBadCounts(t *testing.T) {
	tests := []struct {
		name  string
		param string
		call  func(k int) error
	}{
		{"PureDP.Split", "k", func(k int) error { return errOf(PureDP{1}.Split(k)) }},
		{"ApproxDP.Split", "k", func(k int) error { return errOf(ApproxDP{1, 1e-5}.Split(k)) }},
		{"ZCDP.Split", "k", func(k int) error { return errOf(ZCDP{1}.Split(k)) }},
		{"AdvancedComposition", "k", func(k int) error { return errOf(AdvancedComposition(0.1, 1e-6, k, 1e-5)) }},
		{"AdvancedCompositionKOV", "k", func(k int) error { return errOf(AdvancedCompositionKOV(0.1, 1e-6, k, 1e-5)) }},
		{"AdvancedCompositionSplit", "k", func(k int) error { return errOf3(AdvancedCompositionSplit(ApproxDP{0.5, 1e-5}, k)) }},
		{"AdvancedCompositionSplitExact", "k", func(k int) error { return errOf3(AdvancedCompositionSplitExact(ApproxDP{0.5, 1e-5}, k)) }},
		{"LaplaceSumUnionBound", "c", func(k int) error { return errOf(LaplaceSumUnionBound(1, k, 0.01)) }},
		{"LaplaceSumChanBound", "c", func(k int) error { return errOf(LaplaceSumChanBound(1, k, 0.01)) }},
		{"GaussScalarBound", "c", func(k int) error { return errOf(GaussScalarBound(1, k, 0.01)) }},
		{"GaussVecNormBound/c", "c", func(k int) error { return errOf(GaussVecNormBound(1, k, 3, 0.01)) }},
		{"GaussVecNormBound/dim", "dim", func(k int) error { return errOf(GaussVecNormBound(1, 3, k, 0.01)) }},
		{"SymGaussOpNormBound/c", "c", func(k int) error { return errOf(SymGaussOpNormBound(1, k, 3, 0.01)) }},
		{"SymGaussOpNormBound/dim", "dim", func(k int) error { return errOf(SymGaussOpNormBound(1, 3, k, 0.01)) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, k := range []int{0, -1, math.MinInt} {
				err := tt.call(k)
				if err == nil {
					t.Errorf("%s accepted %s = %d", tt.name, tt.param, k)
					continue
				}
				if want := "accounting: " + tt.param + " must be >= 1"; !strings.Contains(err.Error(), want) {
					t.Errorf("%s(%d): error %q, want it to contain %q", tt.name, k, err, want)
				}
			}
		})
	}
}

func TestRejectsEmptyComposition(t *testing.T) {
	tests := []struct {
		name string
		err  error
	}{
		{"ComposePure", errOf(ComposePure())},
		{"ComposeApprox", errOf(ComposeApprox())},
		{"ComposeZCDP", errOf(ComposeZCDP())},
	}
	for _, tt := range tests {
		if tt.err == nil || !strings.Contains(tt.err.Error(), "at least 1 guarantee") {
			t.Errorf("%s(): error = %v", tt.name, tt.err)
		}
	}
}

func TestExactErrorMessage(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{errOf(NewPureDP(-1)), "accounting: epsilon must be finite and > 0, got -1"},
		{errOf(NewApproxDP(1, 1)), "accounting: delta must be in (0, 1), got 1"},
		{errOf(NewZCDP(math.NaN())), "accounting: rho must be finite and > 0, got NaN"},
		{errOf(NewZCDP(math.Inf(1))), "accounting: rho must be finite and > 0, got +Inf"},
		{errOf(PureDP{1}.Split(0)), "accounting: k must be >= 1, got 0"},
	}
	for _, tt := range tests {
		if tt.err == nil || tt.err.Error() != tt.want {
			t.Errorf("error = %v, want %q", tt.err, tt.want)
		}
	}
}

// Accountant functions returning a bare float64 signal invalid input with NaN.
func TestAccountantNaN(t *testing.T) {
	tests := []struct {
		name string
		f    func(v float64) float64
		bad  []float64
		good float64
	}{
		{"LaplaceEpsilon/sens1", func(v float64) float64 { return LaplaceEpsilon(v, 1) }, badPositive(), 1},
		{"LaplaceEpsilon/b", func(v float64) float64 { return LaplaceEpsilon(1, v) }, badPositive(), 1},
		{"GaussianRho/sens2", func(v float64) float64 { return GaussianRho(v, 1) }, badPositive(), 1},
		{"GaussianRho/sigma", func(v float64) float64 { return GaussianRho(1, v) }, badPositive(), 1},
		{"GaussianExactDelta/mu", func(v float64) float64 { return GaussianExactDelta(v, 1) }, badPositive(), 1},
		{"GaussianExactDelta/eps", func(v float64) float64 { return GaussianExactDelta(1, v) }, []float64{math.NaN(), math.Inf(1), math.Inf(-1), -1}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, v := range tt.bad {
				if got := tt.f(v); !math.IsNaN(got) {
					t.Errorf("%s(%v) = %v, want NaN", tt.name, v, got)
				}
			}
			if got := tt.f(tt.good); math.IsNaN(got) {
				t.Errorf("%s(%v) = NaN for valid input", tt.name, tt.good)
			}
		})
	}
}
