package counter_test

import (
	"math"
	"testing"

	"github.com/dprl/dprl/privacy/counter"
	"github.com/dprl/dprl/privacy/counter/countertest"
	"github.com/dprl/dprl/privacy/noise"
)

// Tests of where the Secure grid rounding is applied in every Gaussian counter (issue 18 (a);
// practical-privacy spec §7). The rounding must act on the data (each element, to the grid γ
// of the smallest per-coordinate std) and on the noise (a function of the draws alone), never
// on a data-dependent total: rounding x + noise instead of noise reintroduces the
// floating-point attack class of Mironov (2012), because the released noise then depends on
// the data's magnitude and low bits.

// secureCounters are the Gaussian counters of the package, built with a Secure source.
var secureCounters = []struct {
	name string
	f    func(counter.GaussianConfig, noise.Source) (counter.GaussianCounter, error)
	// exact: every release is the exact grid sum of the rounded elements plus noise that is a
	// function of the draws alone (Honaker's estimates are a float post-processing of the
	// noisy nodes, so only its first release is an exact grid value).
	exact bool
}{
	{"tree", func(c counter.GaussianConfig, s noise.Source) (counter.GaussianCounter, error) {
		return counter.NewGaussianTree(c, s)
	}, true},
	{"honaker", func(c counter.GaussianConfig, s noise.Source) (counter.GaussianCounter, error) {
		return counter.NewHonakerTree(c, s)
	}, false},
	{"sqrt", func(c counter.GaussianConfig, s noise.Source) (counter.GaussianCounter, error) {
		return counter.NewSqrtFactorization(c, s)
	}, true},
	{"blt-2", func(c counter.GaussianConfig, s noise.Source) (counter.GaussianCounter, error) {
		return counter.NewSqrtBLT(c, 2, s)
	}, true},
	{"blt-5", func(c counter.GaussianConfig, s noise.Source) (counter.GaussianCounter, error) {
		return counter.NewSqrtBLT(c, 5, s)
	}, true},
}

// secureRun feeds the elements x(t, k) to a fresh counter keyed with key and returns every
// release (countertest.SecureRun); an error fails the test.
func secureRun(t *testing.T, f countertest.Factory, cfg counter.GaussianConfig, key [32]byte, x func(t, k int) float64) [][]float64 {
	t.Helper()
	rel, err := countertest.SecureRun(f, cfg, key, x)
	if err != nil {
		t.Fatal(err)
	}
	return rel
}

func zeroData(int, int) float64 { return 0 }

func minScaleOf(cfg counter.GaussianConfig) float64 {
	m := 1.0
	for k, s := range cfg.CoordScale {
		if k == 0 || s < m {
			m = s
		}
	}
	return m
}

func onGrid(v, g float64) bool { q := v / g; return q == math.Trunc(q) && !math.IsInf(q, 0) }

// TestSecureNoiseIgnoresDataMagnitude runs two counters with the same key, one on zero
// elements and one on large-magnitude elements on the grid (sums up to 2^52·γ, still exact in
// float64), and requires, bit for bit, release_big(t) − Σ_{s≤t} x_big(s) = release_zero(t):
// the released noise must not depend on the data. A counter that rounds the data-dependent
// total round_γ(S(t) + noise) instead of S(t) + round_γ(noise) loses the noise's low bits to
// the magnitude of S(t) (at |S| ≈ 2^51·γ the float sum has resolution γ/2, so about a quarter
// of the coordinates round differently) and fails; so does one that leaves the noise off the
// grid (every release must be a multiple of γ).
func TestSecureNoiseIgnoresDataMagnitude(t *testing.T) {
	for _, cfg := range []counter.GaussianConfig{
		{Dim: 24, Capacity: 8, Sigma: 3},
		{Dim: 24, Capacity: 6, Sigma: 0.7, CoordScale: []float64{0.5, 2, 1, 0.5, 3, 1, 0.5, 2, 1, 0.5, 3, 1, 0.5, 2, 1, 0.5, 3, 1, 0.5, 2, 1, 0.5, 3, 1}},
	} {
		g := noise.GaussianGranularity(cfg.Sigma * minScaleOf(cfg))
		big := func(t, k int) float64 {
			switch k % 3 {
			case 0:
				return 0
			case 1: // the sum enters [2^51, 2^52)·γ at once and stays there
				if t == 0 {
					return math.Ldexp(g, 51)
				}
				return g * float64((t*k)%5)
			}
			if t == 0 {
				return -math.Ldexp(g, 51) - math.Ldexp(g, 49)
			}
			return -g * float64(t+k%7)
		}
		for ci, c := range secureCounters {
			if !c.exact {
				continue
			}
			key := [32]byte{18, byte(ci), byte(cfg.Capacity)}
			zero, rel := secureRun(t, c.f, cfg, key, zeroData), secureRun(t, c.f, cfg, key, big)
			sum := make([]float64, cfg.Dim)
			bad := 0
			for s := range rel {
				for k := range sum {
					sum[k] += big(s, k)
					if !onGrid(rel[s][k], g) || !onGrid(zero[s][k], g) {
						t.Fatalf("%s dim=%d: release %d coord %d = %v (zero data: %v) is off the grid γ = %g", c.name, cfg.Dim, s+1, k, rel[s][k], zero[s][k], g)
					}
					if n := rel[s][k] - sum[k]; n != zero[s][k] {
						if bad == 0 {
							t.Errorf("%s: release %d coord %d: noise %v with data of magnitude %.3g, %v with zero data: the released noise depends on the data", c.name, s+1, k, n, sum[k], zero[s][k])
						}
						bad++
					}
				}
			}
			if bad > 0 {
				t.Errorf("%s: %d of %d released noise values depend on the data", c.name, bad, len(rel)*cfg.Dim)
			}
		}
	}
}

// TestSecureRoundingResolution: with a Secure source the data enter a counter only through
// their rounding to the grid γ = GaussianGranularity(σ·min CoordScale), with error at most γ/2
// per coordinate — the error SecureSensitivity and CalibrateSigma account for. With the same
// key, release(x) − release(0) after the first insertion is that rounding, exactly, for every
// counter (Honaker's first release is its leaf, an exact grid value). A counter that rounds to
// a coarser grid (e.g. that of σ rather than of the smallest coordinate std) or not at all
// fails.
func TestSecureRoundingResolution(t *testing.T) {
	cfg := counter.GaussianConfig{Dim: 8, Capacity: 4, Sigma: 2, CoordScale: []float64{0.5, 1, 2, 0.5, 1, 3, 0.5, 1}}
	g := noise.GaussianGranularity(cfg.Sigma * minScaleOf(cfg))
	fr := []float64{0.1, 0.3, 0.49, 0.7, 0.9, -0.3, -0.7, 0.51}
	for ci, c := range secureCounters {
		for rep, m := range []float64{0, 3, -17, 1 << 20} {
			x := func(t, k int) float64 {
				if t > 0 {
					return 0
				}
				return (m + float64(k) + fr[(k+rep)%len(fr)]) * g
			}
			key := [32]byte{19, byte(ci), byte(rep)}
			zero, rel := secureRun(t, c.f, cfg, key, zeroData), secureRun(t, c.f, cfg, key, x)
			for k := 0; k < cfg.Dim; k++ {
				r := rel[0][k] - zero[0][k]
				want := math.Floor(x(0, k)/g+0.5) * g
				if !onGrid(rel[0][k], g) || r != want || math.Abs(r-x(0, k)) > g/2 {
					t.Fatalf("%s: coord %d: the element %v entered as %v, want its rounding %v to the grid γ = %g of the smallest coordinate std (error ≤ γ/2)", c.name, k, x(0, k), r, want, g)
				}
			}
		}
	}
}

// TestSecureSensitivityWorstCase checks SecureSensitivity(Δ, dim, σ) = Δ + √dim·γ against the
// rounding the counters really apply: two elements at ℓ2 distance Δ, built so that every
// coordinate's rounding error pushes them apart (x_k = γ/2 rounds up, x′_k = γ/2 − Δ/√dim
// rounds down by almost γ), give rounded elements at distance Δ + √dim·γ·(1 − 10⁻³), which must
// not exceed SecureSensitivity (and must come within 1 % of it: the bound is tight). A slack of
// γ instead of √dim·γ fails for dim ≥ 2.
func TestSecureSensitivityWorstCase(t *testing.T) {
	for _, dim := range []int{1, 3, 50} {
		for _, sigma := range []float64{0.3, 2} {
			cfg := counter.GaussianConfig{Dim: dim, Capacity: 1, Sigma: sigma}
			g := noise.GaussianGranularity(sigma)
			d := (1000 + 1e-3) * g
			x := func(_, _ int) float64 { return g / 2 }
			x2 := func(_, _ int) float64 { return g/2 - d }
			key := [32]byte{20, byte(dim)}
			a, b := secureRun(t, secureCounters[0].f, cfg, key, x), secureRun(t, secureCounters[0].f, cfg, key, x2)
			var in, out float64
			for k := 0; k < dim; k++ {
				in += (x(0, k) - x2(0, k)) * (x(0, k) - x2(0, k))
				out += (a[0][k] - b[0][k]) * (a[0][k] - b[0][k])
			}
			in, out = math.Sqrt(in), math.Sqrt(out)
			bound := counter.SecureSensitivity(in, dim, sigma)
			if out > bound*(1+1e-12) {
				t.Errorf("dim=%d σ=%g: elements at distance %v round to distance %v > SecureSensitivity = %v", dim, sigma, in, out, bound)
			}
			if out < in+0.99*math.Sqrt(float64(dim))*g {
				t.Errorf("dim=%d σ=%g: worst-case construction reached only %v (Δ = %v, γ = %g): the test has no power", dim, sigma, out, in, g)
			}
		}
	}
	if s := counter.SecureSensitivity(1, 0, 1); !math.IsNaN(s) {
		t.Errorf("SecureSensitivity with dim 0 = %v, want NaN", s)
	}
}

// TestCalibrateSigmaCoversCoarsestRounding: the σ of CalibrateSigma must cover, in the units of
// σ in which Δ₂ is measured, the rounding error of every coordinate: γ(σ·minScale)/(2·s_k) for
// a coordinate of scale s_k ≥ minScale, i.e. a slack of √dim·γ(σ·minScale)/minScale (the
// worst coordinate has scale minScale). Checked for several minScale < 1, where dropping the
// division by minScale under-calibrates.
func TestCalibrateSigmaCoversCoarsestRounding(t *testing.T) {
	for _, c := range []struct {
		mu, sens2, factor float64
		dim               int
		minScale          float64
	}{{1, 1, 1, 4, 0.5}, {0.3, 0.02, 2, 1000, 0.25}, {2, 3, 1.5, 36, 1 / math.Sqrt2}, {0.27, 1e-3, 2.2, 5000, 0.1}} {
		sigma, err := counter.CalibrateSigma(c.mu, c.sens2, c.factor, c.dim, c.minScale, true)
		if err != nil {
			t.Fatal(err)
		}
		g := noise.GaussianGranularity(sigma * c.minScale)
		worst := c.sens2 + math.Sqrt(float64(c.dim))*g/c.minScale
		if mu := c.factor * worst / sigma; mu > c.mu {
			t.Errorf("%+v: σ = %v gives μ = %v > %v once the rounding of the finest-scale coordinates (γ/minScale = %g) is counted", c, sigma, mu, c.mu, g/c.minScale)
		}
	}
}

// TestSecureCountersHaveGrid: the counters above really take the Secure path (grid γ(σ) > 0),
// so the tests of this file are not vacuous.
func TestSecureCountersHaveGrid(t *testing.T) {
	cfg := counter.GaussianConfig{Dim: 2, Capacity: 2, Sigma: 1}
	for _, c := range secureCounters {
		gc, err := c.f(cfg, noise.NewSecureFromKey([32]byte{1}))
		if err != nil {
			t.Fatal(err)
		}
		gr, ok := gc.(interface{ Granularity() float64 })
		if !ok {
			t.Fatalf("%s: no Granularity method", c.name)
		}
		if got, want := gr.Granularity(), noise.GaussianGranularity(1); got != want {
			t.Errorf("%s: grid %v, want %v", c.name, got, want)
		}
	}
}
