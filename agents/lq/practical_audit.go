package lq

import (
	"sync"

	"github.com/dprl/dprl/model/lq"
	"github.com/dprl/dprl/privacy/audit"
	"github.com/dprl/dprl/privacy/counter"
	"github.com/dprl/dprl/privacy/noise"
	"github.com/dprl/dprl/rng"
)

// practicalAuditUser selects the changed user of a practical audit run.
type practicalAuditUser int

const (
	pUserA    practicalAuditUser = iota // one kept pair w = (1, 0, 0.83; 1, 0): ‖z‖ = 1+γ, ‖x'‖ = 1
	pUserB                              // one kept pair w = (−0.6889, 0.7249, 0.83; 0, 1), w ⊥ user A's w
	pUserZero                           // reports zeros (element 0)
	pUserBig                            // user A's pair times 5 (only the unclipped variant keeps it so)
)

// zeroTrajectory is a user reporting x ≡ 0, u ≡ 0 (LQ-E1 shapes).
func zeroTrajectory(H int) *Trajectory { return adversarialTrajectory(userZero, H) }

// practicalAuditTrajectory returns the changed user's report (LQ-E1 shapes). With the audit
// budget B = (1+γ)²+1 only the first pair is kept; users A and B then realise
// ‖e_A − e_B‖_σ = √(B² − 1) ≈ 0.93·Δ₂ (PracticalSensitivity's proof with ⟨M_A, M_B⟩ = 0).
func practicalAuditTrajectory(kind practicalAuditUser, H int) *Trajectory {
	tr := zeroTrajectory(H)
	switch kind {
	case pUserA, pUserBig:
		m := 1.0
		if kind == pUserBig {
			m = 5
		}
		tr.X[0], tr.U[0], tr.X[1] = []float64{m, 0}, []float64{0.83 * m}, []float64{m, 0}
	case pUserB:
		tr.X[0], tr.U[0], tr.X[1] = []float64{-0.6889, 0.7249}, []float64{0.83}, []float64{0, 1}
	}
	return tr
}

// practicalAuditRun runs the practical curator with user 1 the changed user and users 2..K−1
// reporting zeros (identical on both sides), and returns the releases after user 1 (every
// coordinate divided by its noise scale), or, if average, their mean — a post-processing
// that exposes noise redrawn per release. side is 0 or 1 (auditTargets checks it).
func practicalAuditRun(cfg PracticalConfig, u0, u1 practicalAuditUser, side int, seed rng.Seed, average bool) ([]float64, error) {
	pub := PublicOf(lq.LQE1())
	cur, err := NewPracticalCurator(pub, cfg, noise.NewSeeded(seed.Rand()))
	if err != nil {
		return nil, err
	}
	kind := u0
	if side == 1 {
		kind = u1
	}
	p, n := pub.N+pub.D, pub.N
	scales := practicalScales(p, n)
	np := noise.PackedLen(p)
	var out []float64
	acc := make([]float64, practicalDim(p, n))
	for u := 1; u < cfg.Episodes; u++ {
		tr := zeroTrajectory(pub.H)
		if u == 1 {
			tr = practicalAuditTrajectory(kind, pub.H)
		}
		if err := cur.Receive(tr); err != nil {
			return nil, err
		}
		rel := cur.Release()
		row := make([]float64, practicalDim(p, n))
		for i := 0; i < p; i++ {
			for j := i; j < p; j++ {
				k := noise.PackedIndex(p, i, j)
				row[k] = rel.V[i*p+j] / scales[k]
			}
		}
		for i, v := range rel.U {
			row[np+i] = v / scales[np+i]
		}
		if average {
			for i, v := range row {
				acc[i] += v / float64(cfg.Episodes-1)
			}
		} else {
			out = append(out, row...)
		}
	}
	if average {
		out = acc
	}
	return out, nil
}

// PracticalAuditTargets returns the audit targets of the practical agent at (ε, δ) = (2, 1e−5),
// replace-one, on LQ-E1 shapes: budget B = (1+γ)²+1, one user per release (M = 1), the BLT
// counter; user 1 is replaced by an adversarial user realising ≈ 0.93·Δ₂, later users report
// zeros, and the output is every release after user 1 — everything any later user's gains are
// computed from. Broken variants: σ/4, noise redrawn at every release (averaged over 63
// releases), budget and pair scaling skipped (a large user), release holding the raw
// statistics.
func PracticalAuditTargets() []audit.Target {
	pub := PublicOf(lq.LQE1())
	budget := theoryBudget(pub) / float64(pub.H)
	const base = "practical-ofu-rl (dprl's own) on LQ-E1, (ε,δ)=(2,1e-5), replace-one, B=(1+γ)²+1, M=1, BLT; user 1 "
	specs := []auditSpec[practicalBroken, practicalAuditUser]{
		{"lq/practical-ofu-rl", base + "A vs B (orthogonal pairs, 0.93·Δ₂); K=4; output: 3 releases after user 1", practicalOK, pUserA, pUserB, 4, false, 100000},
		{"lq/practical-ofu-rl/zero-user", base + "A vs a user reporting zeros; K=4", practicalOK, pUserA, pUserZero, 4, false, 20000},
		{"lq/practical-ofu-rl/long", base + "A vs B; K=64; output: mean of the 63 releases after user 1", practicalOK, pUserA, pUserB, 64, true, 20000},
		{"lq/practical-ofu-rl/noise-div4", "BROKEN: σ/4; " + base + "A vs B; K=4", practicalNoiseDiv4, pUserA, pUserB, 4, false, 20000},
		{"lq/practical-ofu-rl/redrawn", "BROKEN: noise redrawn at every release; " + base + "A vs B; K=64, mean of the releases", practicalRedraw, pUserA, pUserB, 64, true, 20000},
		{"lq/practical-ofu-rl/no-clip", "BROKEN: budget and pair scaling skipped; " + base + "5·A vs zeros; K=4", practicalNoClip, pUserBig, pUserZero, 4, false, 20000},
		{"lq/practical-ofu-rl/raw-planner", "BROKEN: the release (planner input) holds raw statistics; " + base + "A vs B; K=4", practicalRawStats, pUserA, pUserB, 4, false, 20000},
	}
	return auditTargets(specs, practicalOK, func(sp auditSpec[practicalBroken, practicalAuditUser]) auditRunFunc {
		// One BLT fit per target, made on first use and shared by its runs (public parameters).
		var once sync.Once
		var params counter.BLTParams
		var fitErr error
		return func(side int, seed rng.Seed) ([]float64, error) {
			once.Do(func() { params, fitErr = counter.FitSqrtBLT(PracticalCapacity(sp.K, 1), counter.DefaultBLTBuffers) })
			if fitErr != nil {
				return nil, fitErr
			}
			cfg := DefaultPracticalConfig(auditEpsilon, sp.K)
			cfg.Delta, cfg.Budget, cfg.BatchEvery, cfg.broken, cfg.BLT = auditDelta, budget, 1, sp.b, &params
			return practicalAuditRun(cfg, sp.u0, sp.u1, side, seed, sp.average)
		}
	})
}
