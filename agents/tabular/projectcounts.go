package tabular

import (
	"fmt"
	"math"
	"sort"
)

// insertionSortMax is the largest S for which Project sorts with an insertion sort; larger
// vectors use sort.Float64s. RiverSwim has S = 6.
const insertionSortMax = 16

// Projector solves the post-processing linear program of Qiao & Wang (2023), eq. (4), in its
// LP form eq. (6) (tabular spec §3.5):
//
//	minimise_{x ∈ R^S}  t := max_{s'} |x_{s'} − n̂_{s'}|
//	subject to          x_{s'} ≥ 0 for all s',   |Σ_{s'} x_{s'} − M| ≤ δ,
//
// where, for one (h,s,a), n̂ = N̂_h^k(s,a,·) are the noisy transition counts, M = N̂_h^k(s,a)
// is the noisy visit count and δ = E_{ε,β}/4. The paper suggests a generic simplex solver; the
// problem has an exact closed-form solution after one sort, which Project implements in
// O(S log S) time (O(S²) insertion sort for S ≤ 16) without allocating.
//
// A Projector holds the scratch buffer for one dimension S. It is not safe for concurrent
// use; use one Projector per goroutine.
type Projector struct {
	v []float64 // n̂ sorted in decreasing order (scratch, len S)
}

// NewProjector returns a Projector for vectors of length S. It panics if S < 1.
func NewProjector(S int) *Projector {
	if S < 1 {
		panic(fmt.Sprintf("tabular: NewProjector: S = %d, want S ≥ 1", S))
	}
	return &Projector{v: make([]float64, S)}
}

// S returns the dimension the Projector was built for.
func (p *Projector) S() int { return len(p.v) }

// Project writes into x an optimal solution of the LP eq. (4) = eq. (6) of Qiao & Wang (2023)
// for the noisy counts nhat, the noisy total M and the tolerance delta ≥ 0 (tabular spec §3.5),
// and returns the optimal value tStar = max_i |x_i − nhat_i|. x and nhat must both have length
// p.S(); x may alias nhat. The additive shift of eq. (5) (spec §3.6) is left to the caller.
//
// Algorithm (spec §3.5, ProjectCounts). Let v be nhat sorted decreasingly and let θ(v, σ), for
// σ > 0, be the unique λ with Σ_i max(0, v_i + λ) = σ, computed from the prefix sums
// P_j = v_1 + … + v_j as ρ = max{j : v_j − (P_j − σ)/j > 0}, θ = (σ − P_ρ)/ρ (the threshold of
// the Euclidean projection onto the simplex {x ≥ 0, Σx = σ}). Then
//
//	step 0: if M + δ < 0 { M := −δ; fallback = true }  // LP infeasible; smallest relaxation
//	step 1: v := nhat sorted decreasingly
//	step 2: t0 := max(0, −v_S)                         // x ≥ 0 needs t ≥ −n̂_i
//	step 3: tU := max(0, (M − δ − Σn̂)/S)               // Σx ≤ Σ(n̂_i + t) must reach M − δ
//	step 4: tL := max(0, −θ(v, M + δ)), or max(0, v_1) if M + δ = 0
//	                                 // Lo(t) = Σ max(0, n̂_i − t) ≤ Σx must not exceed M + δ
//	step 5: t* := max(t0, tU, tL)
//	step 6: σ := clamp(M, max(Lo(t*), M − δ), min(Up(t*), M + δ)), Up(t) = Σ(n̂_i + t)
//	                                 // the feasible total closest to M
//	step 7: x := 0 if σ = 0, else x := (n̂ + θ(v, σ))_+
//
// Optimality (spec §3.5 proof). Lower bound: a feasible x with value t has
// x_i ∈ [max(0, n̂_i − t), n̂_i + t], which needs t ≥ t0, and Lo(t) ≤ Σx ≤ M + δ,
// M − δ ≤ Σx ≤ Up(t) force t ≥ tL and t ≥ tU; so OPT ≥ t*. Achievability: for λ ∈ [−t*, t*],
// x(λ) = (n̂ + λ)_+ is non-negative with |x_i − n̂_i| ≤ t*, and Σx(λ) runs continuously and
// monotonically from Lo(t*) to Up(t*); the window [max(Lo, M−δ), min(Up, M+δ)] is non-empty
// (by the choice of t*), so λ = θ(v, σ) ∈ [−t*, t*] gives a feasible x with value ≤ t*.
//
// Tie-break. The minimiser is generally not unique; Project returns the canonical one (total
// closest to M, then the Euclidean projection of nhat onto {x ≥ 0, Σx = σ}), which makes runs
// reproducible. Any minimiser satisfies Lemma 5.4 of the paper (spec §3.7 item 3): if
// |n̂_{s'} − N(s')| ≤ δ and |M − N| ≤ δ for true counts N(s') ≥ 0 with N = Σ N(s'), then N(·) is
// feasible, so tStar ≤ max_{s'} |N(s') − n̂_{s'}| ≤ δ, hence |x_{s'} − N(s')| ≤ 2δ and
// N − 2δ ≤ Σx ≤ N + 2δ; with δ = E/4 and the shift of eq. (5) this gives N ≤ Ñ ≤ N + E.
//
// Infeasibility. The LP is infeasible iff M + δ < 0 (Σx ≥ 0). Then Project returns
// fallback = true, sets x = 0 (the solution for the window [−2δ, 0]) and tStar = max_i |nhat_i|.
// Under the good event of Lemma 5.4 this never happens; callers should count fallbacks.
//
// Project panics if len(x) or len(nhat) differs from p.S(), if delta is negative, or if any
// input is NaN or infinite. It does not allocate.
func (p *Projector) Project(x, nhat []float64, M, delta float64) (tStar float64, fallback bool) {
	S := len(p.v)
	if len(x) != S || len(nhat) != S {
		panic(fmt.Sprintf("tabular: Projector.Project: len(x) = %d, len(nhat) = %d, want S = %d",
			len(x), len(nhat), S))
	}
	if !(delta >= 0) || math.IsInf(delta, 0) || math.IsNaN(M) || math.IsInf(M, 0) {
		panic(fmt.Sprintf("tabular: Projector.Project: invalid M = %v or delta = %v", M, delta))
	}

	// Step 0: infeasible LP (M + δ < 0) → smallest relaxation, window [−2δ, 0].
	if M+delta < 0 {
		M = -delta
		fallback = true
	}

	// Step 1: v = nhat sorted decreasingly; also Σ n̂.
	if S <= michelotMax {
		return p.projectUnsorted(x, nhat, M, delta, fallback)
	}
	v := p.v
	sum := 0.0
	for i, n := range nhat {
		if math.IsNaN(n) || math.IsInf(n, 0) {
			panic(fmt.Sprintf("tabular: Projector.Project: nhat[%d] = %v", i, n))
		}
		v[i] = n
		sum += n
	}
	sortDecreasing(v)

	// Steps 2–5: the three lower bounds on t and their maximum.
	t0 := max(0, -v[S-1])
	tU := max(0, (M-delta-sum)/float64(S))
	C := M + delta
	var tL float64
	if C > 0 {
		tL = max(0, -theta(v, C))
	} else {
		tL = max(0, v[0])
	}
	tStar = max(t0, tU, tL)

	// Step 6: the feasible total closest to M at value t*.
	lo, up := 0.0, 0.0
	for _, vi := range v {
		lo += max(0, vi-tStar)
		up += vi + tStar // ≥ 0 termwise since t* ≥ t0 ≥ −v_i
	}
	lo = max(lo, M-delta)
	hi := min(up, M+delta)
	sigma := min(max(M, lo), hi) // hi last: never exceed M + δ, even after rounding

	// Step 7: x = (n̂ + θ(v, σ))_+, or 0 when σ = 0 (σ ≥ 0 always; ≤ guards rounding).
	if sigma <= 0 {
		clear(x)
		return tStar, fallback
	}
	th := theta(v, sigma)
	for i, n := range nhat {
		x[i] = max(0, n+th)
	}
	return tStar, fallback
}

// ProjectCounts is a convenience wrapper around Projector.Project that allocates a fresh
// Projector and the result vector x. See Projector.Project for the problem (Qiao & Wang 2023,
// eq. (4)/(6); tabular spec §3.5), the meaning of tStar and fallback, and the panics. Hot
// loops should reuse a Projector instead.
func ProjectCounts(nhat []float64, M, delta float64) (x []float64, tStar float64, fallback bool) {
	x = make([]float64, len(nhat))
	tStar, fallback = NewProjector(len(nhat)).Project(x, nhat, M, delta)
	return x, tStar, fallback
}

// theta returns θ(v, σ) of spec §3.5: for v sorted in decreasing order and σ > 0, the unique λ
// with Σ_i max(0, v_i + λ) = σ. With prefix sums P_j = v_1 + … + v_j,
// ρ = max{j : v_j − (P_j − σ)/j > 0} and θ = (σ − P_ρ)/ρ. The condition always holds for j = 1
// in exact arithmetic (it reads σ > 0); ρ starts at 1 so that rounding cannot leave it unset.
func theta(v []float64, sigma float64) float64 {
	rho, pRho := 1, v[0]
	p := 0.0
	for j, vj := range v {
		p += vj
		if vj-(p-sigma)/float64(j+1) > 0 {
			rho, pRho = j+1, p
		}
	}
	return (sigma - pRho) / float64(rho)
}

// sortDecreasing sorts v in decreasing order in place without allocating: insertion sort for
// len(v) ≤ insertionSortMax, otherwise sort.Float64s followed by a reversal.
func sortDecreasing(v []float64) {
	if len(v) <= insertionSortMax {
		for i := 1; i < len(v); i++ {
			a := v[i]
			j := i
			for j > 0 && v[j-1] < a {
				v[j] = v[j-1]
				j--
			}
			v[j] = a
		}
		return
	}
	sort.Float64s(v)
	for i, j := 0, len(v)-1; i < j; i, j = i+1, j-1 {
		v[i], v[j] = v[j], v[i]
	}
}

// michelotMax is the largest S for which Project avoids sorting (the active set fits a uint64).
const michelotMax = 64

// projectUnsorted is Project for S ≤ 64 without any sort: the thresholds θ(·, σ) come from
// Michelot's (1986) active-set iteration, and t0, tU, Lo, Up need only sums and extremes. Under
// JDP every release reshuffles the order of the noisy counts, so a sort would spend most of its
// time on mispredicted branches; this path has none that depend on the order.
func (p *Projector) projectUnsorted(x, nhat []float64, M, delta float64, fallback bool) (float64, bool) {
	sum, lo, hi := 0.0, math.Inf(1), math.Inf(-1)
	for _, n := range nhat {
		sum += n
		lo = min(lo, n)
		hi = max(hi, n)
	}
	if math.IsNaN(sum) || math.IsInf(sum, 0) { // some entry is NaN or ±Inf
		for i, n := range nhat {
			if math.IsNaN(n) || math.IsInf(n, 0) {
				panic(fmt.Sprintf("tabular: Projector.Project: nhat[%d] = %v", i, n))
			}
		}
	}
	S := float64(len(nhat))
	t0 := max(0, -lo)
	tU := max(0, (M-delta-sum)/S)
	C := M + delta
	tStar := max(t0, tU)
	// tL, the smallest t with Lo(t) = Σ max(0, n̂_i − t) ≤ C, matters only if it exceeds
	// max(t0, tU): check Lo there first (Lo is non-increasing) and skip the θ computation
	// when it already fits.
	if lot := loSum(nhat, tStar); lot > C {
		if C > 0 {
			tStar = max(tStar, -thetaMichelot(nhat, sum, C))
		} else {
			tStar = max(tStar, hi)
		}
	}
	lot := loSum(nhat, tStar)
	low, up := max(lot, M-delta), sum+S*tStar
	up = min(up, M+delta)
	sigma := min(max(M, low), up)
	if sigma <= 0 {
		clear(x)
		return tStar, fallback
	}
	var th float64
	switch {
	case sigma == sum+S*tStar: // upper end of the window: λ = t* (n̂_i + t* ≥ 0 for all i)
		th = tStar
	case sigma == lot: // lower end: λ = −t* gives Σ (n̂_i − t*)₊ = σ, and λ is unique for σ > 0
		th = -tStar
	default:
		th = thetaMichelot(nhat, sum, sigma)
	}
	for i, n := range nhat {
		x[i] = max(0, n+th)
	}
	return tStar, fallback
}

// loSum returns Σ_i max(0, v_i − t).
func loSum(v []float64, t float64) float64 {
	s := 0.0
	for _, x := range v {
		s += max(0, x-t)
	}
	return s
}

// thetaMichelot returns the unique λ with Σ_i max(0, v_i + λ) = σ (σ > 0), where sum = Σ v_i,
// by Michelot's iteration: λ ← (σ − Σ_{i∈I} v_i)/|I| and I ← {i ∈ I : v_i + λ > 0} until I is
// stable (λ never decreases and I only shrinks, so at most len(v) rounds).
func thetaMichelot(v []float64, sum, sigma float64) float64 {
	mask := uint64(1)<<uint(len(v)) - 1
	if len(v) == 64 {
		mask = ^uint64(0)
	}
	lam := (sigma - sum) / float64(len(v))
	for {
		var next uint64
		s, c := 0.0, uint64(0)
		for i, x := range v {
			// Branch-free: bit = 1 iff i is active and x + λ > 0 (sign bit of −(x+λ); an exact
			// 0 counts as active, which leaves λ unchanged).
			bit := (math.Float64bits(-(x + lam)) >> 63) & (mask >> uint(i)) & 1
			next |= bit << uint(i)
			s += x * float64(bit)
			c += bit
		}
		if next == mask || c == 0 {
			return lam
		}
		mask = next
		lam = (sigma - s) / float64(c)
	}
}
