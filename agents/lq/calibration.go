package lq

import (
	"fmt"
	"math"

	"github.com/dprl/dprl/privacy/accounting"
	"github.com/dprl/dprl/privacy/counter"
	"github.com/dprl/dprl/privacy/ledger"
	"github.com/dprl/dprl/privacy/noise"
)

// Constants are the noise levels and Assumption-2 constants of Private-OFU-RL (lq spec §3.2).
// They are functions of public inputs only and are fixed before any data is seen.
type Constants struct {
	// Private is false for the non-private OFU-RL baseline (ε = ∞); then only Lambda* are set.
	Private bool `json:"private"`
	// Neighbouring is the convention the sensitivities are computed for.
	Neighbouring accounting.Neighbouring `json:"neighbouring"`
	// Calibration is "exact" (ρ* solves ρ + 2√(ρ ln(2/δ)) = ε/2, the default) or "paper"
	// (σ² = 8 m Δ² ln(2/δ)/ε², which overspends ε slightly under the paper's zCDP accounting but
	// not under the ledger's μ-GDP composition, Ledger).
	Calibration string `json:"calibration"`
	// M is the number of tree levels m = max(1, ⌈log₂ K⌉) (= NodesPerElement of a tree over
	// K−1 elements).
	M int `json:"m"`
	// Delta1 and Delta2 are the node sensitivities of the counters B_1 and B_2.
	Delta1 float64 `json:"delta1"`
	Delta2 float64 `json:"delta2"`
	// Rho is the zCDP parameter of each counter.
	Rho float64 `json:"rho"`
	// Sigma1 and Sigma2 are the node noise standard deviations of B_1 (symmetric, mirrored) and
	// B_2 (i.i.d. entries).
	Sigma1 float64 `json:"sigma1"`
	Sigma2 float64 `json:"sigma2"`
	// Lambda is Λ (the high-probability bound on ‖N_k‖), Eta = 2Λ the shift.
	Lambda float64 `json:"Lambda"`
	Eta    float64 `json:"eta"`
	// LambdaMin, LambdaMax, Nu are the constants of Assumption 2 (λ_min = Λ, λ_max = 3Λ; for
	// ε = ∞: λ_min = λ_max = λ, ν = 0).
	LambdaMin float64 `json:"lambda_min"`
	LambdaMax float64 `json:"lambda_max"`
	Nu        float64 `json:"nu"`
	// Epsilon and DeltaDP are the (ε, δ)-DP guarantee of the whole billboard, read from Ledger
	// (the ledger composes the two counters from Sigma1, Sigma2); +Inf if not private.
	Epsilon float64 `json:"-"`
	DeltaDP float64 `json:"delta"`
	// Guarantee renders (Epsilon, DeltaDP) for manifests ("non-private" for ε = ∞).
	Guarantee string `json:"guarantee"`
	// Ledger is the guarantee as the privacy ledger composes it from the two counters the agent
	// registers (ledgerReport): dprl's one privacy report type, which the run directory's
	// manifest and the service print. A non-private baseline's is the ledger's None report.
	Ledger ledger.Report `json:"-"`

	capacity int // counter capacity max(1, K−1)
	maxElems int // K−1: the most elements ever inserted
}

// ComputeConstants returns the constants of lq spec §3.2 for the public problem pub and the
// agent configuration cfg (with cfg.Episodes = K).
func ComputeConstants(pub Public, cfg Config) (Constants, error) {
	if err := cfg.validate(); err != nil {
		return Constants{}, err
	}
	if math.IsInf(cfg.Epsilon, 1) {
		l := cfg.Lambda
		c := Constants{Private: false, Calibration: "none", Eta: l, LambdaMin: l, LambdaMax: l,
			Epsilon: math.Inf(1), Guarantee: "non-private"}
		led, err := ledger.New(ledger.Config{Model: ledger.None})
		if err != nil {
			return Constants{}, err
		}
		if c.Ledger, err = led.Compose(); err != nil {
			return Constants{}, err
		}
		return c, nil
	}
	K := cfg.Episodes
	p, n := float64(pub.N+pub.D), float64(pub.N)
	c := Constants{Private: true, Neighbouring: cfg.Neighbouring, Calibration: "exact"}
	c.capacity = max(1, K-1)
	c.maxElems = K - 1
	c.M = counter.Levels(c.capacity)
	if want := max(1, int(math.Ceil(math.Log2(float64(K))))); c.M != want && K > 1 {
		return Constants{}, fmt.Errorf("lq: internal: tree levels %d != ceil(log2 K) = %d", c.M, want)
	}
	H, g := float64(pub.H), pub.Gamma
	c.Delta1, c.Delta2 = H*(1+g)*(1+g), H*(1+g)
	if cfg.Neighbouring == accounting.ReplaceOne {
		// [PAPER BUG] sensitivity convention (lq spec §3.2): replace-one doubles the B_2 node
		// sensitivity and multiplies the PSD B_1 one by √2.
		c.Delta1 *= math.Sqrt2
		c.Delta2 *= 2
	}
	m := float64(c.M)
	half := accounting.ApproxDP{Epsilon: cfg.Epsilon / 2, Delta: cfg.Delta / 2}
	if cfg.PaperCalibration {
		c.Calibration = "paper"
		l := math.Log(2 / cfg.Delta)
		c.Sigma1 = math.Sqrt(8 * m * c.Delta1 * c.Delta1 * l / (cfg.Epsilon * cfg.Epsilon))
		c.Sigma2 = math.Sqrt(8 * m * c.Delta2 * c.Delta2 * l / (cfg.Epsilon * cfg.Epsilon))
		c.Rho = accounting.GaussianRho(math.Sqrt(m)*c.Delta1, c.Sigma1)
	} else {
		z, err := accounting.ZCDPFor(half)
		if err != nil {
			return Constants{}, fmt.Errorf("lq: calibrating the counters: %w", err)
		}
		c.Rho = z.Rho
		if c.Sigma1, err = accounting.GaussSigmaZCDP(math.Sqrt(m)*c.Delta1, z.Rho); err != nil {
			return Constants{}, err
		}
		if c.Sigma2, err = accounting.GaussSigmaZCDP(math.Sqrt(m)*c.Delta2, z.Rho); err != nil {
			return Constants{}, err
		}
	}
	// Accountant: the ledger composes the two counters from the σ actually used (privacy is
	// never assumed, and the agent does not compute its own ε).
	if err := c.account(pub, cfg, false, false); err != nil {
		return Constants{}, err
	}
	Kf := float64(K)
	c.Lambda = c.Sigma1 * math.Sqrt(m) * (4*math.Sqrt(p) + math.Sqrt(8*math.Log(4*Kf/cfg.Alpha)))
	c.Eta = 2 * c.Lambda
	c.LambdaMin, c.LambdaMax = c.Lambda, 3*c.Lambda
	c.Nu = c.Sigma2 * math.Sqrt(m/c.Lambda) * (math.Sqrt(2*n*p) + math.Sqrt(4*math.Log(2*Kf/cfg.Alpha)))
	return c, nil
}

// Names of the ledger entries of Private-OFU-RL's two counters.
const (
	// EntryB1 is the tree counter B_1 of the Gram matrices (packed upper triangle).
	EntryB1 = ledger.EntryCounter + "/B1"
	// EntryB2 is the tree counter B_2 of the cross products (p×n).
	EntryB2 = ledger.EntryCounter + "/B2"
)

// account sets Ledger, Epsilon, DeltaDP and Guarantee from the ledger's composition of the two
// counters (ledgerReport), secure1 and secure2 saying whether B_1's and B_2's noise sources
// are hardened (noise.Secure).
func (c *Constants) account(pub Public, cfg Config, secure1, secure2 bool) error {
	var err error
	if c.Ledger, err = c.ledgerReport(pub, cfg, secure1, secure2); err != nil {
		return err
	}
	c.Epsilon, c.DeltaDP = c.Ledger.Epsilon, c.Ledger.Delta
	c.Guarantee = fmt.Sprintf("(eps=%.6g, delta=%.3g)-DP billboard => JDP, %s", c.Epsilon, c.DeltaDP, c.Neighbouring)
	return nil
}

// withSources returns c accounted for the counters' actual noise sources (NewCurator): a
// private agent whose B_1 or B_2 source is hardened (noise.Secure) has that counter's entry
// carry the grid rounding (ledgerReport); with seeded sources c is returned unchanged.
func (c Constants) withSources(pub Public, cfg Config, src1, src2 noise.Source) (Constants, error) {
	// A counter without noise (σ = 0: test constants) rounds nothing (Secure.AddGaussian).
	s1 := src1 != nil && src1.Secure() && c.Sigma1 > 0
	s2 := src2 != nil && src2.Secure() && c.Sigma2 > 0
	if !c.Private || (!s1 && !s2) {
		return c, nil
	}
	if err := c.account(pub, cfg, s1, s2); err != nil {
		return Constants{}, err
	}
	return c, nil
}

// ledgerReport registers the billboard's two binary-tree counters in a privacy ledger (target
// (cfg.Epsilon, cfg.Delta), the agent's neighbouring relation) and composes them: each is a
// Gaussian tree over capacity elements whose nodes (M per element, sensitivity factor √M) have
// ℓ2 sensitivity Delta1 (B_1, the packed upper triangle; mirroring adds no noise and no
// sensitivity) or Delta2 (B_2) and noise σ = Sigma1 or Sigma2, the agent's own calibration. The
// ledger only accounts: μᵢ = √M·Δᵢ/σᵢ-GDP, composed exactly to μ = √(μ₁² + μ₂²) and converted
// to (ε, δ) at the target δ (privacy/ledger). A counter fed by a Secure source (secure1,
// secure2) rounds every node's exact sum to the grid γ = noise.GaussianGranularity(σᵢ) of its
// noise before adding it (counter.Tree, practical-privacy spec §7): all dim coordinates of a
// user's element may change, each by at most γ after rounding, so the node sensitivity is
// Δᵢ + √dim·γ (Grid{Weight: √dim, Scale: 1}; no coordinate multipliers) and the entry says so.
func (c Constants) ledgerReport(pub Public, cfg Config, secure1, secure2 bool) (ledger.Report, error) {
	l, err := ledger.New(ledger.Config{Model: ledger.JDP, Target: accounting.ApproxDP{Epsilon: cfg.Epsilon, Delta: cfg.Delta},
		Neighbouring: cfg.Neighbouring})
	if err != nil {
		return ledger.Report{}, err
	}
	p := pub.N + pub.D
	in := map[string]float64{"horizon": float64(pub.H), "gamma": pub.Gamma, "levels": float64(c.M)}
	for _, e := range []struct {
		name        string
		sens, sigma float64
		dim         int
		secure      bool
	}{{EntryB1, c.Delta1, c.Sigma1, noise.PackedLen(p), secure1}, {EntryB2, c.Delta2, c.Sigma2, p * pub.N, secure2}} {
		en := ledger.Entry{Name: e.name, Mechanism: ledger.GaussianCounter, Counter: "tree",
			Norm: ledger.L2, Neighbouring: cfg.Neighbouring, Sensitivity: e.sens, Factor: math.Sqrt(float64(c.M)),
			Sigma: e.sigma, Releases: c.capacity, Dim: e.dim, Inputs: in}
		if e.secure {
			en.Secure, en.Grid = true, ledger.Grid{Weight: math.Sqrt(float64(e.dim)), Scale: 1}
		}
		if err := l.Register(en); err != nil {
			return ledger.Report{}, err
		}
	}
	return l.Compose()
}
