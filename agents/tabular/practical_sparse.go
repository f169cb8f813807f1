package tabular

import (
	"math"

	model "github.com/dprl/dprl/model/tabular"
)

// The effective estimator's P̃ (NoiseBonus) is a uniform prior plus the part of the released
// row above the threshold τσ_t:
//
//	P̃(s') = c + w(s'),  c = α/S / (n_e + α),  w(s') = n_e·(N̂(s,a,s') − τσ_t)/pos / (n_e + α)
//
// for the kept next states (N̂(s,a,s') > τσ_t) and w = 0 elsewhere (a row with nothing kept
// is uniform: c = (α/S + n_e/S)/(n_e + α), or 1/S when n_e + α = 0). So, with V the next
// step's values, V̄ = ΣV/S and M2 = Σ(V − V̄)² computed once per step,
//
//	P̃·V       = c·ΣV + Σ_kept w(s')·V(s')
//	Var_P̃(V) = c·(M2 + S·(V̄ − m)²) + Σ_kept w(s')·(V(s') − m)²,  m = P̃·V,
//
// and backward induction costs O(H·(S·A + kept)) per release after one O(S·A·S) pass over
// the release (effectiveSparse), instead of O(H·S·A·S). On Taxi (S = 500, A = 6, H = 200)
// the release has 1.5·10⁶ noisy coordinates of which ≈ 2–3 % lie above 2σ_t.
//
// The two forms agree to rounding (≈ 10⁻¹³ on values ≤ H; TestEffectiveSparseMatchesDense
// checks 10⁻⁹) but not bit for bit: the dense sum runs over s' in order. So that every
// existing reproduction (RiverSwim S = 6, Garnets S = 10, FrozenLake S ≤ 64, CliffWalking
// S = 48) keeps its exact numbers, models with S ≤ denseEffectiveMaxStates keep the dense
// arithmetic; larger ones plan from the sparse rows. The switch depends only on the public S.

// denseEffectiveMaxStates is the largest S whose releases the effective estimator plans from
// with the dense arithmetic (see above).
const denseEffectiveMaxStates = 64

// planPath selects the effective estimator's arithmetic (tests compare both).
type planPath int

const (
	pathAuto   planPath = iota // dense up to denseEffectiveMaxStates states, sparse above
	pathDense                  // always dense
	pathSparse                 // always sparse
)

// sparse reports whether the effective estimator plans from sparse rows.
func (u *noiseUCB) sparse() bool {
	switch u.path {
	case pathDense:
		return false
	case pathSparse:
		return true
	}
	return u.S > denseEffectiveMaxStates
}

// planEffectiveSparse is planEffective from the sparse rows: Q = r̃ + P̃V + bonus(n_e) with
// the same n_e and r̃ and the same bonus Scale·(C1·√(Var·ι/n) + C2·√(ι/n)), n = n_e + 1,
// written Scale·√(ι/n)·(C1·√Var + C2) with √(ι/n) computed once per cell and release (equal
// up to rounding). Keep the formula in step with planEffective's.
func (u *noiseUCB) planEffectiveSparse(r *Release, pol *model.Policy) error {
	c := &u.cfg
	rows := &u.rows
	effectiveSparse(r, c.Prior, c.RewardPrior, c.Threshold, u.kept, u.nt, u.r, rows)
	if cap(rows.root) < len(u.nt) {
		rows.root = make([]float64, len(u.nt))
	}
	rows.root = rows.root[:len(u.nt)]
	for i, e := range u.nt {
		rows.root[i] = c.Scale * math.Sqrt(c.Iota/(e+1))
	}
	return u.run(r.Pooled, true, c.TieTol, pol, func(h, i int, next []float64, cap float64) float64 {
		m, vr := rows.moments(i, next, cap)
		return u.reward(h, i, u.r) + m + rows.root[i]*(c.C1*math.Sqrt(vr)+c.C2)
	})
}

// effectiveRows is P̃ of every cell of one release in sparse form: cell i gives every next
// state the weight base[i] and the kept next states next[start[i]:start[i+1]] the extra
// weights w[start[i]:start[i+1]].
type effectiveRows struct {
	base  []float64
	start []int32
	next  []int32
	w     []float64
	// root is Scale·√(ι/(n_e + 1)) per cell (planEffectiveSparse).
	root []float64
	// Statistics of the values of the step being planned (moments): its cap H − h (−1: none
	// yet in this plan), ΣV, V̄ and M2 = Σ(V − V̄)².
	step          float64
	sum, mean, m2 float64
}

// effectiveSparse computes, for every cell of the release, n_e (ne), r̃ (rr) and P̃ in sparse
// form (rows), with the arithmetic of effectiveEstimates for n_e and r̃ (alpha = Prior,
// alphaR = RewardPrior, tau = Threshold; kept: keptCount, ignored with a public support). A
// release without a reward block (len(r.R) = 0) leaves rr unchanged.
func effectiveSparse(r *Release, alpha, alphaR, tau float64, kept bool, ne, rr []float64, rows *effectiveRows) {
	S := r.S
	cells := len(r.NT) / S
	v := float64(S) * r.Std * r.Std // noise variance of N̂(s,a)
	thr, thrR := tau*r.Std, tau*r.RStd
	u := alpha / float64(S)
	if cap(rows.base) < cells {
		rows.base = make([]float64, cells)
		rows.start = make([]int32, 0, cells+1)
	}
	rows.base, rows.start = rows.base[:cells], rows.start[:0]
	rows.next, rows.w = rows.next[:0], rows.w[:0]
	rows.step = -1
	sup := r.support
	tk := keptThreshold(tau, S)
	g, h := thresholdMoments(tk)
	if kept && r.support == nil {
		thr = tk * r.Std
	}
	sure := sureThreshold(len(r.NT)) * r.Std
	for i := 0; i < cells; i++ {
		row := r.NT[i*S : (i+1)*S]
		var k float64
		if sup != nil {
			k = float64(sup.size(i % (S * r.A)))
			v = k * r.Std * r.Std // the row's noise covers the k coordinates of the support
		}
		var raw, pos, e float64
		if kept && sup == nil {
			raw, pos, e = keptCount(row, thr, r.Std, g, h, sure)
		} else {
			raw, pos, e = effectiveCount(row, thr, v)
		}
		ne[i] = e
		rows.start = append(rows.start, int32(len(rows.next)))
		den := e + alpha
		switch {
		case sup != nil:
			// Public support (effectiveEstimatesSupport): no uniform part, every next state
			// of the support listed with its whole weight, P̃ = 0 elsewhere.
			rows.base[i] = 0
			for _, j := range sup.row(i % (S * r.A)) {
				w := alpha / k
				if pos > 0 {
					w += e * max(row[j]-thr, 0) / pos
				} else {
					w += e / k
				}
				if den > 0 {
					w /= den
				} else {
					w = 1 / k
				}
				rows.next = append(rows.next, j)
				rows.w = append(rows.w, w)
			}
		case !(den > 0):
			rows.base[i] = 1 / float64(S)
		case pos > 0:
			rows.base[i] = u / den
			for j, x := range row {
				if d := x - thr; d > 0 {
					rows.next = append(rows.next, int32(j))
					rows.w = append(rows.w, e*d/pos/den)
				}
			}
		default:
			rows.base[i] = (u + e/float64(S)) / den
		}
		if i >= len(r.R) {
			continue
		}
		rr[i] = shrunkReward(r.R[i], raw, e, thrR, alphaR)
	}
	rows.start = append(rows.start, int32(len(rows.next)))
}

// moments returns P̃·V and Var_P̃(V) for the cell i; V (next) is the same vector for every
// cell of the step cap, whose statistics are computed at the step's first call (prepare).
func (rows *effectiveRows) moments(i int, next []float64, cap float64) (m, vr float64) {
	if cap != rows.step {
		rows.prepare(next, cap)
	}
	lo, hi := rows.start[i], rows.start[i+1]
	idx, w := rows.next[lo:hi], rows.w[lo:hi]
	w = w[:len(idx)]
	c := rows.base[i]
	kept := 0.0
	for k, j := range idx {
		kept += w[k] * next[j]
	}
	m = c*rows.sum + kept
	d := rows.mean - m
	tail := 0.0
	for k, j := range idx {
		d := next[j] - m
		tail += w[k] * d * d
	}
	vr = c*(rows.m2+float64(len(next))*d*d) + tail
	return m, vr
}

// prepare computes ΣV, V̄ and M2 of the values of the step cap.
func (rows *effectiveRows) prepare(next []float64, cap float64) {
	rows.step = cap
	sum := 0.0
	for _, x := range next {
		sum += x
	}
	mean := sum / float64(len(next))
	m2 := 0.0
	for _, x := range next {
		d := x - mean
		m2 += d * d
	}
	rows.sum, rows.mean, rows.m2 = sum, mean, m2
}
