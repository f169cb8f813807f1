package tabular

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/dprl/dprl/agents/internal/agentkit"
	model "github.com/dprl/dprl/model/tabular"
	"github.com/dprl/dprl/privacy/counter"
	"github.com/dprl/dprl/privacy/ledger"
	"github.com/dprl/dprl/privacy/noise"
)

// This file holds dprl's own practical private agents (NOT from the seed papers; labelled
// "practical" everywhere; practical-privacy spec §2–§5): practical-jdp, practical-ldp and
// practical-psrl-jdp.
//
// Privacy of practical-jdp / practical-psrl-jdp ((ε, δ)-JDP, replace-one neighbours).
// Each user contributes exactly one vector x_k (PracticalSensitivity: her clipped, capped
// counts, ‖x_k − x′_k‖₂ ≤ Δ₂) to the sum of one batch b(k) = ⌈k/M⌉ of a fixed, data-independent
// schedule; the curator inserts the batch sums y_1, y_2, … into a Gaussian continual counter.
// A counter releases A·y + B·z with A = B·C lower triangular and z ~ N(0, σ²I) i.i.d.; every
// release sequence is a post-processing of C·y + z. Changing one user changes one y_j by at
// most Δ₂ in ℓ2, hence C·y by at most Δ₂·max_j‖C e_j‖ = Δ₂·factor, and C·y + z is
// (Δ₂·factor/σ)-GDP (Dong, Roth & Su 2022, Thm 2.7). The stream is chosen adaptively — the
// next user's data depend on the policies computed from earlier releases — and Denisov,
// McMahan, Rush, Smith & Thakurta (NeurIPS 2022, Thm 2.1) prove that the Gaussian matrix
// mechanism with a lower-triangular factorisation keeps exactly this guarantee under
// adaptively chosen streams with single participation (for the binary tree, C is the
// node-membership matrix). σ is fixed in NewPractical from (ε, δ, H, S, A, m, K, M, the
// counter's factor) before any data: the curator registers its counter with the privacy ledger
// (privacy/ledger), which calibrates σ = Δ₂·factor/μ, μ = accounting.GDPFor(ε, δ). The
// planner reads only the released Release (its type holds nothing else), so every policy —
// and hence every action sent to another user — is a post-processing of the μ-GDP release
// together with randomness independent of the data (tie breaks, posterior samples): the run
// is μ-JDP (billboard lemma, Hsu et al. 2016), and the ledger's report states the exact (ε, δ)
// that μ implies (accounting.GDP.ToApproxDP). With the Secure source the statistic is rounded
// to the noise grid γ before it is added and Δ₂ is replaced by Δ₂ + √dim·γ (spec §7), and a
// real-valued factorisation counter (blt, sqrt) adds counter.SecureReleaseSlack to μ: the
// ledger aims σ at μ minus that slack and its report adds it back.
//
// Privacy of practical-ldp ((ε, δ)-LDP). The user's client computes the same x_k and sends
// x_k + N(0, σ_L²I) drawn from her own stream, σ_L = Δ₂/μ; the server type accepts only
// *GaussianReport values and never holds a noise stream. One report per user: μ-GDP. The
// server's release cadence (every M reports) is public and costs no privacy.
//
// Design (what makes practical-ldp learn within 10⁶ users at (1, 10⁻⁵); spec §1, §4, §5).
// The report x_k = (N(s,a,s′), w·R(s,a)) is pooled over h (HomogeneityAssumption), keeps at
// most m = 4 visits per (s,a) and weights the reward block by w = 0.5, so Δ₂ = √(2(1+w²)·M₂) =
// √200 on RiverSwim (PracticalSensitivity) and σ_L = 52.8 against 66.7 at w = 1 and 149 with
// neither cap nor weight. A per-user norm budget (Σ c² ≤ B = 80, NormBudget) keeps Δ₂ at that
// value at every horizon (it binds only where M₂ > 80, never at H = 20 with m = 4), and a model
// whose reward table is public drops the reward block altogether (public.go). The aggregate
// noise grows as σ_L·√users, so every pair stays below the noise for 10⁵ users or more; the
// planner's effective estimator (NoiseBonus) turns the noisy counts into a noise-aware effective
// sample size and shrinks towards an optimistic prior instead of saturating at H − h, so
// exploration is directed at the least-known pairs, and a soft threshold of 2σ removes the
// spurious mass that the positive part of the noise puts on empty next states and on rewards,
// and only the part of a row above that threshold counts as data on P. Measured alternatives (RiverSwim, 3–4 seeds, K = 10⁶): caps
// 1, 2, 8, weights 0.3 and 1, thresholds 0–3, prior weights 0.01–3, a pessimistic count in
// n_e, a separate reward effective count, an optimistic (best-state) transition prior,
// RLSVI-style Q perturbations, and the noise-aware PSRL planner (no learning) were no better.

// Release is what a practical agent's privatizer releases before episode k: noisy statistics
// of the users seen so far plus the data-independent standard deviation of their noise. It
// is the only input of a practical planner.
//
// Indexing (G = 1 if Pooled, else H groups; g = 0 if pooled, else h): NT at
// ((g*S+s)*A+a)*S+s', R at (g*S+s)*A+a.
type Release struct {
	S, A, H int
	// Pooled says the statistics are pooled over h (HomogeneityAssumption).
	Pooled bool
	// PublicRewards says the rewards are public (PracticalPrivacy.PublicRewards): nothing
	// about them is released, R is empty and the planners use the public table.
	PublicRewards bool
	// support is the public transition support (PracticalPrivacy.PublicSupport; nil: none):
	// NT is exactly 0 outside it (nothing is released there) and the planners estimate
	// P̂ = 0 there (support.go). Shared, never modified.
	support *supportSet
	// Users is the number of users whose data the release contains (public: schedule).
	Users int
	// NT is N̂(s,a,s'), R is R̂(s,a): noisy sums (may be negative), R already divided by the
	// reward weight w (PracticalPrivacy.RewardWeight); R is empty with public rewards.
	NT, R []float64
	// Std is the standard deviation of the noise of every coordinate of NT, RStd that of R
	// (Std/w) (data-independent; 0 for exact counts).
	Std, RStd float64
}

func (r *Release) groups() int {
	if r.Pooled {
		return 1
	}
	return r.H
}

// cells returns the number of (g, s, a) cells of the release.
func (r *Release) cells() int { return r.groups() * r.S * r.A }

// Clone returns a deep copy.
func (r *Release) Clone() *Release {
	c := *r
	agentkit.CopyFloats(&c.NT, &c.R)
	return &c
}

// contribution encodes one user's episode into her vector x (layout of Release: NT block then
// R block, none with public rewards), validating states and actions and clipping rewards to
// [0, 1] at the boundary, keeping only the first m visits of each (s,a) when pooled and only
// the visits that keep Σ c² within the norm budget B (PracticalSensitivity).
type contribution struct {
	S, A, H int
	pool    bool
	cap     int
	budget  int     // norm budget B: the kept counts have Σ_(s,a) c(s,a)² ≤ budget
	repeat  int     // the part of B repeat visits may use: B/2 when the budget binds (B < M₂), else B
	public  bool    // public rewards: no reward block, reported rewards never read
	w       float64 // reward weight (PracticalPrivacy.rewardWeight)
	// sup is the public transition support (nil: none): the transition block has one
	// coordinate per (g, s, a, s′) with s′ in the support of (s, a) (support.go).
	sup  *supportSet
	seen []int // visits of each (s,a) in the current episode (pooled)
	// term holds the public terminal states (set by NewPractical; none otherwise): a
	// terminated episode contributes its L < H steps.
	term terminal
	// noClip is a deliberately broken variant reachable only from the audit targets and tests:
	// rewards enter unclipped.
	noClip bool
}

func newContribution(S, A, H int, p PracticalPrivacy, sup *supportSet) *contribution {
	c := &contribution{S: S, A: A, H: H, pool: p.Pool, cap: p.capOf(H), budget: p.normBudget(), public: p.PublicRewards,
		w: p.rewardWeight(), sup: sup, seen: make([]int, S*A)}
	c.repeat = c.budget
	if float64(c.budget) < maxKeptSquares(S, A, H, p) {
		c.repeat = c.budget / 2 // the budget binds: keep half of it for first visits of new pairs
	}
	return c
}

func (c *contribution) dim() int {
	d := c.ntDim()
	if c.public {
		return d
	}
	return d + c.groups()*c.S*c.A
}

// groups returns the number of groups G of the layout: 1 pooled, H per step.
func (c *contribution) groups() int {
	if c.pool {
		return 1
	}
	return c.H
}

// ntDim returns the size of the transition block: G·S·A·S, or G times the support's entries
// with a public support.
func (c *contribution) ntDim() int {
	if c.sup != nil {
		return c.groups() * c.sup.entries()
	}
	return c.groups() * c.S * c.A * c.S
}

// maxEntry is the largest absolute value an honest contribution vector takes in any entry:
// a pooled (s,a) keeps at most cap visits (count ≤ cap, weighted reward ≤ w·cap); an unpooled
// (h,s,a) is visited at most once (1 and w); no reward block with public rewards.
func (c *contribution) maxEntry() float64 {
	k := 1.0
	if c.pool {
		k = float64(c.cap)
	}
	if c.public {
		return k
	}
	return k * max(1, c.w)
}

// add adds the episode t to x (len dim). It returns an error naming the bad field. A
// terminated episode (L < H steps, ending in a terminal state) adds its L transitions only.
// A visit is kept only if its (s,a) has fewer than m kept visits (pooled) and counting it
// keeps Σ c² ≤ B: the kept count of (s,a) going from k to k+1 adds 2k+1 to Σ c² (k = 0 for a
// step-dependent cell, visited at most once). When the budget binds (B < M₂, public) a repeat
// visit (k ≥ 1) must keep Σ c² ≤ B/2: the other half is left to first visits of new pairs, so
// that the states reached late in a long episode are not starved by repeats near its start.
// Every test reads only the episode before the visit's outcome. With public rewards the
// rewards are neither checked nor read.
func (c *contribution) add(t *model.Trajectory, x []float64) error {
	S, A, H := c.S, c.A, c.H
	L, err := c.term.steps(t, H)
	if err != nil {
		return err
	}
	for h := 0; h <= L; h++ {
		if t.S[h] < 0 || t.S[h] >= S {
			return fmt.Errorf("trajectory.S[%d]: state must be in [0, %d], got %d", h, S-1, t.S[h])
		}
	}
	if err := c.term.ends(t, L, H); err != nil {
		return err
	}
	for h := 0; h < L; h++ {
		if t.A[h] < 0 || t.A[h] >= A {
			return fmt.Errorf("trajectory.A[%d]: action must be in [0, %d], got %d", h, A-1, t.A[h])
		}
		if !c.public && math.IsNaN(t.R[h]) {
			return fmt.Errorf("trajectory.R[%d]: reward is NaN", h)
		}
		if c.sup != nil && !c.sup.in(t.S[h]*A+t.A[h], t.S[h+1]) {
			return fmt.Errorf("trajectory.S[%d]: state %d is not a possible next state of (s=%d, a=%d) (outside the public support)", h+1, t.S[h+1], t.S[h], t.A[h])
		}
	}
	nt := c.ntDim() // size of the NT block
	clear(c.seen)
	sq := 0 // Σ c² of the visits kept so far
	for h := 0; h < L; h++ {
		i := t.S[h]*A + t.A[h]
		if c.pool {
			k, limit := c.seen[i], c.budget
			if k > 0 {
				limit = c.repeat
			}
			if k >= c.cap || sq+2*k+1 > limit {
				continue // only the first m visits of (s,a), within the norm budget, are kept
			}
			c.seen[i] = k + 1
			sq += 2*k + 1
		} else {
			if sq+1 > c.budget {
				break // the budget is spent: no later step is kept
			}
			sq++
			i += h * S * A
		}
		if c.sup != nil {
			x[(i/(S*A))*c.sup.entries()+int(c.sup.idx[(i%(S*A))*S+t.S[h+1]])]++
		} else {
			x[i*S+t.S[h+1]]++
		}
		if c.public {
			continue // public rewards: no reward block
		}
		if c.noClip {
			x[nt+i] += c.w * t.R[h]
			continue
		}
		x[nt+i] += c.w * min(max(t.R[h], 0), 1) // clipped to [0, 1], weighted by w
	}
	return nil
}

// PracticalCentral is the trusted curator of practical-jdp and practical-psrl-jdp: it sums the
// users of each batch and inserts the batch sums into a Gaussian continual counter; only the
// counter's prefix (the Release) leaves it.
type PracticalCentral struct {
	enc      *contribution
	b        agentkit.Batches
	maxUsers int
	cnt      counter.GaussianCounter
	batch    []float64
	rel      Release
	report   ledger.Report
}

// Ingest adds one user's episode.
func (c *PracticalCentral) Ingest(t *model.Trajectory) error {
	if c.b.Users >= c.maxUsers {
		return fmt.Errorf("practical curator: all %d users of the calibration (K−1) were ingested", c.maxUsers)
	}
	if err := c.enc.add(t, c.batch); err != nil {
		return err
	}
	if !c.b.Add() {
		return nil
	}
	sup := c.enc.sup
	switch {
	case c.cnt == nil && sup != nil: // exact counts inside the public support
		n := c.enc.ntDim()
		sup.scatter(c.rel.NT, c.batch[:n], true)
		for i, v := range c.batch[n:] {
			c.rel.R[i] += v / c.enc.w
		}
	case c.cnt == nil: // exact counts (noise-off twin): the batch is added to the release
		for i, v := range c.batch {
			if i < len(c.rel.NT) {
				c.rel.NT[i] += v
			} else {
				c.rel.R[i-len(c.rel.NT)] += v / c.enc.w
			}
		}
	default:
		if err := c.cnt.Insert(c.batch); err != nil {
			return fmt.Errorf("practical curator: %w", err)
		}
		p := c.cnt.Prefix()
		n := len(c.rel.NT)
		if sup != nil { // the counter holds the support's coordinates only: 0 elsewhere
			n = c.enc.ntDim()
			sup.scatter(c.rel.NT, p[:n], false)
		} else {
			c.rel.NT = p[:n:n]
		}
		for i, v := range p[n:] {
			c.rel.R[i] = v / c.enc.w
		}
		c.rel.Std = c.cnt.PrefixStd()
		c.rel.RStd = c.rel.Std / c.enc.w
	}
	clear(c.batch)
	c.rel.Users = c.b.Users
	return nil
}

// Release returns the current release (owned by the curator, valid until the next Ingest).
func (c *PracticalCentral) Release() *Release { return &c.rel }

// Report returns the ledger's privacy report.
func (c *PracticalCentral) Report() ledger.Report { return c.report }

// newRelease returns the empty release of the setting p (pooling, public rewards: no R) and
// the public support sup (nil: none).
func newRelease(S, A, H int, p PracticalPrivacy, sup *supportSet) Release {
	g := H
	if p.Pool {
		g = 1
	}
	r := Release{S: S, A: A, H: H, Pooled: p.Pool, PublicRewards: p.PublicRewards, support: sup, NT: make([]float64, g*S*A*S)}
	if !p.PublicRewards {
		r.R = make([]float64, g*S*A)
	}
	return r
}

// NewPracticalCentral returns the curator for K episodes (K−1 users are ever ingested). With
// p.Model == NonPrivate it releases exact counts. σ is fixed here from public parameters. A
// setting with a public support (p.PublicSupport) needs NewPractical, which is given the
// support.
func NewPracticalCentral(S, A, H, K int, p PracticalPrivacy, src noise.Source) (*PracticalCentral, error) {
	if p.PublicSupport {
		return nil, fmt.Errorf("practical curator: privacy.public_support needs the support (NewPractical with PracticalConfig.Support)")
	}
	return newPracticalCentral(S, A, H, K, p, nil, src)
}

func newPracticalCentral(S, A, H, K int, p PracticalPrivacy, sup *supportSet, src noise.Source) (*PracticalCentral, error) {
	if err := checkShape(S, A, H, K); err != nil {
		return nil, err
	}
	if err := checkPracticalSize(S, A, H, p.Pool); err != nil {
		return nil, err
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if p.Model == LDP {
		return nil, fmt.Errorf("practical curator: privacy model must be jdp or none, got ldp")
	}
	enc := newContribution(S, A, H, p, sup)
	c := &PracticalCentral{enc: enc, b: agentkit.NewBatches(p.BatchEvery), maxUsers: K - 1, batch: make([]float64, enc.dim()), rel: newRelease(S, A, H, p, sup)}
	led, err := p.ledger(p.Model)
	if err != nil {
		return nil, err
	}
	capacity := max(counter.Schedule{Every: p.BatchEvery}.Batches(K-1), 1)
	name := p.Counter
	if name == "" {
		name = DefaultCounter
	}
	c.cnt, c.report, err = agentkit.CuratorCounter(led, p.Model != NonPrivate, nil, ledger.Entry{Counter: name,
		Sensitivity: PracticalSensitivity(S, A, H, p), Releases: capacity, Dim: enc.dim(), Inputs: p.inputs(S, A, H)},
		counter.GaussianConfig{Dim: enc.dim(), Capacity: capacity}, src, 1)
	if err != nil {
		return nil, err
	}
	return c, nil
}

// GaussianReport is the message a practical-ldp user sends: her contribution vector plus
// Gaussian noise she drew herself. Its fields are unexported: only a GaussianRandomizer
// produces one.
type GaussianReport struct{ x []float64 }

func (*GaussianReport) message() {}

// Values returns a copy of the noisy vector (tests and audits).
func (r *GaussianReport) Values() []float64 { return append([]float64(nil), r.x...) }

// GaussianRandomizer is practical-ldp's user-side randomiser: it runs on the user's device
// with her own noise stream.
type GaussianRandomizer struct {
	enc   *contribution
	sigma float64
	own   RandomizerParams // the user's own calibration from public parameters (PracticalUserSide)
	src   noise.Source
	rep   GaussianReport
}

// Randomize returns the user's noisy report (the buffer is reused by the next call). Every
// coordinate, zero or not, gets noise.
func (z *GaussianRandomizer) Randomize(t *model.Trajectory) (*GaussianReport, error) {
	clear(z.rep.x)
	if err := z.enc.add(t, z.rep.x); err != nil {
		return nil, err
	}
	for i, v := range z.rep.x {
		z.rep.x[i] = z.src.AddGaussian(v, z.sigma)
	}
	return &z.rep, nil
}

// Encode implements PracticalClient.
func (z *GaussianRandomizer) Encode(t *model.Trajectory) (Message, error) { return z.Randomize(t) }

// PracticalLocalServer sums practical-ldp reports. It has no method or field through which a
// raw trajectory or a noise stream could reach it.
type PracticalLocalServer struct {
	b     agentkit.Batches
	sigma float64
	w     float64 // reward weight: the R block of the sum is divided by it
	cap   int
	sum   []float64
	rel   Release
}

// Receive adds one report; the release is refreshed after every M reports.
func (l *PracticalLocalServer) Receive(r *GaussianReport) error {
	done, err := l.b.AddReport(l.sum, r.x, l.cap, "local server")
	if err != nil || !done {
		return err
	}
	n := len(l.rel.NT)
	if l.rel.support != nil { // the reports hold the support's coordinates only: 0 elsewhere
		n = len(l.sum) - len(l.rel.R)
		l.rel.support.scatter(l.rel.NT, l.sum[:n], false)
	} else {
		copy(l.rel.NT, l.sum[:n])
	}
	for i, v := range l.sum[n:] {
		l.rel.R[i] = v / l.w
	}
	l.rel.Users = l.b.Users
	l.rel.Std = l.sigma * math.Sqrt(float64(l.b.Users))
	l.rel.RStd = l.rel.Std / l.w
	return nil
}

// Release returns the current release (valid until the next Receive).
func (l *PracticalLocalServer) Release() *Release { return &l.rel }

// newPracticalLocal returns the user-side randomiser and the server of practical-ldp.
func newPracticalLocal(S, A, H, K int, p PracticalPrivacy, sup *supportSet, src noise.Source) (*GaussianRandomizer, *PracticalLocalServer, ledger.Report, error) {
	enc := newContribution(S, A, H, p, sup)
	// One Gaussian report per user (factor 1, one release), rounded to the grid of σ with a
	// Secure source: the same calibration a user computes herself (userside.go).
	sigma, rep, err := practicalLDPCalibration(S, A, H, p, sup, src.Secure())
	if err != nil {
		return nil, nil, rep, err
	}
	own, err := practicalUserSide(S, A, H, p, sup)
	if err != nil {
		return nil, nil, rep, err
	}
	z := &GaussianRandomizer{enc: enc, sigma: sigma, own: own, src: src, rep: GaussianReport{x: make([]float64, enc.dim())}}
	srv := &PracticalLocalServer{b: agentkit.NewBatches(p.BatchEvery), sigma: sigma, w: enc.w, cap: K - 1, sum: make([]float64, enc.dim()), rel: newRelease(S, A, H, p, sup)}
	return z, srv, rep, nil
}

// PracticalClient runs on the user's side and encodes her episode into her message.
type PracticalClient interface {
	Encode(t *model.Trajectory) (Message, error)
}

// PracticalServer is the learner of a practical agent.
type PracticalServer interface {
	// Policy computes π_k from the current release (owned by the server, valid until the
	// next call).
	Policy() (*model.Policy, error)
	// Receive ingests one user's message.
	Receive(m Message) error
	// Release returns the current release (what the planner reads).
	Release() *Release
}

// ReleasePlanner turns a Release into the policy of the next user; it reads user data only
// through the release.
type ReleasePlanner interface {
	Plan(r *Release, pol *model.Policy) error
}

type rawPracticalClient struct{}

func (rawPracticalClient) Encode(t *model.Trajectory) (Message, error) {
	return RawTrajectory{T: t}, nil
}

// practicalCuratorServer is the server of practical JDP agents and their noise-off twins: its
// trusted side is a PracticalCentral (with Model NonPrivate for the twins: exact counts, same
// pooling, clipping, cap and schedule).
type practicalCuratorServer struct {
	trustedServer[*Release, ReleasePlanner]
}

func (c *practicalCuratorServer) Release() *Release { return c.cur.Release() }

// practicalLDPServer accepts only *GaussianReport messages.
type practicalLDPServer struct {
	localServerOf[*Release, *GaussianReport, *PracticalLocalServer, ReleasePlanner]
}

func (l *practicalLDPServer) Release() *Release { return l.srv.Release() }

// PracticalConfig configures a practical agent.
type PracticalConfig struct {
	// Planner is "ucb" (optimistic value iteration with the noise-calibrated bonus) or
	// "psrl" (posterior sampling with a noise-aware posterior).
	Planner string `json:"planner"`
	// Privacy is the privacy setting.
	Privacy PracticalPrivacy `json:"privacy"`
	// Bonus is the UCB planner's bonus (ignored by psrl).
	Bonus NoiseBonus `json:"bonus"`
	// Beta is the failure probability used in ι and the theory z (default 0.1).
	Beta float64 `json:"beta"`
	// Terminal and TerminalReward are the environment's public terminal structure
	// (model.MDP.Terminal and TerminalReward; nil and 0: no terminal states), which the
	// runners copy from the model: a user's contribution counts the steps she played, the
	// planner values terminal states exactly (terminal.go). Not part of the configuration's
	// JSON: they come with the environment.
	Terminal       []bool  `json:"-"`
	TerminalReward float64 `json:"-"`
	// Rewards and EntryReward are the environment's public reward function when
	// Privacy.PublicRewards is set (model.MDP.R, the mean rewards per step without entry
	// rewards, and model.MDP.EntryReward, nil for none), which the runners copy from a model
	// whose rewards are public: the planner uses them exactly and the contribution has no
	// reward block (public.go). Both nil otherwise. Not part of the configuration's JSON.
	Rewards     [][]float64 `json:"-"`
	EntryReward []float64   `json:"-"`
	// Support is the environment's public transition support when Privacy.PublicSupport is
	// set: row s·A+a lists the next states of (s, a), increasing (SupportOf of the model, which
	// the runners pass for a model whose support is public); rows of terminal states are
	// ignored. The contribution then has coordinates only inside it and the planners estimate
	// P̂ = 0 outside it (support.go). Nil otherwise. Not part of the configuration's JSON.
	Support [][]int `json:"-"`
}

// PracticalAgent is a configured practical agent split along its trust boundary.
type PracticalAgent struct {
	Client  PracticalClient
	Server  PracticalServer
	Privacy ledger.Report
	// Bonus is the resolved bonus (z and ι filled in).
	Bonus NoiseBonus
	term  terminal
	pub   *rewardTable
	sup   *supportSet
}

// checkPracticalSize refuses, before anything is allocated, an (S, A, H) model whose tables a
// practical agent cannot hold: pooled (pool), its vectors have S·A·(S+1) entries (S·A·S ≤
// model.MaxEntries: model.CheckSize with H = 1) and its per-step tables H·S·A
// (model.CheckSteps); per step, H·S·A·(S+1) (H·S·A·S ≤ model.MaxEntries). The error names the
// agent and the product.
func checkPracticalSize(S, A, H int, pool bool) error {
	if !pool {
		return model.CheckSize("practical agent (statistics per step): ", S, A, H)
	}
	if err := model.CheckSize("practical agent (pooled statistics): ", S, A, 1); err != nil {
		return err
	}
	return model.CheckSteps("practical agent (pooled statistics): ", S, A, H)
}

// PracticalStreams are the agent's random streams.
type PracticalStreams struct {
	// Tie breaks ties; Posterior draws the posterior samples of psrl. Both required.
	Tie, Posterior *rand.Rand
	// Noise is the privacy noise source (JDP counter or the LDP users' randomiser). Nil means
	// the deployment default: a crypto-seeded noise.Secure source.
	Noise noise.Source
}

// NewPractical builds a practical agent for an (S, A, H) MDP and K episodes. All noise levels
// are computed here from public parameters only (the terminal states, a public reward table
// and a public support are public too). A model
// whose tables the agent cannot hold (checkPracticalSize) is refused before anything is
// allocated.
func NewPractical(S, A, H, K int, cfg PracticalConfig, st PracticalStreams) (*PracticalAgent, error) {
	if err := checkShape(S, A, H, K); err != nil {
		return nil, err
	}
	if err := checkPracticalSize(S, A, H, cfg.Privacy.Pool); err != nil {
		return nil, err
	}
	term, err := newTerminal("agent.terminal", S, cfg.Terminal, cfg.TerminalReward)
	if err != nil {
		return nil, err
	}
	if cfg.Beta == 0 {
		cfg.Beta = 0.1
	}
	if !(cfg.Beta > 0 && cfg.Beta < 1) {
		return nil, fmt.Errorf("beta: must be in (0,1), got %g", cfg.Beta)
	}
	p := cfg.Privacy
	if err := p.Validate(); err != nil {
		return nil, err
	}
	pub, err := newRewardTable("agent", S, A, H, p.PublicRewards, cfg.Rewards, cfg.EntryReward)
	if err != nil {
		return nil, err
	}
	sup, err := newSupport("agent", S, A, p.PublicSupport, cfg.Support, term)
	if err != nil {
		return nil, err
	}
	if st.Tie == nil || st.Posterior == nil {
		return nil, fmt.Errorf("agent: tie-breaking and posterior streams are required")
	}
	if st.Noise == nil && p.Model != NonPrivate {
		s, err := noise.NewSecure()
		if err != nil {
			return nil, err
		}
		st.Noise = s
	}
	var planner ReleasePlanner
	var bonus NoiseBonus
	switch cfg.Planner {
	case "ucb":
		bonus, err = cfg.Bonus.resolve(S, A, H, K, p, cfg.Beta)
		if err != nil {
			return nil, err
		}
		planner = newNoiseUCB(S, A, H, p.Pool, term, pub, sup, bonus, st.Tie)
	case "psrl":
		planner = newNoisePSRL(S, A, H, p.Pool, term, pub, sup, st.Posterior, st.Tie)
	default:
		return nil, fmt.Errorf("agent.planner: unknown planner %q (allowed: ucb, psrl)", cfg.Planner)
	}
	ag := &PracticalAgent{Bonus: bonus, term: term, pub: pub, sup: sup}
	pol := model.NewDeterministic(S, H)
	switch p.Model {
	case NonPrivate, JDP:
		c, err := newPracticalCentral(S, A, H, K, p, sup, st.Noise)
		if err != nil {
			return nil, err
		}
		c.enc.term = term
		ag.Client, ag.Server, ag.Privacy = rawPracticalClient{}, &practicalCuratorServer{trustedServer[*Release, ReleasePlanner]{cur: c, planner: planner, pol: pol}}, c.Report()
	case LDP:
		z, srv, rep, err := newPracticalLocal(S, A, H, K, p, sup, st.Noise)
		if err != nil {
			return nil, err
		}
		z.enc.term = term
		ag.Client, ag.Server, ag.Privacy = z, &practicalLDPServer{localServerOf[*Release, *GaussianReport, *PracticalLocalServer, ReleasePlanner]{srv: srv, planner: planner, pol: pol}}, rep
	}
	return ag, nil
}
