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

// PublicRewardsStructure is what a practical agent that uses the environment's public reward
// table (PracticalPrivacy.PublicRewards) states in its privacy report (ledger Config.Public):
// the guarantee covers the transitions only, because rewards are not data.
const PublicRewardsStructure = "PUBLIC: the reward function (mean rewards per step, entry rewards, terminal reward) is " +
	"the environment's published table; the agent plans with it, never reads a user's rewards and releases no reward statistics"

// PublicSupportStructure is what a practical agent that uses the environment's public
// transition support (PracticalPrivacy.PublicSupport) states in its privacy report (ledger
// Config.Public): its releases have no coordinate outside the support, which is not data.
const PublicSupportStructure = "PUBLIC: the support of the transitions (the next states each (s, a) can reach, not their probabilities) " +
	"is the environment's published rule; the agent releases transition counts only inside it and plans with P = 0 outside it"

// DefaultNormBudget is the per-user budget B on the squared norm Σ_(s,a) c(s,a)² of the kept
// visit counts when PracticalPrivacy.NormBudget is 0: M₂ of RiverSwim at H = 20 with the
// default cap m = 4, so it never binds at H ≤ 20 with m = 4 (M₂ ≤ m·H = 80) and bounds Δ₂ by
// √(2(1+w²)·80) at every longer horizon (PracticalSensitivity). Where it binds, repeat visits
// may use only half of it (contribution.add): with the whole budget open to repeats, the
// visits near the start of a long episode spent it and the states reached later were never
// kept (FrozenLake 8×8 at H = 200: the noise-off twin's R(10⁵) rose from 1.4·10³–1.9·10³ to
// 1.7·10⁴–5.3·10⁴ over seeds 1–3; with the half rule 1.8·10³ on average).
const DefaultNormBudget = 80

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
	// NormBudget B ≥ 0 bounds the squared norm of one user's kept visit counts: a visit of
	// (s,a) is kept only if, after counting it, Σ_(s,a) c(s,a)² ≤ B (c the kept visits so
	// far; a decision from the past only) — ≤ ⌊B/2⌋ for a repeat visit when the budget binds
	// (B < M₂), leaving the rest to first visits of new pairs — so Δ₂² = 2(1+w²)·min(M₂, B)
	// (PracticalSensitivity). 0 means DefaultNormBudget; a budget ≥ M₂ never binds.
	NormBudget int `json:"norm_budget,omitempty"`
	// PublicRewards says the environment's reward function is public structure
	// (model.MDP.PublicRewards): the contribution has no reward block (Δ₂² = 2·min(M₂, B)),
	// users' reported rewards are never read, and the planners use the exact public rewards
	// (PracticalConfig.Rewards, EntryReward). The report states it (PublicRewardsStructure).
	// It comes with the environment, not with the configuration's JSON.
	PublicRewards bool `json:"-"`
	// PublicSupport says the support of the environment's transitions is public structure
	// (model.MDP.PublicSupport): the contribution has coordinates only inside it (the same
	// kept counts, so the same Δ₂), and the planners estimate P̂ = 0 outside it
	// (PracticalConfig.Support; support.go). The report states it (PublicSupportStructure).
	// It comes with the environment, not with the configuration's JSON.
	PublicSupport bool `json:"-"`
}

// normBudget returns the effective norm budget B (DefaultNormBudget for 0).
func (p PracticalPrivacy) normBudget() int {
	if p.NormBudget == 0 {
		return DefaultNormBudget
	}
	return p.NormBudget
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
	if p.NormBudget < 0 {
		return fmt.Errorf("privacy.norm_budget: must be >= 0 (0 = %d), got %d", DefaultNormBudget, p.NormBudget)
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

// maxKeptSquares returns M₂ = max Σ c² of one user's kept counts before the norm budget: pooled,
// maxSumSquares(H, m, S·A); step-dependent, H (each (h,s,a) is visited at most once).
func maxKeptSquares(S, A, H int, p PracticalPrivacy) float64 {
	if p.Pool {
		return maxSumSquares(H, p.capOf(H), S*A)
	}
	return float64(H)
}

// PracticalSensitivity returns the ℓ2 sensitivity Δ₂ of one user's whole contribution — the
// vector x = (N(s,a,s'), w·R(s,a)) of her episode, pooled over h or step-dependent, w the
// reward weight, without the reward block when the rewards are public — under replace-one
// neighbours (practical-privacy spec §2, §4).
//
// Claim. Let m = min(VisitCap, H) (pooled; m = H without a cap), n the number of cells (S·A
// pooled), w ∈ (0, 1] the reward weight and B the norm budget (NormBudget). Then for any two
// episodes x, x′
//
//	‖x − x′‖₂² ≤ 2(1+w²)·min(M₂, B),   M₂ = max{Σ c_i² : c_i ∈ {0..m}, Σ c_i ≤ H, at most n cells}
//
// and ‖x − x′‖₂² ≤ 2·min(M₂, B) with public rewards (no reward block). Without the budget
// binding (B ≥ M₂), with w = 1, Δ₂ = 2·√M₂ ≤ 2·√(H·m); without a cap Δ₂ = 2H, with m = 1
// Δ₂ = 2·√min(H, S·A). Step-dependent (no pooling): each (h,s,a) is one cell visited at most
// once, M₂ = H, Δ₂ = √(4H) at w = 1, the spec's value. The default budget (DefaultNormBudget
// = 80) equals M₂ of the default cap m = 4 at H = 20, so it changes nothing there and makes
// Δ₂ independent of H beyond (FrozenLake 8×8 at H = 200: 44.7 → 14.1 at w = 0.5).
//
// Proof. Let c(s,a) be the number of kept visits of (s,a). The contribution keeps a visit of
// (s,a) only while c(s,a) < m and only if Σ c² stays ≤ B after counting it (≤ ⌊B/2⌋ ≤ B for a
// repeat visit when B < M₂; contribution.add), so c(s,a) ≤ m, Σ c ≤ H (an episode has at most
// H steps) and Σ c² ≤ B; hence Σ c² ≤ min(M₂, B). The transition block has Σ_{s′} N(s,a,s′) = c(s,a), so Σ_{s′} N(s,a,s′)² ≤
// c(s,a)² and ‖x_N‖² ≤ Σ c(s,a)² ≤ min(M₂, B). The reward block has w·R(s,a) ∈ [0, w·c(s,a)]
// because rewards are clipped to [0, 1] at the boundary, so ‖x_R‖² ≤ w²·min(M₂, B); with public
// rewards it does not exist. All coordinates of x and x′ are nonnegative, so ⟨x, x′⟩ ≥ 0 and
// ‖x − x′‖² = ‖x‖² + ‖x′‖² − 2⟨x, x′⟩ ≤ 2·max‖x‖² ≤ 2(1+w²)·min(M₂, B). The bound is attained
// when some episode keeps Σ c² = min(M₂, B) (x and x′ with all visits in distinct cells and
// rewards 1), e.g. B = 80 with 80 distinct pairs visited once (H ≥ 80, n ≥ 80), or M₂ ≤ B. M₂ ≤ H·m since
// Σ c² ≤ m·Σ c. Dividing the released R block by w afterwards is post-processing.
//
// Validity of the kept samples (why the cap and the budget do not bias the estimates).
// Imagine, for every (s,a), an i.i.d. stack of next states s′₁, s′₂, … ~ P(·|s,a) and rewards
// drawn in advance, the j-th visit of (s,a) in the episode consuming the j-th entry (the
// "stack of rewards" construction; it yields the same law of the trajectory by the strong
// Markov property, the j-th visit time being a stopping time). The decision to keep the j-th
// visit depends only on the episode before that visit's outcome (c(s,a) < m and the running
// Σ c², which only grows, against a limit fixed by whether the visit is the pair's first),
// never on the entry itself; and once a visit of (s,a) is dropped every later one is (its
// c(s,a) and so its limit are unchanged and Σ c² has not decreased). So the kept entries of
// each stack are its first c(s,a) entries, c(s,a) fixed by a stopping rule: i.i.d. draws from
// P(·|s,a).
func PracticalSensitivity(S, A, H int, p PracticalPrivacy) float64 {
	m2 := min(maxKeptSquares(S, A, H, p), float64(p.normBudget()))
	if p.PublicRewards {
		return math.Sqrt(2 * m2)
	}
	w := p.rewardWeight()
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
	if p.PublicRewards {
		cfg.Public = PublicRewardsStructure
	}
	if p.PublicSupport {
		if cfg.Public != "" {
			cfg.Public += "; "
		}
		cfg.Public += PublicSupportStructure
	}
	return ledger.New(cfg)
}

// inputs returns the public parameters the sensitivity and the schedule of an (S, A, H) agent
// are computed from, as the report echoes them: "norm_budget" when the budget binds (B < M₂;
// otherwise it changes nothing), "public_rewards" when the rewards are public and
// "public_support" when the transitions' support is.
func (p PracticalPrivacy) inputs(S, A, H int) map[string]float64 {
	pool := 0.0
	if p.Pool {
		pool = 1
	}
	in := map[string]float64{"pool": pool, "visit_cap": float64(p.VisitCap), "batch_every": float64(p.BatchEvery), "reward_weight": p.rewardWeight()}
	if b := float64(p.normBudget()); b < maxKeptSquares(S, A, H, p) {
		in["norm_budget"] = b
	}
	if p.PublicRewards {
		in["public_rewards"] = 1
	}
	if p.PublicSupport {
		in["public_support"] = 1
	}
	return in
}
