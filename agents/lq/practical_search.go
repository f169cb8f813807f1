package lq

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// This file holds the practical planner's optimistic step across releases (dprl's own; the
// paper's agents keep OptimisticSearch at every episode, optimistic.go, unchanged).
//
// Problem. Per release the planner solves, for each public reference state r_j,
//
//	Θ̃_j ∈ argmin_{Θ ∈ C ∩ S̄} J*_1(Θ, r_j)                                        (eq. (9))
//
// and OptimisticSearch does so from 4 + d·n + NumRandomStarts starts of up to MaxIter
// projected-gradient steps each: about 900 Riccati solves per reference and release on LQ-E1,
// 93 % of a practical run. Between two releases the confidence set changes little (M = 500
// users out of tens of thousands enter the Gram; Θ̂ and β move by a few per cent), so the
// previous minimiser is an excellent start for the next one.
//
// Warm-started step (the default; WarmSearch). For reference j at release t:
//
//  1. Cold: if reference j has no previous minimiser (the first release after the u ≡ 0
//     phase, where every search took the early exit), or t is a multiple of
//     WarmSearch.Refresh, or warm starts are off, run OptimisticSearch unchanged (all its
//     starts, including the random ones from the public stream of (t, j)).
//  2. Warm: otherwise compute, exactly as OptimisticSearch does, the empty-set test, f at the
//     projection of Θ̂ (FProjHat) and the A-zeroed early-exit test; if the set is empty or the
//     early exit applies, hand over to OptimisticSearch (which returns its fallback or its
//     certificate at once). Else run OptimisticSearch's descent (preconditioned projected
//     gradient, exact gradients, exact projection, Armijo backtracking on the projection arc)
//     from three starts: the previous minimiser Θ̃_j(t−1) projected onto C_t ∩ S̄, and
//     OptimisticSearch's own first two starts, Θ̂ and the A-zeroed Θ̂ (they are cheap, and on
//     LQ-E1 they find a lower basin than the tracked one in a good share of releases). Each
//     descent also stops once an accepted step lowers f by at most TolF·(1 + |f|).
//  3. Fallback: the warm result is rejected — the warm start has failed, OptimisticSearch runs
//     in full and its result is used (the Riccati solves of both are counted) — if f is not
//     finite, if f(Θ̃) > f(Proj(Θ̂)) (cannot happen with the Θ̂ start; kept as a check), or if
//     Θ̃ lies in the degenerate stationary set K ≡ 0 (every gain exactly 0: ∇_B f = 0 there, so
//     no descent leaves it; OptimisticSearch escapes it only through its B-excited and random
//     starts). Without the last test the noise-off twin, whose first non-trivial search lands
//     there, never left u ≡ 0.
//
// What is kept. Θ̃ is feasible (exact projection), f(Θ̃) ≤ f(Proj(Θ̂)) (monotone descent from
// Θ̂), the early exit and its global-optimality certificate are unchanged, and the run still
// counts, per release and reference, whether f(Θ̃) ≤ J*_1(Θ*, r_j) when Θ* ∈ C ∩ S̄ (optimism
// held; PracticalDiagnostics.OptimismViolations). Neither search certifies a global minimum of
// the nonconvex problem outside the early exit: both return the best of a few local descents,
// and optimism holds exactly when that is below J*_1(Θ*, r_j), which the diagnostics check.
// What is given up: the B-excited and random restarts at every release, i.e. the chance that
// one of them finds a lower basin than the three warm descents; and the descents stop at a
// relative objective tolerance TolF as well as at the step tolerance. Measured on LQ-E1 at
// ε = 1, K = 10⁵, seeds 1–3 (832 searches each, the full search run beside the warm one on
// the same releases): the warm f(Θ̃) is within 10⁻⁴ (relative) of the full search's in
// 95–97 % of the searches, at most 0.55 % above it, and below it in 1–2 searches per seed;
// no optimism violation with either; about 5× fewer Riccati solves in total, and whole runs
// at K = 10⁵ went from 0.3× to 1.65× the episodes/s of the paper's Private-OFU-RL
// (BenchmarkPracticalEpisode vs BenchmarkEpisode/n2d1/private-eps1). Refreshes
// (every Refresh-th release a full search) bound how long a lower basin found only by random
// starts can be missed.
//
// Privacy. Unchanged: the carried minimisers are functions of earlier releases and public
// streams only, so the gains of user k are a post-processing of the sequence of releases up to
// hers (all of which the counter's guarantee covers: NewPracticalCurator), of public streams
// and of her own x_{k,1}. The billboard argument therefore holds for the release sequence
// rather than the current release alone (TestPracticalReplay replays the recorded sequence).
// Noise, sensitivity and accountant are not touched by this file.

// WarmSearch configures how the practical planner reuses its optimistic step across releases.
type WarmSearch struct {
	// Off runs OptimisticSearch (all starts) for every reference at every release.
	Off bool
	// TolF ∈ [0, 1): a warm descent also stops once an accepted step lowers f by at most
	// TolF·(1 + |f|) (0: only the step tolerances of SearchConfig).
	TolF float64
	// Refresh ≥ 0: if > 0, every Refresh-th release also runs the full search (0: only when
	// the warm start fails or no previous minimiser exists).
	Refresh int
}

// DefaultWarmSearch returns warm starts with TolF = 1e−10 and a full search every 16th release.
func DefaultWarmSearch() WarmSearch { return WarmSearch{TolF: 1e-10, Refresh: 16} }

func (w WarmSearch) validate() error {
	switch {
	case !(w.TolF >= 0 && w.TolF < 1):
		return fmt.Errorf("practical lq: warm search tol_f: must be in [0, 1), got %v", w.TolF)
	case w.Refresh < 0 || w.Refresh > 1<<30:
		return fmt.Errorf("practical lq: warm search refresh: must be in [0, 2^30], got %d", w.Refresh)
	}
	return nil
}

// SearchMode says how a reference's optimistic step was computed at a release.
type SearchMode int

// Search modes.
const (
	// SearchCold: OptimisticSearch with all its starts (first search, refresh, warm starts off).
	SearchCold SearchMode = iota
	// SearchWarm: the descent from the previous minimiser, accepted.
	SearchWarm
	// SearchFallback: the warm start failed (f(Θ̃) > f(Proj(Θ̂)) or not finite); OptimisticSearch ran.
	SearchFallback
	// SearchHandover: empty set or A-zeroed early exit found by the warm prefix; OptimisticSearch returned it.
	SearchHandover
)

// practicalSearch runs the optimistic step of every release, carrying each reference's last
// minimiser (a function of earlier releases and public streams only).
type practicalSearch struct {
	s    *searcher
	cfg  WarmSearch
	prev [][]float64 // prev[j]: Θ̃_j of the last search for reference j that descended (nil: none)
	// scratch (p×n each)
	y0, py, th, thA, yA, pyA, ys []float64
	desc                         *descentBuffers
}

func newPracticalSearch(s *searcher, cfg WarmSearch, refs int) *practicalSearch {
	m := s.p * s.n
	ps := &practicalSearch{s: s, cfg: cfg, prev: make([][]float64, refs), desc: newDescentBuffers(m)}
	for _, b := range []*[]float64{&ps.y0, &ps.py, &ps.th, &ps.thA, &ps.yA, &ps.pyA, &ps.ys} {
		*b = make([]float64, m)
	}
	return ps
}

// search returns reference j's optimistic step at the release with index rel (set el, state
// x, public stream rng for the cold search) and how it was computed.
func (ps *practicalSearch) search(el *Ellipsoid, x []float64, j, rel int, rng *rand.Rand) (SearchResult, SearchMode) {
	mode := SearchCold
	var warm SearchResult
	if !ps.cfg.Off && ps.prev[j] != nil && (ps.cfg.Refresh == 0 || rel%ps.cfg.Refresh != 0) {
		var ok bool
		warm, mode, ok = ps.warm(el, x, ps.prev[j])
		if ok {
			ps.prev[j] = append(ps.prev[j][:0], warm.Theta...)
			return warm, mode
		}
	}
	res := ps.s.search(el, x, rng)
	res.Fevals += warm.Fevals
	if !res.Empty && !res.EarlyExit {
		ps.prev[j] = append(ps.prev[j][:0], res.Theta...)
	}
	return res, mode
}

// warm runs the warm-started descent from the previous minimiser start (Θ coordinates). ok
// is false when OptimisticSearch must run instead: mode SearchHandover (empty set or early
// exit; nothing computed here is used) or SearchFallback (the warm result failed the test).
func (ps *practicalSearch) warm(el *Ellipsoid, x, start []float64) (SearchResult, SearchMode, bool) {
	s := ps.s
	s.setup(el, x)
	s.fevals, s.iters = 0, 0
	n := s.n
	res := SearchResult{BestStart: -1}
	if s.empty() {
		return res, SearchHandover, false
	}
	// The prefix of OptimisticSearch: f at Proj(Θ̂), then the A-zeroed early-exit test.
	clear(ps.y0)
	s.proj(ps.y0, ps.py)
	s.toTheta(ps.py, ps.th)
	res.FProjHat = s.f(ps.th)
	copy(ps.thA, el.ThetaHat)
	clear(ps.thA[:n*n])
	s.toY(ps.thA, ps.yA)
	if !s.proj(ps.yA, ps.pyA) {
		return res, SearchHandover, false
	}
	s.toTheta(ps.pyA, ps.thA)
	maxA := 0.0
	for _, v := range ps.thA[:n*n] {
		maxA = math.Max(maxA, math.Abs(v))
	}
	if maxA <= 1e-12 {
		return res, SearchHandover, false
	}
	// Starts: Proj(previous minimiser), then OptimisticSearch's first two starts, Θ̂ and the
	// A-zeroed Θ̂ (the descent from Θ̂ keeps f(Θ̃) ≤ f(Proj(Θ̂))).
	s.toY(start, ps.ys)
	starts := [][]float64{ps.ys, ps.y0, ps.yA}
	res.F = math.Inf(1)
	for si, st := range starts {
		// OptimisticSearch's descent, plus the TolF stop.
		f, T := s.descend(x, st, ps.desc, ps.cfg.TolF)
		if f < res.F {
			res.F, res.BestStart = f, si
			res.Theta = append(res.Theta[:0], T...)
		}
	}
	fT := res.F
	res.Fevals, res.Iters = s.fevals, s.iters
	if math.IsInf(fT, 0) || math.IsNaN(fT) || fT > res.FProjHat || ps.zeroPolicy(res.Theta) {
		return res, SearchFallback, false
	}
	return res, SearchWarm, true
}

// zeroPolicy reports that every gain K_h(Θ) is exactly 0: Θ lies in the degenerate stationary
// set K ≡ 0 (∇_B f = 0 there, so no descent leaves it), which OptimisticSearch escapes only
// through its B-excited and random starts. A warm result there counts as a failed warm start.
func (ps *practicalSearch) zeroPolicy(theta []float64) bool {
	s := ps.s
	s.fevals++
	if !s.ric.Solve(theta) {
		return false
	}
	for h := 1; h <= s.h; h++ {
		for _, g := range s.ric.K[h] {
			if g != 0 {
				return false
			}
		}
	}
	return true
}
