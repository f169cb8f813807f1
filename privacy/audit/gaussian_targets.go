package audit

import (
	"fmt"

	"github.com/dprl/dprl/privacy/accounting"
	"github.com/dprl/dprl/privacy/counter"
	"github.com/dprl/dprl/privacy/ledger"
	"github.com/dprl/dprl/privacy/noise"
	"github.com/dprl/dprl/rng"
)

// Stream lengths of the Gaussian-counter audit targets: long enough for the factorisation to
// matter and for the redrawn variants to leak clearly (their μ² = Σ_t 1/Var_t grows like T,
// against L for the trees: μ ×2.4 at T = 128), short enough for an audit of a few CPU seconds.
const (
	treeAuditT   = 128
	factorAuditT = 64
)

// GaussianCounterTargets returns audit targets for the Gaussian continual counters of package
// counter (practical-privacy spec §3), each claiming the (ε, δ) the accountant derives from
// GDP: σ is calibrated so that μ = Δ·SensitivityFactor/σ meets (ε, δ) = (1, 10⁻³) exactly
// (the privacy ledger: accounting.GDPFor, the secure rounding and, for the real-valued
// factorisations, counter.SecureReleaseSlack; Δ = 1). Each runs over
// T scalars (T = 128 for the trees, 64 for the factorisations) with the deployment (Secure)
// source; D = 0, D′ = e₁ (the first element, whose encoder column is the longest), and the
// output is all T releases.
//
//   - mechanism/counter-gaussian-tree: GaussianTree; broken: σ/4; noise redrawn for every release
//     (fresh N(0, StdAt(t)²) on each prefix: the marginals are right, the releases compose
//     as 64 separate mechanisms).
//   - mechanism/counter-honaker-tree: HonakerTree; broken: σ/4; noise redrawn for every release.
//   - mechanism/counter-sqrt-factorization: SqrtFactorization; broken: σ/4; redrawn; wrong
//     factorisation coefficients (the decoder uses c_k = c_{k−1}(1 − 3/(2k)), the coefficients of
//     C⁻¹ instead of C, so the encoder becomes A^{3/2}).
//   - mechanism/counter-blt: BLT with 5 buffers fitted to T; broken: σ/4; redrawn; wrong factorisation
//     coefficients (the release noise is u_t = (C⁻¹z)_t instead of its running sum, i.e. the
//     decoder C⁻¹ instead of A·C⁻¹).
//
// A wrong-coefficients variant does not exist for the trees: any combination of the noisy
// nodes (Honaker's weights included) is post-processing, so wrong weights cost accuracy, never
// privacy.
func GaussianCounterTargets() []Target {
	const (
		eps   = 1.0
		delta = 1e-3
	)
	g, err := accounting.GDPFor(accounting.ApproxDP{Epsilon: eps, Delta: delta})
	if err != nil {
		panic(fmt.Sprintf("audit: GDPFor(1, 1e-3): %v", err)) // constant arguments: cannot fail
	}
	blt, err := counter.FitSqrtBLT(factorAuditT, 5)
	if err != nil {
		panic(fmt.Sprintf("audit: FitSqrtBLT(%d, 5): %v", factorAuditT, err)) // constant arguments
	}
	type build func(cfg counter.GaussianConfig, seed rng.Seed) (counter.GaussianCounter, error)
	mechs := []struct {
		name, desc string
		T          int
		build      build
		wrong      []float64 // decoder coefficients of the wrong-coefficients variant (nil: none)
	}{
		{"counter-gaussian-tree", "Gaussian binary tree", treeAuditT, func(cfg counter.GaussianConfig, seed rng.Seed) (counter.GaussianCounter, error) {
			return counter.NewGaussianTree(cfg, secureSource(seed))
		}, nil},
		{"counter-honaker-tree", "Gaussian tree with Honaker's online estimator", treeAuditT, func(cfg counter.GaussianConfig, seed rng.Seed) (counter.GaussianCounter, error) {
			return counter.NewHonakerTree(cfg, secureSource(seed))
		}, nil},
		{"counter-sqrt-factorization", "square-root factorisation counter", factorAuditT, func(cfg counter.GaussianConfig, seed rng.Seed) (counter.GaussianCounter, error) {
			return counter.NewSqrtFactorization(cfg, secureSource(seed))
		}, inverseSqrtCoefficients(factorAuditT)},
		{"counter-blt", "BLT counter (5 buffers)", factorAuditT, func(cfg counter.GaussianConfig, seed rng.Seed) (counter.GaussianCounter, error) {
			return counter.NewBLT(cfg, blt, secureSource(seed))
		}, differences(blt.DecoderCoefficients(factorAuditT))},
	}
	var ts []Target
	for _, m := range mechs {
		T := m.T
		// The sensitivity factor is data-independent: read it from a noise-free instance.
		probe, err := m.build(counter.GaussianConfig{Dim: 1, Capacity: T}, rng.NewSeed(0))
		if err != nil {
			panic(fmt.Sprintf("audit: building %s: %v", m.name, err))
		}
		// σ and the claim are the privacy ledger's: one Secure counter of Δ = 1 on scalars, with
		// the release slack of the real-valued factorisations (aimed below μ, added back).
		build := m.build
		sf, slack, err := ledger.CounterParams(func(c counter.GaussianConfig, _ noise.Source) (counter.GaussianCounter, error) {
			return build(c, rng.NewSeed(0))
		}, 1, T, true)
		if err != nil || sf != probe.SensitivityFactor() {
			panic(fmt.Sprintf("audit: parameters of %s: factor %v (probe %v): %v", m.name, sf, probe.SensitivityFactor(), err))
		}
		led, err := ledger.New(ledger.Config{Model: ledger.JDP, Target: accounting.ApproxDP{Epsilon: eps, Delta: delta}})
		if err == nil {
			err = led.Register(ledger.Entry{Name: m.name, Mechanism: ledger.GaussianCounter, Counter: m.name, Sensitivity: 1, Factor: sf,
				Releases: T, Dim: 1, Secure: true, ReleaseSlack: slack})
		}
		var sigma float64
		if err == nil {
			sigma, err = led.Calibrate(m.name)
		}
		if err == nil {
			var rep ledger.Report
			if rep, err = led.Compose(); err == nil && !rep.PrivateAtNominal {
				err = fmt.Errorf("not (%g, %g)-private: %s", eps, delta, rep)
			}
		}
		if err != nil {
			panic(fmt.Sprintf("audit: calibrating %s: %v", m.name, err))
		}
		claim := Claim{Epsilon: eps, Delta: delta}
		base := fmt.Sprintf("%s, T = %d, σ = %.4g (μ = Δ·%.4f/σ = %.4f, (1, 1e-3) by GDP): first element 0 vs 1, all releases observed", m.desc, T, sigma, sf, g.Mu)
		add := func(suffix, what string, run func(side int, seed rng.Seed) ([]float64, error)) {
			runs := 4000
			if suffix == "/redrawn-per-release" && T == treeAuditT {
				runs = 8000 // μ is only ×2.4 the claim: more runs for a clear verdict
			}
			ts = append(ts, Target{Name: "mechanism/" + m.name + suffix, Family: "mechanism", Claim: claim,
				Broken: suffix != "", Description: base + what, Run: run, Runs: runs})
		}
		add("", "", func(side int, seed rng.Seed) ([]float64, error) {
			return runGaussianCounter(build, T, sigma, side, seed)
		})
		add("/noise-div4", "; BROKEN: σ/4", func(side int, seed rng.Seed) ([]float64, error) {
			return runGaussianCounter(build, T, sigma/4, side, seed)
		})
		add("/redrawn-per-release", "; BROKEN: fresh noise of the right marginal std at every release", func(side int, seed rng.Seed) ([]float64, error) {
			return runRedrawn(probe, T, sigma, side, seed)
		})
		if m.wrong != nil {
			wrong := m.wrong
			add("/wrong-coefficients", "; BROKEN: decoder coefficients of C⁻¹ instead of A·C⁻¹", func(side int, seed rng.Seed) ([]float64, error) {
				return runToeplitzNoise(wrong, T, sigma, side, seed)
			})
		}
	}
	return ts
}

// runGaussianCounter streams (side, 0, …, 0) of length T through a fresh counter and returns
// every release.
func runGaussianCounter(build func(counter.GaussianConfig, rng.Seed) (counter.GaussianCounter, error), T int, sigma float64, side int, seed rng.Seed) ([]float64, error) {
	c, err := build(counter.GaussianConfig{Dim: 1, Capacity: T, Sigma: sigma}, seed)
	if err != nil {
		return nil, err
	}
	return releases(c, T, side)
}

// runRedrawn is a BROKEN counter: release t is the exact prefix plus fresh noise with the
// correct counter's marginal std σ·StdAt(t)/σ₁ (probe has σ = 0, so its StdAt is read from a
// unit-σ twin), independent across releases.
func runRedrawn(probe counter.GaussianCounter, T int, sigma float64, side int, seed rng.Seed) ([]float64, error) {
	src := secureSource(seed)
	unit, err := rowStds(probe, T)
	if err != nil {
		return nil, err
	}
	out := make([]float64, T)
	for t := 0; t < T; t++ {
		out[t] = src.AddGaussian(float64(side), sigma*unit[t])
	}
	return out, nil
}

// rowStds returns StdAt(t)/σ for t = 1..T of the counter type of probe, computed from a σ = 1
// twin built by the counter's own formulas (the probe has σ = 0).
func rowStds(probe counter.GaussianCounter, T int) ([]float64, error) {
	var twin counter.GaussianCounter
	var err error
	cfg := counter.GaussianConfig{Dim: 1, Capacity: T, Sigma: 1}
	src := secureSource(rng.NewSeed(0))
	switch p := probe.(type) {
	case *counter.GaussianTree:
		twin, err = counter.NewGaussianTree(cfg, src)
	case *counter.HonakerTree:
		twin, err = counter.NewHonakerTree(cfg, src)
	case *counter.SqrtFactorization:
		twin, err = counter.NewSqrtFactorization(cfg, src)
	case *counter.BLT:
		twin, err = counter.NewBLT(cfg, p.Params(), src)
	default:
		return nil, fmt.Errorf("audit: no twin for %T", probe)
	}
	if err != nil {
		return nil, err
	}
	s := make([]float64, T)
	for t := range s {
		s[t] = twin.StdAt(t + 1)
	}
	return s, nil
}

// runToeplitzNoise is a BROKEN factorisation counter: release t is the exact prefix plus
// Σ_{j≤t} b_{t−j} z_j with the given (wrong) decoder coefficients b and z_j on the secure grid.
func runToeplitzNoise(b []float64, T int, sigma float64, side int, seed rng.Seed) ([]float64, error) {
	src := secureSource(seed)
	z := make([]float64, T)
	out := make([]float64, T)
	for t := 0; t < T; t++ {
		z[t] = src.AddGaussian(0, sigma)
		n := 0.0
		for j := 0; j <= t; j++ {
			n += b[t-j] * z[j]
		}
		out[t] = float64(side) + n
	}
	return out, nil
}

// inverseSqrtCoefficients are the coefficients of C⁻¹ = A^{−1/2}, i.e. of (1 − x)^{1/2}: a_0 = 1,
// a_k = a_{k−1}(1 − 3/(2k)) — the square-root recurrence with the typo 3 for 1.
func inverseSqrtCoefficients(n int) []float64 {
	a := make([]float64, n)
	a[0] = 1
	for k := 1; k < n; k++ {
		a[k] = a[k-1] * (1 - 3/(2*float64(k)))
	}
	return a
}

// differences returns b_k − b_{k−1} (b_{−1} = 0): the coefficients of C⁻¹ from those of A·C⁻¹.
func differences(b []float64) []float64 {
	d := make([]float64, len(b))
	prev := 0.0
	for k, v := range b {
		d[k] = v - prev
		prev = v
	}
	return d
}
