package tabular

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dprl/dprl/privacy/accounting"
)

// This file holds the shared vectors of practical-ldp's user-side calibration (issue 25 item
// 4): testdata/ldp_calibration_vectors.json maps public parameters (agent, S, A, H, time
// homogeneity, public rewards, the user's ε and δ) to every calibration parameter a user
// computes herself (Δ₂, μ, σ, layout, clipping, norm budget) and to the check of a few published user_sides (accepted, or
// refused naming a field). Go (PracticalUserSideFor, RandomizerParams.CheckPublished) and
// Python (python/dprl/ldp.py calibrate and check_published; python/tests/test_ldp_calibration.py)
// both reproduce the file.
//
//	go test ./agents/tabular/ -run UserSideVectors -update   # rewrite the file
//	go test ./agents/tabular/ -run UserSideVectors           # check it

const userSideVectorsFile = "testdata/ldp_calibration_vectors.json"

type userSideInput struct {
	Name        string `json:"name"`
	Agent       string `json:"agent"`
	States      int    `json:"states"`
	Actions     int    `json:"actions"`
	Horizon     int    `json:"horizon"`
	Homogeneous bool   `json:"homogeneous"`
	// PublicRewards: the environment's reward function is public (no reward block).
	PublicRewards bool    `json:"public_rewards"`
	Epsilon       float64 `json:"epsilon"`
	Delta         float64 `json:"delta"`
}

type userSideCheckCase struct {
	Name      string           `json:"name"`
	Published RandomizerParams `json:"published"`
	// Refused is the field the check names ("" when the published parameters are accepted).
	Refused string `json:"refused"`
}

type userSideVector struct {
	userSideInput
	Sensitivity float64             `json:"sensitivity"`
	Mu          float64             `json:"mu"`
	SigmaSecure float64             `json:"sigma_secure"`
	Dim         int                 `json:"dim"`
	Own         RandomizerParams    `json:"own"`
	Checks      []userSideCheckCase `json:"checks"`
}

func userSideInputs() []userSideInput {
	return []userSideInput{
		{"riverswim-defaults", "practical-ldp", 6, 2, 20, true, false, 1, 1e-5},
		{"plugin", "practical-ldp-plugin", 6, 2, 20, true, false, 1, 1e-5},
		{"small-eps", "practical-ldp", 5, 3, 10, true, false, 0.1, 1e-6},
		{"large-eps", "practical-ldp", 4, 2, 8, true, false, 10, 1e-3},
		{"eps-0.5-delta-1e-9", "practical-ldp", 16, 4, 30, true, false, 0.5, 1e-9}, // M₂ = 116: the budget binds
		{"step-dependent", "practical-ldp", 3, 2, 5, false, false, 2, 1e-5},
		{"cap-above-horizon", "practical-ldp", 2, 2, 3, true, false, 1, 1e-5},
		{"one-cell", "practical-ldp", 1, 1, 7, true, false, 3, 1e-4},
		{"huge-eps", "practical-ldp", 4, 4, 12, true, false, 60, 0.5},
		{"riverswim-public-rewards", "practical-ldp", 6, 2, 20, true, true, 1, 1e-5},
		{"frozenlake8-h200", "practical-ldp", 64, 4, 200, true, false, 1, 1e-5},               // budget binds
		{"frozenlake8-h200-public-rewards", "practical-ldp", 64, 4, 200, true, true, 1, 1e-5}, // both
		{"step-dependent-budget", "practical-ldp-plugin", 2, 2, 100, false, false, 1, 1e-5},   // M₂ = H = 100 > 80
		{"one-cell-public-h100", "practical-ldp", 1, 1, 100, true, true, 2, 1e-6},             // M₂ = 4·4·25 = 400 > 80
	}
}

// userSideChecks returns published parameters derived from own and the field the check must
// name for each.
func userSideChecks(own RandomizerParams, secure float64) []userSideCheckCase {
	mod := func(f func(p *RandomizerParams)) RandomizerParams { p := own; f(&p); return p }
	return []userSideCheckCase{
		{"honest-seeded", own, ""},
		{"honest-secure", mod(func(p *RandomizerParams) { p.Sigma = secure }), ""},
		{"more-noise", mod(func(p *RandomizerParams) { p.Sigma *= 2 }), ""},
		{"sigma-one-ulp-less", mod(func(p *RandomizerParams) { p.Sigma = math.Nextafter(p.Sigma, 0) }), "sigma"},
		{"sigma-div-10", mod(func(p *RandomizerParams) { p.Sigma /= 10 }), "sigma"},
		{"sigma-zero", mod(func(p *RandomizerParams) { p.Sigma = 0 }), "sigma"},
		{"sigma-negative", mod(func(p *RandomizerParams) { p.Sigma = -own.Sigma }), "sigma"},
		{"states", mod(func(p *RandomizerParams) { p.States++ }), "states"},
		{"actions", mod(func(p *RandomizerParams) { p.Actions++ }), "actions"},
		{"horizon", mod(func(p *RandomizerParams) { p.Horizon++ }), "horizon"},
		{"pool", mod(func(p *RandomizerParams) { p.Pool = !p.Pool }), "pool"},
		{"public-rewards", mod(func(p *RandomizerParams) { p.PublicRewards = !p.PublicRewards }), "public_rewards"},
		{"visit-cap-larger", mod(func(p *RandomizerParams) { p.VisitCap = own.VisitCap + 1 }), map[bool]string{true: "visit_cap", false: ""}[own.Pool && own.VisitCap < own.Horizon]},
		{"norm-budget-larger", mod(func(p *RandomizerParams) { p.NormBudget = own.NormBudget + 1 }), map[bool]string{true: "norm_budget", false: ""}[own.NormBudget < budgetCeiling(own)]},
		{"norm-budget-zero", mod(func(p *RandomizerParams) { p.NormBudget = 0 }), map[bool]string{true: "norm_budget", false: ""}[own.NormBudget != min(DefaultNormBudget, budgetCeiling(own))]},
		{"norm-budget-smaller", mod(func(p *RandomizerParams) { p.NormBudget = own.NormBudget - 1 }), "norm_budget"},
		{"reward-weight-larger", mod(func(p *RandomizerParams) { p.RewardWeight = 1 }), map[bool]string{true: "reward_weight", false: ""}[own.RewardWeight != 1 && !own.PublicRewards]},
		{"reward-weight-smaller", mod(func(p *RandomizerParams) { p.RewardWeight = own.RewardWeight / 2 }), map[bool]string{true: "reward_weight", false: ""}[!own.PublicRewards]},
	}
}

// budgetCeiling returns M₂ of the layout of q (effective cap): the largest Σ c² without a norm
// budget, the most a published budget can effectively be.
func budgetCeiling(q RandomizerParams) int {
	return int(maxKeptSquares(q.States, q.Actions, q.Horizon, PracticalPrivacy{Pool: q.Pool, VisitCap: q.VisitCap}))
}

func userSideVectors(t *testing.T) []userSideVector {
	t.Helper()
	var out []userSideVector
	for _, in := range userSideInputs() {
		own, err := PracticalUserSideFor(in.Agent, in.States, in.Actions, in.Horizon, in.Homogeneous, in.PublicRewards, in.Epsilon, in.Delta)
		if err != nil {
			t.Fatalf("%s: %v", in.Name, err)
		}
		cfg, err := DefaultPracticalConfig(in.Agent, in.Epsilon, in.Delta)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Privacy.Pool = in.Homogeneous
		cfg.Privacy.PublicRewards = in.PublicRewards
		secure, _, err := practicalLDPCalibration(in.States, in.Actions, in.Horizon, cfg.Privacy, nil, true)
		if err != nil {
			t.Fatal(err)
		}
		g, err := accounting.GDPFor(accounting.ApproxDP{Epsilon: in.Epsilon, Delta: in.Delta})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, userSideVector{userSideInput: in, Sensitivity: PracticalSensitivity(in.States, in.Actions, in.Horizon, cfg.Privacy),
			Mu: g.Mu, SigmaSecure: secure, Dim: newContribution(in.States, in.Actions, in.Horizon, cfg.Privacy, nil).dim(), Own: own,
			Checks: userSideChecks(own, secure)})
	}
	return out
}

// TestUserSideVectors: the Go user-side calibration reproduces the shared vectors (or rewrites
// them with -update), and every check case is accepted or refused as the file says.
func TestUserSideVectors(t *testing.T) {
	vs := userSideVectors(t)
	b, err := json.MarshalIndent(vs, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	b = append(b, '\n')
	if *updateLDPVectors {
		tmp := userSideVectorsFile + ".tmp"
		if err := os.WriteFile(tmp, b, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, userSideVectorsFile); err != nil {
			t.Fatal(err)
		}
	}
	old, err := os.ReadFile(filepath.FromSlash(userSideVectorsFile))
	if err != nil {
		t.Fatalf("%v (run with -update)", err)
	}
	if !bytes.Equal(old, b) {
		t.Fatalf("%s differs from what the Go calibration computes (run with -update after checking why)", userSideVectorsFile)
	}
	for _, v := range vs {
		for _, c := range v.Checks {
			err := v.Own.CheckPublished(c.Published)
			switch {
			case c.Refused == "" && err != nil:
				t.Errorf("%s/%s: refused: %v", v.Name, c.Name, err)
			case c.Refused != "" && (err == nil || !strings.HasPrefix(err.Error(), "user_side."+c.Refused+":")):
				t.Errorf("%s/%s: got %v, want a refusal naming user_side.%s", v.Name, c.Name, err, c.Refused)
			}
		}
	}
}
