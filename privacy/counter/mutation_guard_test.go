package counter

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/dprl/dprl/privacy/noise"
)

// TestNodesPerElementIsMaxReleasedNodes checks the number every tree calibration is built on
// (privacy spec §3.1): NodesPerElement must be the largest number of released nodes that
// contain one element over the counter's whole life. The released nodes of the binary
// mechanism are the dyadic blocks (j·2^i, (j+1)·2^i] that complete by time tMax; they are
// enumerated here by brute force, independently of Levels and Touches. A tree that
// under-reports this (e.g. 1, or one level fewer) makes its callers under-calibrate.
func TestNodesPerElementIsMaxReleasedNodes(t *testing.T) {
	for tMax := 1; tMax <= 130; tMax++ {
		counts := make([]int, tMax+1) // counts[s]: released nodes containing element s
		for w := 1; w <= tMax; w *= 2 {
			for end := w; end <= tMax; end += w {
				for s := end - w + 1; s <= end; s++ {
					counts[s]++
				}
			}
		}
		want := 0
		for _, c := range counts {
			want = max(want, c)
		}
		for _, node := range []noise.Calibration{{}, noise.LaplaceNoise(1), noise.GaussianNoise(1)} {
			tr, err := NewTree(TreeConfig{Dim: 1, Capacity: tMax, Node: node}, noise.NewSecureFromKey([32]byte{1}))
			if err != nil {
				t.Fatal(err)
			}
			if got := tr.NodesPerElement(); got != want {
				t.Fatalf("capacity %d, %s nodes: NodesPerElement = %d, want %d (max released nodes containing one element)", tMax, node, got, want)
			}
		}
	}
}

// TestGaussianCountersSeededNoise: every Gaussian counter driven by the plain seeded source
// (its vector fast path, noise.GaussianVecSource) releases prefixes whose noise has the
// variance StdAt(t)² it reports (the variance the μ-GDP claim μ = Δ·factor/σ is about). With
// zero elements the prefix is pure noise; over Dim i.i.d. coordinates the mean square has
// relative standard deviation √(2/Dim), tolerance 6 of them. Half the noise fails.
func TestGaussianCountersSeededNoise(t *testing.T) {
	const dim, capacity, sigma = 4000, 4, 1.5
	makers := []struct {
		name string
		f    func(GaussianConfig, noise.Source) (GaussianCounter, error)
	}{
		{"tree", func(c GaussianConfig, s noise.Source) (GaussianCounter, error) { return NewGaussianTree(c, s) }},
		{"honaker", func(c GaussianConfig, s noise.Source) (GaussianCounter, error) { return NewHonakerTree(c, s) }},
		{"sqrt", func(c GaussianConfig, s noise.Source) (GaussianCounter, error) { return NewSqrtFactorization(c, s) }},
		{"sqrt-blt", func(c GaussianConfig, s noise.Source) (GaussianCounter, error) { return NewSqrtBLT(c, 2, s) }},
	}
	for i, m := range makers {
		t.Run(m.name, func(t *testing.T) {
			src := noise.NewSeeded(rand.New(rand.NewPCG(uint64(i), 99)))
			c, err := m.f(GaussianConfig{Dim: dim, Capacity: capacity, Sigma: sigma}, src)
			if err != nil {
				t.Fatal(err)
			}
			zero := make([]float64, dim)
			tol := 6 * math.Sqrt(2.0/dim)
			for step := 1; step <= capacity; step++ {
				if err := c.Insert(zero); err != nil {
					t.Fatal(err)
				}
				want := c.StdAt(step) * c.StdAt(step)
				if !(want > 0) {
					t.Fatalf("StdAt(%d) = %v", step, c.StdAt(step))
				}
				ms := 0.0
				for _, v := range c.Prefix() {
					ms += v * v
				}
				ms /= dim
				if math.Abs(ms/want-1) > tol {
					t.Errorf("release %d: noise mean square %.4g, reported StdAt² %.4g (ratio %.3f, tolerance ±%.3f)", step, ms, want, ms/want, tol)
				}
			}
		})
	}
}

// TestCalibrateSigmaCoversGridRounding: on the Secure path every element is rounded to the
// grid γ(σ), which can move each of the dim coordinates by γ/2 on each neighbour, so the
// sensitivity the calibration must cover is Δ₂ + √dim·γ (practical-privacy spec §7). The σ
// returned for a target μ must therefore satisfy factor·(Δ₂ + √dim·γ(σ·minScale)/minScale)/σ ≤ μ
// (a coordinate with noise scale s ≥ minScale measures its rounding in units of s·σ),
// with γ taken from the noise package (the grid the Secure source really uses), and must be
// strictly larger than the seeded σ = factor·Δ₂/μ whenever γ > 0.
func TestCalibrateSigmaCoversGridRounding(t *testing.T) {
	for _, c := range []struct {
		mu, sens2, factor float64
		dim               int
		minScale          float64
	}{{1, 1, 1, 1, 1}, {0.5, 2, 3, 64, 1}, {2, 0.01, 1, 1920, 1 / math.Sqrt2}, {0.1, 1, 4, 10, 1}} {
		seeded, err := CalibrateSigma(c.mu, c.sens2, c.factor, c.dim, c.minScale, false)
		if err != nil {
			t.Fatal(err)
		}
		sigma, err := CalibrateSigma(c.mu, c.sens2, c.factor, c.dim, c.minScale, true)
		if err != nil {
			t.Fatal(err)
		}
		// The rounding error γ/2 of a coordinate with scale s is γ/(2s) in the units of σ.
		g := noise.GaussianGranularity(sigma*c.minScale) / c.minScale
		if mu := c.factor * (c.sens2 + math.Sqrt(float64(c.dim))*g) / sigma; mu > c.mu {
			t.Errorf("%+v: Secure σ = %v gives μ = %v with the grid slack √dim·γ = %v, above the target %v", c, sigma, mu, math.Sqrt(float64(c.dim))*g, c.mu)
		}
		if !(sigma > seeded) {
			t.Errorf("%+v: Secure σ = %v is not above the seeded σ = %v although γ = %v > 0", c, sigma, seeded, g)
		}
	}
}
