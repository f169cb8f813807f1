package linmix

import (
	"fmt"
	"math"

	model "github.com/dprl/dprl/model/linmix"
	"github.com/dprl/dprl/privacy/accounting"
	"github.com/dprl/dprl/privacy/audit"
	"github.com/dprl/dprl/privacy/counter"
	"github.com/dprl/dprl/privacy/ledger"
	"github.com/dprl/dprl/privacy/noise"
	"github.com/dprl/dprl/rng"
)

// Audit targets of the linear-mixture family.
//
// Neighbouring inputs. A user is a response tree, and whatever a user's responses, the
// privacy guard (projection of X to its norm bound, clipping of y) makes its leaves lie in the
// sensitivity box; the worst case over response trees is therefore a worst case over guarded
// leaves. Each target runs the algorithm's own curator (JDP) or user-side randomiser (LDP),
// built by the agent constructor from public parameters, on K users (K = 32 for JDP — 256 for
// the tree-redraw variants and 2 for the Laplace tree, whose correlated Laplace sums the
// auditor's event families cannot exploit — so the
// changed user's leaf lies in K0(32) = 6 tree nodes and a tree whose nodes are redrawn per
// release leaks through 32 independent looks; K = 1 for LDP). User 1 is the changed user with
// extreme leaves in every step and regression — X = maxX·e_1 on D, X = maxX·e_2 on D′, y = maxY
// — and users 2..K are fixed.
//
// Observed output. JDP: everything released to later users — the released Λ̃ (packed upper
// triangle) and ũ of every step and regression after each of the K users (the billboard (L, w̃)
// is a bijective function of them). LDP: the changed user's report.
//
// Claims. The papers' calibrations are very loose for a single neighbouring pair (advanced
// composition, ε split over 2H or 4H releases, worst-case sensitivities), so an audit of the
// nominal ε could never tell them from a broken variant. Each target therefore claims the exact
// guarantee of the noise actually used on the audited pair (pairClaim), computed from public
// noise scales; the nominal ε of each target is chosen so that this claim is of order 1, where
// the auditor has power. δ = 1e-3 for the same reason.

type auditSpec struct {
	name string
	cfg  Config
}

func auditEnv() *model.MDP {
	m, err := model.TwoStateHard(3, 2, 0.2, 0.5, nil)
	if err != nil {
		panic(err) // constant, valid arguments
	}
	return m
}

// auditTargetsList lists (name, config) of every private agent audited.
func auditSpecs() []auditSpec {
	return []auditSpec{
		{"ucrl-vtr-jdp", Config{Algorithm: UCRLVTR, Mode: JDP, Episodes: 32, Epsilon: 400, Delta: 1e-3}},
		{"ucrl-vtr-ldp", Config{Algorithm: UCRLVTR, Mode: LDP, Episodes: 1, Epsilon: 5, Delta: 1e-3}},
		{"ucrl-vtr-jdp-zcdp", Config{Algorithm: UCRLVTR, Mode: JDP, Calibration: ZCDP, Episodes: 32, Epsilon: 2, Delta: 1e-3}},
		{"ucrl-vtr-jdp-laplace", Config{Algorithm: UCRLVTR, Mode: JDP, Calibration: Laplace, Episodes: 2, Epsilon: 2}},
		{"ucrl-vtr-ldp-laplace", Config{Algorithm: UCRLVTR, Mode: LDP, Calibration: Laplace, Episodes: 1, Epsilon: 2}},
		{"ucrl-vtr-plus-jdp", Config{Algorithm: UCRLVTRPlus, Mode: JDP, Episodes: 32, Epsilon: 550, Delta: 1e-3}},
		{"ucrl-vtr-plus-ldp", Config{Algorithm: UCRLVTRPlus, Mode: LDP, Episodes: 1, Epsilon: 8, Delta: 1e-3}},
		{"linopt-vi-jdp", Config{Algorithm: LinOptVI, Mode: JDP, Episodes: 32, Epsilon: 6, Delta: 1e-3, StrictSensitivity: true}},
		{"linopt-vi-ldp", Config{Algorithm: LinOptVI, Mode: LDP, Episodes: 1, Epsilon: 6, Delta: 1e-3, StrictSensitivity: true}},
		{"linopt-po-jdp", Config{Algorithm: LinOptPO, Mode: JDP, Episodes: 32, Epsilon: 6, Delta: 1e-3, StrictSensitivity: true}},
	}
}

// pairClaim returns the exact guarantee the correct algorithm provides on the audited pair
// (D, D′) (the Target contract: "the guarantee the correct algorithm provides for the pair of
// inputs it is audited on"), computed from the public noise scales and the two leaf sets only.
// The changed user's leaf enters m independent noise nodes per statistic (m = K0(K) tree nodes
// for JDP — all released prefixes together determine each of them — and m = 1 for LDP).
// Gaussian: the pair is a Gaussian mechanism with μ² = m·Σ_{h,r,coord} (diff/σ_coord)², and ε is
// the exact ε(δ) of μ-GDP; Laplace: ε = m·Σ |diff|/b_coord.
func pairClaim(a *Agent) audit.Claim {
	l0 := newLeaves(a.m.Horizon(), a.specs)
	l1 := newLeaves(a.m.Horizon(), a.specs)
	extremeLeaves(l0, a.specs, 0)
	extremeLeaves(l1, a.specs, 1)
	m := 1.0
	if a.cfg.Mode == JDP {
		m = float64(K0(a.cfg.Episodes))
	}
	laplace := a.cfg.Calibration == Laplace
	acc := 0.0
	for h := range l0.x {
		for r, sp := range a.specs {
			x0, x1 := l0.x[h][r], l1.x[h][r]
			y0, y1 := guard(x0, l0.y[h][r], sp), guard(x1, l1.y[h][r], sp)
			d := sp.dim
			scales := noise.SymScales(d, sp.sym)
			add := func(diff, scale float64) {
				if laplace {
					acc += math.Abs(diff) / scale
				} else {
					acc += diff * diff / (scale * scale)
				}
			}
			for i := 0; i < d; i++ {
				for j := i; j < d; j++ {
					add(x0[i]*x0[j]-x1[i]*x1[j], sp.mat.Scale*scales[noise.PackedIndex(d, i, j)])
				}
				add(x0[i]*y0-x1[i]*y1, sp.vec.Scale)
			}
		}
	}
	if laplace {
		return audit.Claim{Epsilon: m * acc}
	}
	mu := math.Sqrt(m * acc)
	delta := a.cfg.Delta
	lo, hi := 0.0, 1.0
	for accounting.GaussianExactDelta(mu, hi) > delta {
		hi *= 2
	}
	for i := 0; i < 100; i++ {
		mid := (lo + hi) / 2
		if accounting.GaussianExactDelta(mu, mid) > delta {
			lo = mid
		} else {
			hi = mid
		}
	}
	return audit.Claim{Epsilon: hi, Delta: delta}
}

// extremeLeaves fills lv with the changed user's leaves on side 0 or 1: X = maxX·e_1 and
// X = maxX·e_2 (so X Xᵀ differs on the diagonal, where every noise law puts its full scale),
// y = maxY on both sides.
func extremeLeaves(lv *Leaves, specs []regSpec, side int) {
	for h := range lv.x {
		for r, sp := range specs {
			x := lv.x[h][r]
			clear(x)
			x[side%len(x)] = sp.maxX
			lv.y[h][r] = sp.maxY
		}
	}
}

// fixedLeaves fills lv with the fixed later users' leaves.
func fixedLeaves(lv *Leaves, specs []regSpec) {
	for h := range lv.x {
		for r, sp := range specs {
			x := lv.x[h][r]
			clear(x)
			x[0] = sp.maxX / 2
			lv.y[h][r] = sp.maxY / 2
		}
	}
}

// releasedStats appends the released Λ̃ (packed upper triangle) and ũ of every (h, r).
func releasedStats(out []float64, c *central) []float64 {
	for i, sp := range specsRepeat(c) {
		d := sp.dim
		for a := 0; a < d; a++ {
			out = append(out, c.lam[i][a*d+a:(a+1)*d]...)
		}
		out = append(out, c.uu[i]...)
	}
	return out
}

func specsRepeat(c *central) []regSpec {
	var s []regSpec
	for h := 0; h < c.H; h++ {
		s = append(s, c.specs...)
	}
	return s
}

func auditRun(cfg Config, side int, seed rng.Seed) ([]float64, error) {
	a, err := NewSeeded(auditEnv(), cfg, seed)
	if err != nil {
		return nil, err
	}
	lv := newLeaves(a.m.Horizon(), a.specs)
	extremeLeaves(lv, a.specs, side)
	if a.cfg.Mode == LDP {
		return a.rnd.Privatize(lv).Values(), nil
	}
	if err := a.cur.observe(lv); err != nil {
		return nil, err
	}
	out := releasedStats(nil, a.cur)
	fixedLeaves(lv, a.specs)
	for k := 2; k <= a.cfg.Episodes; k++ {
		if err := a.cur.observe(lv); err != nil {
			return nil, err
		}
		out = releasedStats(out, a.cur)
	}
	return out, nil
}

// mixTarget returns the linear-mixture audit target name, described by desc, at 20000 runs
// per side.
func mixTarget(name, desc string, claim audit.Claim, broken bool, run func(int, rng.Seed) ([]float64, error)) audit.Target {
	return audit.Target{Name: name, Family: "linear-mixture", Description: desc, Claim: claim, Broken: broken, Runs: 20000, Run: run}
}

// targetName returns the name of the variant ("" for the agent itself) of the audit spec.
func targetName(spec, variant string) string {
	if variant == "" {
		return "linear-mixture/" + spec
	}
	return "linear-mixture/" + spec + "/" + variant
}

// observedOutput returns what a target of privacy model mode observes: the changed user's
// report under LDP, release otherwise.
func observedOutput(mode Mode, release string) string {
	if mode == LDP {
		return "the changed user's report"
	}
	return release
}

// AuditTargets returns the audit targets of every private agent of the family, and
// deliberately broken variants (noise divided by 4; tree noise redrawn per release; noise
// level computed from the data; planner reading raw statistics), reachable only from here.
func AuditTargets() []audit.Target {
	var ts []audit.Target
	for _, s := range auditSpecs() {
		a, err := NewSeeded(auditEnv(), s.cfg, rng.NewSeed(0))
		if err != nil {
			panic(fmt.Sprintf("linmix audit target %s: %v", s.name, err)) // constant configs
		}
		claim := pairClaim(a)
		add := func(variant string, k knobs, broken bool, what string) {
			cfg := s.cfg
			cfg.knobs = k
			claim := claim
			if k.redraw {
				// More releases, so that redrawn nodes leak through K independent looks
				// against the K0(K) = 9 nodes of the correct tree.
				cfg.Episodes = 256
				ca, err := NewSeeded(auditEnv(), Config{Algorithm: cfg.Algorithm, Mode: cfg.Mode, Episodes: 256, Epsilon: cfg.Epsilon, Delta: cfg.Delta, StrictSensitivity: cfg.StrictSensitivity}, rng.NewSeed(0))
				if err != nil {
					panic(err)
				}
				claim = pairClaim(ca)
			}
			out := observedOutput(cfg.Mode, "released Λ̃, ũ of every step after each user")
			ts = append(ts, mixTarget(targetName(s.name, variant),
				fmt.Sprintf("%s (nominal ε=%g) on K=%d users, user 1 with extreme leaves (±) vs extreme leaves (∓); output: %s; claim: zCDP/basic accounting of the actual noise%s", cfg.Name(), cfg.Epsilon, cfg.Episodes, out, what),
				claim, broken, func(side int, seed rng.Seed) ([]float64, error) { return auditRun(cfg, side, seed) }))
		}
		add("", knobs{}, false, "")
		add("noise-div4", knobs{noiseDiv: 4}, true, "; BROKEN: noise divided by 4")
		if s.cfg.Mode == JDP {
			add("data-noise", knobs{dataScale: true}, true, "; BROKEN: noise level computed from the data")
			if s.name == "ucrl-vtr-jdp" {
				add("tree-redraw", knobs{redraw: true}, true, "; BROKEN: tree noise redrawn per release")
			}
			if s.name == "ucrl-vtr-jdp" || s.name == "linopt-vi-jdp" {
				add("raw-planner", knobs{raw: true}, true, "; BROKEN: planner reads raw statistics")
			}
		} else if s.name == "ucrl-vtr-ldp" {
			add("data-noise", knobs{dataScale: true}, true, "; BROKEN: noise level computed from the data")
		}
	}
	return append(ts, practicalAuditTargets()...)
}

// Practical agents (dprl's own; PracticalLabel). Neighbouring inputs: K users (16 for JDP, 1
// for LDP; one release after every user); user 1's leaves are hostile — X = 3B·e_1, y = 1 on D
// and X = 3B·e_2, y = −1 on D′ — so the privacy guard projects them to X = B·e_{1|2},
// y = ±½, and users 2..K are fixed. Observed output: every release (Gram and target) after each
// user (JDP) or the changed user's report (LDP). Claim: the exact μ-GDP of the correct noise
// on this pair, μ = ‖x − x′‖·factor/σ in the counter's weighted norm (user 1 is the counter's
// first element, whose encoder column has the maximal norm, the sensitivity factor), as ε at
// δ = 1e-3. Nominal ε = 2 makes that claim of order 1, where the auditor has power.

type practicalAuditSpec struct {
	name string
	cfg  PracticalConfig
}

func practicalAuditSpecs() []practicalAuditSpec {
	return []practicalAuditSpec{
		{"practical-vtr-jdp", PracticalConfig{Privacy: PracticalPrivacy{Mode: JDP, Epsilon: 2, Delta: 1e-3}, Episodes: 17}},
		{"practical-vtr-ldp", PracticalConfig{Privacy: PracticalPrivacy{Mode: LDP, Epsilon: 2, Delta: 1e-3}, Episodes: 2}},
	}
}

func practicalHostile(H, d int, B float64, side int) *PracticalLeaves {
	lv := newPracticalLeaves(H, d)
	for h := range lv.x {
		lv.x[h][side] = 3 * B
		lv.y[h] = 1 - 2*float64(side)
	}
	return lv
}

func practicalAuditRun(cfg PracticalConfig, side int, seed rng.Seed) ([]float64, error) {
	a, err := NewPracticalSeeded(auditEnv(), cfg, seed)
	if err != nil {
		return nil, err
	}
	H, d := a.m.Horizon(), a.m.Dim()
	lv := practicalHostile(H, d, a.pub.B, side)
	if a.rnd != nil {
		return a.rnd.Privatize(lv).Values(), nil
	}
	var out []float64
	for k := 1; k < cfg.Episodes; k++ {
		if err := a.cur.Ingest(lv); err != nil {
			return nil, err
		}
		rel := a.cur.Release()
		out = append(out, rel.Gram...)
		out = append(out, rel.Target...)
		lv = newPracticalLeaves(H, d)
		for h := range lv.x {
			lv.x[h][0], lv.y[h] = a.pub.B/2, 0.25
		}
	}
	return out, nil
}

// practicalPairClaim returns the exact guarantee of the correct agent on the audited pair.
func practicalPairClaim(cfg PracticalConfig) audit.Claim {
	a, err := NewPracticalSeeded(auditEnv(), cfg, rng.NewSeed(0))
	if err != nil {
		panic(fmt.Sprintf("linmix practical audit: %v", err)) // constant configs
	}
	H, d := a.m.Horizon(), a.m.Dim()
	enc := practicalEncoder{d: d, B: a.pub.B, T: a.pub.T}
	x0, x1 := make([]float64, enc.dim()), make([]float64, enc.dim())
	enc.add(practicalHostile(H, d, a.pub.B, 0), x0)
	enc.add(practicalHostile(H, d, a.pub.B, 1), x1)
	sc := practicalScales(d)
	s := 0.0
	for i := range x0 {
		v := (x0[i] - x1[i]) / sc[i]
		s += v * v
	}
	e, _ := a.g.Entry(ledger.EntryCounter)
	if a.g.Model == ledger.LDP {
		e, _ = a.g.Entry(ledger.EntryReport)
	}
	mu, err := accounting.NewGDP(math.Sqrt(s) * e.Factor / e.Sigma)
	if err != nil {
		panic(err)
	}
	ad, err := mu.ToApproxDP(cfg.Privacy.Delta)
	if err != nil {
		panic(err)
	}
	return audit.Claim{Epsilon: ad.Epsilon, Delta: cfg.Privacy.Delta}
}

// practicalAuditTargets returns the practical agents' targets and their broken variants (σ/4,
// noise redrawn per release, privacy guard skipped, planner reading exact statistics).
func practicalAuditTargets() []audit.Target {
	var ts []audit.Target
	for _, s := range practicalAuditSpecs() {
		claim := practicalPairClaim(s.cfg)
		if s.cfg.Privacy.Mode == JDP {
			a, err := NewPracticalSeeded(auditEnv(), s.cfg, rng.NewSeed(0))
			if err != nil {
				panic(err) // constant config
			}
			if b, ok := a.cur.cnt.(*counter.BLT); ok {
				p := b.Params()
				s.cfg.blt = &p
			}
		}
		add := func(variant string, k practicalKnobs, broken bool, what string) {
			cfg := s.cfg
			cfg.knobs = k
			out := observedOutput(cfg.Privacy.Mode, "every release (Gram, target) after each user")
			ts = append(ts, mixTarget(targetName(s.name, variant),
				fmt.Sprintf("%s, %s (nominal ε=%g) on K=%d users, user 1 hostile (X=3B·e₁, y=1 vs X=3B·e₂, y=−1); output: %s; claim: exact μ-GDP of the noise on this pair%s",
					cfg.Name(), PracticalLabel, cfg.Privacy.Epsilon, cfg.Episodes-1, out, what),
				claim, broken, func(side int, seed rng.Seed) ([]float64, error) { return practicalAuditRun(cfg, side, seed) }))
		}
		add("", practicalKnobs{}, false, "")
		add("noise-div4", practicalKnobs{noiseDiv: 4}, true, "; BROKEN: noise divided by 4")
		add("no-clip", practicalKnobs{noClip: true}, true, "; BROKEN: privacy guard skipped")
		if s.cfg.Privacy.Mode == JDP {
			add("noise-redraw", practicalKnobs{redraw: true}, true, "; BROKEN: noise redrawn per release")
			add("raw-planner", practicalKnobs{raw: true}, true, "; BROKEN: planner reads exact statistics")
		}
	}
	return ts
}
