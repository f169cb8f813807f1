package linmdp

import (
	"fmt"
	"math"

	model "github.com/dprl/dprl/model/linmdp"
	"github.com/dprl/dprl/privacy/counter"
	"github.com/dprl/dprl/privacy/noise"
)

// LuyoConfig configures Luyo et al.'s Algorithm 2 (batched) and its non-batched variant.
type LuyoConfig struct {
	Common
	// Epsilon and Delta are the (ε,δ)-JDP target (the paper's proof covers ε, δ ∈ (0,1)).
	Epsilon, Delta float64
	// Batches is B (0 = App. E.1's formula). B = K gives the non-batched variant (Remarks 3, 7).
	Batches int
	// NonBatched sets B = K.
	NonBatched bool
	// Calibration is LuyoPaper (App. E.1, default) or LuyoZCDP (spec §4.6, non-paper).
	Calibration LuyoCalibration
	// CKMult multiplies c_K = d·Υ (default 1; post-processing, spec P4).
	CKMult float64
	// NoiseOff removes all noise and uses λ = Lambda, c_K = Υ = 0 and β =
	// c_beta·dH√ln(2dKH/p), keeping the schedule: LSVI-UCB-Batch.
	NoiseOff bool

	broken luyoBroken
}

type luyoBroken struct {
	noiseDiv   float64
	redraw     bool
	rawPlanner bool
	record     bool // keep a log of the released (Λ̃, ũ) (audit targets)
}

// Luyo is the privacy-preserving batched LSVI-UCB of [L] Algorithm 2 with the App. E.1
// constants and c_K = d·Υ (spec §4.1, pitfall L1):
//
//	for k = 1..K:
//	  play a = argmax clip(w̃_{b,h}ᵀφ + β‖φ‖_{Λ̃_{b,h}^{-1}});  Λ_h ← Λ_h + φφᵀ
//	  if k = k_{b+1} − 1 (end of batch b) and b+1 ≤ B−1:
//	    for h = H..1:
//	      Λ̃_h = Λ_h + (c_K + Υ)I + H_h^{b+1}       (tree over batch index)
//	      ũ_h = Σ_{i≤k} φ(r + V_{h+1}) + η_h^{b+1};  w̃_h = Λ̃_h^{-1} ũ_h
//	    b ← b + 1                                  (implicit in the paper, L3)
//
// Batch i starts at k_i = i·⌈K/B⌉ + 1; updates whose next batch would start after K are
// skipped (L3). With B = K it is the non-batched variant.
type Luyo struct {
	env  *model.MDP
	cfg  LuyoConfig
	cons LuyoConstants
	d, H int

	st      *stats
	pl      *planner
	trees   []*counter.Tree
	gsrc    []noise.Source
	usrc    noise.Source
	leaf    [][]float64 // packed Gram sum of the current batch, per h
	packed  []float64
	lambda  float64
	reg     float64 // c_K + Υ
	floor   float64
	beta    float64
	batchS  int
	b       int
	k       int
	m       []float64
	chol    [][]float64
	y       []float64
	scratch []float64

	version, repairs int
	updates          []Update
	log              [][]float64 // released Λ̃ and ũ (only with broken.record)
}

// NewLuyo returns Algorithm 2 (or the non-batched variant) with every constant, σ, B and the
// schedule fixed now from public inputs.
func NewLuyo(env *model.MDP, cfg LuyoConfig) (*Luyo, error) {
	cfg.defaults()
	if cfg.CKMult == 0 {
		cfg.CKMult = 1
	}
	if err := cfg.validate(env); err != nil {
		return nil, fmt.Errorf("luyo: %w", err)
	}
	if !(cfg.CKMult > 0) || math.IsInf(cfg.CKMult, 0) {
		return nil, fmt.Errorf("luyo: c_K multiplier must be finite and > 0, got %g", cfg.CKMult)
	}
	if cfg.Batches < 0 || cfg.Batches > cfg.K {
		return nil, fmt.Errorf("luyo: batches B must be in [0, K=%d] (0 = E.1 formula), got %d", cfg.K, cfg.Batches)
	}
	if cfg.NonBatched {
		cfg.Batches = cfg.K
	}
	d, H := env.D, env.H
	a := &Luyo{env: env, cfg: cfg, d: d, H: H, st: newStats(H, env.N, d)}
	if cfg.NoiseOff {
		a.lambda = cfg.Lambda
		a.beta = cfg.CBeta * nonPrivateBeta(d, H, cfg.K, cfg.P)
		B := cfg.Batches
		if B == 0 {
			eps := cfg.Epsilon
			if !(eps > 0) {
				eps = 1
			}
			B = int(math.Ceil(math.Pow(float64(cfg.K)*eps, 0.4) / (math.Pow(float64(d), 0.6) * math.Pow(float64(H), 0.2))))
			B = min(max(B, 1), cfg.K)
		}
		a.cons = LuyoConstants{K: cfg.K, H: H, D: d, B: B, Lambda: a.lambda, P: cfg.P}
	} else {
		cons, err := NewLuyoConstants(cfg.K, H, d, cfg.Epsilon, cfg.Delta, cfg.P, cfg.Batches, cfg.Calibration)
		if err != nil {
			return nil, fmt.Errorf("luyo: %w", err)
		}
		a.cons = cons
		a.lambda = cons.Lambda
		a.reg = cfg.CKMult*cons.CK + cons.Upsilon
		a.floor = cons.Lambda + cfg.CKMult*cons.CK
		a.beta = cfg.CBeta * cons.Beta
		if a.trees, a.gsrc, err = cfg.gramTrees(H, d, max(cons.B-1, 1), cons.SigmaLam, cfg.broken.noiseDiv); err != nil {
			return nil, fmt.Errorf("luyo: %w", err)
		}
		if a.usrc, err = cfg.source("u"); err != nil {
			return nil, fmt.Errorf("luyo: %w", err)
		}
	}
	a.batchS = (cfg.K + a.cons.B - 1) / a.cons.B
	a.pl = newPlanner(env, a.beta, cfg.Tie, cfg.tieRand())
	a.leaf = make([][]float64, H)
	a.chol = make([][]float64, H)
	for h := range a.leaf {
		a.leaf[h] = make([]float64, d*(d+1)/2)
		a.chol[h] = make([]float64, d*d)
		for i := 0; i < d; i++ {
			a.chol[h][i*d+i] = math.Sqrt(a.lambda)
		}
	}
	a.packed = make([]float64, d*(d+1)/2)
	a.m, a.y, a.scratch = make([]float64, d*d), make([]float64, d), make([]float64, d*d)
	// Policy 0: Λ̃_{0,h} = λI, w̃_{0,h} = 0 (no shift, no noise; L5).
	for h := H - 1; h >= 0; h-- {
		a.pl.planStep(h, Release{Chol: a.chol[h]})
	}
	return a, nil
}

// Constants returns the constants of spec §4.1 (only K, H, D, B, λ for NoiseOff).
func (a *Luyo) Constants() LuyoConstants { return a.cons }

// BeginEpisode implements Agent.
func (a *Luyo) BeginEpisode(k int) { a.k = k }

// Act implements Agent.
func (a *Luyo) Act(h, s int) int { return a.pl.act[h][s] }

// Observe implements Agent.
func (a *Luyo) Observe(h, s, act int, r float64, s2 int) error {
	phi, err := a.st.observe(a.env, h, s, act, r, s2)
	if err != nil {
		return err
	}
	if a.trees != nil {
		l := a.leaf[h]
		k := 0
		for i, x := range phi {
			for _, y := range phi[i:] {
				l[k] += x * y
				k++
			}
		}
	}
	return nil
}

// EndEpisode performs the batch-end update of Alg. 2 when episode k is the last of batch b.
func (a *Luyo) EndEpisode() {
	next := (a.b+1)*a.batchS + 1 // k_{b+1}
	if a.b+1 > a.cons.B-1 || next > a.cfg.K || a.k != next-1 {
		return
	}
	d := a.d
	// Release the trees first (leaf b+1 = data of batch b).
	for h := 0; h < a.H; h++ {
		m := a.m
		copy(m, a.st.gram[h])
		if a.trees != nil {
			if a.cfg.broken.redraw {
				addRedrawnNoise(m, d, a.gsrc[h], a.cons.SigmaLam, a.b+1, a.cfg.broken.noiseDiv)
			} else {
				_ = a.trees[h].Insert(a.leaf[h]) // at most B−1 insertions: cannot fail
				clear(a.leaf[h])
				// prefix = exact batch sums (= Gram so far) + noise: use it instead of the exact one.
				clear(m)
				unpackAdd(a.trees[h].Prefix(), d, m)
			}
		}
		for i := 0; i < d; i++ {
			m[i*d+i] += a.lambda + a.reg
		}
		symmetrize(m, d)
		if guardPD(m, d, a.floor, a.chol[h], a.scratch) { // P3: floor λ + c_K
			a.repairs++
		}
		if a.cfg.broken.record {
			a.log = append(a.log, append([]float64(nil), m...))
		}
	}
	for h := a.H - 1; h >= 0; h-- {
		a.st.target(h, a.pl.valueNext(h), a.y)
		raw := append([]float64(nil), a.y...)
		if a.trees != nil {
			su := a.cons.SigmaU
			if a.cfg.broken.noiseDiv > 0 {
				su /= a.cfg.broken.noiseDiv
			}
			for i := range a.y {
				a.y[i] = a.usrc.AddGaussian(a.y[i], su)
			}
		}
		if a.cfg.broken.record {
			a.log = append(a.log, append([]float64(nil), a.y...))
		}
		if a.cfg.broken.rawPlanner {
			copy(a.y, raw) // BROKEN: planner reads the raw statistic.
		}
		a.pl.planStep(h, Release{Chol: a.chol[h], Y: a.y})
	}
	a.b++
	a.version++
	a.updates = append(a.updates, Update{Episode: a.k})
}

// Policy implements Agent.
func (a *Luyo) Policy() [][]int { return a.pl.act }

// PolicyVersion implements Agent.
func (a *Luyo) PolicyVersion() int { return a.version }

// Updates implements Agent.
func (a *Luyo) Updates() []Update { return a.updates }

// Info implements Agent.
func (a *Luyo) Info() Info {
	name := "luyo-batched"
	if a.cons.B == a.cfg.K {
		name = "luyo-nonbatched"
	}
	in := Info{Agent: name, NoiseOff: a.cfg.NoiseOff, CBeta: a.cfg.CBeta, Beta: a.beta, Regulariser: a.lambda + a.reg,
		TieBreak: a.cfg.Tie.String(), Repairs: a.repairs, TieFraction: a.pl.tieFraction()}
	c := a.cons
	if a.cfg.NoiseOff {
		in.Agent = name + "-twin"
		in.Note = "noise off: not private"
		in.Constants = map[string]any{"lambda": a.lambda, "B": c.B}
		return in
	}
	in.Private = true
	in.Epsilon, in.Delta = a.cfg.Epsilon, a.cfg.Delta
	rho := c.RhoCertified
	div := 1.0
	if a.cfg.broken.noiseDiv > 0 {
		div = a.cfg.broken.noiseDiv
		rho *= div * div
	}
	// The ledger composes the mechanisms with the noise actually added (the broken variant's
	// too); its ε is the agent's.
	rep, err := papersMechanisms{h: c.H, d: c.D, capacity: max(c.B-1, 1), levels: c.TreeLevels, sigmaTree: c.SigmaLam / div,
		releases: max(c.B-1, 0), vecSens: 2 * float64(c.H+1), sigmaVec: c.SigmaU / div,
		gramSecure: anySecure(a.gsrc...), vecSecure: anySecure(a.usrc)}.ledgerReport(in.Epsilon, in.Delta)
	in.Ledger, in.EffectiveEp = rep, rep.Epsilon
	switch {
	case err != nil:
		in.Note = "NOT certified: the privacy ledger refused the mechanisms: " + err.Error()
	case rep.PrivateAtNominal:
		// Private at the nominal ε by the ledger's accounting of the noise actually added,
		// whatever the range of the paper's proof (Thm 8: ε < 1).
	case c.PaperClaimApplies && a.cfg.broken.noiseDiv == 0:
		in.Note = fmt.Sprintf("the ledger certifies only ε = %.4g; the paper's (ε,δ) proof (ε < 1) applies", in.EffectiveEp)
	default:
		in.Note = fmt.Sprintf("NOT certified at the nominal ε: the ledger certifies ε = %.4g (the paper's proof covers ε < 1 only)", in.EffectiveEp)
	}
	if c.B < 2 {
		in.Note += "; WARNING: B < 2, the policy never updates"
	}
	in.Constants = map[string]any{"calibration": c.Calibration.String(), "lambda": c.Lambda, "B": c.B, "B0": c.B0,
		"sigma_lambda": c.SigmaLam, "sigma_u": c.SigmaU, "upsilon": c.Upsilon, "c_K": a.cfg.CKMult * c.CK,
		"C_u": c.CU, "U_K": c.UK, "ln_chi": c.LnChi, "rho_certified": rho, "p": c.P, "K": c.K}
	return in
}
