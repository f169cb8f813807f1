package lq

import (
	"context"
	"math/rand/v2"
	"time"

	"github.com/dprl/dprl/agents/protocol"
	"github.com/dprl/dprl/model/lq"
	"github.com/dprl/dprl/privacy/noise"
	"github.com/dprl/dprl/rng"
)

// Diagnostics summarises one run (lq spec §5.4). None of it is released to users.
type Diagnostics struct {
	// InSet counts episodes with Θ* ∈ C_k ∩ S̄ (checkable in simulation only).
	InSet int `json:"theta_star_in_set"`
	// OptimismHeld counts episodes with Θ* ∈ C_k ∩ S̄ where f(Θ̃_k) ≤ J*_1(Θ*, x_{k,1}) +
	// 1e-9(1+|J*|); OptimismViolations = InSet − OptimismHeld (lq spec §4.6 test 4).
	OptimismHeld       int `json:"optimism_held"`
	OptimismViolations int `json:"optimism_violations"`
	// EstimateViolations counts episodes with f(Θ̃) > f(Proj(Θ̂)) + 1e-12(1+|f|) (must be 0).
	EstimateViolations int `json:"estimate_violations"`
	// ScaledPairs, PDRepairs, EmptySets, EarlyExits count the events of §3.6, §3.3, §4.1, §4.3.
	ScaledPairs int `json:"scaled_pairs"`
	PDRepairs   int `json:"pd_repairs"`
	EmptySets   int `json:"empty_sets"`
	EarlyExits  int `json:"early_exits"`
	// ZeroPolicy counts episodes whose executed gains were all exactly 0 (u ≡ 0).
	ZeroPolicy int `json:"zero_policy_episodes"`
	// Fevals is the total number of Riccati solves of the optimistic step.
	Fevals int64 `json:"fevals"`
	// Seconds is the wall time of the run; SearchSeconds the part spent in planning.
	Seconds       float64 `json:"seconds"`
	SearchSeconds float64 `json:"search_seconds"`
	// FinalEstimateError is ‖Θ̂_K − Θ*‖_F.
	FinalEstimateError float64 `json:"final_estimate_error"`
	// FinalBeta is β_K.
	FinalBeta float64 `json:"final_beta"`
}

// Result is one run of an agent on a system.
type Result struct {
	// Regret holds the exact expected per-episode regret J^{π_k}_1(Θ*, x_{k,1}) − J*_1(Θ*, x_{k,1})
	// of every episode k = 1..K (lq spec §1.5).
	Regret []float64
	// RealisedCost holds Σ_h c_{k,h} of every episode (diagnostic only).
	RealisedCost []float64
	// Constants are the constants the run used.
	Constants Constants
	// Diag summarises the run.
	Diag Diagnostics
}

// Streams returns the run's independent random streams derived from seed: the users' noise
// ("users"/k), the two counters' node noise ("privacy"/"B1", "privacy"/"B2") and the optimiser's
// per-episode streams ("optimiser"/k). (The experiments derive the same paths from
// engine.Streams.)
func Streams(seed rng.Seed) (users, b1, b2, opt rng.Seed) {
	return seed.Child("users"), seed.Child("privacy").Child("B1"), seed.Child("privacy").Child("B2"), seed.Child("optimiser")
}

// RunStreams are the random streams of one OFU-RL run.
type RunStreams struct {
	// Users returns user k's noise stream (k = 1..K).
	Users func(k int) *rand.Rand
	// B1 and B2 are the two counters' noise sources (nil: noise.Secure).
	B1, B2 noise.Source
	// Optimiser is the public optimiser stream tree (episode k uses Optimiser.Index(k)).
	Optimiser rng.Seed
}

// Run runs the agent configured by cfg for cfg.Episodes episodes on sys with all randomness
// derived from seed (seeded noise: reproducible, not hardened; Streams). progress, if non-nil,
// is called with the number of episodes done from time to time. The same seed gives
// bit-identical results.
func Run(ctx context.Context, sys *lq.System, cfg Config, seed rng.Seed, progress func(k int)) (*Result, error) {
	users, s1, s2, opt := Streams(seed)
	return RunWith(ctx, sys, cfg, RunStreams{Users: userStreams(users), B1: noise.NewSeeded(s1.Rand()), B2: noise.NewSeeded(s2.Rand()),
		Optimiser: opt}, counting(progress))
}

// userStreams returns user k's stream users.Index(k), reseeding one generator in place.
func userStreams(users rng.Seed) func(k int) *rand.Rand {
	pcg := users.Index(0).PCG()
	r := rand.New(pcg)
	return func(k int) *rand.Rand {
		users.Index(uint64(k)).Reseed(pcg)
		return r
	}
}

// counting turns a progress callback of episodes completed into one of episodes done.
func counting(progress func(k int)) func(int64) {
	if progress == nil {
		return nil
	}
	k := 0
	return func(n int64) {
		k += int(n)
		progress(k)
	}
}

// OFUSession is an OFU-RL or Private-OFU-RL agent's contract (its curator, user and evaluator
// bound by protocol.NewSession) and its parts.
type OFUSession struct {
	Session   protocol.Session
	Server    *Server
	Curator   *Curator
	User      *OFUUser
	Evaluator *Evaluator
	// Constants are the run's constants (Guarantee states the privacy guarantee).
	Constants Constants
}

// NewOFUSession builds the agent configured by cfg on sys with the noise sources and optimiser
// streams of st (st.Users is not used: the loop's Options give the users' streams), as RunWith
// runs it and a service serves it.
func NewOFUSession(sys *lq.System, cfg Config, st RunStreams) (*OFUSession, error) {
	pub := PublicOf(sys)
	consts, err := ComputeConstants(pub, cfg)
	if err != nil {
		return nil, err
	}
	cur, err := NewCurator(pub, cfg, consts, st.B1, st.B2)
	if err != nil {
		return nil, err
	}
	consts = cur.Constants() // the ledger's report for the actual sources (Secure: with grid rounding)
	srv := NewServer(cur, cfg.Name(), cfg.Episodes)
	u := NewOFUUser(sys, NewPlanner(pub, cfg, consts), srv.Expect(), st.Optimiser)
	ev := NewEvaluator(sys)
	return &OFUSession{Session: protocol.NewSession(srv, u, ev), Server: srv, Curator: cur, User: u, Evaluator: ev, Constants: consts}, nil
}

// RunWith runs the agent configured by cfg for cfg.Episodes episodes on sys through the one
// episode loop (protocol.Run: the curator publishes its release, user k plans her gains from it
// and her own x_{k,1} and rolls them out with her stream, the curator receives her path; the
// K-th path is never inserted) and returns the exact per-episode regret and the diagnostics.
// progress, if non-nil, receives the episodes completed every 64 episodes and at the end.
func RunWith(ctx context.Context, sys *lq.System, cfg Config, st RunStreams, progress func(int64)) (*Result, error) {
	ss, err := NewOFUSession(sys, cfg, st)
	if err != nil {
		return nil, err
	}
	K, cur, u, ev := cfg.Episodes, ss.Curator, ss.User, ss.Evaluator
	res := &Result{Regret: make([]float64, K), Constants: ss.Constants}
	start := time.Now()
	if err := protocol.Run(ctx, ss.Session, protocol.Options{Episodes: K, Users: st.Users, Every: 64, Progress: progress,
		Each: func(k int, r float64) { res.Regret[k-1] = r }}); err != nil {
		return nil, err
	}
	res.RealisedCost = ev.RealisedCost
	res.Diag = ev.Diag
	res.Diag.SearchSeconds = u.SearchSeconds
	res.Diag.OptimismViolations = res.Diag.InSet - res.Diag.OptimismHeld
	res.Diag.ScaledPairs = cur.ScaledPairs
	res.Diag.Seconds = time.Since(start).Seconds()
	if plan := ev.Last; plan != nil {
		diff := make([]float64, len(sys.Theta))
		for i := range diff {
			diff[i] = plan.Set.ThetaHat[i] - sys.Theta[i]
		}
		res.Diag.FinalEstimateError = frob(diff)
		res.Diag.FinalBeta = plan.Set.Beta
	}
	return res, nil
}
