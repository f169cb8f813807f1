package tabular

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/stat/distuv"

	model "github.com/dprl/dprl/model/tabular"
)

// NoiseBonus is the exploration rule of the practical UCB planner (practical-privacy spec §5).
// Privacy never depends on it (the planner is a post-processing of the release); only regret
// does. It has two estimators.
//
// "plugin" (the plugin and theory presets). For a released cell with noisy counts N̂(s,a,·),
// R̂(s,a), noise standard deviation σ_t per coordinate (reported by the counter for this
// release) and V = Ṽ_{h+1}:
//
//	N̂(s,a) = Σ_{s'} N̂(s,a,s')                   (post-processing; its noise std is σ_t·√S)
//	Ñ      = N̂(s,a) − ZCount·σ_t·√S                  (pessimistic count)
//	P̂      = (N̂(s,a,·))₊ / Σ (N̂(s,a,·))₊ ,  r̂ = clip(R̂/max(N̂(s,a),1), 0, 1)
//	bonus  = Scale·(C1·√(Var_P̂(V)·ι/Ñ) + C2·√(ι/Ñ))           (UCBVI's statistical part)
//	       + Z·σ_t·(‖V − P̂V‖₂ + 1)/Ñ                              (the count noise, calibrated)
//	Q̃_h(s,a) = min(r̂ + P̂V + bonus, H − h)  if Ñ ≥ 1,  else H − h.
//
// The noise part is Z standard deviations of the error the released noise causes in
// r̂ + P̂·V to first order: δ(P̂V) ≈ Σ_{s'} e_{s'}(V(s') − P̂V)/N with e i.i.d. N(0, σ_t²).
// Its weakness: while N̂ − ZCount·σ_t·√S < 1 every action saturates at H − h and the policy is
// uniformly random; under LDP (σ_t ∝ √users) that lasts for most of 10⁶ episodes and a
// pair whose count falls back below the growing noise saturates again.
//
// "effective" (the practical preset; effectiveEstimates). Optimism that does not saturate and
// is calibrated to the noise-to-count ratio: the released counts are converted to a
// noise-aware effective sample size
//
//	n_e = n₊² / (n₊ + S·σ_t²) · min(1, κ/n₊),  n₊ = max(N̂(s,a), 0),  κ = Σ_{s'} (N̂(s,a,s') − τσ_t)₊
//
// (the first factor is the number of clean samples whose empirical P̂ has the variance of
// the noisy one: the sampling variance P(1−P)/n plus the noise variance ≈ σ_t²/n² per
// coordinate, matched at P ≈ 1/S; it is ≈ n for n ≫ S·σ_t² and ≈ (n/(σ_t√S))², the squared
// signal-to-noise ratio, for n ≪ S·σ_t². The second is the fraction of the row above the
// threshold: a row whose coordinates are all within τσ_t of 0 carries no information on P,
// however large its noisy sum — without it a sum inflated by noise made a pure-noise row
// count as data and the pair's P̂ uniform, which hid the rewarding pair of RiverSwim from one
// LDP seed for 10⁶ users). The estimates are shrunk towards an optimistic prior with n_e as
// the weight of the data:
//
//	P̃(s') = (n_e·P̂_τ(s') + Prior/S) / (n_e + Prior),  P̂_τ ∝ (N̂(s,a,s') − τσ_t)₊
//	r̃     = (n_e·r̂_τ + RewardPrior·1) / (n_e + RewardPrior),  r̂_τ = clip((R̂ − τσ_t)₊/N̂(s,a), 0, 1)
//	Q_h    = r̃ + P̃·V + Scale·(C1·√(Var_P̃(V)·ι/(n_e+1)) + C2·√(ι/(n_e+1)))
//	V_h(s) = min(max_a Q_h(s,a), H − h),  π_h(s) = argmax_a Q_h(s,a) (unclipped).
//
// The soft threshold τ = Threshold removes the positive part of the noise on empty
// coordinates (spurious mass on high-value states made the agent loop on a rarely visited
// pair for 10⁵ episodes) and of the reward noise (r̂ = R̂/N̂ has noise σ_t/N, 0.2 per step on
// a pair seen 3·10⁵ times at 7.5·10⁵ LDP users). Because the action is the argmax of the
// unclipped Q, when several actions are optimistic beyond H − h the one with the least
// information (smallest n_e, hence largest prior weight and bonus) wins: exploration is
// directed to the least explored pairs instead of uniform. No regret proof (labelled
// practical); the constants are fixed once for every environment and privacy model.
//
// Public rewards (public.go). Every estimator and the PSRL planner replace the reward estimate
// (r̂, r̃, the sampled reward) by the exact R_h(s,a) and V by E + V in the transition term
// (E the public entry rewards): Q_h = R_h + P̃·(E + V_{h+1}) + bonus, with P̃ and the bonus
// as above. No reward optimism remains: exploration comes from the transition prior and the
// bonus only.
//
// Kept count (keptCount; NoiseBonus.Count, countRule). With a private support and S ≥ 32 the
// effective estimator reads n from the coordinates above a threshold raised to
// τ' = max(τ, Φ⁻¹(1 − 1/S)) instead of the row sum (noise variance ≈ 2·σ_t² instead of S·σ_t² on
// Taxi), P̂_τ' from the same coordinates, and counts an identified next state (above
// Φ⁻¹(1 − 1/dim)·σ_t) whole, as a public support would.
//
// Public support (support.go). With the support of (s, a) public, of size k, every estimator
// uses only its k next states: S is replaced by k in the noise variance of the row sum (k·σ_t²,
// the pessimistic count's σ_t·√k) and in the priors (α/k, PSRL's Dirichlet on k coordinates),
// and P̂ = P̃ = 0 exactly outside the support.
type NoiseBonus struct {
	// Preset is "practical", "plugin" or "theory".
	Preset string `json:"preset"`
	// Z is the number of noise standard deviations of the plugin estimator's noise bonus
	// (plugin preset 0.2; theory: union bound, resolved; unused by the effective estimator).
	Z float64 `json:"z"`
	// ZCount is the number of noise standard deviations subtracted in the plugin estimator's
	// pessimistic count Ñ (plugin preset 1; theory: Z; unused by the effective estimator).
	ZCount float64 `json:"z_count"`
	// Scale, C1, C2 are the statistical part (plugin preset 0.1, 2, √2, the repository's
	// practical UCBVI preset, tabular spec §2.6; practical 0.01; theory Scale 1).
	Scale float64 `json:"scale"`
	C1    float64 `json:"c1"`
	C2    float64 `json:"c2"`
	// Iota is ι; 0 means ln(30·H·S·A·K·H/β) as in UCBVI.
	Iota float64 `json:"iota"`
	// TieTol: actions within TieTol of the best are tied, ties broken by the tie stream.
	TieTol float64 `json:"tie_tol"`
	// Estimator is "plugin" (pessimistic count Ñ, saturation at H − h when Ñ < 1) or
	// "effective" (noise-aware effective count and optimistic shrinkage, no saturation).
	// Empty means "plugin".
	Estimator string `json:"estimator,omitempty"`
	// Prior is the pseudo-count α of the optimistic prior of the effective estimator.
	Prior float64 `json:"prior,omitempty"`
	// RewardPrior is the pseudo-count of the optimistic reward prior (r = 1) of the effective
	// estimator.
	RewardPrior float64 `json:"reward_prior,omitempty"`
	// Threshold τ: the effective estimator keeps only the part of a released N̂(s,a,s') above
	// τ·σ_t in P̂ (denoising of sparse rows).
	Threshold float64 `json:"threshold,omitempty"`
	// Count is how the effective estimator reads the count n of (s, a) from its released row
	// (keptCount): "sum" (the noisy sum N̂(s,a), noise variance S·σ_t²), "kept" (from the
	// coordinates above the threshold, noise variance ≈ (kept + S·h(τ'))·σ_t²) or "" (the
	// rule, countRule: "kept" when the support is private and S ≥ 32, "sum" otherwise).
	// Unused with a public support (the sum then covers the support only).
	Count string `json:"count,omitempty"`
}

// PracticalNoiseBonus is the practical preset (no regret proof): the effective estimator with
// Prior 0.1, RewardPrior 0.3, Threshold 2 and Scale 0.01. Chosen on RiverSwim (JDP K = 5·10⁴,
// LDP K = 10⁶; seeds 1–6) and checked on the seeded Garnets; the same constants for JDP, LDP
// and every environment.
func PracticalNoiseBonus() NoiseBonus {
	return NoiseBonus{Preset: "practical", Estimator: "effective", Prior: 0.1, RewardPrior: 0.3, Threshold: 2,
		Scale: 0.01, C1: 2, C2: math.Sqrt2, TieTol: 1e-9}
}

// PluginNoiseBonus is the earlier practical preset, kept for comparison: the plugin estimator
// with Z = 0.2, ZCount = 1 and the repository's practical UCBVI scale 0.1.
func PluginNoiseBonus() NoiseBonus {
	return NoiseBonus{Preset: "plugin", Estimator: "plugin", Z: 0.2, ZCount: 1, Scale: 0.1, C1: 2, C2: math.Sqrt2, TieTol: 1e-9}
}

// TheoryNoiseBonus is the theory-constant preset: union-bound Z (resolved from β, the number of
// releases and the dimension) and unscaled statistical terms.
func TheoryNoiseBonus() NoiseBonus {
	return NoiseBonus{Preset: "theory", Scale: 1, C1: 2, C2: math.Sqrt2, TieTol: 1e-9}
}

// NoiseBonusPreset returns the named preset.
func NoiseBonusPreset(name string) (NoiseBonus, error) {
	switch name {
	case "", "practical":
		return PracticalNoiseBonus(), nil
	case "plugin":
		return PluginNoiseBonus(), nil
	case "theory":
		return TheoryNoiseBonus(), nil
	}
	return NoiseBonus{}, fmt.Errorf("bonus.preset: unknown preset %q (allowed: practical, plugin, theory)", name)
}

func (b NoiseBonus) resolve(S, A, H, K int, p PracticalPrivacy, beta float64) (NoiseBonus, error) {
	for _, f := range []struct {
		name string
		v    float64
	}{{"z", b.Z}, {"z_count", b.ZCount}, {"scale", b.Scale}, {"c1", b.C1}, {"c2", b.C2}, {"iota", b.Iota}, {"tie_tol", b.TieTol}, {"prior", b.Prior}, {"reward_prior", b.RewardPrior}, {"threshold", b.Threshold}} {
		if !(f.v >= 0) || math.IsInf(f.v, 0) {
			return b, fmt.Errorf("bonus.%s: must be finite and >= 0, got %g", f.name, f.v)
		}
	}
	if b.Preset != "practical" && b.Preset != "plugin" && b.Preset != "theory" {
		return b, fmt.Errorf("bonus.preset: unknown preset %q (allowed: practical, plugin, theory)", b.Preset)
	}
	switch b.Estimator {
	case "", "plugin", "effective":
	default:
		return b, fmt.Errorf("bonus.estimator: unknown estimator %q (allowed: plugin, effective)", b.Estimator)
	}
	switch b.Count {
	case "", countSum, countKept:
	default:
		return b, fmt.Errorf("bonus.count: unknown count %q (allowed: sum, kept, or empty for the rule)", b.Count)
	}
	if b.Iota == 0 {
		b.Iota = math.Log(30 * float64(H) * float64(S) * float64(A) * float64(K) * float64(H) / beta)
	}
	if b.Preset == "theory" {
		if b.Estimator == "effective" {
			return b, fmt.Errorf("bonus.estimator: the theory preset uses the plugin estimator, got %q", b.Estimator)
		}
		g := H
		if p.Pool {
			g = 1
		}
		events := float64(K) * float64(g*S*A*(S+1))
		b.Z = distuv.UnitNormal.Quantile(1 - beta/(2*events))
		b.ZCount = b.Z
	}
	return b, nil
}

// noiseUCB is the practical UCB planner (NoiseBonus). It replans only when the release
// changes (the schedule is public).
type noiseUCB struct {
	induction
	cfg     NoiseBonus
	version int
	// per cell: pessimistic count Ñ, plug-in P̂ (S per cell; allocated by the dense paths
	// only), r̂
	nt, p, r []float64
	// rows is the effective estimator's sparse P̃ (practical_sparse.go); path selects it.
	rows effectiveRows
	path planPath
	// kept: the effective estimator reads counts from the kept coordinates (NoiseBonus.Count,
	// resolved by countRule).
	kept bool
}

// newNoiseUCB returns the planner of releases pooled over h (pool) or per step, for the
// terminal states term, the public rewards pub (nil: estimated from the release) and the
// public support sup (nil: none).
func newNoiseUCB(S, A, H int, pool bool, term terminal, pub *rewardTable, sup *supportSet, cfg NoiseBonus, tie *rand.Rand) *noiseUCB {
	b := newInduction(S, A, H, pool, term, pub, tie)
	b.sup = sup
	n := b.cells()
	return &noiseUCB{induction: b, cfg: cfg, version: -1, kept: countRule(cfg.Count, S, sup != nil),
		nt: make([]float64, n), r: make([]float64, n)}
}

// induction is the backward induction the practical planners share: its sizes, whether the
// releases it plans from are pooled over h, the public terminal states, the public rewards
// (nil: estimated), its tie-breaking stream and buffers (Q of one step, V of two, E + V).
type induction struct {
	S, A, H int
	pooled  bool
	term    terminal
	pub     *rewardTable
	sup     *supportSet // public support (nil: none); the releases carry the same
	tie     *rand.Rand
	ties    []int
	q, v    []float64
	ev      []float64
}

func newInduction(S, A, H int, pool bool, term terminal, pub *rewardTable, tie *rand.Rand) induction {
	b := induction{S: S, A: A, H: H, pooled: pool, term: term, pub: pub, tie: tie, q: make([]float64, S*A), v: make([]float64, 2*S)}
	if pub != nil && pub.entry != nil {
		b.ev = make([]float64, S)
	}
	return b
}

// reward returns the reward the planner uses for the cell i of (s, a) at step h: the public
// R_h(s,a) when the rewards are public, else its estimate est[i].
func (b *induction) reward(h, i int, est []float64) float64 {
	if b.pub != nil {
		return b.pub.r[h][i%(b.S*b.A)]
	}
	return est[i]
}

// cells returns the number of (g, s, a) cells of the releases: S·A pooled, H·S·A per step.
func (b *induction) cells() int {
	if b.pooled {
		return b.S * b.A
	}
	return b.H * b.S * b.A
}

// check checks a release's shape against the planner's (sizes and pooling).
func (b *induction) check(r *Release) error {
	if err := checkRelease(r, b.S, b.A, b.H); err != nil {
		return err
	}
	if r.Pooled != b.pooled {
		return fmt.Errorf("release pooling (%v) does not match the planner's (%v)", r.Pooled, b.pooled)
	}
	if r.PublicRewards != (b.pub != nil) {
		return fmt.Errorf("release public rewards (%v) do not match the planner's (%v)", r.PublicRewards, b.pub != nil)
	}
	if r.support != b.sup {
		return fmt.Errorf("release public support (%v) does not match the planner's (%v)", r.support != nil, b.sup != nil)
	}
	return nil
}

// run computes, for h = H−1, …, 0 and every state s, Q(s,a) = q(h, i, V, H − h) for the
// cell i = (g·S+s)·A+a of (s,a) (g = 0 when pooled, h otherwise) and V = V_{h+1}, or
// E + V_{h+1} with public entry rewards E (the reward of entering s' is part of the step's
// reward: q adds the reward of (s,a), b.reward), V_h(s) = max_a Q (capped at H − h when
// capped) and pol's action at (h, s): a maximiser of Q, ties within tol broken by the tie
// stream. A terminal state is not estimated: V_h(s) = TerminalReward·(H − h), its exact value,
// action 0 (q is not called, no tie drawn). It returns errNoAction when every Q of some (h, s)
// is NaN.
func (b *induction) run(pooled, capped bool, tol float64, pol *model.Policy, q func(h, i int, next []float64, cap float64) float64) error {
	S, A, H := b.S, b.A, b.H
	next, cur := b.v[:S], b.v[S:]
	clear(next)
	for h := H - 1; h >= 0; h-- {
		g := h
		if pooled {
			g = 0
		}
		cap := float64(H - h)
		nx := next
		if b.ev != nil {
			for s2, e := range b.pub.entry {
				b.ev[s2] = e + next[s2]
			}
			nx = b.ev
		}
		for s := 0; s < S; s++ {
			if b.term.is(s) {
				setTerminal(b.q[s*A:(s+1)*A], cur[s:], pol.Act[h], s, b.term.value(H, h))
				continue
			}
			best := math.Inf(-1)
			for a := 0; a < A; a++ {
				v := q(h, (g*S+s)*A+a, nx, cap)
				b.q[s*A+a] = v
				best = max(best, v)
			}
			cur[s] = best
			if capped {
				cur[s] = min(best, cap)
			}
			if pol.Act[h][s] = breakTie(b.q[s*A:(s+1)*A], best, tol, b.tie, &b.ties); pol.Act[h][s] < 0 {
				return errNoAction
			}
		}
		next, cur = cur, next
	}
	return nil
}

// moments returns the mean m = Σ_j pr_j·v_j of v under pr, its variance Σ_j pr_j·(v_j − m)²
// and the squared deviation Σ_j (v_j − m)².
func moments(pr, v []float64) (m, vr, dev float64) {
	for j, x := range pr {
		m += x * v[j]
	}
	for j, x := range pr {
		d := v[j] - m
		vr += x * d * d
		dev += d * d
	}
	return m, vr, dev
}

func checkRelease(r *Release, S, A, H int) error {
	g := r.groups()
	nr := g * S * A
	if r.PublicRewards {
		nr = 0
	}
	if r.S != S || r.A != A || r.H != H || len(r.NT) != g*S*A*S || len(r.R) != nr {
		return fmt.Errorf("release shape (S=%d, A=%d, H=%d) does not match the planner's (S=%d, A=%d, H=%d)", r.S, r.A, r.H, S, A, H)
	}
	return nil
}

// estimates computes, for every cell of the release, Ñ (with z), P̂ and r̂ (not with public
// rewards).
func estimates(r *Release, z float64, nt, p, rr []float64) {
	S := r.S
	stdN := r.Std * math.Sqrt(float64(S))
	cells := r.cells()
	for i := 0; i < cells; i++ {
		if r.support != nil { // the noise of the row sum covers the k coordinates of the support
			stdN = r.Std * math.Sqrt(float64(r.support.size(i%(S*r.A))))
		}
		row := r.NT[i*S : (i+1)*S]
		raw, pos := 0.0, 0.0
		for _, x := range row {
			raw += x
			pos += max(x, 0)
		}
		nt[i] = raw - z*stdN
		pr := p[i*S : (i+1)*S]
		if pos > 0 {
			for j, x := range row {
				pr[j] = max(x, 0) / pos
			}
		} else {
			clear(pr)
		}
		if !r.PublicRewards {
			rr[i] = min(max(r.R[i]/max(raw, 1), 0), 1)
		}
	}
}

func (u *noiseUCB) Plan(r *Release, pol *model.Policy) error {
	if err := u.check(r); err != nil {
		return err
	}
	if r.Users == u.version {
		return nil
	}
	if err := finiteRelease(r); err != nil {
		return err
	}
	u.version = r.Users
	var err error
	if u.cfg.Estimator == "effective" {
		err = u.planEffective(r, pol)
	} else {
		err = u.planPlugin(r, pol)
	}
	if err != nil {
		u.version = -1 // replan next time
	}
	return err
}

// planPlugin is value iteration with the plugin estimator (pessimistic count, saturation at
// H − h).
func (u *noiseUCB) planPlugin(r *Release, pol *model.Policy) error {
	S := u.S
	c := &u.cfg
	if u.p == nil {
		u.p = make([]float64, u.cells()*S)
	}
	estimates(r, c.ZCount, u.nt, u.p, u.r)
	return u.run(r.Pooled, false, c.TieTol, pol, func(h, i int, next []float64, cap float64) float64 {
		q := cap
		if n := u.nt[i]; n >= 1 {
			m, vr, dev := moments(u.p[i*S:(i+1)*S], next)
			bonus := c.Scale*(c.C1*math.Sqrt(vr*c.Iota/n)+c.C2*math.Sqrt(c.Iota/n)) +
				c.Z*r.Std*(math.Sqrt(dev)+1)/n
			q = min(u.reward(h, i, u.r)+m+bonus, cap)
		}
		return q
	})
}

// shrunkReward is the effective estimator's reward r̃ = (n_e·r̂_τ + α_R)/(n_e + α_R) of a cell
// with released reward sum R̂ and noisy count sum raw, r̂_τ = clip((R̂ − thrR)₊/max(raw, 1), 0, 1)
// (1 when n_e + α_R = 0). The dense and the sparse planners share it.
func shrunkReward(R, raw, e, thrR, alphaR float64) float64 {
	rh := min(max(R-thrR, 0)/max(raw, 1), 1)
	if e+alphaR > 0 {
		return (e*rh + alphaR) / (e + alphaR)
	}
	return 1
}

// The two ways the effective estimator reads a pair's count from its released row
// (NoiseBonus.Count).
const (
	countSum  = "sum"
	countKept = "kept"
)

// keptCountMinStates is the smallest S at which the rule (NoiseBonus.Count empty) reads the
// counts of a model with a private support from the kept coordinates.
const keptCountMinStates = 32

// countRule says whether the effective estimator reads counts from the kept coordinates
// (keptCount): as count says, and for the rule (count empty) when the support is private and
// S ≥ keptCountMinStates. The rule depends only on public parameters. The sum's noise
// variance is S·σ_t²; the kept count's error is ≈ (1 + τ²)·σ_t² = 5·σ_t² per next state the
// pair reaches (its variance plus its bias τσ_t; keptCount) until the count clears the
// identification threshold, σ_t² after. So it wins when S is large against the number of next
// states: on CliffWalking (S = 48) and Taxi (S = 500), one next state. Below 32 states the sum
// is kept: every reproduction pinned by golden hashes with a private support has S ≤ 10
// (RiverSwim 6, Garnets 10, three next states), and FrozenLake 4×4 (S = 16, three next
// states) gains little. A public support keeps the sum (over the support's k coordinates).
func countRule(count string, S int, public bool) bool {
	switch count {
	case countKept:
		return true
	case countSum:
		return false
	}
	return !public && S >= keptCountMinStates
}

// thresholdMoments returns g = E(Z − τ)₊ and h = Var (Z − τ)₊ for Z ~ N(0, 1): the mean and
// the variance of what the soft threshold τ keeps of one coordinate of pure noise (in units
// of σ_t).
func thresholdMoments(tau float64) (g, h float64) {
	tail := 0.5 * math.Erfc(tau/math.Sqrt2)             // Φ(−τ)
	dens := math.Exp(-tau*tau/2) / math.Sqrt(2*math.Pi) // φ(τ)
	g = dens - tau*tail
	h = (1+tau*tau)*tail - tau*dens - g*g
	return g, max(h, 0)
}

// keptThreshold is the threshold of the kept count on rows of S coordinates: τ, raised to
// Φ⁻¹(1 − 1/S) where that is larger, so that a row keeps on average at most one coordinate of
// pure noise (S·Φ(−τ) ≤ 1). At τ = 2 a row of S = 500 keeps ≈ 11 noise coordinates of mass
// 4.2·σ_t, which P̂ spreads over random next states; at Φ⁻¹(1 − 1/500) = 2.88, one, of mass
// 0.29·σ_t. It is τ for S ≤ 43.
func keptThreshold(tau float64, S int) float64 {
	return max(tau, -math.Sqrt2*math.Erfcinv(2*(1-1/float64(S))))
}

// sureThreshold is Φ⁻¹(1 − 1/dim): a release of dim coordinates of pure noise has on average
// one above it.
func sureThreshold(dim int) float64 {
	return -math.Sqrt2 * math.Erfcinv(2*(1-1/float64(dim)))
}

// keptCount is effectiveCount reading the count from the coordinates above the threshold
// thr = τ'σ_t (NoiseBonus.Count "kept"; τ' = keptThreshold(τ, S); g, h = thresholdMoments(τ'),
// std = σ_t). With pos the kept mass Σ_{s'} (N̂(s,a,s') − thr)₊ and kept the number of
// coordinates above thr,
//
//	n̂ = pos − S·σ_t·g,   v = (kept + S·h)·σ_t²,   n_e = n₊²/(n₊ + v),  n₊ = max(n̂, 0)
//
// (n_e = n₊ when σ_t = 0). Each of the S coordinates of an unvisited next state keeps
// (σ_t·Z − thr)₊, of mean σ_t·g and variance σ_t²·h, whose sum n̂ removes; a next state
// seen c ≫ thr times keeps c − thr + noise of variance σ_t². So n̂ is unbiased on the noise,
// low by at most thr per next state the pair reaches (a pessimistic count), and its
// variance is at most v: σ_t² for each kept coordinate (≈ S·Φ(−τ') ≤ 1 of them are noise,
// whose spread S·h already covers) plus S·h·σ_t². On Taxi (S = 500, τ' = 2.88, one next
// state): v ≈ 2.2·σ_t² against the sum's 500·σ_t². Unlike the sum, n̂ ≤ pos, so the kept
// fraction min(1, pos/n) is 1.
//
// Identified next states. A coordinate above sure = Φ⁻¹(1 − 1/dim)·σ_t (sureThreshold: on
// average one coordinate of the whole release of dim coordinates is pure noise above it) is
// taken as a next state the pair reaches, as if the support were public there: when the row
// has j ≥ 1 such coordinates, n̂ is their sum (unbiased: no threshold is subtracted) and
// v = j·σ_t², the public support's formula with k = j. Without it a pair seen c times keeps
// the bias τ'σ_t ≈ 400 on Taxi at every c, and n_e grows like (c − τ'σ_t)²/(2.2·σ_t²)
// instead of c²/σ_t².
//
// It returns n̂ (the count the reward estimate divides by), pos and n_e.
func keptCount(row []float64, thr, std, g, h, sure float64) (n, pos, e float64) {
	kept, sureK, sureN := 0, 0, 0.0
	for _, x := range row {
		if d := x - thr; d > 0 {
			pos += d
			kept++
			if x > sure {
				sureK++
				sureN += x
			}
		}
	}
	if sureK > 0 && std > 0 {
		v := float64(sureK) * std * std
		return sureN, pos, sureN * sureN / (sureN + v)
	}
	S := float64(len(row))
	n = pos - S*std*g
	c := max(n, 0)
	e = c
	if v := (float64(kept) + S*h) * std * std; v > 0 {
		e = c * c / (c + v)
	}
	return n, pos, e
}

// effectiveCount returns, for one released row N̂(s,a,·), its noisy sum raw, the mass pos
// above the threshold thr, and the noise-aware effective count n_e = n²/(n + v)·min(1, pos/n),
// n = max(raw, 0) (v = S·σ_t², the noise variance of the sum; n_e = n when v = 0). Only the
// part of the row above the threshold carries information on P: the data weight is n_e times
// the kept fraction (0 if nothing is above τσ_t). The dense and the sparse planners share it,
// so both compute n_e with the same operations in the same order.
func effectiveCount(row []float64, thr, v float64) (raw, pos, e float64) {
	for _, x := range row {
		raw += x
		pos += max(x-thr, 0)
	}
	n := max(raw, 0)
	e = n
	if v > 0 {
		e = n * n / (n + v)
		if pos <= 0 {
			e = 0
		} else if pos < n {
			e *= pos / n
		}
	}
	return raw, pos, e
}

// effectiveEstimates computes, for every cell, the noise-aware effective count n_e, the
// shrunk transition estimate P̃ and the shrunk reward r̃ (NoiseBonus, estimator "effective";
// no r̃ with public rewards): alpha = Prior, alphaR = RewardPrior, tau = Threshold; kept reads
// the counts with keptCount (ignored with a public support).
func effectiveEstimates(r *Release, alpha, alphaR, tau float64, kept bool, ne, p, rr []float64) {
	if r.support != nil {
		effectiveEstimatesSupport(r, alpha, alphaR, tau, ne, p, rr)
		return
	}
	S := r.S
	v := float64(S) * r.Std * r.Std // noise variance of N̂(s,a)
	thr, thrR := tau*r.Std, tau*r.RStd
	u := alpha / float64(S)
	tk := keptThreshold(tau, S)
	g, h := thresholdMoments(tk)
	if kept {
		thr = tk * r.Std
	}
	sure := sureThreshold(len(r.NT)) * r.Std
	for i := range r.cells() {
		row := r.NT[i*S : (i+1)*S]
		var raw, pos, e float64
		if kept {
			raw, pos, e = keptCount(row, thr, r.Std, g, h, sure)
		} else {
			raw, pos, e = effectiveCount(row, thr, v)
		}
		ne[i] = e
		pr := p[i*S : (i+1)*S]
		den := e + alpha
		for j, x := range row {
			w := u
			if pos > 0 {
				w += e * max(x-thr, 0) / pos
			} else {
				w += e / float64(S)
			}
			if den > 0 {
				pr[j] = w / den
			} else {
				pr[j] = 1 / float64(S)
			}
		}
		if r.PublicRewards {
			continue
		}
		rr[i] = shrunkReward(r.R[i], raw, e, thrR, alphaR)
	}
}

// effectiveEstimatesSupport is effectiveEstimates with the public support r.support: for a
// cell of support size k, the noise variance of the row sum is k·σ_t², the prior puts α/k on
// each of the k next states and P̃ = 0 outside them (a terminal state's cell, k = 0, gets
// n_e = 0 and P̃ = 0: it is never planned from). The row outside the support is exactly 0 in
// the release, so its raw sum and kept mass are those of the support's coordinates.
func effectiveEstimatesSupport(r *Release, alpha, alphaR, tau float64, ne, p, rr []float64) {
	S, sup := r.S, r.support
	vs := r.Std * r.Std
	thr, thrR := tau*r.Std, tau*r.RStd
	for i := range r.cells() {
		row := r.NT[i*S : (i+1)*S]
		pr := p[i*S : (i+1)*S]
		clear(pr)
		c := i % (S * r.A)
		k := float64(sup.size(c))
		raw, pos, e := effectiveCount(row, thr, k*vs)
		ne[i] = e
		if k > 0 {
			u := alpha / k
			den := e + alpha
			for _, j := range sup.row(c) {
				w := u
				if pos > 0 {
					w += e * max(row[j]-thr, 0) / pos
				} else {
					w += e / k
				}
				if den > 0 {
					pr[j] = w / den
				} else {
					pr[j] = 1 / k
				}
			}
		}
		if r.PublicRewards {
			continue
		}
		rr[i] = shrunkReward(r.R[i], raw, e, thrR, alphaR)
	}
}

// planEffective is value iteration with the effective estimator: Q = r̃ + P̃V + bonus(n_e),
// V = min(max_a Q, H − h), actions chosen by the unclipped Q (so the least explored pair wins
// when several are optimistic beyond H − h).
func (u *noiseUCB) planEffective(r *Release, pol *model.Policy) error {
	if u.sparse() {
		return u.planEffectiveSparse(r, pol) // S > denseEffectiveMaxStates (practical_sparse.go)
	}
	S := u.S
	c := &u.cfg
	if u.p == nil {
		u.p = make([]float64, u.cells()*S)
	}
	effectiveEstimates(r, c.Prior, c.RewardPrior, c.Threshold, u.kept, u.nt, u.p, u.r)
	return u.run(r.Pooled, true, c.TieTol, pol, func(h, i int, next []float64, _ float64) float64 {
		m, vr, _ := moments(u.p[i*S:(i+1)*S], next)
		n := u.nt[i] + 1
		return u.reward(h, i, u.r) + m + c.Scale*(c.C1*math.Sqrt(vr*c.Iota/n)+c.C2*math.Sqrt(c.Iota/n))
	})
}

// noisePSRL is posterior sampling (Osband, Russo & Van Roy 2013) with a noise-aware posterior:
// for every cell the released counts N̂(s,a,·) carry Gaussian noise of known variance σ_t²
// per coordinate, so they are worth fewer samples than they show. With N⁺ = Σ(N̂(s,a,·))₊ the
// noise adds ≈ σ_t²/N⁺² to the variance of each P̂(s'), against P(1−P)/N⁺ for the sampling
// error; matching a Dirichlet's variance at P ≈ 1/S gives the effective sample size
//
//	N_eff = N⁺² / (N⁺ + S·σ_t²),
//
// and the posterior Dirichlet(1 + N_eff·P̂) (uniform prior). Rewards: Gaussian posterior with
// prior N(0, 1), unit observation precision (TabulaRL's PSRL defaults) and effective count
// N⁺²/(N⁺ + σ_t²). One model is sampled per episode from the Posterior stream (independent of
// the data) and solved exactly; no regret proof under noise (practical, labelled).
type noisePSRL struct {
	induction
	post  *rand.Rand
	p, r  []float64 // sampled model
	alpha []float64
}

func newNoisePSRL(S, A, H int, pool bool, term terminal, pub *rewardTable, sup *supportSet, post, tie *rand.Rand) *noisePSRL {
	b := newInduction(S, A, H, pool, term, pub, tie)
	b.sup = sup
	n := b.cells()
	return &noisePSRL{induction: b, post: post, p: make([]float64, n*S), r: make([]float64, n),
		alpha: make([]float64, S)}
}

func (u *noisePSRL) Plan(r *Release, pol *model.Policy) error {
	if err := u.check(r); err != nil {
		return err
	}
	if err := finiteRelease(r); err != nil {
		return err
	}
	S := u.S
	vN, vR := r.Std*r.Std, r.RStd*r.RStd
	for i := range r.cells() {
		if u.term.is(i / u.A % S) {
			continue // a terminal state's cells are never used: nothing is sampled there
		}
		row := r.NT[i*S : (i+1)*S]
		pos := 0.0
		for _, x := range row {
			pos += max(x, 0)
		}
		neff, neffR := 0.0, 0.0
		k := float64(S)
		if u.sup != nil {
			k = float64(u.sup.size(i % (S * u.A))) // the row's noise covers the support only
		}
		if pos > 0 {
			neff = pos * pos / (pos + k*vN)
			neffR = pos * pos / (pos + vR)
		}
		tot := 0.0
		pr := u.p[i*S : (i+1)*S]
		for j, x := range row {
			if u.sup != nil && !u.sup.in(i%(S*u.A), j) {
				pr[j] = 0 // outside the public support: P = 0, nothing sampled
				continue
			}
			a := 1.0
			if pos > 0 {
				a += neff * max(x, 0) / pos
			}
			pr[j] = gammaSample(u.post, a)
			tot += pr[j]
		}
		for j := range pr {
			pr[j] /= tot
		}
		if r.PublicRewards {
			continue // the public reward is exact: nothing is sampled
		}
		mean := 0.0
		if pos > 0 {
			mean = min(max(r.R[i]/pos, 0), 1)
		}
		prec := 1 + neffR
		u.r[i] = neffR*mean/prec + u.post.NormFloat64()/math.Sqrt(prec)
	}
	return u.run(r.Pooled, false, 1e-12, pol, func(h, i int, next []float64, _ float64) float64 {
		q := u.reward(h, i, u.r)
		for j, x := range u.p[i*S : (i+1)*S] {
			q += x * next[j]
		}
		return q
	})
}

// gammaSample draws from Gamma(a, 1), a > 0 (Marsaglia & Tsang 2000; a < 1 by the boost
// Gamma(a) = Gamma(a+1)·U^{1/a}).
func gammaSample(r *rand.Rand, a float64) float64 {
	boost := 1.0
	if a < 1 {
		boost = math.Pow(r.Float64(), 1/a)
		a++
	}
	d := a - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := r.NormFloat64()
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		u := r.Float64()
		if u < 1-0.0331*x*x*x*x || math.Log(u) < 0.5*x*x+d*(1-v+math.Log(v)) {
			return boost * d * v
		}
	}
}
