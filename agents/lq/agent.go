// Package lq implements OFU-RL with changing regularizers and Private-OFU-RL (Algorithm 1) of
// Chowdhury, Zhou & Shroff, "Adaptive Control of Differentially Private Linear Quadratic
// Systems", for episodic LQ control (lq spec §2–§4), with the optimistic step of lq spec §4
// (multi-start preconditioned projected gradient with exact gradients and an exact projection
// onto the intersection of the confidence ellipsoid and the Frobenius ball).
//
// The trust boundary is in the types: a Curator receives users' raw Trajectory values and its
// only output is a Billboard (the noisy prefix sums T_{1,k}, T_{2,k} of the two binary-tree
// counters); a Planner reads only a Billboard, public constants and the current user's own
// initial state. Everything a user receives is therefore a function of the (ε,δ)-DP billboard
// and of the user's own data, which is the billboard argument for (ε,δ)-JDP (lq spec §3.7).
package lq

import (
	"fmt"
	"math"

	"github.com/dprl/dprl/agents/internal/agentkit"
	"github.com/dprl/dprl/internal/bounds"
	"github.com/dprl/dprl/model/lq"
	"github.com/dprl/dprl/privacy/accounting"
)

// Public is the public part of an LQ problem: everything the agent may know (dimensions,
// horizon, costs, the noise covariance W — a public input by the [DECISION] of lq spec §1.3 —
// and the Assumption-1 constants C_w, γ). A* and B* are not in it.
type Public struct {
	N, D, H   int
	Q, R, W   []float64
	Cw, Gamma float64
}

// PublicOf returns the public part of s.
func PublicOf(s *lq.System) Public {
	return Public{N: s.N, D: s.D, H: s.H, Q: s.Q, R: s.R, W: s.W, Cw: s.Cw, Gamma: s.Gamma}
}

// broken selects a deliberately broken variant for the privacy tests and audits. It is
// unexported: no CLI flag or config file can reach it.
type broken int

const (
	notBroken        broken = iota
	brokenNoiseDiv4         // node noise divided by 4
	brokenRedraw            // tree noise redrawn at every release
	brokenDataSigma         // noise level computed from the first user's data
	brokenRawPlanner        // the planner reads the raw (non-private) statistics
)

// Config configures an agent. The zero value is not valid; start from DefaultConfig.
type Config struct {
	// Epsilon is the privacy budget ε > 0 of (ε,δ)-JDP; math.Inf(1) selects the non-private
	// OFU-RL baseline (exact statistics, regulariser λI, lq spec §2.5).
	Epsilon float64
	// Delta is δ ∈ (0, 1).
	Delta float64
	// Alpha is the confidence level α ∈ (0, 1] of Lemma 1.
	Alpha float64
	// Lambda is the regulariser λ > 0 of the non-private baseline (default 1).
	Lambda float64
	// Episodes is K ≥ 1, the number of episodes the constants are computed for.
	Episodes int
	// Neighbouring is the sensitivity convention (default ReplaceOne; ZeroOut = paper's Δ).
	Neighbouring accounting.Neighbouring
	// PaperCalibration uses the paper's σ² = 8mΔ² ln(2/δ)/ε² instead of the exact ρ*.
	PaperCalibration bool
	// WidthMultiplier multiplies the confidence radius β_k (default 1 = theory). It never
	// changes the noise levels.
	WidthMultiplier float64
	// Search configures the optimistic step.
	Search SearchConfig

	broken broken
}

// DefaultConfig returns the spec's defaults (lq spec §5.4): δ = 1e−5, α = 0.05, λ = 1,
// ReplaceOne, exact calibration, multiplier 1, the search defaults of lq spec §4.3.
func DefaultConfig(epsilon float64, episodes int) Config {
	return Config{Epsilon: epsilon, Delta: 1e-5, Alpha: 0.05, Lambda: 1, Episodes: episodes,
		WidthMultiplier: 1, Search: DefaultSearch()}
}

func (c Config) validate() error {
	switch {
	case !(c.Epsilon > 0) || math.IsNaN(c.Epsilon):
		return fmt.Errorf("lq: epsilon: must be > 0 (or +Inf for non-private), got %v", c.Epsilon)
	case !agentkit.ValidDelta(c.Delta):
		return fmt.Errorf("lq: delta: must be in (0, 1), got %v", c.Delta)
	case !(c.Alpha > 0 && c.Alpha <= 1):
		return fmt.Errorf("lq: alpha: must be in (0, 1], got %v", c.Alpha)
	case !(c.Lambda > 0) || math.IsInf(c.Lambda, 0):
		return fmt.Errorf("lq: lambda: must be finite and > 0, got %v", c.Lambda)
	case c.Episodes < 1 || c.Episodes > bounds.MaxEpisodes:
		return fmt.Errorf("lq: episodes: must be in [1, %d], got %d", bounds.MaxEpisodes, c.Episodes)
	case c.Neighbouring != accounting.ReplaceOne && c.Neighbouring != accounting.ZeroOut:
		return fmt.Errorf("lq: neighbouring: must be replace-one or zero-out, got %d", int(c.Neighbouring))
	case !(c.WidthMultiplier > 0) || math.IsInf(c.WidthMultiplier, 0):
		return fmt.Errorf("lq: width multiplier: must be finite and > 0, got %v", c.WidthMultiplier)
	}
	return c.Search.validate()
}

// Name returns "ofu-rl" or "private-ofu-rl".
func (c Config) Name() string {
	if math.IsInf(c.Epsilon, 1) {
		return "ofu-rl"
	}
	return "private-ofu-rl"
}

// Billboard is what the curator releases before episode k (Algorithm 1 line 3): the noisy
// prefix sums over the users 1..k−1. It is the only input of a Planner besides public
// constants and the current user's own initial state.
type Billboard struct {
	// Episode is k, the episode this release serves.
	Episode int
	// T1 is T_{1,k} = G_k + N_k (p×p, exactly symmetric; 0 for k = 1).
	T1 []float64
	// T2 is T_{2,k} = Y_k + L_k (p×n; 0 for k = 1).
	T2 []float64
}

// Clone returns a deep copy (for recording and replaying releases).
func (b *Billboard) Clone() *Billboard {
	return &Billboard{Episode: b.Episode, T1: append([]float64(nil), b.T1...), T2: append([]float64(nil), b.T2...)}
}

// Trajectory is one user's raw data as sent to the curator: the states x_1..x_{H+1} and the
// executed controls u_1..u_H.
type Trajectory struct {
	X [][]float64
	U [][]float64
}
