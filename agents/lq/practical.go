package lq

import (
	"cmp"
	"fmt"
	"math"

	"github.com/dprl/dprl/agents/internal/agentkit"
	"github.com/dprl/dprl/internal/bounds"
	"github.com/dprl/dprl/privacy/accounting"
	"github.com/dprl/dprl/privacy/counter"
	"github.com/dprl/dprl/privacy/ledger"
	"github.com/dprl/dprl/privacy/noise"
)

// This file holds dprl's own practical Private-OFU-RL ("practical-ofu-rl"; NOT from the seed
// paper, labelled "practical (dprl's own, no regret proof)" everywhere; practical-privacy spec
// §2–§5). It keeps the structure of Algorithm 1 of Chowdhury, Zhou & Shroff — private Gram
// V = Σ z̄ z̄ᵀ and cross term U = Σ z̄ x̄ᵀ released by a continual counter, a ridge estimate, a
// confidence ellipsoid and the optimistic step of lq spec §4 — and changes four things:
//
//  1. One Gaussian factorisation counter (BLT by default) over the joint element (V, U) of a
//     user's episode, single participation, exact μ-GDP accounting (instead of two binary trees,
//     zCDP and basic composition).
//  2. A per-episode budget B on Σ_h (‖z̄_h‖² + ‖x̄_{h+1}‖²) enforced by a stopping rule
//     (PracticalSensitivity), which gives Δ₂ = B instead of the worst case over H steps.
//  3. A data-independent release schedule (after users 1, 2, 4, …, then every M users), and an
//     optimistic step per release for a public set of reference initial states (user k plays
//     the gains of the reference closest to her own x_{k,1}): planning costs O(1) per release.
//  4. A regulariser and confidence radius computed from the noise actually added: the counter's
//     reported std s_t and a Gaussian random-matrix bound on the spectral norm of the symmetric
//     noise (practicalNoiseBound), each holding with a stated probability per release (no union
//     bound over releases, except in the theory-constant variant).
//
// Privacy ((ε, δ)-JDP under replace-one neighbours). Each user contributes exactly one vector
// e_k (her episode's V and U, packed, PracticalSensitivity: ‖e_k − e′_k‖ ≤ Δ₂ = B in the norm
// of the counter's coordinate scales) to the sum of one batch of the fixed schedule; the
// curator inserts the batch sums into a Gaussian counter. A counter releases A·y + B·z with
// A = B·C lower triangular and z ~ N(0, σ²I) i.i.d.; every release sequence is a
// post-processing of C·y + z, whose ℓ2 sensitivity is Δ₂·max_j‖C e_j‖ = Δ₂·factor, so it is
// (Δ₂·factor/σ)-GDP (Dong, Roth & Su 2022, Thm 2.7). The stream is chosen adaptively (later
// users' data depend on earlier releases); Denisov, McMahan, Rush, Smith & Thakurta (NeurIPS
// 2022) prove that the Gaussian matrix mechanism with a lower-triangular factorisation keeps
// this guarantee on adaptively chosen streams with single participation. σ is fixed in
// NewPracticalCurator from (ε, δ, B, K, M, the counter's factor) before any data:
// the curator registers its counter with the privacy ledger (privacy/ledger), which calibrates
// σ = B·factor/μ, μ = accounting.GDPFor(ε, δ). The planner reads only a PracticalRelease (its
// type holds nothing else) and public values; user k's gains are a function of the release, of
// public random streams and of her own x_{k,1}: the run is μ-JDP (billboard lemma, Hsu et al.
// 2016), and the ledger's report states the exact (ε, δ) that μ implies
// (accounting.GDP.ToApproxDP). With the Secure source the element is rounded to the noise grid
// γ before it is added and Δ₂ is replaced by Δ₂ + √dim·γ (spec §7), and a BLT or square-root
// counter adds counter.SecureReleaseSlack to μ: the ledger aims σ below μ by it and adds it back.

// PracticalLabel is printed next to every practical agent.
const PracticalLabel = "practical (dprl's own, no regret proof)"

// Practical agent names.
const (
	PracticalName         = "practical-ofu-rl"
	PracticalTheoryName   = "practical-ofu-rl-theory"
	PracticalNoiseOffName = "practical-ofu-rl-noise-off"
)

// practicalBroken selects a deliberately broken variant (audits and tests only; unexported, no
// configuration file or flag reaches it).
type practicalBroken int

const (
	practicalOK        practicalBroken = iota
	practicalNoiseDiv4                 // σ divided by 4
	practicalRedraw                    // the counter's noise redrawn at every release
	practicalNoClip                    // budget and pair scaling skipped
	practicalRawStats                  // the release (the planner's input) holds the raw statistics
)

// PracticalConfig configures a practical agent. Every field is public: the noise level is
// computed from them, and from the counter's sensitivity factor, before any data is seen.
type PracticalConfig struct {
	// Epsilon and Delta are the target (ε, δ) of JDP under replace-one neighbours (ignored by
	// the noise-off twin).
	Epsilon float64 `json:"epsilon"`
	Delta   float64 `json:"delta"`
	// NoiseOff selects the noise-off twin: exact statistics, same budget, schedule, planner.
	NoiseOff bool `json:"noise_off"`
	// Theory selects the theory-constant variant: budget H((1+γ)²+1) (never binding under
	// Assumption 1) and the noise bounds of every release union-bounded over all releases.
	Theory bool `json:"theory"`
	// Episodes is K (K−1 users are ever received).
	Episodes int `json:"episodes"`
	// Budget is B > 0, the per-episode bound on Σ_h (‖z̄_h‖² + ‖x̄_{h+1}‖²) (0 = the
	// theory value H((1+γ)²+1)). It is the ℓ2 sensitivity of a user's element.
	Budget float64 `json:"budget"`
	// BatchEvery is M ≥ 1: releases after users 1, 2, 4, …, then every M users.
	BatchEvery int `json:"batch_every"`
	// Counter names the Gaussian counter (PracticalCounters; default "blt").
	Counter string `json:"counter"`
	// Confidence is α ∈ (0, 1): each release's confidence set holds with probability ≥ 1 − α
	// (theory variant: all releases jointly).
	Confidence float64 `json:"confidence"`
	// Lambda is the ridge λ₀ > 0 of the noise-off twin (the private agents use the noise bound).
	Lambda float64 `json:"lambda"`
	// References is the number of public reference directions of the initial state (n = 2:
	// equally spaced angles in [0, π); n = 1: 1; n ≥ 3: the axes and their pairwise
	// diagonals, at most that many).
	References int `json:"references"`
	// Search configures the optimistic step (lq spec §4.3).
	Search SearchConfig `json:"-"`
	// Warm configures the reuse of the optimistic step across releases (practical_search.go;
	// the zero value warm-starts with no objective tolerance and no periodic refresh).
	Warm WarmSearch `json:"-"`
	// BLT optionally holds BLT parameters fitted beforehand (counter.FitSqrtBLT for the
	// capacity; public, data-independent), so that many runs share one fit. Nil: fit here.
	BLT *counter.BLTParams `json:"-"`

	broken practicalBroken
}

// DefaultPracticalConfig returns the practical agent at (ε, 1e−5) for K episodes: budget 4
// (LQ-E1: about the median of Σ_h(‖z_h‖²+‖x_{h+1}‖²) ≈ 3), M = 500, BLT counter, α = 0.05,
// 4 reference directions, the default search, warm-started across releases (DefaultWarmSearch).
func DefaultPracticalConfig(epsilon float64, episodes int) PracticalConfig {
	return PracticalConfig{Epsilon: epsilon, Delta: 1e-5, Episodes: episodes, Budget: 4, BatchEvery: 500,
		Counter: "blt", Confidence: 0.05, Lambda: 1, References: 4, Search: DefaultSearch(), Warm: DefaultWarmSearch()}
}

// Name returns the agent's name.
func (c PracticalConfig) Name() string {
	switch {
	case c.NoiseOff:
		return PracticalNoiseOffName
	case c.Theory:
		return PracticalTheoryName
	}
	return PracticalName
}

// theoryBudget is H((1+γ)²+1): under Assumption 1 (‖z‖ ≤ 1+γ, ‖x'‖ ≤ 1) the budget never binds.
func theoryBudget(pub Public) float64 {
	g := 1 + pub.Gamma
	return float64(pub.H) * (g*g + 1)
}

// resolve fills defaults and validates; errors name the field and its allowed range.
func (c PracticalConfig) resolve(pub Public) (PracticalConfig, error) {
	if c.Budget == 0 || c.Theory {
		c.Budget = theoryBudget(pub)
	}
	c.Counter = cmp.Or(c.Counter, "blt")
	c.References = cmp.Or(c.References, 4)
	c.Lambda = cmp.Or(c.Lambda, 1)
	switch {
	case !c.NoiseOff && !agentkit.ValidEpsilon(c.Epsilon):
		return c, fmt.Errorf("practical lq: epsilon: must be finite and > 0, got %v", c.Epsilon)
	case !c.NoiseOff && !agentkit.ValidDelta(c.Delta):
		return c, fmt.Errorf("practical lq: delta: must be in (0, 1), got %v", c.Delta)
	case c.Episodes < 1 || c.Episodes > bounds.MaxEpisodes:
		return c, fmt.Errorf("practical lq: episodes: must be in [1, %d], got %d", bounds.MaxEpisodes, c.Episodes)
	case !(c.Budget > 0) || c.Budget > theoryBudget(pub)*(1+1e-12):
		return c, fmt.Errorf("practical lq: budget: must be in (0, H((1+γ)²+1) = %g], got %v", theoryBudget(pub), c.Budget)
	case c.BatchEvery < 1 || c.BatchEvery > 1<<30:
		return c, fmt.Errorf("practical lq: batch_every: must be in [1, 2^30], got %d", c.BatchEvery)
	case !(c.Confidence > 0 && c.Confidence < 1):
		return c, fmt.Errorf("practical lq: confidence: must be in (0, 1), got %v", c.Confidence)
	case !(c.Lambda > 0) || math.IsInf(c.Lambda, 0):
		return c, fmt.Errorf("practical lq: lambda: must be finite and > 0, got %v", c.Lambda)
	case c.References < 1 || c.References > 64:
		return c, fmt.Errorf("practical lq: references: must be in [1, 64], got %d", c.References)
	case pub.N < 1 || pub.D < 1 || pub.H < 1:
		return c, fmt.Errorf("practical lq: system: need n, d, H >= 1, got %d, %d, %d", pub.N, pub.D, pub.H)
	}
	if _, err := lookupPracticalCounter(c.Counter); err != nil {
		return c, err
	}
	if err := c.Warm.validate(); err != nil {
		return c, err
	}
	return c, c.Search.validate()
}

// PracticalCounters lists the counter names the practical agent accepts: every kind of the one
// counter registry (counter.NewRegistry).
func PracticalCounters() []string { return counter.NewRegistry().Names() }

func lookupPracticalCounter(name string) (counter.Builder, error) {
	return agentkit.CounterBuilder(name, "practical lq")
}

// PracticalSensitivity returns Δ₂ = B, the ℓ2 sensitivity of one user's element under
// replace-one neighbours, in the norm the counter's coordinate scales define.
//
// Element. For the pairs w_h = (z̄_h, x̄_{h+1}) kept from the user's episode, e = (packed upper
// triangle of V = Σ z̄ z̄ᵀ, entries of U = Σ z̄ x̄ᵀ). The counter draws noise of std √2·σ on the
// diagonal of V and σ elsewhere (coordinate scales √2 and 1), so the privacy norm is
// ‖e‖²_σ = ½Σ V_ii² + Σ_{i<j} V_ij² + ‖U‖_F² = ½(‖V‖_F² + 2‖U‖_F²).
//
// Claim. Every kept set satisfies Σ_h (‖z̄_h‖² + ‖x̄_{h+1}‖²) ≤ B (the stopping rule of
// practicalEncoder), and then ‖e − e′‖_σ ≤ B for any two users.
//
// Proof. Let M = Σ_h w_h w_hᵀ ((p+n)×(p+n), PSD) with blocks V, U, Uᵀ and X = Σ x̄ x̄ᵀ. Then
// ‖V − V′‖_F² + 2‖U − U′‖_F² = ‖M − M′‖_F² − ‖X − X′‖_F² ≤ ‖M − M′‖_F² = ‖M‖_F² + ‖M′‖_F² −
// 2⟨M, M′⟩ ≤ ‖M‖_F² + ‖M′‖_F² (⟨M, M′⟩ = tr(M M′) ≥ 0 for PSD matrices) ≤ (tr M)² + (tr M′)²
// ≤ 2B², since ‖M‖_F ≤ tr M = Σ_h ‖w_h‖² ≤ B for PSD M. Halving gives ‖e − e′‖²_σ ≤ B². ∎
// The bound is attained up to the X block (two users with orthogonal single pairs of norm² B).
func PracticalSensitivity(budget float64) float64 { return budget }

// practicalEncoder turns one user's trajectory into her element, applying at the boundary:
// pair scaling (lq spec §3.6: ‖z̄‖ ≤ 1+γ, ‖x̄'‖ ≤ 1), dropping non-finite pairs, and the
// budget's stopping rule: pair h is kept iff S_{h−1} + ‖z̄_h‖² + 1 ≤ B, where S_{h−1} is the
// kept total so far. The decision uses z̄_h and the past only (not x_{h+1}, whose norm is
// reserved at its bound 1), so the kept noises w_h form a predictable selection of a
// martingale difference sequence: the self-normalised bound behind the confidence set stays
// valid for kept pairs (the same stopping-time argument as the tabular visit cap).
type practicalEncoder struct {
	n, d, H int
	budget  float64
	cz      float64
	noClip  bool
	z, xn   []float64
	// Kept, Truncated, Scaled, Dropped count pairs (diagnostics; never released).
	Kept, Truncated, Scaled, Dropped int
}

func newPracticalEncoder(pub Public, budget float64) *practicalEncoder {
	p := pub.N + pub.D
	return &practicalEncoder{n: pub.N, d: pub.D, H: pub.H, budget: budget, cz: 1 + pub.Gamma,
		z: make([]float64, p), xn: make([]float64, pub.N)}
}

// practicalDim is the element length: packed upper triangle of V, then U (p×n row-major).
func practicalDim(p, n int) int { return noise.PackedLen(p) + p*n }

// practicalScales returns the coordinate scales: √2 on the diagonal of V, 1 elsewhere.
func practicalScales(p, n int) []float64 {
	s := make([]float64, practicalDim(p, n))
	for i := range s {
		s[i] = 1
	}
	for i := 0; i < p; i++ {
		s[noise.PackedIndex(p, i, i)] = math.Sqrt2
	}
	return s
}

// add adds tr's kept pairs to e (length practicalDim). Shapes are checked (error naming the
// field); non-finite values drop their pair.
func (c *practicalEncoder) add(tr *Trajectory, e []float64) error {
	n, d, H := c.n, c.d, c.H
	p := n + d
	if tr == nil || len(tr.X) != H+1 || len(tr.U) != H {
		return fmt.Errorf("practical lq: trajectory: want %d states and %d controls", H+1, H)
	}
	for h := 0; h <= H; h++ {
		if len(tr.X[h]) != n {
			return fmt.Errorf("practical lq: trajectory.X[%d]: want length %d, got %d", h, n, len(tr.X[h]))
		}
	}
	for h := 0; h < H; h++ {
		if len(tr.U[h]) != d {
			return fmt.Errorf("practical lq: trajectory.U[%d]: want length %d, got %d", h, d, len(tr.U[h]))
		}
	}
	z, xn := c.z, c.xn
	np := noise.PackedLen(p)
	S := 0.0
	for h := 0; h < H; h++ {
		copy(z, tr.X[h])
		copy(z[n:], tr.U[h])
		copy(xn, tr.X[h+1])
		nz, nx := frob(z), frob(xn)
		if math.IsNaN(nz) || math.IsInf(nz, 0) || math.IsNaN(nx) || math.IsInf(nx, 0) {
			c.Dropped++
			continue
		}
		if !c.noClip {
			s := 1.0
			if nz > c.cz {
				s = c.cz / nz
			}
			if nx > 1 {
				s = math.Min(s, 1/nx)
			}
			if s < 1 {
				c.Scaled++
				scaleAll(s, z, xn)
				nz, nx = nz*s, nx*s
			}
			if S+nz*nz+1 > c.budget {
				c.Truncated++
				continue
			}
			S += nz*nz + nx*nx
		}
		c.Kept++
		for i := 0; i < p; i++ {
			for j := i; j < p; j++ {
				e[noise.PackedIndex(p, i, j)] += z[i] * z[j]
			}
			for j := 0; j < n; j++ {
				e[np+i*n+j] += z[i] * xn[j]
			}
		}
	}
	return nil
}

// PracticalRelease is what the practical curator releases: the noisy statistics of the users
// of the completed batches and the data-independent std of their noise. It is the only input
// of the practical planner besides public values and the current user's own initial state.
type PracticalRelease struct {
	// Index is the number of counter insertions (batches) the release contains; 0 = nothing.
	Index int `json:"index"`
	// Users is the number of users in the release (public: the schedule).
	Users int `json:"users"`
	// V is Σ z̄ z̄ᵀ + E (p×p, exactly symmetric), U is Σ z̄ x̄ᵀ + L (p×n).
	V []float64 `json:"-"`
	U []float64 `json:"-"`
	// Std is s, the std of every off-diagonal entry of E and every entry of L; the diagonal of
	// E has std √2·s (E is s times a GOE matrix). 0 for exact statistics.
	Std float64 `json:"std"`
	// Slack bounds, per coordinate, the deterministic deviation of the release from
	// statistic + Gaussian noise caused by the Secure grid ((Index+1)·γ/2; 0 otherwise).
	Slack float64 `json:"slack"`
}

// Clone returns a deep copy.
func (r *PracticalRelease) Clone() *PracticalRelease {
	c := *r
	agentkit.CopyFloats(&c.V, &c.U)
	return &c
}

// PracticalCurator is the trusted curator of the practical agent: it encodes each user's
// episode, sums the users of each batch and inserts the batch sums into a Gaussian counter
// (exact sums for the noise-off twin); only the PracticalRelease leaves it.
type PracticalCurator struct {
	p, n     int
	enc      *practicalEncoder
	b        agentkit.Batches
	maxUsers int
	broken   practicalBroken
	cnt      counter.GaussianCounter
	gamma    float64
	batch    []float64
	exact    []float64 // exact prefix (noise-off twin, raw-statistics variant)
	rel      PracticalRelease
	report   ledger.Report
	// redraw variant
	redrawSrc noise.Source
	scales    []float64
}

// NewPracticalCurator returns the curator for cfg (K−1 users are ever received). src is the
// privacy noise source: nil means the deployment default, a crypto-seeded noise.Secure source
// (ignored by the noise-off twin). σ is fixed here from public parameters.
func NewPracticalCurator(pub Public, cfg PracticalConfig, src noise.Source) (*PracticalCurator, error) {
	cfg, err := cfg.resolve(pub)
	if err != nil {
		return nil, err
	}
	p, n := pub.N+pub.D, pub.N
	dim := practicalDim(p, n)
	c := &PracticalCurator{p: p, n: n, enc: newPracticalEncoder(pub, cfg.Budget), b: agentkit.NewBatches(cfg.BatchEvery),
		maxUsers: cfg.Episodes - 1, broken: cfg.broken, batch: make([]float64, dim), exact: make([]float64, dim),
		scales: practicalScales(p, n)}
	c.enc.noClip = cfg.broken == practicalNoClip
	c.rel = PracticalRelease{V: make([]float64, p*p), U: make([]float64, p*n)}
	capacity := max(c.b.Sched.Batches(c.maxUsers), 1)
	model := ledger.JDP
	if cfg.NoiseOff {
		model = ledger.NoiseOff // claims nothing; adds no noise and calibrates none
	}
	led, err := ledger.New(ledger.Config{Model: model, Target: accounting.ApproxDP{Epsilon: cfg.Epsilon, Delta: cfg.Delta},
		Subject: cfg.Name() + " [" + PracticalLabel + "]"})
	if err != nil {
		return nil, err
	}
	if cfg.NoiseOff {
		if c.report, err = led.Compose(); err != nil {
			return nil, err
		}
		return c, nil
	}
	if src == nil {
		if src, err = noise.NewSecure(); err != nil {
			return nil, err
		}
	}
	build, _ := lookupPracticalCounter(cfg.Counter)
	if cfg.Counter == "blt" {
		// Fit the BLT parameters once (the fit dominates the construction cost) and use them
		// for the factor probe and for the counter.
		var params counter.BLTParams
		if cfg.BLT != nil {
			params = *cfg.BLT
		} else if params, err = counter.FitSqrtBLT(capacity, counter.DefaultBLTBuffers); err != nil {
			return nil, err
		}
		build = func(c counter.GaussianConfig, s noise.Source) (counter.GaussianCounter, error) {
			return counter.NewBLT(c, params, s)
		}
	}
	// The ledger's release slack covers a real-valued factorisation fed by a Secure source
	// (agentkit.RegisterCounter). The coordinate scales are ≥ 1 (the diagonal of V is scaled by √2),
	// so the grid is σ's and Δ₂ = B is in units of σ.
	factor, sigma, err := agentkit.RegisterCounter(led, build, ledger.Entry{Counter: cfg.Counter,
		Sensitivity: PracticalSensitivity(cfg.Budget), Releases: capacity, Dim: dim,
		Inputs: map[string]float64{"budget": cfg.Budget, "batch_every": float64(cfg.BatchEvery)}}, src.Secure())
	if err != nil {
		return nil, err
	}
	if src.Secure() {
		c.gamma = noise.GaussianGranularity(sigma)
	}
	s := sigma
	if cfg.broken == practicalNoiseDiv4 {
		s /= 4
	}
	if c.cnt, err = build(counter.GaussianConfig{Dim: dim, Capacity: capacity, Sigma: s, CoordScale: c.scales}, src); err != nil {
		return nil, err
	}
	if f := c.cnt.SensitivityFactor(); f > factor*(1+1e-12) {
		return nil, fmt.Errorf("practical lq: internal: counter factor %g exceeds the calibrated %g", f, factor)
	}
	if cfg.broken == practicalRedraw {
		c.redrawSrc = src
	}
	if err := led.SetReleaseStd(ledger.EntryCounter, c.cnt.StdAt(capacity)*sigma/s); err != nil {
		return nil, err
	}
	if c.report, err = led.Compose(); err != nil {
		return nil, err
	}
	return c, nil
}

// Report returns the ledger's privacy report.
func (c *PracticalCurator) Report() ledger.Report { return c.report }

// Encoder returns the pair counters of the boundary (kept, truncated, scaled, dropped).
func (c *PracticalCurator) Encoder() (kept, truncated, scaled, dropped int) {
	return c.enc.Kept, c.enc.Truncated, c.enc.Scaled, c.enc.Dropped
}

// Receive takes user k's raw trajectory. The release is refreshed when the user completes a
// batch of the schedule.
func (c *PracticalCurator) Receive(tr *Trajectory) error {
	if c.b.Users >= c.maxUsers {
		return fmt.Errorf("practical lq: curator holds %d users already: the calibration covers K−1 users", c.b.Users)
	}
	if err := c.enc.add(tr, c.batch); err != nil {
		return err
	}
	if !c.b.Add() {
		return nil
	}
	for i, v := range c.batch {
		c.exact[i] += v
	}
	var pre []float64
	std := 0.0
	switch {
	case c.cnt == nil || c.broken == practicalRawStats:
		pre = c.exact
		if c.cnt != nil {
			if err := c.cnt.Insert(c.batch); err != nil {
				return err
			}
			std = c.cnt.PrefixStd()
		}
	case c.redrawSrc != nil:
		if err := c.cnt.Insert(c.batch); err != nil {
			return err
		}
		std = c.cnt.PrefixStd()
		pre = make([]float64, len(c.exact))
		for i, v := range c.exact {
			pre[i] = c.redrawSrc.AddGaussian(v, std*c.scales[i])
		}
	default:
		if err := c.cnt.Insert(c.batch); err != nil {
			return fmt.Errorf("practical lq: %w", err)
		}
		pre = c.cnt.Prefix()
		std = c.cnt.PrefixStd()
	}
	clear(c.batch)
	p := c.p
	np := noise.PackedLen(p)
	for i := 0; i < p; i++ {
		for j := i; j < p; j++ {
			v := pre[noise.PackedIndex(p, i, j)]
			c.rel.V[i*p+j], c.rel.V[j*p+i] = v, v
		}
	}
	copy(c.rel.U, pre[np:])
	c.rel.Index, c.rel.Users, c.rel.Std = c.b.Done, c.b.Users, std
	c.rel.Slack = 0
	if c.gamma > 0 {
		c.rel.Slack = float64(c.b.Done+1) * c.gamma / 2
	}
	return nil
}

// Release returns the current release (owned by the curator, valid until the next Receive).
func (c *PracticalCurator) Release() *PracticalRelease { return &c.rel }

// PracticalCapacity returns the number of counter insertions of a practical agent with K
// episodes and batch size M (the capacity its counter is calibrated for; public).
func PracticalCapacity(episodes, batchEvery int) int {
	if episodes < 1 || batchEvery < 1 {
		return 1
	}
	return max(counter.Schedule{Every: batchEvery}.Batches(episodes-1), 1)
}
