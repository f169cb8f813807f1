package linmdp

import (
	"cmp"
	"fmt"
	"github.com/dprl/dprl/agents/internal/agentkit"
	"github.com/dprl/dprl/internal/smallmat"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	model "github.com/dprl/dprl/model/linmdp"
	"github.com/dprl/dprl/privacy/counter"
	"github.com/dprl/dprl/privacy/ledger"
	"github.com/dprl/dprl/privacy/noise"
	"github.com/dprl/dprl/rng"
)

// TieBreak is the rule for choosing among actions with equal truncated Q (spec §2.3).
type TieBreak int

const (
	// TieBonus breaks ties by (1) larger truncated Q, (2) larger bonus, (3) larger
	// untruncated score, (4) lower index. Default.
	TieBonus TieBreak = iota
	// TieUntruncated skips key (2).
	TieUntruncated
	// TieLowestIndex uses only (1) and (4).
	TieLowestIndex
	// TieSeededRandom picks uniformly among the maximisers of the truncated Q, with the
	// agent's tie stream, once per (policy, h, s).
	TieSeededRandom
)

// tieBreakNames returns the rules' names, indexed by TieBreak.
func tieBreakNames() []string {
	return []string{"bonus", "untruncated", "lowest-index", "seeded-random"}
}

// String returns the rule's name.
func (t TieBreak) String() string { return agentkit.Name(t, "TieBreak", tieBreakNames()...) }

// ParseTieBreak parses a rule name.
func ParseTieBreak(s string) (TieBreak, error) {
	names := tieBreakNames()
	if t := slices.Index(names, s); t >= 0 {
		return TieBreak(t), nil
	}
	return 0, fmt.Errorf("tie-break must be one of %s, got %q", strings.Join(names, ", "), s)
}

// Update records one policy update.
type Update struct {
	// Episode is the episode k at whose start (Ngo, LSVI-UCB) or after whose end (Luyo) the
	// update happened.
	Episode int `json:"episode"`
	// TriggerH is the step h (1-based) whose noisy log-det test fired (Ngo only; 0 otherwise).
	TriggerH int `json:"trigger_h,omitempty"`
	// LogDetRatio is ln det(Λ̃_h) − ln det(Λpol_h) for the trigger (Ngo only).
	LogDetRatio float64 `json:"logdet_ratio,omitempty"`
	// ExactWouldTrigger is the non-private diagnostic of spec §6.6: whether the exact Gram
	// matrix (plus the same shift) would also have passed the test at TriggerH. It never
	// feeds back into decisions.
	ExactWouldTrigger bool `json:"exact_would_trigger,omitempty"`
}

// Info describes a run's constants and counters; it is recorded with every result.
type Info struct {
	Agent    string  `json:"agent"`
	NoiseOff bool    `json:"noise_off"`
	CBeta    float64 `json:"c_beta"`
	Beta     float64 `json:"beta"`
	// Regulariser is the ridge term of the matrices the policy uses before any data: λ for
	// LSVI-UCB and the NoiseOff twins, 2·c_shift·λ̃_Λ for Ngo, λ + c_K + Υ for Luyo (after
	// its first update). The bonus of an unexplored unit feature is β/√Regulariser.
	Regulariser float64        `json:"regulariser"`
	TieBreak    string         `json:"tie_break"`
	Epsilon     float64        `json:"epsilon,omitempty"`
	Delta       float64        `json:"delta,omitempty"`
	EffectiveEp float64        `json:"effective_epsilon,omitempty"`
	Private     bool           `json:"private"`
	Note        string         `json:"note,omitempty"`
	Constants   map[string]any `json:"constants,omitempty"`
	// Ledger is the guarantee as the privacy ledger composes it from the mechanisms a papers'
	// private agent registers (papersMechanisms.ledgerReport): dprl's one privacy report type,
	// which the run directory's manifest and the service print; dprl's practical agent's is
	// its ledger report (Practical.Report). EffectiveEp is its ε. Zero for non-private agents
	// and noise-off twins.
	Ledger  ledger.Report `json:"-"`
	Repairs int           `json:"psd_repairs"`
	// TieFraction is the fraction of (h, s) whose truncated Q ties at the maximum under the
	// final policy; the tie-break decided those actions.
	TieFraction float64 `json:"tie_fraction"`
	CapHit      int     `json:"cap_hit_episode,omitempty"`
}

// Agent is a learner interacting with a finite-state linear MDP episode by episode.
type Agent interface {
	// BeginEpisode starts episode k (1-based); Ngo and LSVI-UCB may update the policy here.
	BeginEpisode(k int)
	// Act returns the action at step h (0-based) in state s under the current policy.
	Act(h, s int) int
	// Observe records the transition of step h. It is the privacy boundary of the user's
	// data: indices out of range give an error (nothing is recorded) and the reward is
	// clipped to [0, 1] (observeStep).
	Observe(h, s, a int, r float64, s2 int) error
	// EndEpisode ends the current episode; Luyo's agents may update the policy here.
	EndEpisode()
	// Policy returns the current greedy policy pi[h][s] (the same tie-break as Act). The
	// slices must not be modified; they stay valid until the next policy change.
	Policy() [][]int
	// PolicyVersion increases with each policy change.
	PolicyVersion() int
	// Updates returns the policy updates so far.
	Updates() []Update
	// Info returns the run's constants and counters.
	Info() Info
}

// Common holds the options shared by every agent.
type Common struct {
	// K is the number of episodes (known in advance; sets constants and tree sizes).
	K int
	// P is the failure probability p (default 0.05).
	P float64
	// CBeta multiplies the theory β (default 1). Post-processing: it does not affect privacy.
	CBeta float64
	// Tie is the tie-break rule (default TieBonus).
	Tie TieBreak
	// Lambda is the ridge parameter of LSVI-UCB and of the NoiseOff twins (default 1).
	Lambda float64
	// Seed, if non-nil, derives the agent's noise and tie streams (experiments, tests). If nil
	// the agent draws noise from noise.Secure.
	Seed *rng.Seed
	// Noise, if non-nil, returns the noise source of the named mechanism instead of Seed (a
	// service's keyed secure noise, engine.Streams.SecureNoise); a nil source means a
	// crypto-seeded noise.Secure. The tie stream still derives from Seed.
	Noise func(label string) noise.Source `json:"-"`
}

func (c *Common) defaults() {
	c.P = cmp.Or(c.P, 0.05)
	c.CBeta = cmp.Or(c.CBeta, 1)
	c.Lambda = cmp.Or(c.Lambda, 1)
}

func (c *Common) validate(env *model.MDP) error {
	if env == nil {
		return fmt.Errorf("environment is nil")
	}
	if c.K < 1 || c.K > 1<<40 {
		return fmt.Errorf("episodes K must be in [1, 2^40], got %d", c.K)
	}
	if !(c.P > 0 && c.P < 1) {
		return fmt.Errorf("failure probability p must be in (0, 1), got %g", c.P)
	}
	if !(c.CBeta > 0) || math.IsInf(c.CBeta, 0) {
		return fmt.Errorf("c_beta must be finite and > 0, got %g", c.CBeta)
	}
	if !(c.Lambda > 0) || math.IsInf(c.Lambda, 0) {
		return fmt.Errorf("lambda must be finite and > 0, got %g", c.Lambda)
	}
	if c.Tie < TieBonus || c.Tie > TieSeededRandom {
		return fmt.Errorf("tie-break must be one of bonus, untruncated, lowest-index, seeded-random, got %d", int(c.Tie))
	}
	return nil
}

// source returns the noise source for the named mechanism: Noise's, seeded from Seed, or secure.
func (c *Common) source(label string) (noise.Source, error) {
	if c.Noise != nil {
		if s := c.Noise(label); s != nil {
			return s, nil
		}
		return noise.NewSecure()
	}
	if c.Seed != nil {
		return noise.NewSeeded(c.Seed.Child(label).Rand()), nil
	}
	return noise.NewSecure()
}

// gramTrees returns the binary-tree counters of the H Gram matrices of a private agent (the
// packed upper triangle of d×d, capacity insertions, Gaussian node noise σ, divided by the
// broken variants' noiseDiv when it is > 0) and their noise sources, gram/<h>.
func (c *Common) gramTrees(H, d, capacity int, sigma, noiseDiv float64) ([]*counter.Tree, []noise.Source, error) {
	div := 1.0
	if noiseDiv > 0 {
		div = noiseDiv
	}
	trees, srcs := make([]*counter.Tree, H), make([]noise.Source, H)
	for h := 0; h < H; h++ {
		var err error
		if srcs[h], err = c.source(fmt.Sprintf("gram/%d", h)); err != nil {
			return nil, nil, err
		}
		if trees[h], err = counter.NewTree(counter.TreeConfig{Dim: d * (d + 1) / 2, Capacity: capacity,
			Node: noise.GaussianNoise(sigma / div)}, srcs[h]); err != nil {
			return nil, nil, err
		}
	}
	return trees, srcs, nil
}

// tieRand returns the tie stream.
func (c *Common) tieRand() *rand.Rand {
	if c.Seed != nil {
		return c.Seed.Child("tie").Rand()
	}
	return rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
}

// nonPrivateBeta is LSVI-UCB's β = d·H·√ι, ι = ln(2dKH/p) ([J] Thm 3.1; spec §2.2), before
// c_beta.
func nonPrivateBeta(d, H, K int, p float64) float64 {
	return float64(d) * float64(H) * math.Sqrt(math.Log(2*float64(d)*float64(K)*float64(H)/p))
}

// stats is the curator's raw aggregated data (spec §7): per step h, the exact Gram sum
// Σφφᵀ, b_h = Σ φ r and G_h[s] = Σ_{i: s_{h+1}^i = s} φ_h^i. Only mechanisms read it.
type stats struct {
	d, n  int
	gram  [][]float64 // [h] d·d
	b     [][]float64 // [h] d
	gnext [][]float64 // [h] n·d
}

func newStats(H, n, d int) *stats {
	st := &stats{d: d, n: n, gram: make([][]float64, H), b: make([][]float64, H), gnext: make([][]float64, H)}
	for h := 0; h < H; h++ {
		st.gram[h] = make([]float64, d*d)
		st.b[h] = make([]float64, d)
		st.gnext[h] = make([]float64, n*d)
	}
	return st
}

// observe checks one transition against env's shape (checkStep), adds it to st with the
// reward clipped to [0, 1] and returns its feature φ(s, act).
func (st *stats) observe(env *model.MDP, h, s, act int, r float64, s2 int) ([]float64, error) {
	if err := checkStep(env, h, s, act, s2); err != nil {
		return nil, err
	}
	phi := env.Phi[s][act]
	st.add(h, phi, clipReward(r), s2)
	return phi, nil
}

func (st *stats) add(h int, phi []float64, r float64, s2 int) {
	d := st.d
	g := st.gram[h]
	for i, x := range phi {
		if x == 0 {
			continue
		}
		addScaled(g[i*d:i*d+d], x, phi)
	}
	b := st.b[h]
	gn := st.gnext[h][s2*d : s2*d+d]
	for i, x := range phi {
		b[i] += x * r
		gn[i] += x
	}
}

// target writes y_h = b_h + Σ_s G_h[s]·V(s) (aggregated regression target; V = V_{h+1},
// nil for the last step).
func (st *stats) target(h int, v []float64, y []float64) {
	copy(y, st.b[h])
	if v == nil {
		return
	}
	d := st.d
	gn := st.gnext[h]
	for s, x := range v {
		if x == 0 {
			continue
		}
		addScaled(y, x, gn[s*d:s*d+d])
	}
}

// Release is one step's published statistics: the symmetric matrix Λ̃ (already PSD-guarded)
// together with its Cholesky factor, and the regression vector ỹ. The planner reads only
// Releases.
type Release struct {
	// Chol is the lower Cholesky factor of the released matrix Λ̃ (d·d row-major).
	Chol []float64
	// Y is the released regression vector ỹ (nil means 0).
	Y []float64
}

// planner turns Releases into Q-functions and a greedy policy (post-processing only).
type planner struct {
	env  *model.MDP
	H, d int
	beta float64
	// noiseW, if > 0, adds noiseW·‖Λ̃⁻¹φ‖₂ to the bonus (the practical agents' width for the
	// noise of the released statistics; practical.go). 0 for the papers' agents.
	noiseW float64
	tie    TieBreak
	tieR   *rand.Rand
	act    [][]int     // [h][s]
	val    [][]float64 // [h][s] V_h
	w      []float64
	tmp    []float64
	ties   int   // states whose truncated Q tied at the maximum, summed over all planSteps
	tiesH  []int // per h: tied states in the latest planStep of h
	// Distinct feature vectors: fid[s][a] indexes uniq; the score and bonus are computed once
	// per distinct vector (E2 has 3·50 pairs but 3m + mM distinct features at most).
	uniq       [][]float64
	fid        [][]int
	sc, bonusU []float64
}

func newPlanner(env *model.MDP, beta float64, tie TieBreak, tieR *rand.Rand) *planner {
	p := &planner{env: env, H: env.H, d: env.D, beta: beta, tie: tie, tieR: tieR,
		w: make([]float64, env.D), tmp: make([]float64, env.D)}
	seen := map[string]int{}
	p.fid = make([][]int, env.N)
	for s, row := range env.Phi {
		p.fid[s] = make([]int, len(row))
		for a, f := range row {
			key := fmt.Sprint(f)
			id, ok := seen[key]
			if !ok {
				id = len(p.uniq)
				seen[key] = id
				p.uniq = append(p.uniq, f)
			}
			p.fid[s][a] = id
		}
	}
	p.sc, p.bonusU = make([]float64, len(p.uniq)), make([]float64, len(p.uniq))
	p.act = make([][]int, env.H)
	p.val = make([][]float64, env.H)
	p.tiesH = make([]int, env.H)
	for h := range p.act {
		p.act[h] = make([]int, env.N)
		p.val[h] = make([]float64, env.N)
	}
	return p
}

// checkStep validates one observed transition against the environment's public shape: an
// index out of range would panic or land in another state's statistic.
func checkStep(env *model.MDP, h, s, a, s2 int) error {
	switch {
	case h < 0 || h >= env.H:
		return fmt.Errorf("linmdp: observed step h = %d must be in [0, %d]", h, env.H-1)
	case s < 0 || s >= env.N:
		return fmt.Errorf("linmdp: observed state must be in [0, %d]", env.N-1)
	case a < 0 || a >= env.A:
		return fmt.Errorf("linmdp: observed action must be in [0, %d]", env.A-1)
	case s2 < 0 || s2 >= env.N:
		return fmt.Errorf("linmdp: observed next state must be in [0, %d]", env.N-1)
	}
	return nil
}

// clipReward maps an observed reward into [0, 1], the range every sensitivity bound assumes
// (Δ_y = 2H+2 needs r ∈ [0, 1]); NaN becomes 0. Clipping rather than rejecting keeps the
// boundary total: no error path depends on the reward's value.
func clipReward(r float64) float64 {
	if !(r > 0) {
		return 0
	}
	return math.Min(r, 1)
}

// clip is Π_[0,H] (pitfall P1).
func clip(x, H float64) float64 { return math.Min(math.Max(x, 0), H) }

// planStep computes Q_h(s,a) = clip(φᵀw + β‖φ‖_{Λ̃^{-1}}) with w = Λ̃^{-1}ỹ from the release,
// and the greedy action and value for every state ([N] eqs. (3)–(5), Alg. 1 lines 12–14).
func (p *planner) planStep(h int, rel Release) {
	d := p.d
	if rel.Y != nil {
		smallmat.Solve(rel.Chol, d, rel.Y, p.w)
	} else {
		clear(p.w)
	}
	H := float64(p.H)
	for id, f := range p.uniq {
		sc := 0.0
		for i, x := range f {
			sc += x * p.w[i]
		}
		p.sc[id] = sc
		p.bonusU[id] = p.beta * math.Sqrt(smallmat.InvQuad(rel.Chol, d, f, p.tmp))
		if p.noiseW > 0 {
			smallmat.Solve(rel.Chol, d, f, p.tmp)
			n := 0.0
			for _, x := range p.tmp[:d] {
				n += x * x
			}
			p.bonusU[id] += p.noiseW * math.Sqrt(n)
		}
	}
	p.tiesH[h] = 0
	for s := 0; s < p.env.N; s++ {
		bestQ, bestB, bestU, ba := math.Inf(-1), 0.0, 0.0, 0
		nt := 0
		for a, id := range p.fid[s] {
			bonus := p.bonusU[id]
			u := p.sc[id] + bonus
			q := clip(u, H)
			better := false
			switch {
			case q > bestQ:
				better, nt = true, 1
			case q == bestQ:
				nt++
				switch p.tie {
				case TieBonus:
					better = bonus > bestB || (bonus == bestB && u > bestU)
				case TieUntruncated:
					better = u > bestU
				case TieSeededRandom:
					// Reservoir sampling among the maximisers.
					better = p.tieR.IntN(nt) == 0
				}
			}
			if better {
				bestQ, bestB, bestU, ba = q, bonus, u, a
			}
		}
		if nt > 1 {
			p.ties++
			p.tiesH[h]++
		}
		p.act[h][s], p.val[h][s] = ba, bestQ
	}
}

// tieFraction is the fraction of (h, s) whose truncated Q had a tie at the maximum in the
// current policy (spec §6.6; with theory β nearly every state ties at H).
func (p *planner) tieFraction() float64 {
	t := 0
	for _, x := range p.tiesH {
		t += x
	}
	return float64(t) / float64(p.H*p.env.N)
}

// valueNext returns V_{h+1} for use in step h's target (nil at the last step).
func (p *planner) valueNext(h int) []float64 {
	if h+1 >= p.H {
		return nil
	}
	return p.val[h+1]
}
