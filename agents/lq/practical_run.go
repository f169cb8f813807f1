package lq

import (
	"context"
	"fmt"
	"math"
	"time"

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
// derived from seed (seeded noise: reproducible, not hardened). The same seed gives
// bit-identical results. progress, if non-nil, is called after every episode.
func RunPractical(ctx context.Context, sys *lq.System, cfg PracticalConfig, seed rng.Seed, progress func(k int)) (*PracticalResult, error) {
	pub := PublicOf(sys)
	users, priv, optSeed := PracticalStreams(seed)
	cur, err := NewPracticalCurator(pub, cfg, noise.NewSeeded(priv.Rand()))
	if err != nil {
		return nil, err
	}
	pl, err := NewPracticalPlanner(pub, cfg, optSeed)
	if err != nil {
		return nil, err
	}
	K, n, d, H := cfg.Episodes, sys.N, sys.D, sys.H
	res := &PracticalResult{Regret: make([]float64, K), Report: cur.Report()}
	dg := &res.Diag
	start := time.Now()
	tr := &Trajectory{X: make([][]float64, H+1), U: make([][]float64, H)}
	for h := range tr.X {
		tr.X[h] = make([]float64, n)
	}
	for h := range tr.U {
		tr.U[h] = make([]float64, d)
	}
	w := make([]float64, n)
	userPCG := users.Index(0).PCG()
	userRand := randFrom(userPCG)
	thetaOK := frob(sys.Theta) <= 1
	last := -1
	for k := 1; k <= K; k++ {
		if k%64 == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		rel := cur.Release()
		if rel.Index != last {
			t0 := time.Now()
			if err := pl.Prepare(rel); err != nil {
				return nil, fmt.Errorf("episode %d: %w", k, err)
			}
			dg.SearchSeconds += time.Since(t0).Seconds()
			last = rel.Index
			dg.Releases++
			if pl.Set.PDRepair {
				dg.PDRepairs++
			}
			in := thetaOK && pl.Set.Set.Contains(sys.Theta)
			if in {
				dg.InSet++
			}
			for _, rp := range pl.Refs {
				dg.Searches++
				dg.Fevals += int64(rp.Search.Fevals)
				if rp.Search.EarlyExit {
					dg.EarlyExits++
				}
				if rp.Search.Empty {
					dg.EmptySets++
				}
				switch rp.Mode {
				case SearchCold:
					dg.ColdSearches++
				case SearchWarm:
					dg.WarmSearches++
				case SearchFallback:
					dg.WarmFallbacks++
				}
				if js := sys.Optimal(rp.X); in && rp.Search.F > js+1e-9*(1+math.Abs(js)) {
					dg.OptimismViolations++
				}
			}
		}
		x1 := tr.X[0]
		sys.InitialState(k, x1) // user k's private initial state
		rp := &pl.Refs[pl.Choose(x1)]
		if rp.Zero {
			dg.ZeroPolicy++
		} else if dg.FirstNonZero == 0 {
			dg.FirstNonZero = k
		}
		if res.Regret[k-1], err = sys.Regret(rp.Gains, x1); err != nil {
			return nil, err
		}
		users.Index(uint64(k)).Reseed(userPCG)
		for h := 0; h < H; h++ {
			kh := rp.Gains[h]
			for i := 0; i < d; i++ {
				v := 0.0
				for j := 0; j < n; j++ {
					v += kh[i*n+j] * tr.X[h][j]
				}
				tr.U[h][i] = v
			}
			sys.SampleNoise(userRand, w)
			sys.Step(tr.X[h], tr.U[h], w, tr.X[h+1])
		}
		if k < K {
			if err := cur.Receive(tr); err != nil {
				return nil, err
			}
		}
		if progress != nil {
			progress(k)
		}
	}
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
