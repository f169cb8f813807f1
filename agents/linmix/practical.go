package linmix

import (
	"cmp"
	"errors"
	"fmt"
	"math"

	"github.com/dprl/dprl/agents/internal/agentkit"
	"github.com/dprl/dprl/internal/bounds"
	model "github.com/dprl/dprl/model/linmix"
	"github.com/dprl/dprl/privacy/counter"
	"github.com/dprl/dprl/privacy/ledger"
	"github.com/dprl/dprl/privacy/noise"
	"github.com/dprl/dprl/rng"
)

// This file holds dprl's own practical private UCRL-VTR (NOT from the seed papers; labelled
// PracticalLabel everywhere; practical-privacy spec §2–§5): practical-jdp, practical-ldp, their
// noise-off twin (Mode None) and a theory-constant variant (PracticalConfig.Theory).
//
// Statistic. The regression is pooled over h (PracticalHomogeneity), value-normalised and
// centred per (s,a) on the part of w the features pin down (practicalKnown): user k, who
// planned with her own optimistic values Ṽ_{h+1} (computed from the public release), uses for
// every step h < H the centred, range-normalised value v = (Ṽ_{h+1} − c_h)/r_h,
// c_h = (max Ṽ_{h+1} + min Ṽ_{h+1})/2, r_h = max Ṽ_{h+1} − min Ṽ_{h+1} (v ∈ [−½, ½]^S), and the
// leaf X_h = U Uᵀψ_v(s_h, a_h), y_h = (v(s_{h+1}) − ⟨ψ_v(s_h, a_h), w₀⟩)/(2Y), where w₀ is the
// minimum-norm solution of the public constraints ⟨ψ_1(s,a), w⟩ = 1 (Σ_{s′} P(s′|s,a) = 1),
// U an orthonormal basis of the directions they leave free and Y the public bound on
// |v(s′) − ⟨ψ_v, w₀⟩|. Because w = w₀ + Uθ for every admissible w, E[y_h | past] = ⟨X_h, Uθ⟩/(2Y)
// exactly (c_h, r_h, w₀, U, Y are functions of the release and the public features only), so
// each leaf is a valid VTR observation of θ/(2Y) with 1/(4Y)-sub-Gaussian noise; the planner
// adds the known part ⟨ψ, w₀⟩ back. Compared with the global centring alone, the Gram noise
// now multiplies ‖θ‖ ≤ √(C_w² − ‖w₀‖²) (0.07 on TwoStateHard) instead of ‖w‖ (1.42), and the
// ridge shrinks towards w₀ instead of 0. Her contribution is x_k = (packed G_k, u_k),
// G_k = Σ_h X_h X_hᵀ, u_k = Σ_h X_h y_h, after the privacy guard (‖X_h‖ ≤ B = Clip·B₁,
// y_h ∈ [−½, ½], NaN/Inf mapped to 0): the sensitivity proof (PracticalSensitivity) sees only
// the guarded leaves, so it is unchanged; B₁ (PracticalFeatureBound) is now the bound on the
// projected regressor (0.707 instead of 0.762 on TwoStateHard).
//
// Privacy of practical-jdp ((ε, δ)-JDP, replace-one neighbours). Each user contributes exactly
// one vector x_k, with ‖x_k − x′_k‖ ≤ Δ₂ in the weighted norm of PracticalSensitivity, to the
// sum of one batch of the public schedule; the curator inserts the batch sums into a Gaussian
// continual counter with per-coordinate multipliers (1 on the Gram diagonal and the target,
// 1/√2 off the diagonal). Every release sequence is a post-processing of C·y + z, z ~ N(0, σ²·
// diag(c²)), so it is (Δ₂·factor/σ)-GDP (Dong, Roth & Su 2022, Thm 2.7; counter.GaussianCounter);
// the stream is chosen adaptively — the next user's leaves depend on the policies computed
// from earlier releases — and Denisov, McMahan, Rush, Smith & Thakurta (NeurIPS 2022) prove
// that the Gaussian matrix mechanism with a lower-triangular factorisation keeps exactly this
// guarantee on adaptively chosen streams with single participation. σ is fixed in
// NewPractical from (ε, δ, H, B, K, M, the counter's factor) before any data by the privacy
// ledger (privacy/ledger) the curator or randomiser registers with: μ = GDPFor(ε, δ), σ =
// Δ₂·factor/μ (with the Secure grid's rounding in Δ₂, spec §7, and a Secure factorisation
// counter's release slack counter.SecureReleaseSlack aimed below and added back). The planner reads only
// the PracticalRelease, so every policy — and every action sent to another user — is a
// post-processing of the μ-GDP release and data-independent tie breaks: the run is μ-JDP
// (billboard lemma, Hsu et al. 2016; Luyo F.7), reported as the exact (ε, δ) μ implies.
//
// Privacy of practical-ldp ((ε, δ)-LDP). The user's client computes the same x_k and sends
// x_k + N(0, σ_L²·diag(c²)) drawn from her own stream, σ_L = Δ₂/μ; the server type accepts
// only *PracticalReport values and holds no noise stream. One report per user: μ-GDP.
//
// Regulariser and width from the noise actually added (practicalWidth).

// PracticalConfig configures a practical agent.
type PracticalConfig struct {
	// Privacy is the privacy setting.
	Privacy PracticalPrivacy
	// Episodes is K.
	Episodes int
	// Lambda0 is the base ridge λ₀ > 0 (default 1).
	Lambda0 float64
	// Confidence β_c ∈ (0, 1) is the failure probability of each of the three events of the
	// width (noise spectral norm, target-noise norm, self-normalised bound) at each release
	// (default 0.05: each release's ellipsoid holds with probability ≥ 1 − 3β_c). No union
	// bound over releases (Theory adds it).
	Confidence float64
	// BetaMult multiplies the width (post-processing; default 1).
	BetaMult float64
	// Theory selects the theory constants: β_c = P/(3·(T+1)) per release event (union bound
	// over the T releases) and P/3 for the (time-uniform) self-normalised bound, BetaMult 1.
	Theory bool
	// P is the overall failure probability of the theory variant (default 0.05).
	P float64
	// Cw bounds ‖w‖ (0: the environment's exact value, spec P21).
	Cw float64

	knobs practicalKnobs
	// blt, if non-nil, are pre-fitted BLT parameters for the counter's capacity (the audit
	// reuses one fit across runs; the fit is deterministic, so this changes nothing else).
	blt *counter.BLTParams
}

// practicalKnobs are audit/test-only broken variants, unreachable from the CLI and configs.
type practicalKnobs struct {
	noiseDiv float64 // σ divided by this after calibration
	redraw   bool    // fresh noise per release instead of the counter's
	noClip   bool    // privacy guard skipped
	raw      bool    // planner reads exact statistics
}

func (c *PracticalConfig) defaults() {
	c.Privacy.defaults()
	c.Lambda0 = cmp.Or(c.Lambda0, 1)
	c.Confidence = cmp.Or(c.Confidence, 0.05)
	c.BetaMult = cmp.Or(c.BetaMult, 1)
	c.P = cmp.Or(c.P, 0.05)
}

// Validate checks c (after defaults); errors name the field and its range.
func (c *PracticalConfig) Validate() error {
	c.defaults()
	if err := c.Privacy.Validate(); err != nil {
		return err
	}
	switch {
	case c.Episodes < 2 || c.Episodes > bounds.MaxEpisodes:
		return fmt.Errorf("episodes: %d, want 2..%d", c.Episodes, bounds.MaxEpisodes)
	case !(c.Lambda0 > 0) || math.IsInf(c.Lambda0, 0):
		return fmt.Errorf("lambda0: %v, want a finite number > 0", c.Lambda0)
	case !(c.Confidence > 0 && c.Confidence < 1):
		return fmt.Errorf("confidence: %v, want (0, 1)", c.Confidence)
	case !(c.BetaMult > 0) || math.IsInf(c.BetaMult, 0):
		return fmt.Errorf("beta multiplier: %v, want a finite number > 0", c.BetaMult)
	case c.Theory && c.BetaMult != 1:
		return fmt.Errorf("beta multiplier: %v, the theory variant uses 1", c.BetaMult)
	case !(c.P > 0 && c.P < 1):
		return fmt.Errorf("p: %v, want (0, 1)", c.P)
	case !(c.Cw >= 0) || math.IsInf(c.Cw, 0):
		return fmt.Errorf("cw: %v, want a finite number ≥ 0 (0 = the environment's exact value)", c.Cw)
	}
	return nil
}

// Name returns a short label such as "practical-vtr/jdp" or "practical-vtr/ldp-theory".
func (c PracticalConfig) Name() string {
	s := "practical-vtr/" + c.Privacy.Mode.String()
	if c.Theory {
		s += "-theory"
	}
	return s
}

// PracticalRelease is what a practical agent's privatiser releases: the noisy pooled Gram
// matrix (packed upper triangle) and target of the users seen so far, and the
// data-independent std of their noise. It is the planner's only input.
type PracticalRelease struct {
	// Users is the number of users the release contains (public: the schedule).
	Users int
	// Gram is the packed Σ X Xᵀ plus noise; Target is Σ X y plus noise.
	Gram, Target []float64
	// Std is the noise std of every Gram diagonal and target coordinate (Std/√2 off the
	// diagonal); 0 for exact statistics.
	Std float64
	// version increments with every release (planner cache key).
	version int
}

// Clone returns a deep copy.
func (r *PracticalRelease) Clone() *PracticalRelease {
	c := *r
	c.Gram = append([]float64(nil), r.Gram...)
	c.Target = append([]float64(nil), r.Target...)
	return &c
}

func newPracticalRelease(d int) PracticalRelease {
	return PracticalRelease{Gram: make([]float64, noise.PackedLen(d)), Target: make([]float64, d)}
}

// PracticalLeaves are one user's normalised leaves (X_h, y_h), h = 1..H−1, built on her side
// from her own trajectory and the values she planned with.
type PracticalLeaves struct {
	x [][]float64
	y []float64
}

func newPracticalLeaves(H, d int) *PracticalLeaves {
	l := &PracticalLeaves{x: make([][]float64, H-1), y: make([]float64, H-1)}
	for h := range l.x {
		l.x[h] = make([]float64, d)
	}
	return l
}

// practicalEncoder turns leaves into the contribution vector (packed G, u) behind the privacy
// guard: ‖X‖ ≤ B, y ∈ [−½, ½], non-finite inputs mapped to 0.
type practicalEncoder struct {
	d      int
	B      float64
	T      float64 // trace cap
	leaves int     // at most H − 1 leaves per user (the n of PracticalSensitivity); 0: no limit (guard unit tests only)
	noClip bool
	xs     []float64
}

// check rejects leaves of the wrong shape (a message from a buggy client).
func (e *practicalEncoder) check(lv *PracticalLeaves) error {
	if lv == nil || len(lv.x) != len(lv.y) {
		return errors.New("practical: malformed leaves")
	}
	if e.leaves > 0 && len(lv.x) > e.leaves {
		return fmt.Errorf("practical: %d leaves, want at most H − 1 = %d per user (the sensitivity counts H − 1 steps)", len(lv.x), e.leaves)
	}
	for h, x := range lv.x {
		if len(x) != e.d {
			return fmt.Errorf("practical: leaf %d has dimension %d, want %d", h, len(x), e.d)
		}
	}
	return nil
}

func (e *practicalEncoder) dim() int { return noise.PackedLen(e.d) + e.d }

// add adds the guarded contribution of lv to out (length dim).
func (e *practicalEncoder) add(lv *PracticalLeaves, out []float64) {
	d := e.d
	if cap(e.xs) < d {
		e.xs = make([]float64, d)
	}
	x := e.xs[:d]
	np := noise.PackedLen(d)
	trace := 0.0
	for h := range lv.x {
		if e.leaves > 0 && h >= e.leaves {
			break // at most H − 1 leaves per user (check rejects more on the curator's side)
		}
		copy(x, lv.x[h])
		y := lv.y[h]
		if !e.noClip {
			y = practicalGuard(x, y, e.B)
			// Keep rule (predictable: X_h and the past only): skip a step that would push the
			// trace over the cap.
			n2 := dot(x, x)
			if trace+n2 > e.T {
				continue
			}
			trace += n2
		}
		idx := 0
		for a := 0; a < d; a++ {
			for b := a; b < d; b++ {
				out[idx] += x[a] * x[b]
				idx++
			}
			out[np+a] += x[a] * y
		}
	}
}

// practicalGuard projects x onto the ball of radius B and clips y to [−½, ½] (the privacy
// boundary; a no-op when the model's assumptions hold and Clip = 1). A regressor with a NaN or
// ±Inf entry becomes 0; y = NaN becomes 0.
func practicalGuard(x []float64, y, B float64) float64 {
	m := 0.0
	for _, v := range x {
		m = max(m, math.Abs(v))
	}
	if math.IsNaN(m) || math.IsInf(m, 0) {
		clear(x)
	} else if m > 0 {
		s := 0.0
		for _, v := range x {
			s += (v / m) * (v / m)
		}
		if n := m * math.Sqrt(s); n > B {
			f := B / n
			for i := range x {
				x[i] *= f
			}
		}
	}
	if math.IsNaN(y) {
		return 0
	}
	return min(max(y, -0.5), 0.5)
}

// PracticalCurator is the trusted curator of practical-jdp (and of the noise-off twin): it sums
// the users of each batch and inserts the batch sums into a Gaussian continual counter; only
// the counter's prefix (the PracticalRelease) leaves it.
type PracticalCurator struct {
	enc      practicalEncoder
	b        agentkit.Batches
	maxUsers int
	cnt      counter.GaussianCounter
	exact    []float64 // exact running sums (noise-off twin; broken variants)
	batch    []float64
	rel      PracticalRelease
	g        ledger.Report
	scales   []float64
	// broken variants (audit only)
	raw    bool
	redraw bool
	src    noise.Source
}

// Ingest adds one user's leaves.
func (c *PracticalCurator) Ingest(lv *PracticalLeaves) error {
	if c.b.Users >= c.maxUsers {
		return fmt.Errorf("practical curator: all %d users of the calibration (K−1) were ingested", c.maxUsers)
	}
	if err := c.enc.check(lv); err != nil {
		return err
	}
	c.enc.add(lv, c.batch)
	if !c.b.Add() {
		return nil
	}
	for i, v := range c.batch {
		c.exact[i] += v
	}
	np := len(c.rel.Gram)
	switch {
	case c.cnt == nil:
		copy(c.rel.Gram, c.exact[:np])
		copy(c.rel.Target, c.exact[np:])
	default:
		if err := c.cnt.Insert(c.batch); err != nil {
			return fmt.Errorf("practical curator: %w", err)
		}
		p := c.cnt.Prefix()
		c.rel.Std = c.cnt.PrefixStd()
		switch {
		case c.raw:
			p = c.exact
		case c.redraw:
			p = append([]float64(nil), c.exact...)
			for i := range p {
				p[i] = c.src.AddGaussian(p[i], c.rel.Std*c.scales[i])
			}
		}
		copy(c.rel.Gram, p[:np])
		copy(c.rel.Target, p[np:])
	}
	clear(c.batch)
	c.rel.Users = c.b.Users
	c.rel.version++
	return nil
}

// Release returns the current release (owned by the curator, valid until the next Ingest).
func (c *PracticalCurator) Release() *PracticalRelease { return &c.rel }

// Guarantee returns the ledger's privacy report.
func (c *PracticalCurator) Guarantee() ledger.Report { return c.g }

func newPracticalCurator(H, d, K int, pub practicalPublic, p PracticalPrivacy, src noise.Source, kn practicalKnobs, blt *counter.BLTParams) (*PracticalCurator, error) {
	B, T := pub.B, pub.T
	enc := practicalEncoder{d: d, B: B, T: T, leaves: H - 1, noClip: kn.noClip}
	n := enc.dim()
	c := &PracticalCurator{enc: enc, b: agentkit.NewBatches(p.BatchEvery), maxUsers: K - 1, batch: make([]float64, n),
		exact: make([]float64, n), rel: newPracticalRelease(d), scales: practicalScales(d), raw: kn.raw, redraw: kn.redraw, src: src}
	led, err := p.ledger()
	if err != nil {
		return nil, err
	}
	var build counter.Builder // nil: the registry's counter named p.Counter
	if blt != nil && cmp.Or(p.Counter, counter.DefaultKind) == "blt" {
		build = func(c counter.GaussianConfig, s noise.Source) (counter.GaussianCounter, error) {
			return counter.NewBLT(c, *blt, s)
		}
	}
	capacity := max(c.b.Sched.Batches(K-1), 1)
	div := 1.0
	if kn.noiseDiv > 0 {
		div = kn.noiseDiv // broken variant: the report is NOT what this noise gives
	}
	c.cnt, c.g, err = agentkit.CuratorCounter(led, p.Mode != None, build, ledger.Entry{Counter: p.Counter, Sensitivity: pub.sens,
		Releases: capacity, Dim: n, Grid: practicalGrid(c.scales), Inputs: pub.inputs},
		counter.GaussianConfig{Dim: n, Capacity: capacity, CoordScale: c.scales}, src, div)
	if err != nil {
		return nil, err
	}
	return c, nil
}

// PracticalReport is the message a practical-ldp user sends: her contribution plus Gaussian
// noise she drew from her own stream. Its fields are unexported: only a PracticalRandomizer
// produces one.
type PracticalReport struct{ x []float64 }

// Values returns a copy of the noisy vector (what the server observes).
func (r *PracticalReport) Values() []float64 { return append([]float64(nil), r.x...) }

// PracticalRandomizer is practical-ldp's user-side randomiser: it runs on the user's device
// with her own noise stream, which the server never holds.
type PracticalRandomizer struct {
	enc    practicalEncoder
	sigma  float64
	scales []float64
	gamma  float64 // Secure grid (0 for a seeded source)
	src    noise.Source
}

// bound is the public bound of a report number (LocalCurator): an honest contribution's
// entries are at most the trace cap T (Gram: |Σ x_a x_b| ≤ Σ‖x‖² ≤ T) or (H − 1)·B/2 (target:
// at most H − 1 leaves, ‖x‖ ≤ B, |y| ≤ ½), plus the rounding to the Secure grid and
// agentkit.GaussianTailSigmas of the largest coordinate std σ·max c_k.
func (z *PracticalRandomizer) bound() float64 {
	sc := 0.0
	for _, c := range z.scales {
		sc = max(sc, c)
	}
	honest := max(z.enc.T, float64(z.enc.leaves)*z.enc.B/2) + z.gamma
	return agentkit.GaussianReportBound(honest, z.sigma*sc)
}

// Privatize returns the user's noisy report. Every coordinate, zero or not, gets noise.
func (z *PracticalRandomizer) Privatize(lv *PracticalLeaves) *PracticalReport {
	x := make([]float64, z.enc.dim())
	z.enc.add(lv, x)
	for i, v := range x {
		if z.gamma > 0 {
			v = math.Floor(v/z.gamma+0.5) * z.gamma
		}
		x[i] = v + z.src.AddGaussian(0, z.sigma*z.scales[i])
	}
	return &PracticalReport{x: x}
}

// PracticalLocalServer sums practical-ldp reports. It has no field or method through which a
// trajectory, a leaf or a noise stream could reach it.
type PracticalLocalServer struct {
	b     agentkit.Batches
	sigma float64
	cap   int
	sum   []float64
	rel   PracticalRelease
}

// Receive adds one report; the release is refreshed at the end of each batch.
func (l *PracticalLocalServer) Receive(r *PracticalReport) error {
	if r == nil {
		return errors.New("practical ldp server: malformed report")
	}
	done, err := l.b.AddReport(l.sum, r.x, l.cap, "practical ldp server")
	if err != nil || !done {
		return err
	}
	np := len(l.rel.Gram)
	copy(l.rel.Gram, l.sum[:np])
	copy(l.rel.Target, l.sum[np:])
	l.rel.Users = l.b.Users
	l.rel.Std = l.sigma * math.Sqrt(float64(l.b.Users))
	l.rel.version++
	return nil
}

// Release returns the current release (valid until the next Receive).
func (l *PracticalLocalServer) Release() *PracticalRelease { return &l.rel }

func newPracticalLocal(H, d, K int, pub practicalPublic, p PracticalPrivacy, src noise.Source, kn practicalKnobs) (*PracticalRandomizer, *PracticalLocalServer, ledger.Report, error) {
	enc := practicalEncoder{d: d, B: pub.B, T: pub.T, leaves: H - 1, noClip: kn.noClip}
	scales := practicalScales(d)
	led, err := p.ledger()
	if err != nil {
		return nil, nil, ledger.Report{}, err
	}
	// One Gaussian report per user (factor 1, one release), rounded to the grid of σ/√2 (the
	// smallest coordinate std) with a Secure source.
	sigma, g, err := agentkit.CalibratedReport(led, ledger.Entry{Sensitivity: pub.sens, Dim: enc.dim(),
		Grid: practicalGrid(scales), Inputs: pub.inputs}, src.Secure())
	if err != nil {
		return nil, nil, g, err
	}
	srv := &PracticalLocalServer{b: agentkit.NewBatches(p.BatchEvery), sigma: sigma, cap: K - 1, sum: make([]float64, enc.dim()), rel: newPracticalRelease(d)}
	if kn.noiseDiv > 0 {
		sigma /= kn.noiseDiv // broken variant
	}
	z := &PracticalRandomizer{enc: enc, sigma: sigma, scales: scales, src: src}
	if src.Secure() {
		z.gamma = noise.GaussianGranularity(sigma / math.Sqrt2)
	}
	return z, srv, g, nil
}

// PracticalAgent runs a practical agent episode by episode, one user per episode: release →
// user-side planning from the release → rollout → leaves → curator (JDP / none) or user-side
// randomiser + LDP server. It is not safe for concurrent use.
type PracticalAgent struct {
	cfg PracticalConfig
	m   *model.MDP
	g   ledger.Report
	pub practicalPublic
	pl  *practicalPlanner
	cur *PracticalCurator
	srv *PracticalLocalServer
	rnd *PracticalRandomizer
	lv  *PracticalLeaves
	population
}

// NewPractical builds a practical agent whose privacy noise comes from the hardened
// noise.Secure source (the default outside seeded experiments). seed drives the users'
// environment responses and the tie-breaking stream.
func NewPractical(m *model.MDP, cfg PracticalConfig, seed rng.Seed) (*PracticalAgent, error) {
	var src noise.Source
	if cfg.Privacy.Mode != None {
		s, err := noise.NewSecure()
		if err != nil {
			return nil, err
		}
		src = s
	}
	return buildPractical(m, cfg, seed, src)
}

// NewPracticalSeeded builds a practical agent whose noise stream is derived from seed
// ("practical-noise"; reproducible simulations, not hardened). Other streams: "users/k" and
// "ties".
func NewPracticalSeeded(m *model.MDP, cfg PracticalConfig, seed rng.Seed) (*PracticalAgent, error) {
	return buildPractical(m, cfg, seed, noise.NewSeeded(seed.Child("practical-noise").Rand()))
}

// NewPracticalWithNoise builds a practical agent whose privacy noise comes from src (a
// service's keyed secure noise, engine.Streams.SecureNoise); nil means a crypto-seeded
// noise.Secure source, as NewPractical. seed drives the users' environment responses and the
// tie-breaking stream.
func NewPracticalWithNoise(m *model.MDP, cfg PracticalConfig, seed rng.Seed, src noise.Source) (*PracticalAgent, error) {
	if src == nil {
		return NewPractical(m, cfg, seed)
	}
	return buildPractical(m, cfg, seed, src)
}

func buildPractical(m *model.MDP, cfg PracticalConfig, seed rng.Seed, src noise.Source) (*PracticalAgent, error) {
	if m == nil {
		return nil, errors.New("linmix: nil environment")
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	H, d := m.Horizon(), m.Dim()
	if H < 2 {
		return nil, fmt.Errorf("linmix practical: horizon %d, want ≥ 2 (the last step carries no regression data)", H)
	}
	p := cfg.Privacy
	b1 := PracticalFeatureBound(m)
	B := p.Clip * b1
	pub := practicalPublic{B: B, T: p.Budget * float64(H-1) * B * B, sens: PracticalSensitivity(H, B, p.Budget)}
	pub.inputs = map[string]float64{"feature_bound": b1, "clip_radius": B, "trace_cap": pub.T, "batch_every": float64(p.BatchEvery)}
	a := &PracticalAgent{cfg: cfg, m: m, pub: pub, population: newPopulation(m, seed)}
	switch p.Mode {
	case LDP:
		z, srv, gg, err := newPracticalLocal(H, d, cfg.Episodes, pub, p, src, cfg.knobs)
		if err != nil {
			return nil, err
		}
		a.rnd, a.srv, a.g = z, srv, gg
	default:
		c, err := newPracticalCurator(H, d, cfg.Episodes, pub, p, src, cfg.knobs, cfg.blt)
		if err != nil {
			return nil, err
		}
		a.cur, a.g = c, c.Guarantee()
	}
	cw := cfg.Cw
	if cw == 0 {
		cw = m.Cw()
	}
	a.pl = newPracticalPlanner(m, &a.cfg, cw, B, seed.Child("ties").Rand())
	a.lv = newPracticalLeaves(H, d)
	a.contract()
	return a, nil
}

// Guarantee returns the ledger's privacy report (exact μ-GDP and the (ε, δ) it implies).
func (a *PracticalAgent) Guarantee() ledger.Report { return a.g }

// Config returns the configuration with defaults filled in.
func (a *PracticalAgent) Config() PracticalConfig { return a.cfg }

// Release returns the current release (read-only view).
func (a *PracticalAgent) Release() *PracticalRelease {
	if a.srv != nil {
		return a.srv.Release()
	}
	return a.cur.Release()
}

// Episode plays one episode with the next user and returns the exact regret
// V*_1(s_1) − V^{π_k}_1(s_1). It is one step of the contract (Publish, Play from the user's
// stream users/k, Report, Receive: see protocol.go; the last user's data would reach nobody
// and is not reported); runners drive the agent with protocol.Run on Session instead.
func (a *PracticalAgent) Episode() (float64, error) { return a.episode() }

// Run plays the remaining episodes up to K and returns the per-episode regrets.
func (a *PracticalAgent) Run() ([]float64, error) { return a.runTo(a.cfg.Episodes, a.Episode) }

// Width returns the planner's current (λ_t, β_t) (diagnostics).
func (a *PracticalAgent) Width() (lambda, beta float64) { return a.pl.lam, a.pl.beta }

// Diagnostics returns the run's counters so far (PD repairs, saturated fraction).
func (a *PracticalAgent) Diagnostics() Diagnostics {
	d := Diagnostics{PDFallbacks: a.pl.fallbacks}
	if a.pl.cells > 0 {
		d.SaturatedFraction = float64(a.pl.saturated) / float64(a.pl.cells)
	}
	return d
}

// Policy returns the policy of the last planned episode (read-only).
func (a *PracticalAgent) Policy() model.Policy { return a.pl.pol }
