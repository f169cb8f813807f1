package lq

import (
	"fmt"
	"math"
	"math/bits"

	"github.com/dprl/dprl/model/lq"
	"github.com/dprl/dprl/privacy/audit"
	"github.com/dprl/dprl/privacy/noise"
	"github.com/dprl/dprl/rng"
)

// auditEpsilon and auditDelta are the claim the audit targets are calibrated for.
const (
	auditEpsilon = 2.0
	auditDelta   = 1e-5
)

// userKind selects the changed user (user 1) of an audit run.
type userKind int

const (
	userA    userKind = iota // x_h = (1, 0), u_h = 0.83: ‖z‖ = 1 + γ
	userB                    // x_h = (−0.6889, 0.7249), u_h = 0.83: ‖x‖ = 1, ‖z‖ ≈ 1 + γ, z ⊥ user A's z
	userZero                 // reports x ≡ 0, u ≡ 0
)

// adversarialTrajectory returns the changed user's reported data on LQ-E1 shapes (n = 2,
// d = 1). Users A and B realise the replace-one B_1 sensitivity √2·H(1+γ)² (to 1e−4) and half
// of the squared replace-one B_2 sensitivity (the most a pair of orthogonal z with unit next
// states can).
func adversarialTrajectory(kind userKind, H int) *Trajectory {
	tr := &Trajectory{X: make([][]float64, H+1), U: make([][]float64, H)}
	for h := range tr.X {
		switch kind {
		case userA:
			tr.X[h] = []float64{1, 0}
		case userB:
			tr.X[h] = []float64{-0.6889, math.Sqrt(1 - 0.6889*0.6889)}
		default:
			tr.X[h] = []float64{0, 0}
		}
	}
	for h := range tr.U {
		switch kind {
		case userA:
			tr.U[h] = []float64{0.83}
		case userB:
			tr.U[h] = []float64{0.83}
		default:
			tr.U[h] = []float64{0}
		}
	}
	return tr
}

// auditRun runs Private-OFU-RL for K episodes on LQ-E1 where user 1 is the changed user
// (side 0: u0, side 1: u1) and users 2..K are simulated LQ-E1 users. It returns everything
// released after user 1's data entered: the billboards T_{1,k} (packed upper triangle) and
// T_{2,k} for k = 2..K and, if withPlans, the gains handed to users 2..K.
//
// If weighted, the output is instead Σ_k T_k/c_k / Σ_k 1/c_k over k = 2..K with c_k =
// popcount(k−1) (the number of tree nodes in release k): a post-processing of the billboard
// that averages independent release noise optimally, so that a counter that redraws its noise
// at every release is exposed.
func auditRun(cfg Config, K int, u0, u1 userKind, side int, seed rng.Seed, withPlans, sigmaOff, weighted bool) ([]float64, error) {
	sys := lq.LQE1()
	pub := PublicOf(sys)
	cfg.Episodes = K
	consts, err := ComputeConstants(pub, cfg)
	if err != nil {
		return nil, err
	}
	if sigmaOff {
		consts.Sigma1, consts.Sigma2 = 0, 0
	}
	users, s1, s2, optSeed := Streams(seed)
	cur, err := NewCurator(pub, cfg, consts, noise.NewSeeded(s1.Rand()), noise.NewSeeded(s2.Rand()))
	if err != nil {
		return nil, err
	}
	pl := NewPlanner(pub, cfg, consts)
	n, d, H, p := pub.N, pub.D, pub.H, pub.N+pub.D
	var out []float64
	kind := u0
	if side == 1 {
		kind = u1
	}
	cur.Release()
	if err := cur.Receive(adversarialTrajectory(kind, H)); err != nil {
		return nil, err
	}
	tr := &Trajectory{X: make([][]float64, H+1), U: make([][]float64, H)}
	for h := range tr.X {
		tr.X[h] = make([]float64, n)
	}
	for h := range tr.U {
		tr.U[h] = make([]float64, d)
	}
	w := make([]float64, n)
	var acc []float64
	wsum := 0.0
	zeroTr := adversarialTrajectory(userZero, H)
	b := &Billboard{T1: make([]float64, p*p), T2: make([]float64, p*n)}
	rel := make([]float64, 0, noise.PackedLen(p)+p*n)
	for k := 2; k <= K; k++ {
		cur.releaseInto(b)
		rel = rel[:0]
		for i := 0; i < p; i++ {
			rel = append(rel, b.T1[i*p+i:i*p+p]...)
		}
		rel = append(rel, b.T2...)
		if weighted {
			wk := 1 / float64(bits.OnesCount(uint(k-1)))
			if wsum == 0 {
				acc = make([]float64, len(rel))
			}
			wsum += wk
			for i, v := range rel {
				acc[i] += wk * v
			}
		} else {
			out = append(out, rel...)
		}
		if !withPlans {
			// Later users report x ≡ 0 (fixed data, identical on both sides): only user 1 differs.
			if k < K {
				if err := cur.Receive(zeroTr); err != nil {
					return nil, err
				}
			}
			continue
		}
		var gains [][]float64
		sys.InitialState(k, tr.X[0])
		{
			plan, err := pl.Plan(b, tr.X[0], optSeed.Index(uint64(k)).Rand())
			if err != nil {
				return nil, err
			}
			gains = plan.Gains
			for _, g := range gains {
				out = append(out, g...)
			}
		}
		ur := users.Index(uint64(k)).Rand()
		for h := 0; h < H; h++ {
			for i := 0; i < d; i++ {
				v := 0.0
				for j := 0; j < n; j++ {
					v += gains[h][i*n+j] * tr.X[h][j]
				}
				tr.U[h][i] = v
			}
			sys.SampleNoise(ur, w)
			sys.Step(tr.X[h], tr.U[h], w, tr.X[h+1])
		}
		if k < K {
			if err := cur.Receive(tr); err != nil {
				return nil, err
			}
		}
	}
	if weighted {
		for i := range acc {
			out = append(out, acc[i]/wsum)
		}
	}
	return out[:len(out):len(out)], nil
}

// auditSpec is one row of an audit-target table of the LQ family: the target's name and
// description, its variant b of the broken-variant type B, the changed user (of type U) on
// side 0 and on side 1, the number of episodes K, whether the output is averaged over the
// releases, and the suggested number of runs per side.
type auditSpec[B comparable, U any] struct {
	name, desc string
	b          B
	u0, u1     U
	K          int
	average    bool
	runs       int
}

// auditRunFunc is audit.Target.Run: one run on side 0 or 1 from seed.
type auditRunFunc = func(side int, seed rng.Seed) ([]float64, error)

// auditTargets returns one LQ target per row of specs, claiming (auditEpsilon, auditDelta),
// Broken unless the row's variant is ok, and running run(row); the run rejects a side other
// than 0 or 1.
func auditTargets[B comparable, U any](specs []auditSpec[B, U], ok B, run func(auditSpec[B, U]) auditRunFunc) []audit.Target {
	ts := make([]audit.Target, 0, len(specs))
	for _, sp := range specs {
		r := run(sp)
		ts = append(ts, audit.Target{
			Name:        sp.name,
			Family:      "lq",
			Description: sp.desc,
			Claim:       audit.Claim{Epsilon: auditEpsilon, Delta: auditDelta},
			Broken:      sp.b != ok,
			Runs:        sp.runs,
			Run: func(side int, seed rng.Seed) ([]float64, error) {
				if side != 0 && side != 1 {
					return nil, fmt.Errorf("lq audit: side must be 0 or 1, got %d", side)
				}
				return r(side, seed)
			},
		})
	}
	return ts
}

// AuditTargets returns the audit targets of the LQ family: Private-OFU-RL at (ε, δ) = (2, 1e−5)
// on LQ-E1 where user 1 is replaced by an adversarial user realising the replace-one
// sensitivity of B_1 (users A and B, orthogonal z of norm 1 + γ), later users report fixed
// zero data, and the observed output is the billboard released after user 1 — everything any
// later user's policy is computed from (a policy is a deterministic function of the billboard
// and that user's own data, so auditing the billboard audits the JDP output). Broken variants:
// node noise divided by 4, tree noise redrawn at every release (K = 1025, popcount-weighted
// average of the releases), noise level computed from the first user's data, planner reading
// raw statistics.
func AuditTargets() []audit.Target {
	const base = "Private-OFU-RL on LQ-E1, (ε,δ)=(2,1e-5), replace-one; user 1 "
	specs := []auditSpec[broken, userKind]{
		{"lq/private-ofu-rl", base + "A: z=(1,0,0.83) vs B: orthogonal z; K=3; output: billboards after user 1", notBroken, userA, userB, 3, false, 200000},
		{"lq/private-ofu-rl/zero-user", base + "A vs a user reporting zeros; K=3; output: billboards after user 1", notBroken, userA, userZero, 3, false, 20000},
		{"lq/private-ofu-rl/long", base + "A vs B; K=1025; output: popcount-weighted average of the billboards after user 1", notBroken, userA, userB, 1025, true, 20000},
		{"lq/private-ofu-rl/noise-div4", "BROKEN: node noise divided by 4; " + base + "A vs B; K=3", brokenNoiseDiv4, userA, userB, 3, false, 200000},
		{"lq/private-ofu-rl/tree-redrawn", "BROKEN: counter noise redrawn at every release; " + base + "A vs B; K=1025, weighted average", brokenRedraw, userA, userB, 1025, true, 100000},
		{"lq/private-ofu-rl/data-sigma", "BROKEN: noise level computed from user 1's element; " + base + "A vs zeros; K=3", brokenDataSigma, userA, userZero, 3, false, 20000},
		{"lq/private-ofu-rl/raw-planner", "BROKEN: the planner reads the raw statistics; " + base + "A vs B; K=3", brokenRawPlanner, userA, userB, 3, false, 20000},
	}
	ts := auditTargets(specs, notBroken, func(sp auditSpec[broken, userKind]) auditRunFunc {
		cfg := DefaultConfig(auditEpsilon, sp.K)
		cfg.Delta = auditDelta
		cfg.broken = sp.b
		return func(side int, seed rng.Seed) ([]float64, error) {
			return auditRun(cfg, sp.K, sp.u0, sp.u1, side, seed, false, false, sp.average)
		}
	})
	// dprl's practical agent (practical_audit.go).
	return append(ts, PracticalAuditTargets()...)
}
