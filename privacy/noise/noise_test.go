package noise

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/dprl/dprl/privacy/stattest"
)

func laplaceCDF(b float64) func(float64) float64 {
	return func(x float64) float64 {
		if x < 0 {
			return 0.5 * math.Exp(x/b)
		}
		return 1 - 0.5*math.Exp(-x/b)
	}
}

func normalCDF(s float64) func(float64) float64 {
	return func(x float64) float64 { return 0.5 * math.Erfc(-x/(s*math.Sqrt2)) }
}

// checkMoments asserts mean, variance and (Laplace) E|Y| within 5 standard errors, and a KS
// p-value above 1e-4, for n draws of a zero-mean distribution with the given variance and
// fourth moment.
func checkMoments(t *testing.T, name string, ys []float64, variance, fourth float64, absMean float64, cdf func(float64) float64) {
	t.Helper()
	n := float64(len(ys))
	var s, s2, sa float64
	for _, y := range ys {
		s += y
		s2 += y * y
		sa += math.Abs(y)
	}
	mean := s / n
	if math.Abs(mean) > 5*math.Sqrt(variance/n) {
		t.Errorf("%s: mean %g, want 0 ± %g", name, mean, 5*math.Sqrt(variance/n))
	}
	v := s2 / n
	if sd := math.Sqrt((fourth - variance*variance) / n); math.Abs(v-variance) > 5*sd {
		t.Errorf("%s: variance %g, want %g ± %g", name, v, variance, 5*sd)
	}
	if absMean > 0 {
		if am := sa / n; math.Abs(am-absMean) > 5*math.Sqrt((variance-absMean*absMean)/n) {
			t.Errorf("%s: E|Y| = %g, want %g", name, am, absMean)
		}
	}
	if _, p := stattest.KSOneSample(ys, cdf); p < 1e-4 {
		t.Errorf("%s: KS test rejects (p = %g)", name, p)
	}
}

func draws(n int, f func() float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = f()
	}
	return out
}

func TestSeededLaplaceGaussian(t *testing.T) {
	const n = 400000
	s := NewSeeded(rand.New(rand.NewPCG(1, 2)))
	for _, b := range []float64{0.5, 3} {
		ys := draws(n, func() float64 { return s.AddLaplace(0, b) })
		checkMoments(t, "seeded laplace", ys, 2*b*b, 24*b*b*b*b, b, laplaceCDF(b))
	}
	for _, sg := range []float64{0.5, 3} {
		ys := draws(n, func() float64 { return s.AddGaussian(0, sg) })
		checkMoments(t, "seeded gaussian", ys, sg*sg, 3*sg*sg*sg*sg, 0, normalCDF(sg))
	}
	if s.AddLaplace(2, 0) != 2 || s.AddGaussian(2, 0) != 2 || s.Secure() {
		t.Error("zero scale must return x; Seeded is not secure")
	}
}

// TestSeededBrokenDetected: the moment checks catch a sampler with the wrong scale (the
// deliberately broken variant: b·(E1−E2)/2, i.e. Laplace noise halved).
func TestSeededBrokenDetected(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	ys := draws(200000, func() float64 { return (r.ExpFloat64() - r.ExpFloat64()) / 2 })
	n := float64(len(ys))
	v := 0.0
	for _, y := range ys {
		v += y * y
	}
	v /= n
	if math.Abs(v-2) <= 5*math.Sqrt(22/n) {
		t.Fatal("variance check would not catch halved Laplace noise")
	}
	if _, p := stattest.KSOneSample(ys, laplaceCDF(1)); p > 1e-6 {
		t.Fatalf("KS would not catch halved Laplace noise: p = %g", p)
	}
}

func TestSecureSamplers(t *testing.T) {
	const n = 60000
	s := NewSecureFromKey([32]byte{1})
	if !s.Secure() {
		t.Fatal("Secure() = false")
	}
	for _, b := range []float64{0.7, 5} {
		g := LaplaceGranularity(b)
		if g <= 0 || g > b/math.Ldexp(1, laplaceGrain-1) || math.Log2(g) != math.Floor(math.Log2(g)) {
			t.Fatalf("granularity %g for b=%g is not a small power of two", g, b)
		}
		ys := draws(n, func() float64 { return s.AddLaplace(0.3, b) - 0.3 })
		checkMoments(t, "secure laplace", ys, 2*b*b, 24*b*b*b*b, b, laplaceCDF(b))
		for i := 0; i < 1000; i++ {
			y := s.AddLaplace(0.3, b)
			if q := y / g; q != math.Trunc(q) {
				t.Fatalf("output %g is not on the grid %g", y, g)
			}
		}
	}
	for _, sg := range []float64{0.7, 5} {
		g := GaussianGranularity(sg)
		ys := draws(n, func() float64 { return s.AddGaussian(0, sg) })
		checkMoments(t, "secure gaussian", ys, sg*sg, 3*sg*sg*sg*sg, 0, normalCDF(sg))
		for _, y := range ys[:1000] {
			if q := y / g; q != math.Trunc(q) {
				t.Fatalf("output %g is not on the grid %g", y, g)
			}
		}
	}
	// Inputs that differ by less than the grid produce outputs on the same grid.
	b := 1.0
	g := LaplaceGranularity(b)
	x1, x2 := 0.1, 0.1+g/8
	y1, y2 := s.AddLaplace(x1, b), s.AddLaplace(x2, b)
	if y1/g != math.Trunc(y1/g) || y2/g != math.Trunc(y2/g) {
		t.Fatal("outputs off grid")
	}
	for _, bad := range []float64{-1, math.NaN(), math.Inf(1)} {
		if !math.IsNaN(s.AddLaplace(0, bad)) || !math.IsNaN(s.AddGaussian(0, bad)) {
			t.Errorf("scale %g accepted", bad)
		}
	}
	if !math.IsNaN(s.AddLaplace(math.Inf(1), 1)) {
		t.Error("infinite statistic accepted")
	}
}

func TestSecureFromOS(t *testing.T) {
	s, err := NewSecure()
	if err != nil {
		t.Fatal(err)
	}
	a, b := s.AddLaplace(0, 1), s.AddLaplace(0, 1)
	if a == b {
		t.Error("two secure draws are equal")
	}
}

func TestCalibration(t *testing.T) {
	for _, c := range []Calibration{LaplaceNoise(-1), GaussianNoise(math.NaN()), GaussianNoise(math.Inf(1)), {Kind: Kind(9)}} {
		if c.Validate() == nil {
			t.Errorf("%v validated", c)
		}
	}
	if LaplaceNoise(2).Variance() != 8 || GaussianNoise(2).Variance() != 4 || (Calibration{}).Variance() != 0 {
		t.Error("variance")
	}
	if LaplaceNoise(2).String() != "laplace(b=2)" {
		t.Error(LaplaceNoise(2).String())
	}
	x := []float64{1, 2, 3}
	LaplaceNoise(1).AddVec(x, NewSeeded(rand.New(rand.NewPCG(1, 1))))
	if x[0] == 1 || x[1] == 2 || x[2] == 3 {
		t.Error("AddVec left an entry un-noised")
	}
}

// TestSymNoise: exact symmetry, and per-kind diagonal/off-diagonal variances (privacy spec §3.3).
func TestSymNoise(t *testing.T) {
	const d, n = 4, 40000
	src := NewSeeded(rand.New(rand.NewPCG(5, 6)))
	for _, c := range []struct {
		kind      SymKind
		diag, off float64
	}{{Mirror, 1, 1}, {SumSqrt2, 2, 1}, {Avg, 1, 0.5}} {
		var sd, so float64
		a := make([]float64, d*d)
		for i := 0; i < n; i++ {
			clear(a)
			if err := GaussianNoise(1).AddSym(a, d, c.kind, src); err != nil {
				t.Fatal(err)
			}
			for p := 0; p < d; p++ {
				for q := 0; q < d; q++ {
					if a[p*d+q] != a[q*d+p] {
						t.Fatal("not symmetric")
					}
				}
			}
			sd += a[0] * a[0]
			so += a[1] * a[1]
		}
		sd /= n
		so /= n
		if math.Abs(sd-c.diag) > 5*c.diag*math.Sqrt(2.0/n) || math.Abs(so-c.off) > 5*c.off*math.Sqrt(2.0/n) {
			t.Errorf("%s: Var(diag)=%.3f Var(off)=%.3f, want %g, %g", c.kind, sd, so, c.diag, c.off)
		}
	}
	if err := GaussianNoise(1).AddSym(make([]float64, 5), 2, Mirror, src); err == nil {
		t.Error("wrong length accepted")
	}
	if err := GaussianNoise(1).AddSym([]float64{0, 1, 2, 0}, 2, Mirror, src); err == nil {
		t.Error("non-symmetric input accepted")
	}
	for i := 0; i < 5; i++ {
		for j := i; j < 5; j++ {
			if k := PackedIndex(5, i, j); k < 0 || k >= PackedLen(5) || PackedIndex(5, j, i) != k {
				t.Fatal("PackedIndex")
			}
		}
	}
}

// TestAddLaplaceVecMatchesScalar: the vector path draws exactly what the scalar path draws.
func TestAddLaplaceVecMatchesScalar(t *testing.T) {
	a := NewSeeded(rand.New(rand.NewPCG(9, 9)))
	b := NewSeeded(rand.New(rand.NewPCG(9, 9)))
	x := make([]float64, 300)
	a.AddLaplaceVec(x, 2)
	for i := range x {
		if y := b.AddLaplace(0, 2); y != x[i] {
			t.Fatalf("entry %d: vector %g, scalar %g", i, x[i], y)
		}
	}
}

// TestKindNames: the enumerations' String methods give their names, and "Type(v)" for a value
// out of range.
func TestKindNames(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{None.String(), "none"}, {Laplace.String(), "laplace"}, {Gaussian.String(), "gaussian"}, {Kind(9).String(), "Kind(9)"},
		{Mirror.String(), "mirror"}, {SumSqrt2.String(), "sumsqrt2"}, {Avg.String(), "avg"}, {SymKind(-1).String(), "SymKind(-1)"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}
