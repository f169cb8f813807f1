package linmix

import (
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
	for _, sp := range a.specs {
		d := float64(sp.dim)
		in := map[string]float64{"horizon": H, "dim": d, "max_x": sp.maxX, "max_y": sp.maxY, "nodes_per_element": factor}
		for _, st := range []struct {
			suffix string
			cal    noise.Calibration
			dim    int
			l2, l1 float64
		}{
			{gramSuffix, sp.mat, noise.PackedLen(sp.dim), gram2 * math.Sqrt2 * sp.maxX * sp.maxX, other * (d + 1) * sp.maxX * sp.maxX},
			{targetSuffix, sp.vec, sp.dim, other * 2 * sp.maxX * sp.maxY, other * 2 * math.Sqrt(d) * sp.maxX * sp.maxY},
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
			if err := l.Register(e); err != nil {
				return ledger.Report{}, err
			}
		}
	}
	return l.Compose()
}
