package linmdp

import (
	"cmp"
	"fmt"
	"github.com/dprl/dprl/agents/internal/agentkit"
	"github.com/dprl/dprl/internal/smallmat"
	"math"

	model "github.com/dprl/dprl/model/linmdp"
	"github.com/dprl/dprl/privacy/counter"
	"github.com/dprl/dprl/privacy/noise"
)

// NgoConfig configures Ngo, Vietri & Wu's Algorithm 1.
type NgoConfig struct {
	Common
	// Epsilon and Delta give the (ε,δ)-JDP target, converted to ρ by [N] Lemma 6
	// (RhoFromEpsDelta). Ignored if Rho > 0 or NoiseOff.
	Epsilon, Delta float64
	// Rho, if > 0, is the zCDP budget directly.
	Rho float64
	// Calibration is CalibSound ([S], default) or CalibPrinted ([P]).
	Calibration Calibration
	// C is the determinant-ratio threshold (default 2, [N] Thm 11/16).
	C float64
	// CShift multiplies the 2λ̃_Λ·I shift only (default 1; post-processing, spec §3.1).
	CShift float64
	// UMax, if > 0, replaces the update cap by this data-independent value (σ_y is computed
	// from it, so privacy stays valid). For NoiseOff, 0 means no cap.
	UMax int
	// NoiseOff removes all noise, uses λ = Lambda instead of the 2λ̃_Λ shift, β =
	// c_beta·dH√ln(2dKH/p) and no cap: LSVI-UCB-RareSwitch (Wang et al. 2021).
	NoiseOff bool

	broken ngoBroken
}

// ngoBroken holds deliberately broken variants reachable only from AuditTargets and tests.
type ngoBroken struct {
	noiseDiv   float64 // divide every noise std by this (0 = 1)
	redraw     bool    // tree noise redrawn at every release instead of reused
	dataNoise  bool    // σ_y computed from the data
	rawPlanner bool    // planner reads the exact regression vector
	record     bool    // keep a log of the released ỹ (audit targets)
}

// Ngo is Private LSVI-UCB with low switching cost ([N] Algorithm 1) with the fixes of spec
// §3.4: Q clipped to [0,H] (P1), the data-independent initial policy (N1), the update counter
// incremented once per update (N2), [S] calibration (N3–N5), Λ̃^{k+1} = noisy prefix of
// episodes 1..k + 2λ̃_Λ I (N6), and the log-det test on the noisy matrices (N7).
//
//	for k = 1..K:
//	  if N_count < N_max and ∃h: ln det Λ̃_h − ln det Λpol_h ≥ ln C:      (line 8)
//	    for h = H..1:  ỹ_h = y_h + η (line 11);  w_h = Λ̃_h^{-1} ỹ_h (12);  Q_h = clip(…) (13–14)
//	    N_count++                                                      (line 15, once: N2)
//	  play greedily (line 20);  Λ̃_h ← G_h(k) + N_h(k) + 2λ̃_Λ I (lines 22–23, N6)
type Ngo struct {
	env  *model.MDP
	cfg  NgoConfig
	cons NgoConstants
	d, H int

	st     *stats
	pl     *planner
	trees  []*counter.Tree
	gsrc   []noise.Source
	ysrc   noise.Source
	packed []float64
	epPhi  [][]float64 // φ_h^k of the current episode

	shift   float64
	lnC     float64
	umax    int // math.MaxInt when uncapped
	beta    float64
	rel     [][]float64 // [h] released Λ̃_h (PSD-guarded)
	relChol [][]float64
	relLD   []float64
	refLD   []float64 // ln det Λpol_h
	exRef   []float64 // exact diagnostic reference
	polChol [][]float64
	y       []float64
	scratch []float64
	l2      []float64

	version, nUpdates, repairs, capHit int
	updates                            []Update
	released                           int         // Gram releases made (episodes)
	ylog                               [][]float64 // released ỹ (only with broken.record)
}

// NewNgo returns Algorithm 1 with all constants, noise levels and the cap computed now, from
// public inputs only.
func NewNgo(env *model.MDP, cfg NgoConfig) (*Ngo, error) {
	cfg.defaults()
	cfg.C = cmp.Or(cfg.C, 2)
	cfg.CShift = cmp.Or(cfg.CShift, 1)
	if err := cfg.validate(env); err != nil {
		return nil, fmt.Errorf("ngo: %w", err)
	}
	if !(cfg.C > 1) || math.IsInf(cfg.C, 0) {
		return nil, fmt.Errorf("ngo: C must be finite and > 1, got %g", cfg.C)
	}
	if !(cfg.CShift > 0) || math.IsInf(cfg.CShift, 0) {
		return nil, fmt.Errorf("ngo: c_shift must be finite and > 0, got %g", cfg.CShift)
	}
	if cfg.UMax < 0 {
		return nil, fmt.Errorf("ngo: u_max must be >= 0 (0 = from the constants), got %d", cfg.UMax)
	}
	d, H := env.D, env.H
	a := &Ngo{env: env, cfg: cfg, d: d, H: H, st: newStats(H, env.N, d), lnC: math.Log(cfg.C)}
	if cfg.NoiseOff {
		a.shift = cfg.Lambda
		a.beta = cfg.CBeta * nonPrivateBeta(d, H, cfg.K, cfg.P)
		a.umax = math.MaxInt
		if cfg.UMax > 0 {
			a.umax = cfg.UMax
		}
	} else {
		rho := cfg.Rho
		if rho == 0 {
			if !agentkit.ValidEpsilon(cfg.Epsilon) {
				return nil, fmt.Errorf("ngo: epsilon must be finite and > 0, got %g", cfg.Epsilon)
			}
			if !agentkit.ValidDelta(cfg.Delta) {
				return nil, fmt.Errorf("ngo: delta must be in (0, 1), got %g", cfg.Delta)
			}
			var err error
			if rho, err = RhoFromEpsDelta(cfg.Epsilon, cfg.Delta); err != nil {
				return nil, fmt.Errorf("ngo: %w", err)
			}
		} else if !agentkit.ValidDelta(cfg.Delta) {
			cfg.Delta = 1e-5
			a.cfg.Delta = cfg.Delta
		}
		cons, err := NewNgoConstants(cfg.K, H, d, rho, cfg.P, cfg.Calibration)
		if err != nil {
			return nil, fmt.Errorf("ngo: %w", err)
		}
		if cfg.UMax > 0 {
			cons = cons.WithUMax(cfg.UMax)
		}
		a.cons = cons
		a.shift = 2 * cfg.CShift * cons.LambdaTilde
		a.beta = cfg.CBeta * cons.Beta
		a.umax = cons.UMax
		if a.trees, a.gsrc, err = cfg.gramTrees(H, d, cfg.K, cons.SigmaNode, cfg.broken.noiseDiv); err != nil {
			return nil, fmt.Errorf("ngo: %w", err)
		}
		if a.ysrc, err = cfg.source("y"); err != nil {
			return nil, fmt.Errorf("ngo: %w", err)
		}
	}
	a.pl = newPlanner(env, a.beta, cfg.Tie, cfg.tieRand())
	a.packed = make([]float64, d*(d+1)/2)
	a.epPhi = make([][]float64, H)
	a.rel, a.relChol, a.polChol = make([][]float64, H), make([][]float64, H), make([][]float64, H)
	a.relLD, a.refLD, a.exRef = make([]float64, H), make([]float64, H), make([]float64, H)
	a.y, a.scratch, a.l2 = make([]float64, d), make([]float64, d*d), make([]float64, d*d)
	ld0 := float64(d) * math.Log(a.shift)
	for h := 0; h < H; h++ {
		a.rel[h], a.relChol[h], a.polChol[h] = make([]float64, d*d), make([]float64, d*d), make([]float64, d*d)
		for i := 0; i < d; i++ {
			a.rel[h][i*d+i] = a.shift
			a.relChol[h][i*d+i] = math.Sqrt(a.shift)
		}
		copy(a.polChol[h], a.relChol[h])
		a.relLD[h], a.refLD[h], a.exRef[h] = ld0, ld0, ld0
	}
	// FIX N1: the initial policy is LSVI with no data (w = 0, Λpol = 2λ̃_Λ I): data-independent.
	for h := H - 1; h >= 0; h-- {
		a.pl.planStep(h, Release{Chol: a.polChol[h]})
	}
	return a, nil
}

// Constants returns the constants of spec §3.2 (zero for NoiseOff).
func (a *Ngo) Constants() NgoConstants { return a.cons }

// BeginEpisode runs the update test of line 8 on the released matrices and, if it fires
// (and the cap allows), the update of lines 9–15.
func (a *Ngo) BeginEpisode(k int) {
	if a.nUpdates >= a.umax {
		return
	}
	trig := -1
	for h := 0; h < a.H; h++ {
		if a.relLD[h]-a.refLD[h] >= a.lnC {
			trig = h
			break
		}
	}
	if trig < 0 {
		return
	}
	u := Update{Episode: k, TriggerH: trig + 1, LogDetRatio: a.relLD[trig] - a.refLD[trig]}
	d := a.d
	// Non-private diagnostic (spec §6.6): would the exact Gram matrix have triggered?
	exLD := make([]float64, a.H)
	for h := 0; h < a.H; h++ {
		copy(a.scratch, a.st.gram[h])
		for i := 0; i < d; i++ {
			a.scratch[i*d+i] += a.shift
		}
		if smallmat.Cholesky(a.scratch, d, a.l2) {
			exLD[h] = smallmat.LogDet(a.l2, d)
		} else {
			exLD[h] = a.exRef[h]
		}
	}
	u.ExactWouldTrigger = exLD[trig]-a.exRef[trig] >= a.lnC
	copy(a.exRef, exLD)
	for h := a.H - 1; h >= 0; h-- {
		a.st.target(h, a.pl.valueNext(h), a.y) // line 10: full pass with the new V_{h+1}
		raw := append([]float64(nil), a.y...)
		if !a.cfg.NoiseOff {
			a.noisyY(h, k, a.y) // line 11
		}
		if a.cfg.broken.record {
			a.ylog = append(a.ylog, append([]float64(nil), a.y...))
		}
		if a.cfg.broken.rawPlanner {
			copy(a.y, raw) // BROKEN: planner reads the raw statistic.
		}
		copy(a.polChol[h], a.relChol[h])
		a.refLD[h] = a.relLD[h]
		a.pl.planStep(h, Release{Chol: a.polChol[h], Y: a.y}) // lines 12–14
	}
	a.nUpdates++ // FIX N2: once per update
	a.version++
	a.updates = append(a.updates, u)
	if a.nUpdates >= a.umax {
		a.capHit = k
	}
}

// noisyY is the Gaussian mechanism of Alg. 1 line 11: ỹ_h = y_h + η, η ~ N(0, σ_y² I), with
// σ_y fixed in NewNgo (the broken knobs exist only for audits and tests).
func (a *Ngo) noisyY(h, k int, y []float64) {
	sy := a.cons.SigmaY
	if a.cfg.broken.noiseDiv > 0 {
		sy /= a.cfg.broken.noiseDiv
	}
	if a.cfg.broken.dataNoise {
		// BROKEN: noise level computed from the data.
		sy *= math.Min(1, math.Sqrt(a.st.gram[h][0])/float64(k))
	}
	for i := range y {
		y[i] = a.ysrc.AddGaussian(y[i], sy)
	}
}

// Act implements Agent (line 20).
func (a *Ngo) Act(h, s int) int { return a.pl.act[h][s] }

// Observe implements Agent.
func (a *Ngo) Observe(h, s, act int, r float64, s2 int) error {
	phi, err := a.st.observe(a.env, h, s, act, r, s2)
	if err != nil {
		return err
	}
	a.epPhi[h] = phi
	return nil
}

// EndEpisode releases Λ̃_h^{k+1} = G_h(k) + N_h(k) + 2λ̃_Λ I for every h (lines 22–23, FIX N6).
// Once the cap is reached nothing is released any more (nothing would be used).
func (a *Ngo) EndEpisode() {
	if a.nUpdates >= a.umax || a.released >= a.cfg.K {
		return // after the cap (or beyond K, outside the calibration) nothing is released
	}
	a.released++
	d := a.d
	for h := 0; h < a.H; h++ {
		m := a.rel[h]
		if a.cfg.NoiseOff {
			copy(m, a.st.gram[h])
		} else if a.cfg.broken.redraw {
			// BROKEN: fresh noise of the prefix's variance at every release.
			copy(m, a.st.gram[h])
			addRedrawnNoise(m, d, a.gsrc[h], a.cons.SigmaNode, a.released, a.cfg.broken.noiseDiv)
		} else {
			packOuter(a.epPhi[h], a.packed)
			_ = a.trees[h].Insert(a.packed) // cannot fail: at most K insertions (checked above)
			clear(m)
			unpackAdd(a.trees[h].Prefix(), d, m)
		}
		for i := 0; i < d; i++ {
			m[i*d+i] += a.shift
		}
		symmetrize(m, d)
		if guardPD(m, d, a.shift/2, a.relChol[h], a.scratch) { // P3: floor = c_shift·λ̃_Λ
			a.repairs++
		}
		a.relLD[h] = smallmat.LogDet(a.relChol[h], d)
	}
}

// Policy implements Agent.
func (a *Ngo) Policy() [][]int { return a.pl.act }

// PolicyVersion implements Agent.
func (a *Ngo) PolicyVersion() int { return a.version }

// Updates implements Agent.
func (a *Ngo) Updates() []Update { return a.updates }

// Info implements Agent.
func (a *Ngo) Info() Info {
	in := Info{Agent: "ngo-private", NoiseOff: a.cfg.NoiseOff, CBeta: a.cfg.CBeta, Beta: a.beta, Regulariser: a.shift,
		TieBreak: a.cfg.Tie.String(), Repairs: a.repairs, TieFraction: a.pl.tieFraction(), CapHit: a.capHit}
	if a.cfg.NoiseOff {
		in.Agent = "rare-switch"
		in.Note = "noise off: not private"
		in.Constants = map[string]any{"lambda": a.shift, "C": a.cfg.C, "u_max": a.cfg.UMax}
		return in
	}
	c := a.cons
	in.Private = true
	in.Epsilon, in.Delta = a.cfg.Epsilon, a.cfg.Delta
	if a.cfg.Rho > 0 {
		in.Epsilon = EpsFromRho(a.cfg.Rho, a.cfg.Delta)
	}
	spent := c.RhoSpent
	div := 1.0
	if a.cfg.broken.noiseDiv > 0 {
		div = a.cfg.broken.noiseDiv
		spent *= div * div
	}
	// The ledger composes the mechanisms with the noise actually added (the broken variant's
	// too); its ε is the agent's.
	rep, err := papersMechanisms{h: c.H, d: c.D, capacity: c.K, levels: c.L, sigmaTree: c.SigmaNode / div,
		releases: c.UMax, vecSens: 2 * float64(c.H+1), sigmaVec: c.SigmaY / div,
		gramSecure: anySecure(a.gsrc...), vecSecure: anySecure(a.ysrc)}.ledgerReport(in.Epsilon, in.Delta)
	in.Ledger, in.EffectiveEp = rep, rep.Epsilon
	switch {
	case err != nil:
		in.Note = "NOT certified: the privacy ledger refused the mechanisms: " + err.Error()
	case c.Calibration == CalibPrinted && !rep.PrivateAtNominal:
		in.Note = fmt.Sprintf("[P] printed calibration: NOT private at the nominal ε; the ledger certifies ε = %.4g", in.EffectiveEp)
	case c.Calibration == CalibPrinted:
		in.Note = fmt.Sprintf("[P] printed calibration: the paper's zCDP accounting overspends ρ (%.4g > %.4g), but the ledger certifies ε = %.4g", spent, c.Rho, in.EffectiveEp)
	}
	in.Constants = map[string]any{"calibration": c.Calibration.String(), "rho": c.Rho, "rho_spent": spent,
		"L": c.L, "sigma_node": c.SigmaNode, "lambda_tilde": c.LambdaTilde, "N_max": c.NMax, "U_max": c.UMax,
		"sigma_y": c.SigmaY, "lambda_y": c.LambdaY, "U_K": c.UK, "ln_chi": c.LnChi, "beta_thm": c.BetaThm,
		"beta_req": c.BetaReq, "C": a.cfg.C, "c_shift": a.cfg.CShift, "shift": a.shift, "p": c.P, "K": c.K}
	return in
}
