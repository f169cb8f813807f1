package linmix

import (
	"cmp"
	"fmt"
	"math"

	"github.com/dprl/dprl/agents/internal/agentkit"
	"github.com/dprl/dprl/internal/bounds"
	model "github.com/dprl/dprl/model/linmix"
	"github.com/dprl/dprl/privacy/ledger"
	"github.com/dprl/dprl/privacy/noise"
)

// Algorithm selects the learning algorithm.
type Algorithm int

const (
	// UCRLVTR is Luyo et al. Alg. 1 (privacy-preserving UCRL-VTR; non-private with Mode None).
	UCRLVTR Algorithm = iota
	// UCRLVTRPlus is Luyo et al. Alg. 3 (variance-aware UCRL-VTR+), as reconstructed in the
	// spec §4.
	UCRLVTRPlus
	// LinOptVI is Zhou's LinOpt-VI-Reg (Alg. 1); private instance Private-LinOpt-VI (Def. 6.2).
	LinOptVI
	// LinOptPO is Zhou's LinOpt-PO-Reg (Alg. 2); private instance Private-LinOpt-PO (Def. 6.3).
	LinOptPO
)

// String returns the algorithm's name.
func (a Algorithm) String() string {
	return agentkit.Name(a, "Algorithm", "ucrl-vtr", "ucrl-vtr+", "linopt-vi", "linopt-po")
}

// Mode selects the privacy model.
type Mode int

const (
	// None is non-private.
	None Mode = iota
	// JDP is joint differential privacy with a trusted curator and binary-tree noise.
	JDP
	// LDP is local differential privacy: users privatise their own statistics.
	LDP
)

// String returns the mode's name.
func (m Mode) String() string {
	return agentkit.Name(m, "Mode", "none", "jdp", "ldp")
}

// Calibration selects how the noise is calibrated.
type Calibration string

const (
	// Paper uses the papers' Gaussian σ's (Luyo Cor. 5/6/10/11, Zhou Thm 6.4/§5.7).
	Paper Calibration = "paper"
	// Laplace is Luyo Remark 1's pure-DP variant with the spec's derived constants (§3.5 [D]);
	// UCRL-VTR only.
	Laplace Calibration = "laplace"
	// ZCDP is the zCDP-calibrated Gaussian of spec P7 [D], valid for every ε > 0; UCRL-VTR only.
	ZCDP Calibration = "zcdp"
)

// BetaForm selects Luyo Alg. 1's confidence width.
type BetaForm string

const (
	// Corollary is 3(C_w+1)·sqrt(λ+Υ) + SelfNorm (Cor. 5/6; the default).
	Corollary BetaForm = "corollary"
	// Theorem7 is Thm 7's condition with equality (spec §3.4).
	Theorem7 BetaForm = "theorem7"
)

// Config configures an agent. The zero values of the multipliers mean 1 (theory).
type Config struct {
	// Algorithm and Mode select the agent.
	Algorithm Algorithm
	Mode      Mode
	// Calibration (default Paper).
	Calibration Calibration
	// Episodes is K (needed in advance, spec P20).
	Episodes int
	// Epsilon, Delta are the privacy parameters (ignored when Mode is None; Delta ignored by
	// the pure-DP Laplace calibration).
	Epsilon, Delta float64
	// P is the failure probability of the confidence bounds (p, α; default 0.05).
	P float64
	// Cw bounds ‖w_h‖; 0 uses the environment's exact value (spec P21).
	Cw float64
	// BetaMult multiplies every confidence width (c_β, post-processing; default 1 = theory).
	BetaMult float64
	// ShiftMult multiplies the 2Υ / 2Σ regulariser shift (c_shift; default 1). Neither
	// multiplier touches a noise level.
	ShiftMult float64
	// BetaForm selects Luyo Alg. 1's β (default Corollary).
	BetaForm BetaForm
	// StrictSensitivity multiplies Zhou's sensitivities by (√2, 2, √2, 2) (spec P8).
	StrictSensitivity bool

	knobs knobs
}

// knobs are test-only and audit-only switches, unreachable from the CLI or configs.
type knobs struct {
	noiseOff  bool    // σ = 0 and shift = 0 (noise-free equivalence tests)
	betaFixed float64 // if > 0, every β equals this value (before BetaMult)
	noiseDiv  float64 // divide every noise scale by this (broken variant)
	redraw    bool    // tree noise redrawn per release (broken variant)
	dataScale bool    // noise level computed from the data (broken variant)
	raw       bool    // planner reads raw statistics (broken variant)
}

func (c *Config) defaults() {
	c.Calibration = cmp.Or(c.Calibration, Paper)
	c.P = cmp.Or(c.P, 0.05)
	c.BetaMult = cmp.Or(c.BetaMult, 1)
	c.ShiftMult = cmp.Or(c.ShiftMult, 1)
	c.BetaForm = cmp.Or(c.BetaForm, Corollary)
	if c.Mode != None && c.Delta == 0 && c.Calibration != Laplace {
		c.Delta = 1e-5
	}
}

// Validate checks c (after defaults) and returns an error naming the field and its range.
func (c *Config) Validate() error {
	c.defaults()
	switch {
	case c.Algorithm < UCRLVTR || c.Algorithm > LinOptPO:
		return fmt.Errorf("algorithm: %d unknown (ucrl-vtr, ucrl-vtr+, linopt-vi, linopt-po)", int(c.Algorithm))
	case c.Mode < None || c.Mode > LDP:
		return fmt.Errorf("mode: %d unknown (none, jdp, ldp)", int(c.Mode))
	case c.Episodes < 1 || c.Episodes > bounds.MaxEpisodes:
		return fmt.Errorf("episodes: %d, want 1..%d", c.Episodes, bounds.MaxEpisodes)
	case !(c.P > 0 && c.P < 1):
		return fmt.Errorf("p: %v, want (0, 1)", c.P)
	case !(c.BetaMult > 0) || math.IsInf(c.BetaMult, 0):
		return fmt.Errorf("beta multiplier: %v, want a finite number > 0", c.BetaMult)
	case !(c.ShiftMult >= 0) || math.IsInf(c.ShiftMult, 0):
		return fmt.Errorf("shift multiplier: %v, want a finite number ≥ 0", c.ShiftMult)
	case !(c.Cw >= 0) || math.IsInf(c.Cw, 0):
		return fmt.Errorf("cw: %v, want a finite number ≥ 0 (0 = the environment's exact value)", c.Cw)
	case c.BetaForm != Corollary && c.BetaForm != Theorem7:
		return fmt.Errorf("beta form: %q, want corollary or theorem7", c.BetaForm)
	}
	switch c.Calibration {
	case Paper:
	case Laplace, ZCDP:
		if c.Algorithm != UCRLVTR {
			return fmt.Errorf("calibration: %q is defined for ucrl-vtr only (spec §3.5, P7)", c.Calibration)
		}
	default:
		return fmt.Errorf("calibration: %q, want paper, laplace or zcdp", c.Calibration)
	}
	if c.Mode != None {
		if !agentkit.ValidEpsilon(c.Epsilon) {
			return fmt.Errorf("epsilon: %v, want a finite number > 0", c.Epsilon)
		}
		if c.Calibration != Laplace && !agentkit.ValidDelta(c.Delta) {
			return fmt.Errorf("delta: %v, want (0, 1)", c.Delta)
		}
	}
	return nil
}

// Name returns a short label such as "ucrl-vtr/jdp" or "ucrl-vtr/ldp-laplace".
func (c Config) Name() string {
	s := c.Algorithm.String() + "/" + c.Mode.String()
	if c.Mode != None && c.Calibration != "" && c.Calibration != Paper {
		s += "-" + string(c.Calibration)
	}
	return s
}

// Constants are the public constants an agent actually uses, recorded with every run.
type Constants struct {
	// K0 is the tree depth (or Zhou's m).
	K0 int
	// SigmaMat and SigmaVec list the noise scale of the matrix and vector statistic of each
	// regression (σ for Gaussian, b for Laplace), before any multiplier.
	SigmaMat, SigmaVec []float64
	// NoiseKind is "gaussian", "laplace" or "none".
	NoiseKind string
	// Shift lists the diagonal shift 2Υ·c_shift (or 2Σ·c_shift) of each regression.
	Shift []float64
	// Ridge lists λ of each regression.
	Ridge []float64
	// Upsilon lists Υ (or Σ) of each regression (theory value).
	Upsilon []float64
	// Beta lists the widths actually used (after BetaMult); for UCRL-VTR+ at k = K: β̌, β̂, β̃;
	// for Zhou: β_p, β_r.
	Beta []float64
	// BetaMult and ShiftMult are the multipliers.
	BetaMult, ShiftMult float64
	// Privacy states the guarantee the calibration provides.
	Privacy string
	// EffectiveEpsilon is the ε the noise actually provides, at δ (0 for Laplace) under
	// replace-one neighbours: Ledger's (the nominal ε for a non-private agent).
	EffectiveEpsilon float64
	// Covered reports whether the nominal guarantee holds: Ledger.PrivateAtNominal (true for
	// a non-private agent, which claims nothing). The papers' own analyses are stated in
	// Privacy (Luyo's cover ε < 1 only).
	Covered bool
	// EpsilonZeroOut and EpsilonReplaceOne are, for Zhou's agents (whose paper calibration is
	// stated under zero-out neighbours), the ε at the configured δ that the privacy ledger
	// composes from the noise actually added under zero-out and under replace-one neighbours;
	// 0 for the other algorithms, whose calibrations are stated under replace-one.
	EpsilonZeroOut, EpsilonReplaceOne float64
	// Ledger is the guarantee as the privacy ledger composes it from the mechanisms the agent
	// registers (Agent.ledgerReport, replace-one): dprl's one privacy report type, which the
	// run directory's manifest and the service print. The non-private report for mode none.
	Ledger ledger.Report `json:"-"`
	// GridSlack bounds the relative increase of every statistic's sensitivity caused by the
	// Secure source rounding the statistic to its noise's grid (practical-privacy spec §7):
	// the Secure releases are the calibrated mechanisms at sensitivity ≤ Δ·(1 + GridSlack),
	// i.e. at noise scale ≥ σ/(1 + GridSlack). It is n·γ/Δ (Laplace, ℓ1) or √n·γ/Δ (Gaussian,
	// ℓ2) maximised over the statistics, with n the statistic's length, γ its grid step and Δ
	// the zero-out bound maxX² (Gram) or maxX·maxY (target), which is ≤ the Δ of every
	// calibration. Seeded runs (NewSeeded) do not round. It is stated beside the ledger: a
	// Secure agent's Ledger entries include the rounding itself (Agent.ledgerReport), and its
	// Laplace scales are widened to cover it (secureLaplace).
	GridSlack float64
}

// params returns the public parameters for the environment m.
func (c *Config) params(m *model.MDP) Params {
	cw := c.Cw
	if cw == 0 {
		cw = m.Cw()
	}
	delta := c.Delta
	if c.Calibration == Laplace && delta == 0 {
		delta = 0.5 // pure DP: δ is not used by any Laplace constant
	}
	return Params{K: c.Episodes, H: m.Horizon(), D: m.Dim(), D2: m.RewardDim(), Epsilon: c.Epsilon, Delta: delta, P: c.P, Cw: cw}
}

func gauss(s float64) noise.Calibration { return noise.GaussianNoise(s) }
