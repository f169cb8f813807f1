package lq

import (
	"fmt"

	"github.com/dprl/dprl/model/lq"
	"github.com/dprl/dprl/privacy/audit"
	"github.com/dprl/dprl/privacy/noise"
	"github.com/dprl/dprl/rng"
)

// auditEpisodes is K of the audit targets: 16 releases after the changed user, over m = 5 tree
// levels, so that a counter that redraws its noise at every release is detectable.
const auditEpisodes = 17

// auditEpsilon and auditDelta are the claim the audit targets are calibrated for.
const (
	auditEpsilon = 2.0
	auditDelta   = 1e-5
)

// userKind selects the changed user (user 1) of an audit run.
type userKind int

const (
	userA    userKind = iota // x_h = (1, 0), u_h = 0.83: ‖z‖ = 1 + γ
	userB                    // x_h = (−0.83, 0), u_h = 1: ‖z‖ = 1 + γ, z ⊥ user A's z
	userZero                 // reports x ≡ 0, u ≡ 0
)

// adversarialTrajectory returns the changed user's reported data on LQ-E1 shapes (n = 2,
// d = 1). Users A and B realise the replace-one B_1 sensitivity √2·H(1+γ)² exactly.
func adversarialTrajectory(kind userKind, H int) *Trajectory {
	tr := &Trajectory{X: make([][]float64, H+1), U: make([][]float64, H)}
	for h := range tr.X {
		switch kind {
		case userA:
			tr.X[h] = []float64{1, 0}
		case userB:
			tr.X[h] = []float64{-0.83, 0}
		default:
			tr.X[h] = []float64{0, 0}
		}
	}
	for h := range tr.U {
		switch kind {
		case userA:
			tr.U[h] = []float64{0.83}
		case userB:
			tr.U[h] = []float64{1}
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
func auditRun(cfg Config, K int, u0, u1 userKind, side int, seed rng.Seed, withPlans bool, sigmaOff bool) ([]float64, error) {
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
	out := make([]float64, 0, (K-1)*(noise.PackedLen(p)+p*n+H*d*n))
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
	for k := 2; k <= K; k++ {
		b := cur.Release()
		for i := 0; i < p; i++ {
			out = append(out, b.T1[i*p+i:i*p+p]...)
		}
		out = append(out, b.T2...)
		gains := make([][]float64, H) // u ≡ 0 unless planned
		for h := range gains {
			gains[h] = make([]float64, d*n)
		}
		sys.InitialState(k, tr.X[0])
		if withPlans {
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
	return out, nil
}

// AuditTargets returns the audit targets of the LQ family: Private-OFU-RL at (ε, δ) = (2, 1e−5)
// on LQ-E1 with K = 17, where user 1 is replaced by an adversarial user realising the
// replace-one sensitivity of B_1, and its deliberately broken variants (noise divided by 4,
// tree noise redrawn at every release, noise level computed from the first user's data, planner
// reading raw statistics). The observed output is the sequence of billboards released after
// user 1 (everything any later user's policy is computed from) and the gains handed to users
// 2..K.
func AuditTargets() []audit.Target {
	mk := func(name, desc string, b broken, u0, u1 userKind) audit.Target {
		cfg := DefaultConfig(auditEpsilon, auditEpisodes)
		cfg.Delta = auditDelta
		cfg.broken = b
		return audit.Target{
			Name:        name,
			Family:      "lq",
			Description: desc,
			Claim:       audit.Claim{Epsilon: auditEpsilon, Delta: auditDelta},
			Broken:      b != notBroken,
			Run: func(side int, seed rng.Seed) ([]float64, error) {
				if side != 0 && side != 1 {
					return nil, fmt.Errorf("lq audit: side must be 0 or 1, got %d", side)
				}
				return auditRun(cfg, auditEpisodes, u0, u1, side, seed, true, false)
			},
		}
	}
	const base = "Private-OFU-RL on LQ-E1, K=17, (ε,δ)=(2,1e-5), replace-one; user 1 "
	return []audit.Target{
		mk("lq/private-ofu-rl", base+"reports z=(1,0,0.83) vs the orthogonal z=(-0.83,0,1); output: billboards and gains after user 1", notBroken, userA, userB),
		mk("lq/private-ofu-rl/zero-user", base+"reports z=(1,0,0.83) vs all zeros; output: billboards and gains after user 1", notBroken, userA, userZero),
		mk("lq/private-ofu-rl/noise-div4", "BROKEN: node noise divided by 4; "+base+"A vs B", brokenNoiseDiv4, userA, userB),
		mk("lq/private-ofu-rl/tree-redrawn", "BROKEN: counter noise redrawn at every release; "+base+"A vs B", brokenRedraw, userA, userB),
		mk("lq/private-ofu-rl/data-sigma", "BROKEN: noise level computed from user 1's element; "+base+"A vs all zeros", brokenDataSigma, userA, userZero),
		mk("lq/private-ofu-rl/raw-planner", "BROKEN: the planner reads the raw statistics; "+base+"A vs B", brokenRawPlanner, userA, userB),
	}
}
