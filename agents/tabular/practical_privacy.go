package tabular

import (
	"fmt"
	"math"

	"github.com/dprl/dprl/agents/internal/agentkit"
	"github.com/dprl/dprl/privacy/accounting"
	"github.com/dprl/dprl/privacy/ledger"
)

// HomogeneityAssumption is the assumption a pooled practical agent makes and prints: its
// estimates are right only if the MDP is time-homogeneous (practical-privacy spec §4).
const HomogeneityAssumption = "ASSUMPTION: the MDP is time-homogeneous (P_h = P, r_h = r for every h); " +
	"statistics are pooled over h"

// PracticalPrivacy is the privacy setting of dprl's practical agents (practical-privacy spec
// §2–§5). Every field is public: the noise level is computed from them, and from the counter's
// sensitivity factor, before any data is seen.
type PracticalPrivacy struct {
	// Model is JDP (trusted curator, Gaussian continual counter), LDP (Gaussian noise on the
	// user's side) or NonPrivate (exact counts: the noise-off twin).
	Model Model `json:"-"`
	// Epsilon and Delta are the target (ε, δ) under replace-one neighbours.
	Epsilon float64 `json:"epsilon"`
	Delta   float64 `json:"delta"`
	// Pool pools the statistics over h (HomogeneityAssumption).
	Pool bool `json:"pool"`
	// VisitCap m > 0 keeps only the first m visits of each (s,a) per episode (pooled) before
	// release; 0 keeps every visit (m = H). Ignored without pooling (a step-dependent pair is
	// visited at most once per episode).
	VisitCap int `json:"visit_cap"`
	// BatchEvery M ≥ 1: the statistics are released after every M users (a data-independent
	// schedule, spec §4); the counter holds ⌈(K−1)/M⌉ elements.
	BatchEvery int `json:"batch_every"`
	// Counter names the JDP continual counter (see PracticalCounters).
	Counter string `json:"counter,omitempty"`
	// RewardWeight w ∈ (0, 1] scales the reward block of the contribution (0 means 1): the
	// ℓ2 budget is split between transitions and rewards, Δ₂² = 2(1+w²)·M₂
	// (PracticalSensitivity); the released R̂ is divided by w, so its noise std is σ/w.
	RewardWeight float64 `json:"reward_weight,omitempty"`
}

// rewardWeight returns the effective reward weight w ∈ (0, 1].
func (p PracticalPrivacy) rewardWeight() float64 {
	if p.RewardWeight == 0 {
		return 1
	}
	return p.RewardWeight
}

// Validate checks the setting; errors name the field and its allowed range.
func (p PracticalPrivacy) Validate() error {
	err := agentkit.CheckTrust(p.Model, p.Epsilon, p.Delta, "privacy.model: unknown model %d (allowed: none, jdp, ldp)",
		"privacy.epsilon: must be finite and > 0, got %g", "privacy.delta: must be in (0,1), got %g")
	if err != nil {
		return err
	}
	if p.VisitCap < 0 {
		return fmt.Errorf("privacy.visit_cap: must be >= 0 (0 = no cap), got %d", p.VisitCap)
	}
	if !(p.RewardWeight >= 0 && p.RewardWeight <= 1) {
		return fmt.Errorf("privacy.reward_weight: must be in (0, 1] (0 = 1), got %g", p.RewardWeight)
	}
	if p.BatchEvery < 1 {
		return fmt.Errorf("privacy.batch_every: must be >= 1, got %d", p.BatchEvery)
	}
	if p.Model == JDP {
		if _, err := lookupCounter(p.Counter); err != nil {
			return err
		}
	}
	return nil
}

// capOf returns the effective per-episode visit cap m ∈ [1, H] of a pooled agent.
func (p PracticalPrivacy) capOf(H int) int {
	if p.VisitCap == 0 || p.VisitCap > H {
		return H
	}
	return p.VisitCap
}

// maxSumSquares returns max Σ_i c_i² over nonnegative integers with c_i ≤ m, Σ c_i ≤ H and at
// most n nonzero terms: fill greedily (the maximum of a convex function over this polytope is
// at a vertex: as many full cells as possible, then the remainder).
func maxSumSquares(H, m, n int) float64 {
	full := min(H/m, n)
	s := float64(full) * float64(m) * float64(m)
	if full < n {
		r := H - full*m
		s += float64(r) * float64(r)
	}
	return s
}

// PracticalSensitivity returns the ℓ2 sensitivity Δ₂ of one user's whole contribution — the
// vector x = (N(s,a,s'), w·R(s,a)) of her episode, pooled over h or step-dependent, w the
// reward weight — under replace-one neighbours (practical-privacy spec §2, §4).
//
// Claim. Let m = min(VisitCap, H) (pooled; m = H without a cap), n the number of cells (S·A
// pooled) and w ∈ (0, 1] the reward weight. Then for any two episodes x, x′
//
//	‖x − x′‖₂² ≤ 2(1+w²)·M₂,   M₂ = max{Σ c_i² : c_i ∈ {0..m}, Σ c_i ≤ H, at most n cells}
//
// so with w = 1 Δ₂ = 2·√M₂ ≤ 2·√(H·m); without a cap Δ₂ = 2H, with m = 1
// Δ₂ = 2·√min(H, S·A). Step-dependent (no pooling): each (h,s,a) is one cell visited at most
// once, M₂ = H, Δ₂ = √(4H) at w = 1, the spec's value.
//
// Proof. Let c(s,a) ≤ m be the number of kept visits of (s,a); Σ c ≤ H since an episode has H
// steps. The transition block has Σ_{s′} N(s,a,s′) = c(s,a), so Σ_{s′} N(s,a,s′)² ≤ c(s,a)²
// and ‖x_N‖² ≤ Σ c(s,a)² ≤ M₂. The reward block has w·R(s,a) ∈ [0, w·c(s,a)] because rewards
// are clipped to [0, 1] at the boundary, so ‖x_R‖² ≤ w²·M₂. All coordinates of x and x′ are
// nonnegative, so ⟨x, x′⟩ ≥ 0 and ‖x − x′‖² = ‖x‖² + ‖x′‖² − 2⟨x, x′⟩ ≤ 2·max‖x‖² ≤
// 2(1+w²)·M₂. The bound is attained (x and x′ with all visits in distinct cells and rewards
// 1). M₂ ≤ H·m since Σ c² ≤ m·Σ c. Dividing the released R block by w afterwards is
// post-processing.
//
// Validity of the kept samples (why the cap does not bias the estimates). Imagine, for every
// (s,a), an i.i.d. stack of next states s′₁, s′₂, … ~ P(·|s,a) and rewards drawn in advance,
// the j-th visit of (s,a) in the episode consuming the j-th entry (the "stack of rewards"
// construction; it yields the same law of the trajectory by the strong Markov property, the
// j-th visit time being a stopping time). Keeping the first m visits keeps exactly the
// first min(m, visits) entries of each stack, which are i.i.d. draws from P(·|s,a): the
// decision to keep an entry depends only on the past, never on the entry itself.
func PracticalSensitivity(S, A, H int, p PracticalPrivacy) float64 {
	w := p.rewardWeight()
	m2 := float64(H)
	if p.Pool {
		m2 = maxSumSquares(H, p.capOf(H), S*A)
	}
	return math.Sqrt(2 * (1 + w*w) * m2)
}

// ledger returns the privacy ledger of a practical agent of the given trust model: the target
// (ε, δ) under replace-one neighbours and, when pooled, HomogeneityAssumption. The agent
// registers its mechanism (the JDP counter or the LDP report) with it and takes σ from its
// calibration; the report is the ledger's.
func (p PracticalPrivacy) ledger(m Model) (*ledger.Ledger, error) {
	cfg := ledger.Config{Model: m.String(), Target: accounting.ApproxDP{Epsilon: p.Epsilon, Delta: p.Delta}}
	if p.Pool {
		cfg.Assumption = HomogeneityAssumption
	}
	return ledger.New(cfg)
}

// inputs returns the public parameters the sensitivity and the schedule are computed from, as
// the report echoes them.
func (p PracticalPrivacy) inputs() map[string]float64 {
	pool := 0.0
	if p.Pool {
		pool = 1
	}
	return map[string]float64{"pool": pool, "visit_cap": float64(p.VisitCap), "batch_every": float64(p.BatchEvery), "reward_weight": p.rewardWeight()}
}
