package linmdp

import (
	"math"

	"github.com/dprl/dprl/privacy/accounting"
	"github.com/dprl/dprl/privacy/ledger"
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
// per-step sensitivity vecSens = 2(H+1) and std sigmaVec).
type papersMechanisms struct {
	h, d, capacity, levels int
	sigmaTree              float64
	releases               int
	vecSens, sigmaVec      float64
}

// ledgerReport registers the agent's mechanisms in a privacy ledger (target (eps, delta),
// replace-one) and composes them; the agent does not compute its own ε. A user changes one
// leaf of each of the H trees (ℓ2 sensitivity 2√H over the trees, √levels nodes per leaf) and
// one term of each of the H vectors of every release (ℓ2 sensitivity 2(H+1)·√H per release,
// releases releases: factor √releases). The ledger accounts them in μ-GDP, μ² = 4·H·levels/σ²
// + 4(H+1)²·H·releases/σ_y² (= 2ρ of the agent's own zCDP accounting, RhoSpent or
// RhoCertified), and converts μ exactly to (ε, δ).
func (m papersMechanisms) ledgerReport(eps, delta float64) (ledger.Report, error) {
	l, err := ledger.New(ledger.Config{Model: ledger.JDP, Target: accounting.ApproxDP{Epsilon: eps, Delta: delta},
		Neighbouring: accounting.ReplaceOne})
	if err != nil {
		return ledger.Report{}, err
	}
	h := float64(m.h)
	in := map[string]float64{"horizon": h, "dim": float64(m.d)}
	if err := l.Register(ledger.Entry{Name: EntryGram, Mechanism: ledger.GaussianCounter, Counter: "tree", Norm: ledger.L2,
		Neighbouring: accounting.ReplaceOne, Sensitivity: gramSensitivity * math.Sqrt(h), Factor: math.Sqrt(float64(m.levels)),
		Sigma: m.sigmaTree, Releases: max(1, m.capacity), Dim: m.h * m.d * (m.d + 1) / 2, Inputs: in}); err != nil {
		return ledger.Report{}, err
	}
	if m.releases > 0 {
		if err := l.Register(ledger.Entry{Name: EntryVector, Mechanism: ledger.Gaussian, Norm: ledger.L2,
			Neighbouring: accounting.ReplaceOne, Sensitivity: m.vecSens * math.Sqrt(h), Factor: math.Sqrt(float64(m.releases)),
			Sigma: m.sigmaVec, Releases: m.releases, Dim: m.h * m.d, Inputs: in}); err != nil {
			return ledger.Report{}, err
		}
	}
	return l.Compose()
}
