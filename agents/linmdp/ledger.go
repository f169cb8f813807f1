package linmdp

import (
	"math"

	"github.com/dprl/dprl/privacy/accounting"
	"github.com/dprl/dprl/privacy/ledger"
	"github.com/dprl/dprl/privacy/noise"
)

// Names of the ledger entries of the papers' agents (Ngo's and Luyo's).
const (
	// EntryGram is the H binary trees of the Gram matrices (one leaf per user and step).
	EntryGram = ledger.EntryCounter + "/gram"
	// EntryVector is the regression vectors released at every policy update (y for Ngo, u
	// for Luyo), H per update.
	EntryVector = "release/vector"
)

// gramSensitivity is the papers' bound on the change of one user's leaf of one Gram tree
// under replace-one neighbours (Δ_Λ = 2, spec §1.6; the agents calibrate with it). It holds
// with room: the trees add noise to the packed upper triangle, whose ℓ2 norm is at most
// ‖φφᵀ − φ′φ′ᵀ‖_F = √(‖φ‖⁴ + ‖φ′‖⁴ − 2(φ·φ′)²) ≤ √2 for ‖φ‖, ‖φ′‖ ≤ 1
// (TestGramSensitivityDerived), so the ledger's ε is an upper bound.
const gramSensitivity = 2.0

// papersMechanisms are the public parameters of a papers' agent's two mechanisms, with the
// noise the agent calibrated (the paper's σ, or the zCDP recalibration): H Gaussian trees of
// the Gram matrices over capacity elements, levels nodes per element and node std sigmaTree,
// and the regression vectors released releases times (each an H·d Gaussian release of
// per-step sensitivity vecSens = 2(H+1) and std sigmaVec). gramSecure and vecSecure say the
// trees' or the vectors' noise comes from a hardened (noise.Secure) source, which rounds every
// coordinate of the statistic to the grid of its noise (practical-privacy spec §7).
type papersMechanisms struct {
	h, d, capacity, levels int
	sigmaTree              float64
	releases               int
	vecSens, sigmaVec      float64
	gramSecure, vecSecure  bool
}

// anySecure reports whether any of the sources is hardened (noise.Secure): its releases are
// rounded to the noise grid, so the ledger must add the rounding to the sensitivity.
func anySecure(srcs ...noise.Source) bool {
	for _, s := range srcs {
		if s != nil && s.Secure() {
			return true
		}
	}
	return false
}

// secureGrid returns what a Secure source's rounding adds to the sensitivity of a release of
// dim unit-scale coordinates, all of which one user can change: every coordinate is rounded
// to the grid γ = noise.GaussianGranularity(σ) of its noise (the trees' nodes and the vectors
// carry no coordinate multipliers) and moves by at most γ/2 on each side, so the ℓ2 distance
// of two neighbours' releases grows by at most √dim·γ (Grid{Weight: √dim, Scale: 1}).
func secureGrid(dim int) ledger.Grid {
	return ledger.Grid{Weight: math.Sqrt(float64(dim)), Scale: 1}
}

// ledgerReport registers the agent's mechanisms in a privacy ledger (target (eps, delta),
// replace-one) and composes them; the agent does not compute its own ε. A user changes one
// leaf of each of the H trees (ℓ2 sensitivity 2√H over the trees, √levels nodes per leaf) and
// one term of each of the H vectors of every release (ℓ2 sensitivity 2(H+1)·√H per release,
// releases releases: factor √releases). The ledger accounts them in μ-GDP, μ² = 4·H·levels/σ²
// + 4(H+1)²·H·releases/σ_y² (= 2ρ of the agent's own zCDP accounting, RhoSpent or
// RhoCertified), and converts μ exactly to (ε, δ). With a Secure source (gramSecure,
// vecSecure) every released node and vector is rounded to its noise grid γ first, which
// raises each per-release sensitivity by √dim·γ (secureGrid: all H·d(d+1)/2 node coordinates
// of one level, all H·d coordinates of one vector release): the ledger's ε then covers the
// rounding. A seeded source rounds nothing and its report is unchanged.
func (m papersMechanisms) ledgerReport(eps, delta float64) (ledger.Report, error) {
	l, err := ledger.New(ledger.Config{Model: ledger.JDP, Target: accounting.ApproxDP{Epsilon: eps, Delta: delta},
		Neighbouring: accounting.ReplaceOne})
	if err != nil {
		return ledger.Report{}, err
	}
	h := float64(m.h)
	in := map[string]float64{"horizon": h, "dim": float64(m.d)}
	gram := ledger.Entry{Name: EntryGram, Mechanism: ledger.GaussianCounter, Counter: "tree", Norm: ledger.L2,
		Neighbouring: accounting.ReplaceOne, Sensitivity: gramSensitivity * math.Sqrt(h), Factor: math.Sqrt(float64(m.levels)),
		Sigma: m.sigmaTree, Releases: max(1, m.capacity), Dim: m.h * m.d * (m.d + 1) / 2, Inputs: in}
	if m.gramSecure {
		gram.Secure, gram.Grid = true, secureGrid(gram.Dim)
	}
	if err := l.Register(gram); err != nil {
		return ledger.Report{}, err
	}
	if m.releases > 0 {
		vec := ledger.Entry{Name: EntryVector, Mechanism: ledger.Gaussian, Norm: ledger.L2,
			Neighbouring: accounting.ReplaceOne, Sensitivity: m.vecSens * math.Sqrt(h), Factor: math.Sqrt(float64(m.releases)),
			Sigma: m.sigmaVec, Releases: m.releases, Dim: m.h * m.d, Inputs: in}
		if m.vecSecure {
			vec.Secure, vec.Grid = true, secureGrid(vec.Dim)
		}
		if err := l.Register(vec); err != nil {
			return ledger.Report{}, err
		}
	}
	return l.Compose()
}
