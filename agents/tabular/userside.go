package tabular

import (
	"encoding/json"
	"fmt"
	"math"

	"github.com/dprl/dprl/agents/internal/agentkit"
	"github.com/dprl/dprl/agents/protocol"
	"github.com/dprl/dprl/privacy/ledger"
)

// This file is practical-ldp's user-side calibration as a function of public parameters only
// (issue 25 item 4: the user, not the server, decides her noise). The curator's calibration
// (newPracticalLocal) and the user's own (PracticalUserSide, and python/dprl/ldp.py's
// calibrate, pinned by testdata/ldp_calibration_vectors.json) are the same arithmetic, so they
// cannot drift; a user checks what a server publishes (RandomizerParams.CheckPublished) and
// refuses to report when it would give her less noise than her own computation.

// practicalLDPCalibration registers practical-ldp's one Gaussian report per user with the
// ledger of p (target (ε, δ)) and returns the σ it calibrates and the ledger's report: with
// secure, σ also covers the Secure source's grid rounding (it is then larger); without, σ is
// accounting.GDPFor(ε, δ).GaussianSigma(Δ₂) exactly, the least σ a continuous Gaussian needs.
func practicalLDPCalibration(S, A, H int, p PracticalPrivacy, sup *supportSet, secure bool) (float64, ledger.Report, error) {
	led, err := p.ledger(LDP)
	if err != nil {
		return 0, ledger.Report{}, err
	}
	enc := newContribution(S, A, H, p, sup)
	return agentkit.CalibratedReport(led, ledger.Entry{Sensitivity: PracticalSensitivity(S, A, H, p),
		Dim: enc.dim(), Inputs: p.inputs(S, A, H)}, secure)
}

// PracticalUserSide returns the randomiser parameters a practical-ldp user computes herself
// from public parameters — the public (S, A, H) and her own privacy setting p (ε, δ she
// consents to, pooling, public rewards, visit cap, norm budget, reward weight; p.Model must be
// LDP) — with the curator's arithmetic. Its Sigma is the least σ that makes her one Gaussian
// report (ε, δ)-LDP with a continuous Gaussian: a curator built with a Secure source publishes
// a slightly larger σ (the grid rounding), a seeded one exactly this. VisitCap, NormBudget and
// RewardWeight are the effective ones (m ∈ [1, H], min(B, M₂), w ∈ (0, 1]). A setting with a
// public support (p.PublicSupport) is refused: its layout needs the support itself, which
// NewPractical is given (PracticalConfig.Support).
func PracticalUserSide(S, A, H int, p PracticalPrivacy) (RandomizerParams, error) {
	if p.PublicSupport {
		return RandomizerParams{}, fmt.Errorf("privacy.public_support: the user side needs the support itself (NewPractical with PracticalConfig.Support)")
	}
	return practicalUserSide(S, A, H, p, nil)
}

// practicalUserSide is PracticalUserSide with the public support sup (nil: none; required when
// p.PublicSupport).
func practicalUserSide(S, A, H int, p PracticalPrivacy, sup *supportSet) (RandomizerParams, error) {
	if err := checkShape(S, A, H, 2); err != nil {
		return RandomizerParams{}, err
	}
	if err := checkPracticalSize(S, A, H, p.Pool); err != nil {
		return RandomizerParams{}, err
	}
	if p.Model != LDP {
		return RandomizerParams{}, fmt.Errorf("privacy.model: a user-side randomiser needs ldp, got %v", p.Model)
	}
	if err := p.Validate(); err != nil {
		return RandomizerParams{}, err
	}
	if p.PublicSupport != (sup != nil) {
		return RandomizerParams{}, fmt.Errorf("privacy.public_support: %v, but the support is %v", p.PublicSupport, map[bool]string{true: "given", false: "missing"}[sup != nil])
	}
	sigma, _, err := practicalLDPCalibration(S, A, H, p, sup, false)
	if err != nil {
		return RandomizerParams{}, err
	}
	return userSideOf(newContribution(S, A, H, p, sup), sigma), nil
}

// PracticalUserSideFor returns PracticalUserSide for the served practical LDP agent name
// (practical-ldp, practical-ldp-plugin) with its default setting (DefaultPracticalConfig: visit
// cap, norm budget, reward weight) at the user's own (eps, delta), pooled when the environment
// is time-homogeneous and without a reward block when its reward function is public (public
// properties of its model, as the curator decides): everything from what the user knows and
// consents to.
func PracticalUserSideFor(name string, S, A, H int, homogeneous, publicRewards bool, eps, delta float64) (RandomizerParams, error) {
	cfg, err := DefaultPracticalConfig(name, eps, delta)
	if err != nil {
		return RandomizerParams{}, err
	}
	cfg.Privacy.Pool = homogeneous
	cfg.Privacy.PublicRewards = publicRewards
	return PracticalUserSide(S, A, H, cfg.Privacy)
}

// userSideOf returns the published form of a contribution layout and σ.
func userSideOf(e *contribution, sigma float64) RandomizerParams {
	return RandomizerParams{States: e.S, Actions: e.A, Horizon: e.H, Pool: e.pool, PublicRewards: e.public, PublicSupport: e.sup != nil, VisitCap: e.cap,
		NormBudget: e.budget, RewardWeight: e.w, Sigma: sigma}.effective()
}

// effective returns q with the visit cap, norm budget and reward weight in their effective form
// (a cap of 0 or more than H is H; a budget of 0 is DefaultNormBudget, and one above M₂ is M₂,
// the largest Σ c² of the layout without a budget; a weight of 0 is 1), as the user computes
// them.
func (q RandomizerParams) effective() RandomizerParams {
	if q.Pool && (q.VisitCap == 0 || q.VisitCap > q.Horizon) {
		q.VisitCap = q.Horizon
	}
	if q.NormBudget == 0 {
		q.NormBudget = DefaultNormBudget
	}
	if q.Horizon >= 1 && q.States >= 1 && q.Actions >= 1 && (!q.Pool || q.VisitCap >= 1) {
		p := PracticalPrivacy{Pool: q.Pool, VisitCap: q.VisitCap}
		if m2 := maxKeptSquares(q.States, q.Actions, q.Horizon, p); float64(q.NormBudget) > m2 {
			q.NormBudget = int(m2)
		}
	}
	if q.RewardWeight == 0 {
		q.RewardWeight = 1
	}
	return q
}

// CheckPublished checks the randomiser parameters a server published (pub) against the user's
// own (q, from PracticalUserSide): the layout (states, actions, horizon, pool, public rewards)
// and the clipping (visit cap, norm budget, reward weight — the weight only when there is a
// reward block) must be hers — another layout or a larger cap, budget or weight would change
// what her report means or raise its sensitivity — and the published σ must be finite
// and at least hers (σ = 0 or less noise than her own computation is refused). The error names
// the parameter; a user who gets one sends nothing. A larger published σ is accepted (more
// noise never weakens her guarantee).
func (q RandomizerParams) CheckPublished(pub RandomizerParams) error {
	own, p := q.effective(), pub.effective()
	refuse := func(field string, got, want any) error {
		return fmt.Errorf("user_side.%s: the server published %v, the user's own computation gives %v: refusing to report", field, got, want)
	}
	for _, f := range []struct {
		name      string
		differs   bool
		got, want any
	}{
		{"states", p.States != own.States, pub.States, own.States},
		{"actions", p.Actions != own.Actions, pub.Actions, own.Actions},
		{"horizon", p.Horizon != own.Horizon, pub.Horizon, own.Horizon},
		{"pool", p.Pool != own.Pool, pub.Pool, own.Pool},
		{"public_rewards", p.PublicRewards != own.PublicRewards, pub.PublicRewards, own.PublicRewards},
		{"public_support", p.PublicSupport != own.PublicSupport, pub.PublicSupport, own.PublicSupport},
		{"visit_cap", p.Pool && p.VisitCap != own.VisitCap, pub.VisitCap, own.VisitCap},
		{"norm_budget", p.NormBudget != own.NormBudget, pub.NormBudget, own.NormBudget},
		{"reward_weight", !p.PublicRewards && !(p.RewardWeight == own.RewardWeight), pub.RewardWeight, own.RewardWeight},
	} {
		if f.differs {
			return refuse(f.name, f.got, f.want)
		}
	}
	if !(pub.Sigma >= own.Sigma) || math.IsInf(pub.Sigma, 0) {
		return refuse("sigma", pub.Sigma, fmt.Sprintf("at least %v", own.Sigma))
	}
	return nil
}

// CheckUserSide implements protocol.UserSideChecker: pub is the user_side a server published
// with its policy (JSON); it is checked against the user-side parameters this session's users
// computed themselves (RandomizerParams.CheckPublished). A session with no user-side
// parameters (the papers' LDP agents) accepts anything: its users use only their own.
func (c *LocalCurator) CheckUserSide(pub json.RawMessage) error {
	own, ok := c.own.(RandomizerParams)
	if !ok {
		return nil
	}
	if len(pub) == 0 || string(pub) == "null" {
		return fmt.Errorf("user_side: the server published no randomiser parameters for %s: refusing to report", c.head.Agent)
	}
	var p RandomizerParams
	if err := json.Unmarshal(pub, &p); err != nil {
		return fmt.Errorf("user_side: %w", err)
	}
	return own.CheckPublished(p)
}

var _ protocol.UserSideChecker = (*LocalCurator)(nil)
