package lq

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

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
// per-episode streams ("optimiser"/k).
func Streams(seed rng.Seed) (users, b1, b2, opt rng.Seed) {
	return seed.Child("users"), seed.Child("privacy").Child("B1"), seed.Child("privacy").Child("B2"), seed.Child("optimiser")
}

// Run runs the agent configured by cfg for cfg.Episodes episodes on sys with all randomness
// derived from seed (seeded noise: reproducible, not hardened). progress, if non-nil, is called
// after every episode. The same seed gives bit-identical results.
func Run(ctx context.Context, sys *lq.System, cfg Config, seed rng.Seed, progress func(k int)) (*Result, error) {
	pub := PublicOf(sys)
	consts, err := ComputeConstants(pub, cfg)
	if err != nil {
		return nil, err
	}
	users, s1, s2, optSeed := Streams(seed)
	cur, err := NewCurator(pub, cfg, consts, noise.NewSeeded(s1.Rand()), noise.NewSeeded(s2.Rand()))
	if err != nil {
		return nil, err
	}
	pl := NewPlanner(pub, cfg, consts)
	K, n, d, H := cfg.Episodes, sys.N, sys.D, sys.H
	res := &Result{Regret: make([]float64, K), RealisedCost: make([]float64, K), Constants: consts}
	start := time.Now()
	tr := &Trajectory{X: make([][]float64, H+1), U: make([][]float64, H)}
	for h := range tr.X {
		tr.X[h] = make([]float64, n)
	}
	for h := range tr.U {
		tr.U[h] = make([]float64, d)
	}
	w := make([]float64, n)
	userPCG, optPCG := users.Index(0).PCG(), optSeed.Index(0).PCG()
	userRand, optRand := randFrom(userPCG), randFrom(optPCG)
	thetaNorm := frob(sys.Theta)
	var plan *Plan
	for k := 1; k <= K; k++ {
		if k%64 == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		b := cur.Release() // Alg. 1 line 3: T_{1,k}, T_{2,k} (noisy prefix sums over users 1..k−1)
		x1 := tr.X[0]
		sys.InitialState(k, x1) // user k arrives with its private x_{k,1}
		optSeed.Index(uint64(k)).Reseed(optPCG)
		t0 := time.Now()
		plan, err = pl.Plan(b, x1, optRand) // lines 4–5: C_k (Θ̂_k, β_k), Θ̃_k (eq. (9)); gains (eq. (10))
		if err != nil {
			return nil, fmt.Errorf("episode %d: %w", k, err)
		}
		res.Diag.SearchSeconds += time.Since(t0).Seconds()
		sr := plan.Search
		res.Diag.Fevals += int64(sr.Fevals)
		if sr.EarlyExit {
			res.Diag.EarlyExits++
		}
		if sr.Empty {
			res.Diag.EmptySets++
		}
		if plan.PDRepair {
			res.Diag.PDRepairs++
		}
		if sr.F > sr.FProjHat+1e-12*(1+math.Abs(sr.FProjHat)) {
			res.Diag.EstimateViolations++
		}
		if thetaNorm <= 1 && plan.Set.Contains(sys.Theta) {
			res.Diag.InSet++
			js := sys.Optimal(x1)
			if sr.F <= js+1e-9*(1+math.Abs(js)) {
				res.Diag.OptimismHeld++
			}
		}
		zero := true
		for _, g := range plan.Gains {
			for _, v := range g {
				zero = zero && v == 0
			}
		}
		if zero {
			res.Diag.ZeroPolicy++
		}
		if res.Regret[k-1], err = sys.Regret(plan.Gains, x1); err != nil {
			return nil, err
		}
		// Lines 6–8: roll out the episode u_{k,h} = K_h(Θ̃_k) x_{k,h} (user k's own noise stream).
		users.Index(uint64(k)).Reseed(userPCG)
		cost := 0.0
		for h := 0; h < H; h++ {
			kh := plan.Gains[h]
			for i := 0; i < d; i++ {
				v := 0.0
				for j := 0; j < n; j++ {
					v += kh[i*n+j] * tr.X[h][j]
				}
				tr.U[h][i] = v
			}
			cost += sys.Cost(tr.X[h], tr.U[h])
			sys.SampleNoise(userRand, w)
			sys.Step(tr.X[h], tr.U[h], w, tr.X[h+1])
		}
		res.RealisedCost[k-1] = cost
		// Line 10: insert Σ_h z̄ z̄ᵀ into B_1 and Σ_h z̄ x̄ᵀ into B_2; the K-th element is never
		// inserted (nothing is released after episode K).
		if k < K {
			if err := cur.Receive(tr); err != nil {
				return nil, err
			}
		}
		if progress != nil {
			progress(k)
		}
	}
	res.Diag.OptimismViolations = res.Diag.InSet - res.Diag.OptimismHeld
	res.Diag.ScaledPairs = cur.ScaledPairs
	res.Diag.Seconds = time.Since(start).Seconds()
	if plan != nil {
		diff := make([]float64, len(sys.Theta))
		for i := range diff {
			diff[i] = plan.Set.ThetaHat[i] - sys.Theta[i]
		}
		res.Diag.FinalEstimateError = frob(diff)
		res.Diag.FinalBeta = plan.Set.Beta
	}
	return res, nil
}

func randFrom(p *rand.PCG) *rand.Rand { return rand.New(p) }
