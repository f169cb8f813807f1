package tabular

import (
	"fmt"
	"math"

	"github.com/dprl/dprl/agents/internal/agentkit"
	"github.com/dprl/dprl/privacy/accounting"
	"github.com/dprl/dprl/privacy/counter"
	"github.com/dprl/dprl/privacy/ledger"
	"github.com/dprl/dprl/privacy/noise"
)

// Model is the trust model of an agent.
type Model int

const (
	// NonPrivate agents see and release raw statistics.
	NonPrivate Model = iota
	// JDP agents hold raw data on a trusted curator and release ε-DP statistics (ε-JDP policies).
	JDP
	// LDP agents receive only reports each user privatized herself (ε-LDP).
	LDP
)

// String returns "none", "jdp" or "ldp".
func (m Model) String() string {
	return agentkit.Name(m, "Model", "none", "jdp", "ldp")
}

// Calibration selects how the Laplace scales of the privatizers are derived from ε
// (tabular spec §7.5, §8.3).
type Calibration int

const (
	// Strict calibrates for the paper's own replace-one neighbours: JDP node scale 6HL/ε, LDP
	// scale 6H/ε. The run is ε-JDP / ε-LDP as defined in the paper (Defs 2.2, 2.3). Default.
	// Its name is "exact" (dprl's calibration vocabulary, package experiment/calibration);
	// "strict" is accepted as an alias.
	Strict Calibration = iota
	// Paper uses the paper's scales 3HL/ε (JDP, ε' = ε/(3H log K) with log K read as the number
	// of tree levels L) and 3H/ε (LDP). They give ε under add/remove ("zero-out") neighbours and
	// 2ε under the paper's replace-one definition.
	Paper
	// Unit uses scale 1/ε for both (figure reproduction only). It is NOT ε-private: it equals
	// Paper at ε_eff = 3HL·ε (JDP) or 3H·ε (LDP); every output states ε_eff.
	Unit
)

// String returns "exact", "paper" or "unit".
func (c Calibration) String() string {
	return agentkit.Name(c, "Calibration", "exact", "paper", "unit")
}

// ParseCalibration parses "exact" (or its old name "strict"), "paper" or "unit".
func ParseCalibration(s string) (Calibration, error) {
	switch s {
	case "exact", "strict":
		return Strict, nil
	case "paper":
		return Paper, nil
	case "unit":
		return Unit, nil
	}
	return 0, fmt.Errorf("calibration: unknown value %q (allowed: exact (alias strict), paper, unit)", s)
}

// EMode selects the uniform count-error bound E_{ε,β} the algorithm assumes.
type EMode int

const (
	// ETheory is the high-probability bound that makes Assumption 3.1 hold w.p. ≥ 1 − β/3
	// (tabular spec §3.4, §4.4): 4 × Chan et al.'s Cor. 2.9 bound at δ = β/(3·K·H·S·A·(S+2)).
	ETheory EMode = iota
	// EPractical is one standard deviation of the count noise times EScale (spec §3.4, §4.4);
	// it does not satisfy Assumption 3.1 w.h.p.
	EPractical
)

// String returns "theory" or "practical".
func (e EMode) String() string {
	return agentkit.Name(e, "EMode", "theory", "practical")
}

// PrivacyConfig is the privacy setting of an agent.
type PrivacyConfig struct {
	// Model is the trust model.
	Model Model
	// Epsilon is the nominal privacy budget ε > 0 (ignored when Model is NonPrivate).
	Epsilon float64
	// Calibration derives the Laplace scales from ε.
	Calibration Calibration
	// Beta is the failure probability β ∈ (0,1) of the analysis (default 0.1, spec §2.1).
	Beta float64
	// EMode selects E_{ε,β}; EScale multiplies the practical E (default 1).
	EMode  EMode
	EScale float64
	// LocalFixedE uses one E for the whole LDP run (E with K, as the paper's Alg. 1 does)
	// instead of the default time-varying E_k (spec §4.4, pitfall 25).
	LocalFixedE bool
}

// Validate checks the setting.
func (p PrivacyConfig) Validate() error {
	if p.Model != NonPrivate && p.Model != JDP && p.Model != LDP {
		return fmt.Errorf("privacy.model: unknown model %d", int(p.Model))
	}
	if p.Model != NonPrivate {
		if !agentkit.ValidEpsilon(p.Epsilon) {
			return fmt.Errorf("privacy.epsilon: must be finite and > 0, got %g", p.Epsilon)
		}
		if p.Calibration < Strict || p.Calibration > Unit {
			return fmt.Errorf("privacy.calibration: unknown value %d (allowed: exact, paper, unit)", int(p.Calibration))
		}
	}
	if !(p.Beta > 0 && p.Beta < 1) {
		return fmt.Errorf("privacy.beta: must be in (0,1), got %g", p.Beta)
	}
	if p.EMode != ETheory && p.EMode != EPractical {
		return fmt.Errorf("privacy.e_mode: unknown value %d (allowed: theory, practical)", int(p.EMode))
	}
	if !(p.EScale > 0) || math.IsInf(p.EScale, 0) {
		return fmt.Errorf("privacy.e_scale: must be finite and > 0, got %g", p.EScale)
	}
	return nil
}

// PrivacyReport states the guarantee a configured agent actually provides, computed by the
// accountant from the noise scale (never copied from the nominal ε).
type PrivacyReport struct {
	Model       string  `json:"model"`
	Nominal     float64 `json:"nominal_epsilon,omitempty"`
	Calibration string  `json:"calibration,omitempty"`
	// Scale is the Laplace scale of every tree node (JDP) or report entry (LDP).
	Scale float64 `json:"noise_scale,omitempty"`
	// Levels is the number of tree levels L (nodes per element) for JDP.
	Levels int `json:"levels,omitempty"`
	// EpsilonZeroOut is the ε the releases satisfy under add/remove-style neighbours
	// (one user's contribution set to zero): 3·H·L/b (JDP) or 3·H/b (LDP).
	EpsilonZeroOut float64 `json:"epsilon_zero_out,omitempty"`
	// EpsilonReplaceOne is the ε under the paper's replace-one definition (2× ZeroOut).
	EpsilonReplaceOne float64 `json:"epsilon_replace_one,omitempty"`
	// PrivateAtNominal is true when EpsilonReplaceOne ≤ Nominal (the strict reading).
	PrivateAtNominal bool `json:"private_at_nominal"`
	// E is the count-error bound at the last release; EMode how it was chosen.
	EMode string `json:"e_mode,omitempty"`
	// Secure reports whether the noise came from a hardened source.
	Secure bool `json:"secure_noise"`
	// GridStep is the grid γ of the Secure source's Laplace noise (0 for Seeded sources).
	// Rounding a statistic to the grid adds up to γ per changed coordinate to its ℓ1
	// sensitivity (practical-privacy spec §7); since every coordinate a user changes moves by
	// at most 1, the Secure releases satisfy ε·(1 + γ), and the ε fields above include that
	// factor. To keep the nominal guarantee the Secure scale is the calibrated scale times
	// (1 + γ) (secureScale).
	GridStep float64 `json:"grid_step,omitempty"`
	// Ledger is the guarantee as the privacy ledger composes it from the agent's three Laplace
	// releases (ledgerReport): dprl's one privacy report type, which the run directory's
	// manifest and the service print for every agent. The ε fields above are read from it.
	Ledger ledger.Report `json:"ledger"`
}

// String summarises the report in one line, stating the effective ε when the run is not
// private at its nominal ε.
func (r PrivacyReport) String() string {
	if r.Model == NonPrivate.String() {
		return "non-private"
	}
	s := fmt.Sprintf("%s ε=%g (%s calibration, b=%.6g", r.Model, r.Nominal, r.Calibration, r.Scale)
	if r.Levels > 0 {
		s += fmt.Sprintf(", L=%d", r.Levels)
	}
	s += fmt.Sprintf("): effective ε = %.6g (replace-one), %.6g (zero-out)", r.EpsilonReplaceOne, r.EpsilonZeroOut)
	if !r.PrivateAtNominal {
		s += fmt.Sprintf(" — NOT %g-private under the paper's replace-one definition", r.Nominal)
	}
	return s
}

// scales returns the node scale b (JDP) or report scale b_L (LDP) for the setting on an
// (S, A, H) model with K episodes, fixed from public parameters only, and the report whose
// guarantee the privacy ledger composes (ledgerReport).
func (p PrivacyConfig) scales(S, A, H, K int, secure bool) (float64, PrivacyReport, error) {
	rep := PrivacyReport{Model: p.Model.String(), Secure: secure, EMode: p.EMode.String()}
	if p.Model == NonPrivate {
		rep.PrivateAtNominal = true
		l, err := ledger.New(ledger.Config{Model: ledger.None})
		if err != nil {
			return 0, rep, err
		}
		if rep.Ledger, err = l.Compose(); err != nil {
			return 0, rep, err
		}
		return 0, rep, nil
	}
	b, L := p.scale(H, K, secure)
	if p.Model == JDP {
		rep.Levels = L
	}
	if secure {
		rep.GridStep = noise.LaplaceGranularity(b)
	}
	rep.Nominal = p.Epsilon
	rep.Calibration = p.Calibration.String()
	rep.Scale = b
	g, err := p.ledgerReport(S, A, H, K, L, b, secure)
	if err != nil {
		return 0, rep, err
	}
	rep.Ledger = g
	rep.EpsilonReplaceOne = g.Epsilon
	rep.EpsilonZeroOut = g.Epsilon / 2
	rep.PrivateAtNominal = g.PrivateAtNominal
	return b, rep, nil
}

// scale returns the Laplace scale b of every tree node (JDP) or report entry (LDP) of a private
// setting and the nodes per element L (the tree levels over K − 1 elements for JDP; 1 for LDP),
// from public parameters only.
func (p PrivacyConfig) scale(H, K int, secure bool) (b float64, L int) {
	L = 1
	if p.Model == JDP {
		L = max(1, counter.Levels(K-1))
	}
	base := 3 * float64(H*L) // ZeroOut L1 sensitivity over the three families and H steps, times L nodes
	switch p.Calibration {
	case Strict:
		b = 2 * base / p.Epsilon
	case Paper:
		b = base / p.Epsilon
	case Unit:
		b = 1 / p.Epsilon
	}
	if secure {
		b = secureScale(b)
	}
	return b, L
}

// ledgerReport registers the agent's three Laplace releases (visit counts, transition counts,
// reward sums; tabular spec §8.1–8.3) in a privacy ledger and composes them (pure ε-DP, δ = 0,
// replace-one neighbours): each is a Laplace tree over K − 1 elements with L nodes per element
// (JDP) or one user-side report (LDP, L = 1) of scale b, and one user changes at most 2H
// coordinates of each by at most 1 under replace-one (H under zero-out), so its ℓ1
// sensitivity is 2H and ε = Σ 2H·L/b = 6HL/b. With the Secure source each changed coordinate's
// rounding to the grid γ(b) adds γ (Grid weight 2H), ε·(1 + γ). The agent never computes its
// own ε: the report's ε is the ledger's.
func (p PrivacyConfig) ledgerReport(S, A, H, K, L int, b float64, secure bool) (ledger.Report, error) {
	model, prefix, releases := ledger.JDP, ledger.EntryCounter, max(1, K-1)
	if p.Model == LDP {
		model, prefix, releases = ledger.LDP, ledger.EntryReport, 1
	}
	l, err := ledger.New(ledger.Config{Model: model, Target: accounting.ApproxDP{Epsilon: p.Epsilon},
		Neighbouring: accounting.ReplaceOne})
	if err != nil {
		return ledger.Report{}, err
	}
	n := H * S * A
	for _, f := range []struct {
		name string
		dim  int
	}{{"visits", n}, {"transitions", n * S}, {"rewards", n}} {
		sens := 2 * float64(H)
		e := ledger.Entry{Name: prefix + "/" + f.name, Mechanism: ledger.Laplace, Norm: ledger.L1,
			Neighbouring: accounting.ReplaceOne, Sensitivity: sens, Factor: float64(L), Scale: b,
			Releases: releases, Dim: max(1, f.dim), Secure: secure,
			Inputs: map[string]float64{"horizon": float64(H), "levels": float64(L)}}
		if secure {
			e.Grid = ledger.Grid{Weight: sens, Scale: 1}
		}
		if err := l.Register(e); err != nil {
			return ledger.Report{}, err
		}
	}
	return l.Compose()
}

// secureScale returns the Laplace scale b' ≥ b(1 + γ(b')) with γ = noise.LaplaceGranularity:
// a Secure release at scale b' with per-coordinate sensitivity 1 + γ is as private as the
// calibrated release at scale b with sensitivity 1. The fixed point is reached in a few steps
// (γ is a power of two, non-decreasing in the scale); if the grid is coarser than the scale
// allows (b ≳ 2^28), the last iterate is returned and the report's ε states the shortfall.
func secureScale(b float64) float64 {
	bs := b
	for i := 0; i < 64; i++ {
		g := noise.LaplaceGranularity(bs)
		if bs >= b*(1+g) {
			break
		}
		bs = b * (1 + g)
	}
	return bs
}

// eBound returns E for a release summing c Laplace(b) draws per count, for a run of K
// episodes on an (S, A, H) MDP (tabular spec §3.4, §4.4).
func (p PrivacyConfig) eBound(b float64, c, S, A, H, K int) float64 {
	if p.Model == NonPrivate || b == 0 {
		return 0
	}
	if c < 1 {
		c = 1
	}
	if p.EMode == EPractical {
		return p.EScale * b * math.Sqrt(2*float64(c))
	}
	events := float64(K) * float64(H*S*A*(S+2))
	delta := p.Beta / (3 * events)
	bound, err := accounting.LaplaceSumChanBound(b, c, delta)
	if err != nil { // unreachable: b > 0, c ≥ 1 and δ ∈ (0,1) are guaranteed above
		return math.Inf(1)
	}
	return 4 * bound
}
