package linmdp

import (
	"errors"
	"fmt"
	"math/bits"
	"strings"

	model "github.com/dprl/dprl/model/linmdp"
	"github.com/dprl/dprl/privacy/audit"
	"github.com/dprl/dprl/rng"
)

// Audit targets of the linear-MDP family.
//
// Neighbouring inputs. The environment is a 2-state, 2-action, d = 3 linear MDP with H = 1:
// φ(0,0) = e₀, φ(0,1) = e₁, φ(1,·) = e₂, r = 1 at state 0 and 0 at state 1. There are K = 8
// users; the privacy argument holds for any stream of features with ‖φ‖ ≤ 1, so the curator is
// fed the users' data directly. User 1 is the changed user: on D it contributes (φ, r) =
// (e₀, 1), on D′ (e₁, 1) — orthogonal extreme features, so its Gram leaf differs by √2 in
// Frobenius norm and its regression term by √2. Users 2..K contribute (e₂, 0) on both sides.
//
// Observed output (JDP: everything released to later users). Ngo: the released Λ̃_h after
// every episode (packed upper triangle), the released ỹ of the ≤ U_max = 2 updates
// (zero-padded; U_max is fixed by the target), the number of updates, and the final V table.
// Luyo: the released Λ̃_{b,h} and ũ_{b,h} of every batch end and the final V table. The
// correct agents' V tables are post-processing of the released statistics; a planner reading
// raw statistics leaks through them.
//
// Claims. The papers' calibrations are loose for one pair of neighbours (Δ_Λ = 2 instead of
// √2, Δ_y = 2(H+1) instead of √2, advanced composition for Luyo), so each target claims the
// guarantee the noise actually used provides on this pair, by zCDP (ρ = Σ over releases of
// Δ²/(2σ²), ε = ρ + 2√(ρ ln 1/δ)), and its nominal ε is chosen (from public parameters only)
// so that this claim is about 2. Ngo's update test uses C = 1 + 10⁻⁹ so that updates (and ỹ
// releases) happen in most runs; C is post-processing.

const (
	auditK     = 8
	auditDelta = 1e-5
	auditClaim = 2.0
)

func auditEnv() (*model.MDP, error) {
	phi := [][][]float64{{{1, 0, 0}, {0, 1, 0}}, {{0, 0, 1}, {0, 0, 1}}}
	mu := [][][]float64{{{0.5, 0.5, 0.5}, {0.5, 0.5, 0.5}}}
	theta := [][]float64{{1, 1, 0}}
	return model.New("audit-2state", phi, mu, theta, []float64{1, 0}, 1)
}

// auditUser returns the (state, action) of user k (1-based) on the given side.
func auditUser(k, side int) (int, int) {
	if k == 1 {
		return 0, side
	}
	return 1, 0
}

// target returns the linear-MDP audit target name, described by desc, with the claim
// (claim, auditDelta); its Run is run, or reports setupErr when that is not nil.
func target(name, desc string, claim float64, broken bool, setupErr error, run func(int, rng.Seed) ([]float64, error)) audit.Target {
	if setupErr != nil {
		run = func(int, rng.Seed) ([]float64, error) { return nil, setupErr }
	}
	return audit.Target{Name: name, Family: "linear-mdp", Description: desc, Claim: audit.Claim{Epsilon: claim, Delta: auditDelta}, Broken: broken, Run: run}
}

// setupFailure returns nil when every err is nil and otherwise the error
// "linear-mdp audit setup:" followed by all of them.
func setupFailure(errs ...error) error {
	if errors.Join(errs...) == nil {
		return nil
	}
	args := make([]any, len(errs))
	for i, err := range errs {
		args[i] = err
	}
	return fmt.Errorf("linear-mdp audit setup:"+strings.Repeat(" %v", len(errs)), args...)
}

// nominalFor returns the smallest nominal ε on a geometric grid whose target claim is at
// least auditClaim.
func nominalFor(claim func(eps float64) (float64, error)) (float64, float64, error) {
	for eps := 0.5; eps < 1e9; eps *= 1.05 {
		c, err := claim(eps)
		if err != nil {
			continue
		}
		if c >= auditClaim {
			return eps, c, nil
		}
	}
	return 0, 0, fmt.Errorf("no nominal epsilon reaches the audit claim")
}

func ngoAuditConfig(eps float64, seed *rng.Seed) NgoConfig {
	return NgoConfig{Common: Common{K: auditK, CBeta: 1e-6, Seed: seed}, Epsilon: eps, Delta: auditDelta,
		C: 1 + 1e-9, UMax: 2}
}

// ngoAuditConstants returns the [S] constants of the audited Ngo agents (H = 1, d = 3) on K
// users at the nominal (eps, auditDelta).
func ngoAuditConstants(K int, eps float64) (NgoConstants, error) {
	rho, err := RhoFromEpsDelta(eps, auditDelta)
	if err != nil {
		return NgoConstants{}, err
	}
	return NewNgoConstants(K, 1, 3, rho, 0.05, CalibSound)
}

// gaussRho is the zCDP cost n·Δ²/(2σ²) of n Gaussian releases with noise std σ of a statistic
// that the audit pair changes by Δ = √2.
func gaussRho(n int, sigma float64) float64 { return float64(n) * 2 / (2 * sigma * sigma) }

// ngoTightClaim is the claim of the full-output Ngo targets (Gram and ỹ releases).
func ngoTightClaim(eps float64) (float64, error) {
	c, err := ngoAuditConstants(auditK, eps)
	if err != nil {
		return 0, err
	}
	c = c.WithUMax(2)
	return EpsFromRho(gaussRho(c.H*c.L, c.SigmaNode)+gaussRho(c.UMax*c.H, c.SigmaY), auditDelta), nil
}

// gramK is the number of users of the gram-sum targets: long enough that a tree whose noise
// is redrawn at every release leaks visibly more than the binary mechanism.
const gramK = 1024

// ngoGramClaim is the claim of the gram-sum targets: only the Gram releases are observed
// (C is set so high that no update, hence no ỹ release, ever happens).
func ngoGramClaim(eps float64) (float64, error) {
	c, err := ngoAuditConstants(gramK, eps)
	if err != nil {
		return 0, err
	}
	return EpsFromRho(gaussRho(c.H*c.L, c.SigmaNode), auditDelta), nil
}

func luyoGramClaim(eps float64) (float64, error) {
	c, err := NewLuyoConstants(gramK, 1, 3, eps, auditDelta, 0.05, gramK, LuyoPaper)
	if err != nil {
		return 0, err
	}
	return EpsFromRho(gaussRho(c.H*c.TreeLevels, c.SigmaLam), auditDelta), nil
}

// gramSums reduces a sequence of released d×d matrices M_t (t = 1..T, full row-major) to
// (Σ_t (M_t[0][0] − M_t[1][1]) / popcount(t), Σ_t (M_t[0][0] − M_t[1][1])): post-processing
// of the releases, the near-optimal statistics against independent per-release noise.
func gramSums(ms [][]float64, d int) []float64 {
	var a, b float64
	for t, m := range ms {
		x := m[0] - m[d+1]
		a += x / float64(bits.OnesCount(uint(t+1)))
		b += x
	}
	return []float64{a, b}
}

func luyoAuditConfig(eps float64, B int, seed *rng.Seed) LuyoConfig {
	return LuyoConfig{Common: Common{K: auditK, CBeta: 1e-6, Seed: seed}, Epsilon: eps, Delta: auditDelta, Batches: B}
}

func luyoTightClaim(B int) func(eps float64) (float64, error) {
	return func(eps float64) (float64, error) {
		c, err := NewLuyoConstants(auditK, 1, 3, eps, auditDelta, 0.05, B, LuyoPaper)
		if err != nil {
			return 0, err
		}
		S := (auditK + B - 1) / B
		ups := 0
		for b := 1; b <= B-1 && b*S+1 <= auditK; b++ {
			ups++
		}
		r := float64(c.H*c.TreeLevels)*2/(2*c.SigmaLam*c.SigmaLam) + float64(ups*c.H)*2/(2*c.SigmaU*c.SigmaU)
		return EpsFromRho(r, auditDelta), nil
	}
}

func packedOf(m []float64, d int, out []float64) []float64 {
	for i := 0; i < d; i++ {
		out = append(out, m[i*d+i:i*d+d]...)
	}
	return out
}

func runNgoAudit(env *model.MDP, cfg NgoConfig, side int) ([]float64, error) {
	a, err := NewNgo(env, cfg)
	if err != nil {
		return nil, err
	}
	d, H := env.D, env.H
	var out []float64
	for k := 1; k <= auditK; k++ {
		if err := auditEpisode(a, env, k, side, H); err != nil {
			return nil, err
		}
		for h := 0; h < H; h++ {
			out = packedOf(a.rel[h], d, out)
		}
	}
	slots := a.umax * H * d
	for _, y := range a.ylog {
		out = append(out, y...)
	}
	for i := len(a.ylog) * d; i < slots; i++ {
		out = append(out, 0)
	}
	out = append(out, float64(a.nUpdates))
	return appendPolicy(out, a.pl), nil
}

func runLuyoAudit(env *model.MDP, cfg LuyoConfig, side int) ([]float64, error) {
	a, err := NewLuyo(env, cfg)
	if err != nil {
		return nil, err
	}
	for k := 1; k <= auditK; k++ {
		if err := auditEpisode(a, env, k, side, env.H); err != nil {
			return nil, err
		}
	}
	var out []float64
	for _, v := range a.log {
		out = append(out, v...)
	}
	return appendPolicy(out, a.pl), nil
}

// auditEpisode plays audit user k on the given side (auditUser) through the first steps of an
// episode of a: the user's state and action at every step, with the environment's reward.
func auditEpisode(a Agent, env *model.MDP, k, side, steps int) error {
	a.BeginEpisode(k)
	s, act := auditUser(k, side)
	for h := 0; h < steps; h++ {
		if err := a.Observe(h, s, act, env.Reward(h, s, act), 0); err != nil {
			return err
		}
	}
	a.EndEpisode()
	return nil
}

// appendPolicy appends the final policy handed to later users: its actions and values.
func appendPolicy(out []float64, p *planner) []float64 {
	for h := range p.act {
		for s, x := range p.act[h] {
			out = append(out, float64(x), p.val[h][s])
		}
	}
	return out
}

// runNgoGram feeds gramK users to Ngo (no updates) and returns gramSums of its releases.
func runNgoGram(env *model.MDP, eps float64, brk ngoBroken, side int, seed rng.Seed) ([]float64, error) {
	sd := seed.Child("agent")
	cfg := NgoConfig{Common: Common{K: gramK, Seed: &sd}, Epsilon: eps, Delta: auditDelta, C: 1e300, broken: brk}
	a, err := NewNgo(env, cfg)
	if err != nil {
		return nil, err
	}
	ms := make([][]float64, 0, gramK)
	for k := 1; k <= gramK; k++ {
		if err := auditEpisode(a, env, k, side, 1); err != nil {
			return nil, err
		}
		ms = append(ms, append([]float64(nil), a.rel[0]...))
	}
	return gramSums(ms, env.D), nil
}

// runLuyoGram feeds gramK users to the non-batched Luyo agent and returns gramSums of its
// released matrices.
func runLuyoGram(env *model.MDP, eps float64, brk luyoBroken, side int, seed rng.Seed) ([]float64, error) {
	sd := seed.Child("agent")
	brk.record = true
	cfg := LuyoConfig{Common: Common{K: gramK, CBeta: 1e-6, Seed: &sd}, Epsilon: eps, Delta: auditDelta, NonBatched: true, broken: brk}
	a, err := NewLuyo(env, cfg)
	if err != nil {
		return nil, err
	}
	for k := 1; k <= gramK; k++ {
		if err := auditEpisode(a, env, k, side, 1); err != nil {
			return nil, err
		}
	}
	var ms [][]float64
	for i := 0; i < len(a.log); i += 2 { // log alternates Λ̃ (d·d) and ũ (d) per update (H = 1)
		ms = append(ms, a.log[i])
	}
	return gramSums(ms, env.D), nil
}

// AuditTargets returns the audit targets of every private agent of the family (Ngo et al.'s
// Alg. 1 with [S] calibration, Luyo et al.'s Alg. 2 batched and non-batched) on the
// worst-case neighbouring user sequences described above, plus deliberately broken variants
// (noise divided by 4, tree noise redrawn per release, noise level computed from the data,
// planner reading raw statistics) that are reachable only from here.
func AuditTargets() []audit.Target {
	env, envErr := auditEnv()
	var ts []audit.Target
	ngoEps, ngoClaim, ngoErr := nominalFor(ngoTightClaim)
	for _, v := range []struct {
		suffix string
		brk    ngoBroken
	}{
		{"", ngoBroken{}},
		{"/noise-div4", ngoBroken{noiseDiv: 4}},
		{"/data-noise", ngoBroken{dataNoise: true}},
		{"/raw-planner", ngoBroken{rawPlanner: true}},
	} {
		brk := v.brk
		brk.record = true
		run := func(side int, seed rng.Seed) ([]float64, error) {
			sd := seed.Child("agent")
			cfg := ngoAuditConfig(ngoEps, &sd)
			cfg.broken = brk
			return runNgoAudit(env, cfg, side)
		}
		ts = append(ts, target("linear-mdp/ngo-private"+v.suffix,
			fmt.Sprintf("Ngo et al. Alg. 1 [S], nominal ε=%.3g, K=%d, H=1, d=3, U_max=2; user 1 has φ=e0 (D) or e1 (D′); output: all released Λ̃, ỹ, final V",
				ngoEps, auditK),
			ngoClaim, v.suffix != "", setupFailure(envErr, ngoErr), run))
	}
	luyoBrks := map[string]luyoBroken{"": {}, "/noise-div4": {noiseDiv: 4}, "/raw-planner": {rawPlanner: true}}
	for _, l := range []struct {
		name string
		B    int
		brks []string
	}{
		{"luyo-batched", 4, []string{"", "/noise-div4", "/raw-planner"}},
		{"luyo-nonbatched", auditK, []string{"", "/noise-div4"}},
	} {
		B := l.B
		eps, claim, err := nominalFor(luyoTightClaim(B))
		for _, suffix := range l.brks {
			brk := luyoBrks[suffix]
			brk.record = true
			run := func(side int, seed rng.Seed) ([]float64, error) {
				sd := seed.Child("agent")
				cfg := luyoAuditConfig(eps, B, &sd)
				cfg.broken = brk
				return runLuyoAudit(env, cfg, side)
			}
			ts = append(ts, target("linear-mdp/"+l.name+suffix,
				fmt.Sprintf("Luyo et al. Alg. 2 (App. E.1), B=%d, nominal ε=%.3g, K=%d, H=1, d=3; user 1 has φ=e0 (D) or e1 (D′); output: released Λ̃, ũ, final V",
					B, eps, auditK),
				claim, suffix != "", setupFailure(envErr, err), run))
		}
	}
	// Tree noise redrawn per release: observed through gramSums over gramK releases.
	for _, g := range []struct {
		name  string
		claim func(float64) (float64, error)
		run   func(eps float64, redraw bool, side int, seed rng.Seed) ([]float64, error)
	}{
		{"ngo-private", ngoGramClaim, func(eps float64, redraw bool, side int, seed rng.Seed) ([]float64, error) {
			return runNgoGram(env, eps, ngoBroken{redraw: redraw}, side, seed)
		}},
		{"luyo-nonbatched", luyoGramClaim, func(eps float64, redraw bool, side int, seed rng.Seed) ([]float64, error) {
			return runLuyoGram(env, eps, luyoBroken{redraw: redraw}, side, seed)
		}},
	} {
		eps, claim, err := nominalFor(g.claim)
		for _, redraw := range []bool{false, true} {
			run := func(side int, seed rng.Seed) ([]float64, error) { return g.run(eps, redraw, side, seed) }
			name := "linear-mdp/" + g.name + "/gram-sum"
			if redraw {
				name += "/tree-redraw"
			}
			ts = append(ts, target(name,
				fmt.Sprintf("%s Gram releases only, K=%d users, nominal ε=%.3g; user 1 has φ=e0 (D) or e1 (D′); output: (Σ_t (Λ̃_t[0,0]−Λ̃_t[1,1])/popcount(t), Σ_t (Λ̃_t[0,0]−Λ̃_t[1,1]))",
					g.name, gramK, eps),
				claim, redraw, setupFailure(envErr, err), run))
		}
	}
	return append(ts, practicalAuditTargets(env, envErr)...)
}

// practicalAuditEps is the nominal ε of the practical targets: their claim is exactly it (the
// exact μ-GDP conversion of the noise used, the element sensitivity √6 being attained on the
// audit pair).
const practicalAuditEps = 2.0

// practicalAuditConfig is the audited practical agent: K = auditK users, square-root
// factorisation counter (exact, no fit per run), releases after every user.
func practicalAuditConfig(seed *rng.Seed, batched bool) PracticalConfig {
	return PracticalConfig{Common: Common{K: auditK, Seed: seed}, Epsilon: practicalAuditEps, Delta: auditDelta,
		Counter: "sqrt", Batched: batched, BatchEvery: 2 * b2i(batched)}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// runPracticalAudit feeds the audit users (user 1 on side 1 reports the hostile reward 30,
// which the boundary clips to 1) and returns every release and the final V table.
func runPracticalAudit(env *model.MDP, cfg PracticalConfig, side int) ([]float64, error) {
	cfg.broken.record = true
	a, err := NewPractical(env, cfg)
	if err != nil {
		return nil, err
	}
	for k := 1; k <= auditK; k++ {
		a.BeginEpisode(k)
		s, act := auditUser(k, side)
		r := env.Reward(0, s, act)
		if k == 1 && side == 1 {
			r = 30
		}
		if err := a.Observe(0, s, act, r, 0); err != nil {
			return nil, err
		}
		a.EndEpisode()
	}
	if a.Err() != nil {
		return nil, a.Err()
	}
	var out []float64
	for _, v := range a.cur.log {
		out = append(out, v...)
	}
	return appendPolicy(out, a.pl), nil
}

// practicalAuditTargets are the targets of dprl's practical agents (low-switching and
// batched) and their broken variants: noise divided by 4, noise redrawn independently at every
// release (instead of the counter's correlated noise), reward clipping skipped (the hostile
// reward 30 enters), and a planner reading the exact statistics.
func practicalAuditTargets(env *model.MDP, envErr error) []audit.Target {
	var ts []audit.Target
	brks := map[string]practicalBroken{"": {}, "/noise-div4": {noiseDiv: 4}, "/no-clip": {noClip: true}, "/raw-planner": {rawPlanner: true}}
	for _, v := range []struct {
		name    string
		batched bool
		brks    []string
	}{
		{"practical-lsvi", false, []string{"", "/noise-div4", "/no-clip", "/raw-planner"}},
		{"practical-lsvi-batched", true, []string{"", "/noise-div4"}},
	} {
		for _, suffix := range v.brks {
			batched, brk := v.batched, brks[suffix]
			run := func(side int, seed rng.Seed) ([]float64, error) {
				sd := seed.Child("agent")
				cfg := practicalAuditConfig(&sd, batched)
				cfg.broken = brk
				return runPracticalAudit(env, cfg, side)
			}
			ts = append(ts, target("linear-mdp/"+v.name+suffix,
				fmt.Sprintf("%s (%s), nominal ε=%g, K=%d, H=1, d=3, sqrt counter; user 1 has (φ, r) = (e0, 1) (D) or (e1, 30→clipped) (D′); output: every released prefix, final V",
					v.name, PracticalLabel, practicalAuditEps, auditK),
				practicalAuditEps, suffix != "", setupFailure(envErr), run))
		}
	}
	// Noise redrawn per release: observed through a weighted sum of the releases over
	// practicalSumK users (the optimal statistic against independent per-release noise).
	for _, redraw := range []bool{false, true} {
		run := func(side int, seed rng.Seed) ([]float64, error) {
			sd := seed.Child("agent")
			cfg := practicalAuditConfig(&sd, false)
			cfg.K = practicalSumK
			cfg.broken.redraw = redraw
			return runPracticalSum(env, cfg, side)
		}
		name := "linear-mdp/practical-lsvi/release-sum"
		if redraw {
			name += "/redrawn"
		}
		ts = append(ts, target(name,
			fmt.Sprintf("practical-lsvi (%s), nominal ε=%g, K=%d users, sqrt counter; user 1 has (φ, r) = (e0, 1) (D) or (e1, 1) (D′); output: (Σ_t D_t/s_t², Σ_t D_t), D_t the release's user-1 contrast",
				PracticalLabel, practicalAuditEps, practicalSumK),
			practicalAuditEps, redraw, setupFailure(envErr), run))
	}
	return ts
}

// practicalSumK is the number of users of the release-sum targets.
const practicalSumK = 128

// runPracticalSum feeds practicalSumK users and reduces the releases to (Σ_t D_t/s_t², Σ_t D_t)
// with D_t = (Λ̃[0,0] − Λ̃[1,1]) + (b̃_0 − b̃_1) + (G̃[0]_0 − G̃[0]_1) in scaled coordinates and s_t
// the release's reported std: post-processing of the releases.
func runPracticalSum(env *model.MDP, cfg PracticalConfig, side int) ([]float64, error) {
	cfg.broken.record = true
	a, err := NewPractical(env, cfg)
	if err != nil {
		return nil, err
	}
	for k := 1; k <= cfg.K; k++ {
		s, act := auditUser(k, side)
		if err := a.Observe(0, s, act, env.Reward(0, s, act), 0); err != nil {
			return nil, err
		}
		a.EndEpisode()
	}
	l := a.cur.lay
	var x, y float64
	for t, p := range a.cur.log {
		dt := p[0] - p[l.d] + p[l.packed] - p[l.packed+1] + p[l.packed+l.d] - p[l.packed+l.d+1]
		st := a.stdAt(t + 1)
		x += dt / (st * st)
		y += dt
	}
	return []float64{x, y}, nil
}
