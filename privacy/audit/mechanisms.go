package audit

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"slices"

	"github.com/dprl/dprl/privacy/accounting"
	"github.com/dprl/dprl/privacy/counter"
	"github.com/dprl/dprl/privacy/noise"
	"github.com/dprl/dprl/rng"
)

// GaussianSigmaExact returns the smallest σ (to 1e-9 relative) for which the Gaussian
// mechanism with L2 sensitivity sens2 is (ε, δ)-DP by the exact privacy profile of Balle &
// Wang (2018), i.e. accounting.GaussianExactDelta(sens2/σ, ε) ≤ δ. Audits use it because the
// claim it gives is tight: an auditor with the likelihood-ratio statistic can approach it.
func GaussianSigmaExact(sens2, eps, delta float64) (float64, error) {
	if !(sens2 > 0) || !(eps > 0) || !(delta > 0 && delta < 1) || math.IsInf(sens2+eps, 0) {
		return 0, fmt.Errorf("audit: GaussianSigmaExact needs sens2 > 0, eps > 0, delta in (0, 1); got %v, %v, %v", sens2, eps, delta)
	}
	return gaussSigmaExact(sens2, eps, delta), nil
}

// gaussSigmaExact is GaussianSigmaExact for valid arguments.
func gaussSigmaExact(sens2, eps, delta float64) float64 {
	lo, hi := 1e-6, 1e6 // μ = sens2/σ; δ(ε) increases with μ
	for i := 0; i < 200 && hi/lo > 1+1e-12; i++ {
		mid := math.Sqrt(lo * hi)
		if accounting.GaussianExactDelta(mid, eps) <= delta {
			lo = mid
		} else {
			hi = mid
		}
	}
	return sens2 / lo
}

// MechanismTargets returns audit targets for the privacy mechanisms of package noise and
// counter, each with deliberately broken variants. Neighbouring inputs differ in one element
// by the full sensitivity (1).
//
//   - mechanism/laplace: x ∈ {0, 1} + Laplace(1/ε), ε = 1; broken: scale divided by 4.
//   - mechanism/gaussian: x ∈ {0, 1} + N(0, σ²) with σ from the exact profile at
//     (ε, δ) = (1, 10⁻³); broken: σ divided by 4.
//   - mechanism/tree-laplace: binary-mechanism counter over T = 3 scalars (L = 2 levels,
//     node scale L/ε, ε = 1), D = (0,0,0), D′ = (1,0,0), output: all 3 releases; broken:
//     node noise divided by 4; node scale computed from the data.
//   - mechanism/tree-gaussian: Gaussian binary-mechanism counter over T = 256 scalars (L = 9
//     levels, σ so that √L/σ meets (1, 10⁻³) exactly), D = 0, D′ = e₁, output: all 256
//     releases; broken: σ/4; node noise redrawn for every release (each release then
//     composes separately); σ computed from the data.
func MechanismTargets() []Target {
	var ts []Target
	add := func(t Target) { t.Family = "mechanism"; ts = append(ts, t) }

	const eps = 1.0
	for _, div := range []float64{1, 4} {
		b := 1 / eps / div
		name, broken := "mechanism/laplace", div != 1
		if broken {
			name += "/noise-div4"
		}
		add(Target{Name: name, Broken: broken, Claim: Claim{Epsilon: eps},
			Description: "Laplace mechanism on one scalar of sensitivity 1: x = 0 vs 1",
			Run: func(side int, seed rng.Seed) ([]float64, error) {
				return []float64{secureSource(seed).AddLaplace(float64(side), b)}, nil
			}})
	}

	const delta = 1e-3
	sigma := gaussSigmaExact(1, eps, delta)
	for _, div := range []float64{1, 4} {
		s := sigma / div
		name, broken := "mechanism/gaussian", div != 1
		if broken {
			name += "/noise-div4"
		}
		add(Target{Name: name, Broken: broken, Claim: Claim{Epsilon: eps, Delta: delta},
			Description: fmt.Sprintf("Gaussian mechanism, σ = %.4g (exact profile at ε=1, δ=1e-3): x = 0 vs 1", sigma),
			Run: func(side int, seed rng.Seed) ([]float64, error) {
				return []float64{secureSource(seed).AddGaussian(float64(side), s)}, nil
			}})
	}

	// Laplace tree, T = 3.
	const tL = 3
	L := counter.Levels(tL)
	bNode := float64(L) / eps
	for _, v := range treeVariants(tL, bNode, noise.LaplaceNoise) {
		add(Target{Name: "mechanism/tree-laplace" + v.suffix, Broken: v.suffix != "", Claim: Claim{Epsilon: eps},
			Description: fmt.Sprintf("Laplace binary-mechanism counter, T = %d, L = %d, node scale L/ε: first element 0 vs 1, all releases observed", tL, L),
			Run:         v.run})
	}

	// Gaussian tree, T = 256: the element enters L nodes, so μ = √L/σ.
	const tG = 256
	LG := counter.Levels(tG)
	sg := gaussSigmaExact(1, eps, delta) * math.Sqrt(float64(LG))
	gaussianVariants := slices.Insert(treeVariants(tG, sg, noise.GaussianNoise), 2, treeVariant{"/redrawn-per-release",
		func(side int, seed rng.Seed) ([]float64, error) { return runTreeRedrawn(tG, side, sg, seed) }})
	for _, v := range gaussianVariants {
		runs := 4000
		if v.suffix == "/redrawn-per-release" {
			runs = 6000 // its detection is marginal at 2000 CI runs (ε_LB ≈ 0.85–1.1 depending on the noise stream)
		}
		add(Target{Name: "mechanism/tree-gaussian" + v.suffix, Broken: v.suffix != "", Claim: Claim{Epsilon: eps, Delta: delta},
			Description: fmt.Sprintf("Gaussian binary-mechanism counter, T = %d, L = %d, σ = %.4g: first element 0 vs 1, all releases observed", tG, LG, sg),
			Run:         v.run, Runs: runs})
	}
	return ts
}

// treeVariant is one audit target of a tree counter: its name suffix ("" for the correct
// counter) and its run.
type treeVariant struct {
	suffix string
	run    func(side int, seed rng.Seed) ([]float64, error)
}

// treeVariants are the tree counter of capacity T with node noise node(scale) and two BROKEN
// variants: the noise divided by 4, and a node scale proportional to the data's magnitude.
func treeVariants(T int, scale float64, node func(float64) noise.Calibration) []treeVariant {
	return []treeVariant{
		{"", func(side int, seed rng.Seed) ([]float64, error) {
			return runTree(T, side, node(scale), seed)
		}},
		{"/noise-div4", func(side int, seed rng.Seed) ([]float64, error) {
			return runTree(T, side, node(scale/4), seed)
		}},
		{"/scale-from-data", func(side int, seed rng.Seed) ([]float64, error) {
			// BROKEN: the node scale is proportional to the data's magnitude (with a floor),
			// so an all-zero input is released almost exactly.
			return runTree(T, side, node(scale*math.Max(0.01, float64(side))), seed)
		}},
	}
}

// runTree streams (side, 0, 0, …) of length T through a counter.Tree and returns every
// release.
func runTree(T, side int, node noise.Calibration, seed rng.Seed) ([]float64, error) {
	tr, err := counter.NewTree(counter.TreeConfig{Dim: 1, Capacity: T, Node: node}, secureSource(seed))
	if err != nil {
		return nil, err
	}
	return releases(tr, T, side)
}

// releases streams (side, 0, 0, …) of length T through c and returns every release.
func releases(c counter.Counter, T, side int) ([]float64, error) {
	out := make([]float64, T)
	x := []float64{float64(side)}
	for t := 0; t < T; t++ {
		if err := c.Insert(x); err != nil {
			return nil, err
		}
		out[t] = c.Prefix()[0]
		x[0] = 0
	}
	return out, nil
}

// runTreeRedrawn is a BROKEN counter: every release draws fresh noise for each of its
// popcount(t) nodes instead of reusing each node's noise, so the releases compose as T
// separate Gaussian mechanisms rather than L.
func runTreeRedrawn(T, side int, sigma float64, seed rng.Seed) ([]float64, error) {
	src := secureSource(seed)
	out := make([]float64, T)
	for t := 1; t <= T; t++ {
		v := float64(side)
		for n := bits.OnesCount(uint(t)); n > 0; n-- {
			v = src.AddGaussian(v, sigma)
		}
		out[t-1] = v
	}
	return out, nil
}

// secureSource returns the deployment noise source (granular, Mironov-safe samplers) keyed
// deterministically from seed, so that mechanism audits are reproducible and audit what is
// deployed rather than the fast floating-point samplers of experiments.
func secureSource(seed rng.Seed) *noise.Secure {
	var key [32]byte
	r := seed.Child("secure-key").Rand()
	for i := 0; i < 32; i += 8 {
		binary.LittleEndian.PutUint64(key[i:], r.Uint64())
	}
	return noise.NewSecureFromKey(key)
}
