package lq

import (
	"context"
	"math/rand/v2"
	"time"

	"github.com/dprl/dprl/agents/protocol"
	"github.com/dprl/dprl/model/lq"
	"github.com/dprl/dprl/privacy/ledger"
	"github.com/dprl/dprl/privacy/noise"
	"github.com/dprl/dprl/rng"
)

// PracticalDiagnostics summarises one practical run. None of it is released to users.
type PracticalDiagnostics struct {
	// Releases is the number of distinct releases planned for; Searches the optimistic steps
	// run (releases × references); Fevals their Riccati solves; EarlyExits the searches that
	// returned u ≡ 0 with the global-optimality certificate.
	Releases   int   `json:"releases"`
	Searches   int   `json:"searches"`
	Fevals     int64 `json:"fevals"`
	EarlyExits int   `json:"early_exits"`
	EmptySets  int   `json:"empty_sets"`
	PDRepairs  int   `json:"pd_repairs"`
	// InSet counts releases whose confidence set contains Θ*; OptimismViolations counts
	// reference plans with Θ* ∈ C ∩ S̄ and f(Θ̃) > J*_1(Θ*, r_j) + 1e−9(1+|J*|).
	InSet              int `json:"theta_star_in_set"`
	OptimismViolations int `json:"optimism_violations"`
	// ColdSearches, WarmSearches and WarmFallbacks count the searches by SearchMode: full
	// multi-start, warm-started and accepted, warm-started and rejected (the full search ran).
	ColdSearches  int `json:"cold_searches"`
	WarmSearches  int `json:"warm_searches"`
	WarmFallbacks int `json:"warm_fallbacks"`
	// ZeroPolicy counts episodes played with u ≡ 0; FirstNonZero is the first such episode
	// with a nonzero gain (0 if none).
	ZeroPolicy   int `json:"zero_policy_episodes"`
	FirstNonZero int `json:"first_nonzero_episode"`
	// Kept, Truncated, Scaled, Dropped count the pairs at the boundary (budget stopping rule,
	// pair scaling, non-finite values).
	Kept      int `json:"pairs_kept"`
	Truncated int `json:"pairs_truncated"`
	Scaled    int `json:"pairs_scaled"`
	Dropped   int `json:"pairs_dropped"`
	// FinalBeta, FinalNoiseBound and FinalEstimateError describe the last release's set.
	FinalBeta          float64 `json:"final_beta"`
	FinalNoiseBound    float64 `json:"final_noise_bound"`
	FinalEstimateError float64 `json:"final_estimate_error"`
	// Seconds is the wall time, SearchSeconds the part spent planning.
	Seconds       float64 `json:"seconds"`
	SearchSeconds float64 `json:"search_seconds"`
}

// PracticalResult is one run of a practical agent.
type PracticalResult struct {
	// Regret is the exact expected per-episode regret of every episode (lq spec §1.5).
	Regret []float64
	// Report is the privacy ledger's report; Diag the diagnostics.
	Report ledger.Report
	Diag   PracticalDiagnostics
}

// PracticalStreams returns the practical agent's streams derived from seed: the users' noise
// ("users"/k, as Run), the counter noise ("privacy"/"practical") and the optimiser
// ("optimiser"/"practical"/release/reference).
func PracticalStreams(seed rng.Seed) (users, privacy, opt rng.Seed) {
	return seed.Child("users"), seed.Child("privacy").Child("practical"), seed.Child("optimiser").Child("practical")
}

// RunPractical runs a practical agent for cfg.Episodes episodes on sys with all randomness
// derived from seed (seeded noise: reproducible, not hardened; PracticalStreams). The same seed
// gives bit-identical results. progress, if non-nil, is called with the number of episodes done
// from time to time.
func RunPractical(ctx context.Context, sys *lq.System, cfg PracticalConfig, seed rng.Seed, progress func(k int)) (*PracticalResult, error) {
	users, priv, opt := PracticalStreams(seed)
	return RunPracticalWith(ctx, sys, cfg, PracticalRunStreams{Users: userStreams(users), Noise: noise.NewSeeded(priv.Rand()), Optimiser: opt}, counting(progress))
}

// PracticalRunStreams are the random streams of one practical run.
type PracticalRunStreams struct {
	// Users returns user k's noise stream (k = 1..K).
	Users func(k int) *rand.Rand
	// Noise is the counter's noise source (nil: noise.Secure).
	Noise noise.Source
	// Optimiser is the public optimiser stream tree (release j, reference i use
	// Optimiser.Index(j).Index(i)).
	Optimiser rng.Seed
}

// PracticalSession is a practical agent's contract (its curator, user and evaluator bound by
// protocol.NewSession) and its parts.
type PracticalSession struct {
	Session   protocol.Session
	Server    *PracticalServer
	Curator   *PracticalCurator
	Planner   *PracticalPlanner
	Evaluator *PracticalEvaluator
}

// NewPracticalSession builds the practical agent configured by cfg on sys with the noise source
// and optimiser streams of st (st.Users is not used: the loop's Options give the users'
// streams), as RunPracticalWith runs it and a service serves it.
func NewPracticalSession(sys *lq.System, cfg PracticalConfig, st PracticalRunStreams) (*PracticalSession, error) {
	pub := PublicOf(sys)
	cur, err := NewPracticalCurator(pub, cfg, st.Noise)
	if err != nil {
		return nil, err
	}
	pl, err := NewPracticalPlanner(pub, cfg, st.Optimiser)
	if err != nil {
		return nil, err
	}
	srv := NewPracticalServer(cur, pl, cfg.Name())
	ev := NewPracticalEvaluator(sys)
	return &PracticalSession{Session: protocol.NewSession(srv, NewPracticalUser(sys, srv.Expect()), ev), Server: srv, Curator: cur, Planner: pl, Evaluator: ev}, nil
}

// RunPracticalWith runs a practical agent for cfg.Episodes episodes on sys through the one
// episode loop (protocol.Run: the curator prepares the plans of each release, user k plays the
// reference plan closest to her x_{k,1} with her stream, the curator receives her path; the
// K-th path is never inserted). progress, if non-nil, receives the episodes completed every 64
// episodes and at the end.
func RunPracticalWith(ctx context.Context, sys *lq.System, cfg PracticalConfig, st PracticalRunStreams, progress func(int64)) (*PracticalResult, error) {
	ps, err := NewPracticalSession(sys, cfg, st)
	if err != nil {
		return nil, err
	}
	K, cur, pl, srv, ev := cfg.Episodes, ps.Curator, ps.Planner, ps.Server, ps.Evaluator
	res := &PracticalResult{Regret: make([]float64, K), Report: cur.Report()}
	start := time.Now()
	if err := protocol.Run(ctx, ps.Session, protocol.Options{Episodes: K, Users: st.Users,
		Every: 64, Progress: progress, Each: func(k int, r float64) { res.Regret[k-1] = r }}); err != nil {
		return nil, err
	}
	dg := &res.Diag
	*dg = ev.Diag
	dg.SearchSeconds = srv.SearchSeconds
	dg.Kept, dg.Truncated, dg.Scaled, dg.Dropped = cur.Encoder()
	if pl.Set != nil {
		dg.FinalBeta, dg.FinalNoiseBound = pl.Set.Set.Beta, pl.Set.NoiseBound
		diff := make([]float64, len(sys.Theta))
		for i := range diff {
			diff[i] = pl.Set.Set.ThetaHat[i] - sys.Theta[i]
		}
		dg.FinalEstimateError = frob(diff)
	}
	dg.Seconds = time.Since(start).Seconds()
	return res, nil
}
