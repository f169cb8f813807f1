package linmix

import (
	"fmt"
	"math"

	"github.com/dprl/dprl/privacy/accounting"
	"github.com/dprl/dprl/privacy/ledger"
	"github.com/dprl/dprl/privacy/noise"
)

// Entry names of the papers' linear-mixture agents' mechanisms: for each regression (Luyo's
// "p"; UCRL-VTR+'s "hat" and "tilde"; Zhou's "p" and "r") its Gram statistic ("/gram") and its
// target statistic ("/target"), released by H trees (JDP) or H user reports (LDP) each, e.g.
// "counter/p/gram" or "report/hat/target".
const (
	gramSuffix   = "/gram"
	targetSuffix = "/target"
)

// ledgerReport registers the mechanisms the agent actually uses (a.specs, with the final noise
// scales: the papers' σ or b, the agent's calibration, never the ledger's) in a privacy ledger
// of target (ε, δ) — δ = 0 for the pure-DP Laplace calibration — under the neighbouring
// relation nb, and composes them. For each regression r and step h the agent releases the Gram statistic
// Σ XXᵀ (packed upper triangle) and the target Σ X·y of one leaf per user, X guarded to ‖X‖ ≤
// maxX and y to [0, maxY] (guard), by a binary tree of K0 = ⌈log₂ K⌉+1 ≥ nodes per element
// (JDP) or one user report (LDP, 1 node). Sensitivities of one step:
//
//	Gaussian (ℓ2), replace-one: Gram √2·maxX² (PSD rank one: ‖xxᵀ − x′x′ᵀ‖_F² ≤ ‖x‖⁴ + ‖x′‖⁴),
//	               target 2·maxX·maxY; zero-out: maxX² and maxX·maxY;
//	Laplace (ℓ1),  replace-one: Gram (d+1)·maxX² (upper triangle), target 2√d·maxX·maxY (spec
//	               §3.5 [D]); zero-out: half of each.
//
// A user changes one leaf of each of the H steps' trees, so an entry's sensitivity over the H
// trees is √H (ℓ2) or H (ℓ1) times the per-step one, with sensitivity factor √K0 (ℓ2) or K0
// (ℓ1). The SumSqrt2 diagonal multipliers (√2 ≥ 1) only add noise, so the Frobenius
// sensitivity in units of σ is an upper bound. The ledger composes μ-GDP (Gaussian) or pure ε
// (Laplace) exactly.
//
// With a Secure source (secureStat: the agent's built trees are in their grid form, or the LDP
// randomiser's source is Secure) every released tree node or user report is rounded to its
// noise's grid first (practical-privacy spec §7), which raises each release's sensitivity by
// the entry's Grid (secureGrid): the ledger's ε then covers the rounding. Before the sources
// exist (setup), and with seeded sources, nothing is rounded and the entries are unchanged.
func (a *Agent) ledgerReport(nb accounting.Neighbouring) (ledger.Report, error) {
	cfg := &a.cfg
	if cfg.Mode == None || cfg.knobs.noiseOff {
		l, err := ledger.New(ledger.Config{Model: ledger.None})
		if err != nil {
			return ledger.Report{}, err
		}
		return l.Compose()
	}
	model, prefix, factor := ledger.JDP, ledger.EntryCounter, float64(K0(cfg.Episodes))
	if cfg.Mode == LDP {
		model, prefix, factor = ledger.LDP, ledger.EntryReport, 1
	}
	target := accounting.ApproxDP{Epsilon: cfg.Epsilon, Delta: cfg.Delta}
	if cfg.Calibration == Laplace {
		target.Delta = 0
	}
	l, err := ledger.New(ledger.Config{Model: model, Target: target, Neighbouring: nb})
	if err != nil {
		return ledger.Report{}, err
	}
	H := float64(a.m.Horizon())
	releases := 1
	if cfg.Mode == JDP {
		releases = max(1, cfg.Episodes)
	}
	// Replace-one sensitivities (zero-out: gram l2 / √2, every other one / 2).
	gram2, other := 1.0, 1.0
	if nb == accounting.ZeroOut {
		gram2, other = 1/math.Sqrt2, 0.5
	}
	for r, sp := range a.specs {
		d := float64(sp.dim)
		in := map[string]float64{"horizon": H, "dim": d, "max_x": sp.maxX, "max_y": sp.maxY, "nodes_per_element": factor}
		for _, st := range []struct {
			suffix string
			cal    noise.Calibration
			dim    int
			l2, l1 float64
			scales []float64 // per-coordinate noise multipliers of one step's statistic (nil = 1)
		}{
			{gramSuffix, sp.mat, noise.PackedLen(sp.dim), gram2 * math.Sqrt2 * sp.maxX * sp.maxX, other * (d + 1) * sp.maxX * sp.maxX, a.matScales(sp)},
			{targetSuffix, sp.vec, sp.dim, other * 2 * sp.maxX * sp.maxY, other * 2 * math.Sqrt(d) * sp.maxX * sp.maxY, nil},
		} {
			e := ledger.Entry{Name: prefix + "/" + sp.name + st.suffix, Neighbouring: nb,
				Releases: releases, Dim: st.dim * int(H), Inputs: in}
			switch st.cal.Kind {
			case noise.Laplace:
				e.Mechanism, e.Norm, e.Sensitivity, e.Factor, e.Scale = ledger.Laplace, ledger.L1, st.l1*H, factor, st.cal.Scale
			default:
				e.Mechanism, e.Norm, e.Sensitivity, e.Factor, e.Sigma = ledger.Gaussian, ledger.L2, st.l2*math.Sqrt(H), math.Sqrt(factor), st.cal.Scale
				if cfg.Mode == JDP {
					e.Mechanism, e.Counter = ledger.GaussianCounter, "tree"
				}
			}
			if a.secureStat(r, st.suffix) {
				e.Secure, e.Grid = true, secureGrid(st.cal, st.dim, int(H), st.scales)
			}
			if err := l.Register(e); err != nil {
				return ledger.Report{}, err
			}
		}
	}
	return l.Compose()
}

// matScales returns the per-coordinate noise multipliers of spec sp's Gram statistic as the
// agent draws it: the central trees' noise.SymScales (SumSqrt2 in JDP), none for Mirror and
// for the LDP randomiser (which draws every coordinate at the calibration's scale).
func (a *Agent) matScales(sp regSpec) []float64 {
	if a.cfg.Mode != JDP || sp.sym == noise.Mirror {
		return nil
	}
	return noise.SymScales(sp.dim, sp.sym)
}

// secureStat reports whether the statistic suffix (gramSuffix or targetSuffix) of regression
// r is released from a Secure source's grid: a private agent's LDP randomiser's source is
// Secure, or some step's tree of that statistic has a Secure source (newNoiseTree then builds
// its grid form). It is false before the sources exist (setup), for seeded sources and for an
// agent that adds no noise.
func (a *Agent) secureStat(r int, suffix string) bool {
	if a.sources == nil || a.cfg.Mode == None || a.cfg.knobs.noiseOff {
		return false
	}
	secure := func(s noise.Source) bool { return s != nil && s.Secure() }
	if a.cfg.Mode == LDP {
		return secure(a.sources("ldp", 0, 0))
	}
	name := "vec"
	if suffix == gramSuffix {
		name = "mat"
	}
	for h := 0; h < a.m.Horizon(); h++ {
		if secure(a.sources(name, h, r)) {
			return true
		}
	}
	return false
}

// memoSources returns src memoised per (name, h, r): every call for a tree returns the one
// source built for it.
func memoSources(src func(name string, h, r int) noise.Source) func(name string, h, r int) noise.Source {
	type key struct {
		name string
		h, r int
	}
	got := map[key]noise.Source{}
	return func(name string, h, r int) noise.Source {
		k := key{name, h, r}
		if s, ok := got[k]; ok {
			return s
		}
		s := src(name, h, r)
		got[k] = s
		return s
	}
}

// secureLaplace widens the Laplace calibration's scales (UCRL-VTR's b_B, b_g, spec §3.5 [D])
// of every statistic released from a Secure source so that the rounding to the grid costs no
// ε: the entry's ε, factor·(Δ₁ + W·γ_L(b'))/b' (W = H·n, secureGrid), is at most the
// calibrated factor·Δ₁/b, i.e. b' ≥ b·(1 + W·γ_L(b')/Δ₁) (the fixed point, reached in a few
// steps as γ_L is a non-decreasing power of two; as the tabular agents' secureScale). Δ₁ is
// the replace-one ℓ1 sensitivity ledgerReport registers. The Gaussian calibrations are left
// as the papers state them: their ledger entries carry the rounding instead (a relative
// increase of μ of order 2^-29·√n·σ/Δ, reported in Constants.GridSlack). Constants.SigmaMat,
// SigmaVec and GridSlack are updated; the confidence widths keep the paper's b (a relative
// difference of the same order).
func (a *Agent) secureLaplace() error {
	if a.cfg.Calibration != Laplace || a.cfg.Mode == None || a.cfg.knobs.noiseOff {
		return nil
	}
	H := a.m.Horizon()
	for r := range a.specs {
		sp := &a.specs[r]
		d := float64(sp.dim)
		for _, st := range []struct {
			suffix string
			cal    *noise.Calibration
			dim    int
			l1     float64
		}{
			{gramSuffix, &sp.mat, noise.PackedLen(sp.dim), (d + 1) * sp.maxX * sp.maxX * float64(H)},
			{targetSuffix, &sp.vec, sp.dim, 2 * math.Sqrt(d) * sp.maxX * sp.maxY * float64(H)},
		} {
			if st.cal.Kind != noise.Laplace || st.cal.Off() || !a.secureStat(r, st.suffix) {
				continue
			}
			b := st.cal.Scale
			bs := b
			for range 64 {
				g := secureGrid(noise.LaplaceNoise(bs), st.dim, H, nil)
				next := b * (1 + g.Weight*noise.LaplaceGranularity(bs)/st.l1)
				if bs >= next {
					break
				}
				bs = next
			}
			if !(bs > 0) || math.IsInf(bs, 0) {
				return fmt.Errorf("linmix: epsilon: %g makes the Secure Laplace scale %g (not a finite positive number)", a.cfg.Epsilon, bs)
			}
			st.cal.Scale = bs
		}
	}
	c := &a.consts
	for r, sp := range a.specs {
		c.SigmaMat[r], c.SigmaVec[r] = sp.mat.Scale, sp.vec.Scale
	}
	c.GridSlack = gridSlack(a.specs)
	return nil
}

// anySecure reports whether some statistic is released from a Secure source's grid.
func (a *Agent) anySecure() bool {
	for r := range a.specs {
		if a.secureStat(r, gramSuffix) || a.secureStat(r, targetSuffix) {
			return true
		}
	}
	return false
}

// secureGrid returns what a Secure source's rounding adds to the sensitivity of one release
// (one tree node per step, or one user report) of the H steps' statistics of dim coordinates
// each, all of which one user can change (practical-privacy spec §7). Coordinate k is drawn at
// scale s·c_k (c_k = scales[k], 1 if nil; s = cal.Scale) and rounded, by the source, to that
// scale's own grid γ_k = noise.GaussianGranularity(s·c_k) (noise.LaplaceGranularity for
// Laplace), so it moves by at most γ_k/2 on each side and two neighbours' releases move apart
// by at most γ_k. The entry's sensitivity is measured in units of s (the multipliers are ≥ 1,
// so the unweighted norm bounds the weighted one), and in those units the rounding adds at most
// √(H·Σ_k (γ_k/c_k)²) (ℓ2) or H·Σ_k γ_k/c_k (ℓ1). Returned as Weight·γ(s·m) with m = min c_k,
// the grid the ledger evaluates (Entry.rounded) at the entry's noise s.
func secureGrid(cal noise.Calibration, dim, H int, scales []float64) ledger.Grid {
	gran := noise.GaussianGranularity
	if cal.Kind == noise.Laplace {
		gran = noise.LaplaceGranularity
	}
	c := func(k int) float64 {
		if scales == nil {
			return 1
		}
		return scales[k]
	}
	m := math.Inf(1)
	for k := 0; k < dim; k++ {
		m = min(m, c(k))
	}
	sum := 0.0
	for k := 0; k < dim; k++ {
		g := gran(cal.Scale*c(k)) / c(k)
		if cal.Kind == noise.Laplace {
			sum += g
		} else {
			sum += g * g
		}
	}
	w := float64(H) * sum
	if cal.Kind != noise.Laplace {
		w = math.Sqrt(w)
	}
	return ledger.Grid{Weight: w / gran(cal.Scale*m), Scale: m}
}
