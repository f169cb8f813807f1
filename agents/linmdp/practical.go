package linmdp

import (
	"cmp"
	"fmt"
	"math"

	"github.com/dprl/dprl/agents/internal/agentkit"
	"github.com/dprl/dprl/internal/smallmat"
	model "github.com/dprl/dprl/model/linmdp"
	"github.com/dprl/dprl/privacy/accounting"
	"github.com/dprl/dprl/privacy/counter"
	"github.com/dprl/dprl/privacy/ledger"
	"github.com/dprl/dprl/privacy/noise"
	"github.com/dprl/dprl/rng"
)

// PracticalLabel marks every output of dprl's own linear-MDP agents: they are exactly as
// private as claimed, but carry no regret proof.
const PracticalLabel = "practical (dprl's own, no regret proof)"

// This file holds dprl's practical private LSVI-UCB for linear MDPs (NOT from the seed papers;
// practical-privacy spec §2–§5): a low-switching variant (the determinant-doubling rule read on
// the RELEASED noisy Gram matrices) and a batched variant (a data-independent schedule), their
// non-private twins with the same switching rule, a noise-off twin and a theory-constant
// variant.
//
// Privacy ((ε, δ)-JDP, replace-one neighbours). Each user k contributes exactly one element x_k
// (practicalLayout: her Gram sum, reward-weighted feature sum and next-state feature sums, per
// group, from the public feature table projected onto the unit ball and rewards clipped to
// [0, 1]); ‖x_k − x′_k‖₂ ≤ Δ₂ (PracticalSensitivity). The curator adds the elements of the users
// of release j (users (j−1)M+1..jM, a fixed schedule) and inserts the sum into a Gaussian
// continual counter, which releases A·y + B·z = B(C·y + z), A = B·C lower triangular, z ~
// N(0, σ²I). Changing one user changes one inserted sum by ≤ Δ₂, hence C·y by ≤ Δ₂·factor
// (factor = max_j ‖C e_j‖), and C·y + z is μ-GDP with μ = Δ₂·factor/σ (Dong, Roth & Su 2022).
// The stream is adaptive — later users' data depend on the policies computed from earlier
// releases — and Denisov, McMahan, Rush, Smith & Thakurta (NeurIPS 2022) prove that the Gaussian
// matrix mechanism with a lower-triangular factorisation keeps the guarantee on adaptively
// chosen streams under single participation. σ is fixed in NewPractical from (ε, δ, H, the
// public feature table's sign, the scales, K, M, the counter's factor) before any data: the
// agent registers its counter with the privacy ledger (privacy/ledger), which calibrates σ =
// Δ₂·factor/μ, μ = accounting.GDPFor(ε, δ), adding the Secure grid's rounding to Δ₂ and aiming
// below μ by a Secure factorisation counter's release slack (counter.SecureReleaseSlack), which
// its report adds back. The planner reads only PracticalRelease values (noisy prefix sums and
// their data-independent stds); every quantity it derives — the regression targets for ANY
// value function (y = b̃ + Σ_{s′} G̃[s′]·V(s′), so policy updates cost no privacy and need no
// cap), the regulariser, the widths, the update times of the determinant rule (computed from
// the released Gram matrices only) — is post-processing. Every action sent to another user is
// therefore a post-processing of a μ-GDP release plus data-independent randomness (ties): the
// run is μ-JDP (billboard lemma, Hsu et al. 2016), reported by the ledger as the exact (ε, δ)
// of μ (accounting.GDP.ToApproxDP).
//
// Why the determinant rule reads only the released Gram: the update times are sent to other
// users (they see when the policy changes); a rule reading the exact Gram would leak through
// the schedule (spec §1.5, [L] Remarks 4 and 8). The batched variant uses a fixed schedule.
//
// Regulariser and widths from the noise actually added (spec practical-privacy §5). At release
// t the counter reports s_t = StdAt(t); the Gram noise E has diagonal std s_t·gramScale and
// off-diagonal std s_t·gramScale/√2, so ‖E‖ ≤ λ_t := s_t·gramScale·(√(2d) + √(2 ln(2/β_c)))
// with probability ≥ 1 − β_c (gramNoiseBound). The planner uses Λ̃ = G̃ + (λ_t + λ₀)I ⪰ G + λ₀I
// on that event for the switching rule and the theory variant. The theory variant takes β_c =
// p/(T(G+H)) (union bound over all releases), c_β = 1, the target-noise bound uniform over
// V_{h+1} (targetNoiseBound) and the ridge-and-noise bias (2λ_t + λ₀)·2H√d of the confidence
// ellipsoid. The practical variants (and the noise-off twin, with the same rule) plan each
// update with a smaller shift κ chosen from the release, the matching comparison constant,
// the bias split into its κ part and a first-order Gaussian bound on its E part, and — for
// simplex feature tables — a centred target (practical_shift.go).

// PracticalMode selects the statistics a practical agent uses.
type PracticalMode int

const (
	// PracticalPrivate releases noisy statistics through the Gaussian counter.
	PracticalPrivate PracticalMode = iota
	// PracticalNonPrivate uses the exact statistics with λ = Lambda and the statistical width
	// only: the non-private twin with the same switching rule and pooling.
	PracticalNonPrivate
	// PracticalNoiseOff uses the exact statistics but the private agent's regulariser and
	// widths (computed from the σ it would use): separates the cost of the noise from that of
	// the regulariser and widths.
	PracticalNoiseOff
)

// PracticalConfig configures a practical linear-MDP agent. Every field is public.
type PracticalConfig struct {
	Common
	// Epsilon and Delta are the (ε, δ)-JDP target (used by every mode but NonPrivate).
	Epsilon, Delta float64
	// Mode is PracticalPrivate (default), PracticalNonPrivate or PracticalNoiseOff.
	Mode PracticalMode
	// Theory selects the theory constants (union bound over releases, c_β = 1 unless set,
	// bias term in the width).
	Theory bool
	// StepDependent keeps one Gram matrix and target per step h; the default pools them over
	// h (LinHomogeneityAssumption).
	StepDependent bool
	// Batched updates the policy at every release (a data-independent schedule); otherwise the
	// policy is updated when ln det of a released Gram matrix grew by ln C since the last
	// update (low switching).
	Batched bool
	// BatchEvery M is the number of users per release (default 1 for low switching; for
	// Batched, ⌈K/Batches⌉).
	BatchEvery int
	// Batches B is the number of batches of the batched variant when BatchEvery is 0 (default
	// DefaultPracticalBatches).
	Batches int
	// C is the determinant-ratio threshold of the low-switching rule (default 2).
	C float64
	// Counter names the continual counter (LinPracticalCounters; default blt).
	Counter string
	// TargetScale is the noise std of the target blocks (b, G) relative to that of the Gram
	// block (default 1). Public; it shifts noise between Λ̃ and ỹ at a fixed μ.
	TargetScale float64
	// Confidence is the failure probability β_c of each random-matrix bound (default 0.05;
	// the theory variant divides it by the number of bounds).
	Confidence float64

	broken practicalBroken
}

// practicalBroken holds deliberately broken variants reachable only from AuditTargets and
// tests.
type practicalBroken struct {
	noiseDiv   float64 // divide σ by this (0 = 1) while keeping the calibrated report
	redraw     bool    // fresh noise of the prefix's std at every release instead of the counter
	noClip     bool    // rewards enter unclipped
	rawPlanner bool    // the planner reads the exact statistics
	record     bool    // keep a log of the released prefixes
}

// DefaultPracticalBatches is the number of batches of the batched practical agent.
const DefaultPracticalBatches = 200

// DefaultPracticalCBeta is the practical agents' statistical-width multiplier: the tuned
// value of the non-private agents on E2 (spec §2.3; experiment/linmdp "tuned").
const DefaultPracticalCBeta = 0.05

// PracticalRelease is what the curator of a practical agent releases: the counter's noisy
// prefix (scaled coordinates, practicalLayout) after Users users, and the data-independent
// std of its noise per coordinate. It is the only input of the planner.
type PracticalRelease struct {
	// Users is the number of users whose data the release contains (public: schedule).
	Users int
	// Std is the noise std of every scaled coordinate (0 for exact statistics).
	Std    float64
	prefix []float64
	lay    practicalLayout
}

// Gram writes group g's released Gram matrix (unscaled, d·d row-major, symmetric) to out.
func (r *PracticalRelease) Gram(g int, out []float64) {
	l := r.lay
	d := l.d
	p := r.prefix[g*l.per:]
	k := 0
	for i := 0; i < d; i++ {
		for j := i; j < d; j++ {
			v := p[k] * l.gramScale
			if j != i {
				v /= math.Sqrt2
				out[j*d+i] = v
			}
			out[i*d+j] = v
			k++
		}
	}
}

// Target writes group g's released target y = b̃ + Σ_{s′} G̃[s′]·v(s′) for the value vector v
// (nil: y = b̃) to y (length d).
func (r *PracticalRelease) Target(g int, v, y []float64) {
	l := r.lay
	d := l.d
	p := r.prefix[g*l.per+l.packed:]
	for i := 0; i < d; i++ {
		y[i] = p[i] * l.tgtScale
	}
	if v == nil {
		return
	}
	gn := p[d:]
	for s, x := range v {
		if x == 0 {
			continue
		}
		row := gn[s*d : s*d+d]
		for i, g := range row {
			y[i] += g * l.tgtScale * x
		}
	}
}

// practicalCurator is the trusted side: it builds the users' elements at the boundary, sums the
// users of each release, inserts the sums into the counter (or keeps them exact for the twins)
// and publishes PracticalRelease values only.
type practicalCurator struct {
	lay      practicalLayout
	phi      [][][]float64 // public feature table projected onto the unit ball
	H        int
	M        int
	capacity int
	cnt      counter.GaussianCounter
	exact    []float64 // exact prefix (twins; and the raw statistic for broken.rawPlanner)
	batch    []float64
	users    int
	released int
	rel      PracticalRelease
	redraw   noise.Source
	sigma    float64
	brk      practicalBroken
	log      [][]float64
}

// observe adds one step of the current user to the batch sum (the boundary: indices already
// validated; φ from the projected public table; r clipped to [0, 1], NaN → 0).
func (c *practicalCurator) observe(h, s, a int, r float64, s2 int) {
	l := c.lay
	if !c.brk.noClip {
		r = clipReward(r)
	}
	phi := c.phi[s][a]
	g := 0
	if l.groups > 1 {
		g = h
	}
	x := c.batch[g*l.per:]
	k := 0
	ig, it := 1/l.gramScale, 1/l.tgtScale
	for i, u := range phi {
		for j := i; j < l.d; j++ {
			v := u * phi[j] * ig
			if j != i {
				v *= math.Sqrt2
			}
			x[k] += v
			k++
		}
	}
	b := x[l.packed:]
	gn := b[l.d+s2*l.d:]
	for i, u := range phi {
		b[i] += u * r * it
		gn[i] += u * it
	}
}

// endUser closes the current user; it returns true when a release was made.
func (c *practicalCurator) endUser() (bool, error) {
	c.users++
	if c.users%c.M != 0 || c.released >= c.capacity {
		return false, nil
	}
	c.released++
	for i, v := range c.batch {
		c.exact[i] += v
	}
	switch {
	case c.cnt == nil:
		c.rel.prefix = c.exact
	case c.brk.redraw:
		// BROKEN: independent noise of the prefix's std at every release.
		sd := c.cnt.StdAt(c.released)
		if c.brk.noiseDiv > 0 {
			sd /= c.brk.noiseDiv
		}
		for i, v := range c.exact {
			c.rel.prefix[i] = c.redraw.AddGaussian(v, sd)
		}
		c.rel.Std = sd
	default:
		if err := c.cnt.Insert(c.batch); err != nil {
			return false, fmt.Errorf("practical curator: %w", err)
		}
		c.rel.prefix = c.cnt.Prefix()
		c.rel.Std = c.cnt.PrefixStd()
	}
	clear(c.batch)
	c.rel.Users = c.users
	if c.brk.record {
		c.log = append(c.log, append([]float64(nil), c.rel.prefix...))
	}
	return true, nil
}

// Practical is dprl's practical private LSVI-UCB (low-switching or batched) and its twins; see
// the comment at the top of this file.
type Practical struct {
	env  *model.MDP
	cfg  PracticalConfig
	name string
	cur  *practicalCurator
	pl   *planner
	d, H int

	groups   int
	lnC      float64
	lambda0  float64
	betaStat float64
	conf     float64 // β_c of each bound
	stdAt    func(t int) float64
	observed []bool // steps h observed in the current episode (one observation per step)
	gram     []float64
	rel      [][]float64 // [g] Λ̃_g (PSD-guarded)
	chol     [][]float64
	relLD    []float64
	refLD    []float64
	lamT     float64 // λ_t of the latest release
	std      float64 // s_t of the latest release
	y        []float64
	scratch  []float64
	// Regulariser shift of the practical (non-theory) updates, practical_shift.go.
	relG   [][]float64 // [g] released (noisy) Gram matrix G̃_g, before the shift
	ell    []float64   // [g] λ_min(G̃_g)
	shChol [2][]float64
	shM    []float64
	shift  float64 // κ of the latest planned step
	centre float64 // c of the latest planned step
	vc     []float64
	// simplex: every public feature is a probability vector (public), so Σ_{s′}G[s′] = G·1.
	simplex bool

	report           ledger.Report
	version, repairs int
	updates          []Update
	lastW            float64
	err              error
}

// NewPractical returns a practical agent with every noise level, bound and schedule fixed now
// from public inputs only.
func NewPractical(env *model.MDP, cfg PracticalConfig) (*Practical, error) {
	if cfg.CBeta == 0 && !cfg.Theory {
		cfg.CBeta = DefaultPracticalCBeta
	}
	cfg.defaults()
	if err := cfg.validate(env); err != nil {
		return nil, fmt.Errorf("practical: %w", err)
	}
	cfg.C = cmp.Or(cfg.C, 2)
	cfg.TargetScale = cmp.Or(cfg.TargetScale, 1)
	cfg.Confidence = cmp.Or(cfg.Confidence, 0.05)
	switch {
	case cfg.Mode < PracticalPrivate || cfg.Mode > PracticalNoiseOff:
		return nil, fmt.Errorf("practical: mode must be private, non-private or noise-off, got %d", int(cfg.Mode))
	case !(cfg.C > 1) || math.IsInf(cfg.C, 0):
		return nil, fmt.Errorf("practical: C must be finite and > 1, got %g", cfg.C)
	case !(cfg.TargetScale > 0) || math.IsInf(cfg.TargetScale, 0):
		return nil, fmt.Errorf("practical: target_scale must be finite and > 0, got %g", cfg.TargetScale)
	case !(cfg.Confidence > 0 && cfg.Confidence < 1):
		return nil, fmt.Errorf("practical: confidence must be in (0, 1), got %g", cfg.Confidence)
	case cfg.BatchEvery < 0 || cfg.Batches < 0:
		return nil, fmt.Errorf("practical: batch_every and batches must be >= 0 (0 = default), got %d and %d", cfg.BatchEvery, cfg.Batches)
	case cfg.Mode != PracticalNonPrivate && !agentkit.ValidEpsilon(cfg.Epsilon):
		return nil, fmt.Errorf("practical: epsilon must be finite and > 0, got %g", cfg.Epsilon)
	case cfg.Mode != PracticalNonPrivate && !agentkit.ValidDelta(cfg.Delta):
		return nil, fmt.Errorf("practical: delta must be in (0, 1), got %g", cfg.Delta)
	}
	if _, err := lookupLinCounter(cfg.Counter); err != nil {
		return nil, fmt.Errorf("practical: %w", err)
	}
	K := cfg.K
	M := cfg.BatchEvery
	if M == 0 {
		M = 1
		if cfg.Batched {
			B := cfg.Batches
			if B == 0 {
				B = DefaultPracticalBatches
			}
			M = max((K+B-1)/B, 1)
		}
	}
	d, H := env.D, env.H
	groups := 1
	if cfg.StepDependent {
		groups = H
	}
	a := &Practical{env: env, cfg: cfg, d: d, H: H, groups: groups, lnC: math.Log(cfg.C), lambda0: cfg.Lambda, observed: make([]bool, H)}
	a.name = practicalName(cfg)
	// Public feature table projected onto the unit ball (the boundary's clipping of features);
	// its sign decides the sensitivity constant.
	nonneg, simplex := true, true
	phi := make([][][]float64, env.N)
	for s, row := range env.Phi {
		phi[s] = make([][]float64, len(row))
		for act, f := range row {
			n := 0.0
			for i, x := range f {
				if math.IsNaN(x) {
					// A NaN would make the norm NaN and skip the projection of the other entries.
					return nil, fmt.Errorf("practical: feature env.Phi[%d][%d][%d] is NaN, want a finite value (the sensitivity needs ‖φ‖₂ ≤ 1)", s, act, i)
				}
				n += x * x
				if x < 0 {
					nonneg = false
				}
			}
			n = math.Sqrt(n)
			p := make([]float64, len(f))
			for i, x := range f {
				if math.IsNaN(x) || math.IsInf(x, 0) {
					continue // an invalid public feature enters as 0
				}
				p[i] = x
				if n > 1 {
					p[i] = x / n
				}
			}
			phi[s][act] = p
			sum := 0.0
			for _, x := range p {
				sum += x
			}
			if math.Abs(sum-1) > 1e-9 {
				simplex = false
			}
		}
	}
	a.simplex = nonneg && simplex
	gs, ts := 1.0, cfg.TargetScale
	if ts < 1 { // normalise so that the smallest scale is 1 (CalibrateSigma's minScale)
		gs, ts = 1/ts, 1
	}
	lay := practicalLayout{d: d, n: env.N, groups: groups, packed: d * (d + 1) / 2, gramScale: gs, tgtScale: ts}
	lay.per = lay.packed + d + env.N*d
	capacity := max((K-1)/M, 1)
	cur := &practicalCurator{lay: lay, phi: phi, H: H, M: M, capacity: capacity, brk: cfg.broken,
		exact: make([]float64, lay.dim()), batch: make([]float64, lay.dim())}
	cur.rel = PracticalRelease{lay: lay, prefix: cur.exact}
	a.cur = cur
	a.stdAt = func(int) float64 { return 0 }
	lcfg := ledger.Config{Model: ledger.None, Target: accounting.ApproxDP{Epsilon: cfg.Epsilon, Delta: cfg.Delta}}
	switch cfg.Mode {
	case PracticalPrivate:
		lcfg.Model = ledger.JDP
	case PracticalNoiseOff:
		lcfg.Model = ledger.NoiseOff // the private agent's calibration, for its widths; no claim
	}
	if !cfg.StepDependent {
		lcfg.Assumption = LinHomogeneityAssumption
	}
	led, err := ledger.New(lcfg)
	if err != nil {
		return nil, fmt.Errorf("practical: %w", err)
	}
	if cfg.Mode != PracticalNonPrivate {
		build, err := lookupLinCounter(cfg.Counter)
		if err != nil {
			return nil, fmt.Errorf("practical: %w", err)
		}
		var src noise.Source
		secure := false
		if cfg.Mode == PracticalPrivate {
			if src, err = cfg.source("counter"); err != nil {
				return nil, fmt.Errorf("practical: %w", err)
			}
			secure = src.Secure()
		}
		name := cfg.Counter
		if name == "" {
			name = DefaultLinCounter
		}
		pooled, nn := 0.0, 0.0
		if !cfg.StepDependent {
			pooled = 1
		}
		if nonneg {
			nn = 1
		}
		// The ledger's release slack covers a real-valued factorisation fed by a Secure source
		// (agentkit.RegisterCounter).
		_, sigma, err := agentkit.RegisterCounter(led, build, ledger.Entry{Counter: name,
			Sensitivity: PracticalSensitivity(H, !cfg.StepDependent, nonneg, gs, ts), Releases: capacity, Dim: lay.dim(),
			Inputs: map[string]float64{"batch_every": float64(M), "pooled": pooled, "nonneg_features": nn, "gram_scale": gs, "target_scale": ts}}, secure)
		if err != nil {
			return nil, fmt.Errorf("practical: %w", err)
		}
		div := 1.0
		if cfg.broken.noiseDiv > 0 {
			div = cfg.broken.noiseDiv
		}
		var std float64
		if cfg.Mode == PracticalPrivate {
			cnt, err := build(counter.GaussianConfig{Dim: lay.dim(), Capacity: capacity, Sigma: sigma / div}, src)
			if err != nil {
				return nil, fmt.Errorf("practical: %w", err)
			}
			cur.cnt = cnt
			cur.sigma = sigma
			a.stdAt = cnt.StdAt
			std = cnt.StdAt(capacity) * div
			if cfg.broken.redraw {
				cur.redraw = src
				cur.rel.prefix = make([]float64, lay.dim())
			}
		} else {
			// Noise-off twin: the private agent's σ, so its regulariser and widths, without noise.
			// Only StdAt is used (nothing is ever inserted); the source is never drawn from.
			ref, err := build(counter.GaussianConfig{Dim: 1, Capacity: capacity, Sigma: sigma}, noise.NewSeeded(rng.NewSeed(0).Rand()))
			if err != nil {
				return nil, fmt.Errorf("practical: %w", err)
			}
			a.stdAt = ref.StdAt
			std = ref.StdAt(capacity)
		}
		if err := led.SetReleaseStd(ledger.EntryCounter, std); err != nil {
			return nil, fmt.Errorf("practical: %w", err)
		}
	}
	if a.report, err = led.Compose(); err != nil {
		return nil, fmt.Errorf("practical: %w", err)
	}
	a.conf = cfg.Confidence
	if cfg.Theory {
		a.conf = cfg.Confidence / (float64(capacity) * float64(groups+H))
	}
	a.betaStat = cfg.CBeta * nonPrivateBeta(d, H, K, cfg.P)
	a.pl = newPlanner(env, a.betaStat, cfg.Tie, cfg.tieRand())
	a.gram, a.y, a.scratch = make([]float64, d*d), make([]float64, d), make([]float64, d*d)
	a.rel, a.chol = make([][]float64, groups), make([][]float64, groups)
	a.relLD, a.refLD = make([]float64, groups), make([]float64, groups)
	for g := 0; g < groups; g++ {
		a.rel[g], a.chol[g] = make([]float64, d*d), make([]float64, d*d)
		for i := 0; i < d; i++ {
			a.rel[g][i*d+i] = a.lambda0
			a.chol[g][i*d+i] = math.Sqrt(a.lambda0)
		}
		a.relLD[g] = float64(d) * math.Log(a.lambda0)
		a.refLD[g] = a.relLD[g]
	}
	// Initial policy: LSVI with no data (w = 0, Λ̃ = λ₀I): data-independent.
	for h := H - 1; h >= 0; h-- {
		a.pl.beta = a.betaStat
		a.pl.planStep(h, Release{Chol: a.chol[a.group(h)]})
	}
	return a, nil
}

func practicalName(cfg PracticalConfig) string {
	n := "practical-lsvi"
	if cfg.Batched {
		n += "-batched"
	}
	switch {
	case cfg.Mode == PracticalNonPrivate && cfg.Batched:
		n = "practical-batch-twin"
	case cfg.Mode == PracticalNonPrivate:
		n = "practical-rare-switch"
	case cfg.Mode == PracticalNoiseOff:
		n += "-noiseoff"
	}
	if cfg.Theory {
		n += "-theory"
	}
	if cfg.StepDependent {
		n += "-steps"
	}
	return n
}

func (a *Practical) group(h int) int {
	if a.groups == 1 {
		return 0
	}
	return h
}

// Report returns the ledger's privacy report.
func (a *Practical) Report() ledger.Report { return a.report }

// Err returns the first internal error (a counter refusing an insertion); nil in normal runs.
func (a *Practical) Err() error { return a.err }

// BeginEpisode implements Agent (updates happen right after a release, in EndEpisode).
func (a *Practical) BeginEpisode(int) {}

// Act implements Agent.
func (a *Practical) Act(h, s int) int { return a.pl.act[h][s] }

// Observe implements Agent: the privacy boundary of the user's data (indices validated, at
// most one observation per step h and episode, features from the projected public table,
// rewards clipped). PracticalSensitivity counts H steps per user (one per group when
// step-dependent): a second observation of the same step is rejected, nothing is recorded.
func (a *Practical) Observe(h, s, act int, r float64, s2 int) error {
	if err := checkStep(a.env, h, s, act, s2); err != nil {
		return err
	}
	if a.observed[h] {
		return fmt.Errorf("linmdp practical: step h = %d observed twice in one episode (one observation per step and user)", h)
	}
	a.observed[h] = true
	a.cur.observe(h, s, act, r, s2)
	return nil
}

// EndEpisode ends the user; after a release it refreshes the released matrices and, by the
// switching rule, updates the policy.
func (a *Practical) EndEpisode() {
	clear(a.observed)
	ok, err := a.cur.endUser()
	if err != nil && a.err == nil {
		a.err = err
	}
	if !ok {
		return
	}
	rel := &a.cur.rel
	if a.cfg.broken.rawPlanner {
		// BROKEN: the planner reads the exact statistics.
		raw := *rel
		raw.prefix = a.cur.exact
		rel = &raw
	}
	a.afterRelease(rel)
}

// afterRelease is the planner side of release t = number of releases so far: it reads only
// rel and public constants, refreshes Λ̃_g and, by the switching rule, updates the policy.
func (a *Practical) afterRelease(rel *PracticalRelease) {
	t := a.cur.released
	a.std = a.stdAt(t)
	if a.cfg.Mode != PracticalNonPrivate {
		a.lamT = gramNoiseBound(a.std*a.cur.lay.gramScale, a.d, a.conf)
	}
	trig := a.cfg.Batched
	d := a.d
	for g := 0; g < a.groups; g++ {
		m := a.rel[g]
		rel.Gram(g, m)
		for i := 0; i < d; i++ {
			m[i*d+i] += a.lamT + a.lambda0
		}
		if guardPD(m, d, a.lambda0, a.chol[g], a.scratch) {
			a.repairs++
		}
		a.relLD[g] = smallmat.LogDet(a.chol[g], d)
		if a.relLD[g]-a.refLD[g] >= a.lnC {
			trig = true
		}
	}
	if !trig {
		return
	}
	a.update(rel)
}

// update recomputes every Q_h from the release (post-processing only). Theory variant: the
// bonus of φ is
//
//	β_stat·‖φ‖_{Λ̃⁻¹} + ‖Λ̃⁻¹φ‖₂·(W_y + (2λ_t + λ₀)·W_w),
//
// the three error terms of φᵀ(w̃ − w) = φᵀΛ̃⁻¹(Σφ_iη_i + e_y − (Λ̃ − G)w): the statistical term
// (Λ̃ ⪰ G + λ₀I on the event ‖E‖ ≤ λ_t), the noise e_y of the target and the ridge-and-noise
// bias with ‖Λ̃ − G‖ ≤ 2λ_t + λ₀ and ‖w‖ ≤ W_w = 2H√d; W_y = targetNoiseBound (uniform over V,
// which depends on the same noise), β_stat with c_β = 1 and every β_c divided by the number of
// bounds (union bound over all releases). Practical variants: practicalStep (practical_shift.go)
// — Λ̃_κ = G̃ + κI with κ chosen from the release, bonus β_stat/√c(κ)·‖φ‖_{Λ̃_κ⁻¹} +
// ‖Λ̃_κ⁻¹φ‖₂·(W_y + κ·W_w + e·W_c), W_y = z·s_y·√(1 + ‖V_{h+1} − c‖²) (the std of
// φᵀΛ̃⁻¹e_y/‖Λ̃⁻¹φ‖ for a fixed V, z = Φ⁻¹(1 − β_c)), W_w = √d·(1 + max V_{h+1})
// (‖θ + ∫V dμ‖ ≤ √d(1 + ‖V‖_∞), simplex normalisation) and W_c = √d·max(c, 1 + max V − c).
func (a *Practical) update(rel *PracticalRelease) {
	d := a.d
	for g := 0; g < a.groups; g++ {
		a.refLD[g] = a.relLD[g]
	}
	sy := a.std * a.cur.lay.tgtScale
	z := zQuantile(a.conf)
	if a.cfg.Mode != PracticalNonPrivate && !a.cfg.Theory {
		a.refreshShift(rel)
	}
	H := float64(a.H)
	sd := math.Sqrt(float64(d))
	for h := a.H - 1; h >= 0; h-- {
		g := a.group(h)
		v := a.pl.valueNext(h)
		w := 0.0
		if a.cfg.Mode == PracticalNonPrivate || a.cfg.Theory {
			rel.Target(g, v, a.y)
		}
		if a.cfg.Mode != PracticalNonPrivate {
			vn, vmax := 0.0, 0.0
			for _, x := range v {
				vn += x * x
				vmax = math.Max(vmax, x)
			}
			if !a.cfg.Theory {
				a.practicalStep(h, g, v, rel, z*sy)
				continue
			}
			w = targetNoiseBound(sy, d, a.env.N, a.conf, math.Sqrt(vn)) + (2*a.lamT+a.lambda0)*2*H*sd
		}
		a.pl.beta = a.betaStat
		a.pl.noiseW = w
		a.lastW = w
		a.pl.planStep(h, Release{Chol: a.chol[g], Y: a.y})
	}
	a.version++
	a.updates = append(a.updates, Update{Episode: a.cur.users + 1})
}

// zQuantile returns Φ⁻¹(1 − b), the one-sided standard normal quantile.
func zQuantile(b float64) float64 { return math.Sqrt2 * math.Erfcinv(2*b) }

// Policy implements Agent.
func (a *Practical) Policy() [][]int { return a.pl.act }

// PolicyVersion implements Agent.
func (a *Practical) PolicyVersion() int { return a.version }

// Updates implements Agent.
func (a *Practical) Updates() []Update { return a.updates }

// Info implements Agent. Beta is the statistical width c_β·dH√ι and Regulariser is λ₀ (the
// noise terms are added per update; Constants holds the latest).
func (a *Practical) Info() Info {
	in := Info{Agent: a.name, NoiseOff: a.cfg.Mode != PracticalPrivate, CBeta: a.cfg.CBeta, Beta: a.betaStat,
		Regulariser: a.lambda0, TieBreak: a.cfg.Tie.String(), Repairs: a.repairs, TieFraction: a.pl.tieFraction(),
		Private: a.cfg.Mode == PracticalPrivate, Note: PracticalLabel + "; " + a.report.String()}
	if in.Private {
		in.Epsilon, in.Delta = a.cfg.Epsilon, a.cfg.Delta
		in.Ledger = a.report
		if a.cfg.broken.noiseDiv > 0 {
			if r, err := a.report.WithNoiseDivided(a.cfg.broken.noiseDiv); err == nil {
				in.Ledger = r
			}
		}
		in.EffectiveEp = in.Ledger.Epsilon
	}
	e, _ := a.report.Entry(ledger.EntryCounter)
	in.Constants = map[string]any{"mu": a.report.Mu, "sigma": e.Sigma, "sensitivity": e.RoundedSensitivity,
		"factor": e.Factor, "releases": a.cur.capacity, "batch_every": a.cur.M, "std_last": a.std,
		"lambda_t_last": a.lamT, "shift_last": a.shift, "centre_last": a.centre, "simplex_features": a.simplex, "noise_width_last": a.lastW, "confidence": a.conf, "C": a.cfg.C,
		"target_scale": a.cfg.TargetScale, "counter": e.Counter, "pooled": !a.cfg.StepDependent}
	return in
}
