// Package audit empirically checks differential-privacy claims: it runs a randomized mechanism
// (or a whole private agent) many times on two neighbouring inputs, chooses output events, and
// turns the event frequencies into a lower bound on ε with a stated confidence
// (Clopper–Pearson). It also implements the one-run canary audit of Steinke, Nasr & Jagielski
// (2023). An audit can refute a privacy claim, never prove it.
//
// The package knows nothing of reinforcement learning: a Target is any function from
// (which neighbour, seed) to an output vector. Each agent family registers its own targets
// (correct agents and deliberately broken variants) by returning []Target from a function in
// its own package, e.g. agents/tabular.AuditTargets.
package audit

import (
	"github.com/dprl/dprl/rng"
)

// Claim is the privacy guarantee a target claims for the pair of inputs it is audited on.
type Claim struct {
	// Epsilon is the claimed ε (> 0).
	Epsilon float64 `json:"epsilon"`
	// Delta is the claimed δ (0 for pure DP, < 1).
	Delta float64 `json:"delta"`
}

// Target is a randomized algorithm together with two neighbouring inputs D (side 0) and D′
// (side 1) on which it is audited.
//
// For a JDP agent the observed output is everything released to the users other than the
// changed one (for example the Q-values or actions of the policies handed to later users);
// for an LDP agent it is the privatized report of the changed user; for a mechanism it is the
// mechanism's release.
type Target struct {
	// Name is unique across all targets, "<family>/<agent-or-mechanism>[/<variant>]",
	// e.g. "mechanism/laplace", "tabular/dp-ucbvi-jdp", "tabular/dp-ucbvi-jdp/noise-div4".
	Name string
	// Family groups targets in reports: "mechanism", "tabular", "linear-mdp",
	// "linear-mixture", "lq".
	Family string
	// Description says, in one line, what runs and what the neighbouring inputs are.
	Description string
	// Claim is the guarantee the correct algorithm provides on these inputs.
	Claim Claim
	// Broken marks a deliberately broken variant (noise divided by 4, tree noise redrawn per
	// release, noise level computed from the data, a planner reading raw statistics, …). A
	// correct auditor must report a violation for it. Broken variants are constructed only
	// by AuditTargets functions and tests; no CLI flag or config reaches them.
	Broken bool
	// Run executes the algorithm once on side 0 (D) or 1 (D′), with all its randomness
	// (environment, agent, noise) derived from seed, and returns the observed output as a
	// vector whose length does not depend on the side or the seed. Run must be safe for
	// concurrent calls with different seeds.
	Run func(side int, seed rng.Seed) ([]float64, error)
	// Runs is the suggested number of runs per side for a full audit (0 = the auditor's
	// default). CI-sized tests may use fewer.
	Runs int
	// Canary, if non-nil, runs the whole algorithm once in the one-run canary design: there
	// are Canaries canary users, canary i takes part iff include[i], and the function returns
	// one score per canary, computed from the released outputs only; a higher score means
	// "more likely included".
	Canary func(include []bool, seed rng.Seed) ([]float64, error)
	// Canaries is the number m of canary users Canary supports (0 if Canary is nil).
	Canaries int
}
