package linmdp

import (
	"fmt"
	"math"
	"math/bits"

	"github.com/dprl/dprl/internal/bounds"
	"github.com/dprl/dprl/privacy/accounting"
)

// Calibration selects the noise calibration of Ngo et al.'s Algorithm 1 (spec §3.2).
type Calibration int

const (
	// CalibSound is [S], the privacy-consistent calibration: σ_node and λ̃_Λ from the tree
	// accounting, σ_y² = U_max·H·Δ_y²/ρ (spec §3.5, pitfalls N3–N5). Default.
	CalibSound Calibration = iota
	// CalibPrinted is [P], the printed constants: λ̃_Λ = ln K(6√(d+1) + 2 ln(3KH/p))/√(2ρ)
	// and σ_y² = 6H²N_max/ρ. σ_node is taken from [S] (the paper gives no coherent per-node
	// value, N3). NOT ρ-zCDP at the nominal ρ: the agent reports its effective ε.
	CalibPrinted
)

// String returns "S" or "P".
func (c Calibration) String() string {
	if c == CalibPrinted {
		return "P"
	}
	return "S"
}

// NgoConstants holds every constant of Ngo et al.'s Algorithm 1 (spec §3.2), computed from
// public inputs before any data is seen.
type NgoConstants struct {
	// K, H, D are the sizes; Rho the zCDP budget ρ; P the failure probability p.
	K, H, D int
	Rho, P  float64
	// Calibration is [S] or [P].
	Calibration Calibration
	// L = ⌊log2 K⌋ + 1 tree levels.
	L int
	// SigmaNode is the per-entry std of each tree node's symmetric noise matrix.
	SigmaNode float64
	// LambdaTilde is λ̃_Λ; the released Gram matrices carry a 2λ̃_Λ·I shift (eq. (7)).
	LambdaTilde float64
	// NMax is N_max (Alg. 1 line 3, Thm 11); UMax = ⌈N_max⌉ − 1 is the update cap.
	NMax float64
	UMax int
	// SigmaY is the per-coordinate std of the regression-vector noise (Alg. 1 line 11).
	SigmaY float64
	// LambdaY is λ̃_y, the high-probability bound on ‖η‖.
	LambdaY float64
	// UK, LnChi, BetaThm and BetaReq are the quantities of Thm 16 / Lemma 26.
	UK, LnChi, BetaThm, BetaReq float64
	// Beta is the theory β before the c_beta multiplier: max(β_thm, β_req) in [S], β_thm
	// in [P].
	Beta float64
	// RhoSpent is the zCDP cost of the noise actually added, ρ_Λ + ρ_y with
	// ρ_Λ = H·L·Δ_Λ²/(2σ_node²) and ρ_y = U_max·H·Δ_y²/(2σ_y²). It equals Rho in [S] and
	// exceeds it in [P].
	RhoSpent float64
}

// RhoFromEpsDelta returns the ρ for which ρ-zCDP implies (ε,δ)-DP by [N] Lemma 6:
// ρ = (√(ln(1/δ)+ε) − √ln(1/δ))² (spec §1.6).
func RhoFromEpsDelta(eps, delta float64) (float64, error) {
	z, err := accounting.ZCDPFor(accounting.ApproxDP{Epsilon: eps, Delta: delta})
	if err != nil {
		return 0, err
	}
	return z.Rho, nil
}

// EpsFromRho returns ε = ρ + 2√(ρ ln(1/δ)) ([N] Lemma 6; Sec. 4.2 prints it without the 2,
// pitfall N5).
func EpsFromRho(rho, delta float64) float64 {
	return rho + 2*math.Sqrt(rho*math.Log(1/delta))
}

func checkSizes(K, H, D int, p float64) error {
	switch {
	case K < 1 || K > 1<<40:
		return fmt.Errorf("episodes K must be in [1, 2^40], got %d", K)
	case H < 1 || H > 100000:
		return fmt.Errorf("horizon H must be in [1, 100000], got %d", H)
	case D < 1 || D > 1000:
		return fmt.Errorf("feature dimension d must be in [1, 1000], got %d", D)
	case !(p > 0 && p < 1):
		return fmt.Errorf("failure probability p must be in (0, 1), got %g", p)
	}
	return nil
}

// NewNgoConstants computes the constants of spec §3.2 for budget ρ (zCDP) and failure
// probability p.
func NewNgoConstants(K, H, D int, rho, p float64, mode Calibration) (NgoConstants, error) {
	if err := checkSizes(K, H, D, p); err != nil {
		return NgoConstants{}, err
	}
	if !(rho > 0) || math.IsInf(rho, 0) {
		return NgoConstants{}, fmt.Errorf("rho must be finite and > 0, got %g", rho)
	}
	if mode != CalibSound && mode != CalibPrinted {
		return NgoConstants{}, fmt.Errorf("calibration must be S or P, got %d", int(mode))
	}
	k, h, d := float64(K), float64(H), float64(D)
	c := NgoConstants{K: K, H: H, D: D, Rho: rho, P: p, Calibration: mode}
	c.L = bits.Len(uint(K))
	const dLam = 2.0
	dy := 2 * (h + 1)
	c.SigmaNode = math.Sqrt(h * float64(c.L) * dLam * dLam / rho)
	lnInvAlpha := math.Log(3 * k * h / p) // α = p/(3KH)
	nmax := func(lt float64) float64 { return d * h / math.Ln2 * math.Log1p(k/(lt*d)) }
	switch mode {
	case CalibSound:
		c.LambdaTilde = math.Sqrt(float64(c.L)) * c.SigmaNode * (4*math.Sqrt(d) + 2*lnInvAlpha)
		c.NMax = nmax(c.LambdaTilde)
		c.UMax = max(int(math.Ceil(c.NMax))-1, 0)
		c.SigmaY = math.Sqrt(float64(c.UMax) * h * dy * dy / rho)
		c.LambdaY = c.SigmaY * (math.Sqrt(d) + 2*math.Sqrt(lnInvAlpha))
	case CalibPrinted:
		c.LambdaTilde = math.Log(k) * (6*math.Sqrt(d+1) + 2*lnInvAlpha) / math.Sqrt(2*rho)
		c.NMax = nmax(c.LambdaTilde)
		c.UMax = max(int(math.Ceil(c.NMax))-1, 0)
		c.SigmaY = math.Sqrt(6 * h * h * c.NMax / rho)
		c.LambdaY = h * c.NMax * math.Sqrt(lnInvAlpha/rho)
	}
	c.UK = math.Max(1, 2*h*math.Sqrt(d*k/c.LambdaTilde)+c.LambdaY/c.LambdaTilde)
	// χ = 25⁴·162·K⁴·d·U_K·H/p (Thm 16; pitfall N10), in logs.
	c.LnChi = 4*math.Log(25) + math.Log(162) + 4*math.Log(k) + math.Log(d*c.UK*h/p)
	c.BetaThm = 5*h*h*math.Sqrt(d*c.LambdaTilde*c.LnChi) + 6*d*h*math.Sqrt(c.LnChi)
	c.BetaReq = 12*h*math.Sqrt(d*c.LambdaTilde) + 6*d*h*math.Sqrt(c.LnChi) + c.LambdaY/math.Sqrt(c.LambdaTilde)
	if mode == CalibSound {
		c.Beta = math.Max(c.BetaThm, c.BetaReq)
	} else {
		c.Beta = c.BetaThm
	}
	c.RhoSpent = h * float64(c.L) * dLam * dLam / (2 * c.SigmaNode * c.SigmaNode)
	if c.UMax > 0 {
		c.RhoSpent += float64(c.UMax) * h * dy * dy / (2 * c.SigmaY * c.SigmaY)
	}
	return c, nil
}

// WithUMax returns c with the update cap replaced by a data-independent u (spec §3.2 allows
// e.g. 2dH⌈log2 K⌉); σ_y is recomputed from u in [S] so privacy stays valid.
func (c NgoConstants) WithUMax(u int) NgoConstants {
	c.UMax = u
	c.NMax = float64(u + 1)
	h, d := float64(c.H), float64(c.D)
	dy := 2 * (h + 1)
	if c.Calibration == CalibSound {
		c.SigmaY = math.Sqrt(float64(u) * h * dy * dy / c.Rho)
		c.LambdaY = c.SigmaY * (math.Sqrt(d) + 2*math.Sqrt(math.Log(3*float64(c.K)*h/c.P)))
	}
	c.RhoSpent = h * float64(c.L) * 4 / (2 * c.SigmaNode * c.SigmaNode)
	if u > 0 {
		c.RhoSpent += float64(u) * h * dy * dy / (2 * c.SigmaY * c.SigmaY)
	}
	return c
}

// LuyoCalibration selects the noise calibration of Luyo et al.'s Algorithm 2.
type LuyoCalibration int

const (
	// LuyoPaper is App. E.1 exactly (advanced composition), with c_K = d·Υ. Default.
	LuyoPaper LuyoCalibration = iota
	// LuyoZCDP is the spec §4.6 zCDP recalibration (NOT in the paper; labelled as such).
	LuyoZCDP
)

// String returns "paper" or "zcdp".
func (c LuyoCalibration) String() string {
	if c == LuyoZCDP {
		return "zcdp(non-paper)"
	}
	return "paper"
}

// LuyoConstants holds the constants of Luyo et al.'s Algorithm 2 (App. E.1 / spec §4.1),
// computed from public inputs before any data is seen.
type LuyoConstants struct {
	// K, H, D are the sizes; Epsilon, Delta the target; P the failure probability.
	K, H, D           int
	Epsilon, Delta, P float64
	// Calibration is App. E.1 (paper) or spec §4.6 (zCDP).
	Calibration        LuyoCalibration
	Lambda             float64 // λ = d
	B, B0              int     // number of batches, tree depth
	SigmaLam, SigmaU   float64 // per-entry node noise std, per-coordinate u noise std
	Upsilon, CK, CU    float64 // Υ, c_K = d·Υ, C_u
	UK, LnChi, Beta    float64 // Lemma 19, Lemma 20, β before c_beta
	TreeLevels         int     // levels of the batch tree actually used: Levels(B−1)
	RhoCertified       float64 // zCDP cost of the noise actually added (valid for every ε)
	EpsilonCertified   float64 // ε at Delta from RhoCertified (Lemma 6)
	PaperClaimApplies  bool    // the paper's proof covers ε, δ ∈ (0, 1) only (Thm 8)
	BatchesFromFormula bool    // B from E.1 (false: overridden)
}

// NewLuyoConstants computes spec §4.1 (App. E.1 with c_K = d·Υ) or §4.6 (zCDP). B = 0 selects
// E.1's B = ⌈(Kε)^{2/5}/(d^{3/5}H^{1/5})⌉ (d^{3/5}, pitfall L2); B = K gives the non-batched
// variant.
func NewLuyoConstants(K, H, D int, eps, delta, p float64, B int, mode LuyoCalibration) (LuyoConstants, error) {
	if err := checkSizes(K, H, D, p); err != nil {
		return LuyoConstants{}, err
	}
	if !(eps > 0) || math.IsInf(eps, 0) {
		return LuyoConstants{}, fmt.Errorf("epsilon must be finite and > 0, got %g", eps)
	}
	if !(delta > 0 && delta < 1) {
		return LuyoConstants{}, fmt.Errorf("delta must be in (0, 1), got %g", delta)
	}
	if B < 0 || B > K {
		return LuyoConstants{}, fmt.Errorf("batches B must be in [0, K=%d] (0 = E.1 formula), got %d", K, B)
	}
	if mode != LuyoPaper && mode != LuyoZCDP {
		return LuyoConstants{}, fmt.Errorf("luyo calibration must be paper or zcdp, got %d", int(mode))
	}
	k, h, d := float64(K), float64(H), float64(D)
	c := LuyoConstants{K: K, H: H, D: D, Epsilon: eps, Delta: delta, P: p, Calibration: mode, Lambda: d}
	if B == 0 {
		c.BatchesFromFormula = true
		B = int(math.Ceil(math.Pow(k*eps, 0.4) / (math.Pow(d, 0.6) * math.Pow(h, 0.2))))
		B = min(max(B, 1), K)
	}
	c.B = B
	b := float64(B)
	c.B0 = int(math.Ceil(math.Log2(b) + 1))
	c.TreeLevels = bits.Len(uint(max(B-1, 1)))
	lnT := math.Log(6 * k * h / p)
	dy := 2 * (h + 1)
	switch mode {
	case LuyoPaper:
		l2 := math.Log(32 * h * float64(c.B0) * b / delta)
		c.SigmaLam = 128 / eps * math.Sqrt(b*h*float64(c.B0)) * l2 * l2
		c.SigmaU = 128 / eps * h * math.Sqrt(h*b) * l2 * l2
		c.Upsilon = c.SigmaLam * float64(c.B0) * (4*math.Sqrt(d) + 2*lnT)
	case LuyoZCDP:
		rho, err := RhoFromEpsDelta(eps, delta)
		if err != nil {
			return LuyoConstants{}, err
		}
		lb := float64(c.TreeLevels)
		c.SigmaLam = math.Sqrt(h * lb * 4 / rho)
		c.SigmaU = math.Sqrt(math.Max(b-1, 1) * h * dy * dy / rho)
		c.Upsilon = math.Sqrt(lb) * c.SigmaLam * (4*math.Sqrt(d) + 2*lnT)
	}
	c.CK = d * c.Upsilon
	c.CU = c.SigmaU * (math.Sqrt(d) + 2*math.Sqrt(lnT))
	reg := c.Lambda + c.CK
	c.UK = math.Max(1, 2*h*math.Sqrt(d*k/reg)+c.CU/reg)
	// χ = 24²·18·K²·d·U_K·H/p (Lemma 20), in logs.
	c.LnChi = 2*math.Log(24) + math.Log(18) + 2*math.Log(k) + math.Log(d*c.UK*h/p)
	c.Beta = 24 * h * math.Sqrt(d*reg) * c.LnChi
	// Certified zCDP of the noise actually added: a changed user alters one leaf of each of
	// the H trees (≤ TreeLevels released nodes, Frobenius ≤ 2 each) and one term of each of the
	// ≤ (B−1)·H released u vectors (sensitivity 2(H+1)).
	c.RhoCertified = h*float64(c.TreeLevels)*4/(2*c.SigmaLam*c.SigmaLam) + math.Max(b-1, 0)*h*dy*dy/(2*c.SigmaU*c.SigmaU)
	c.EpsilonCertified = EpsFromRho(c.RhoCertified, delta)
	c.PaperClaimApplies = mode == LuyoPaper && eps < 1
	// A tiny ε makes the noise scales (∝ 1/ε) or the width overflow: refuse it here, before
	// any tree is built or any data is seen.
	for _, v := range []struct {
		name string
		x    float64
	}{{"σ_Λ", c.SigmaLam}, {"σ_u", c.SigmaU}, {"β", c.Beta}} {
		if !(v.x > 0) || math.IsInf(v.x, 0) {
			return LuyoConstants{}, fmt.Errorf("epsilon: %g makes %s = %g (not a finite positive number); use a larger ε (dprl accepts ε in %s)", eps, v.name, v.x, bounds.EpsilonRange)
		}
	}
	return c, nil
}
