package linmix

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/dprl/dprl/agents/protocol"
	"github.com/dprl/dprl/internal/bounds"
	model "github.com/dprl/dprl/model/linmix"
	"github.com/dprl/dprl/privacy/accounting"
	"github.com/dprl/dprl/privacy/noise"
	"github.com/dprl/dprl/rng"
)

// trajectory is one user's episode: states s_1..s_{H+1}, actions and observed rewards.
type trajectory struct {
	s []int
	a []int
	r []float64
}

// population is the users' side that both agents keep: user k's environment responses come
// from the stream users/k, reseeded into upcg and read through ur; tr is her trajectory and ev
// evaluates the published policies.
type population struct {
	users rng.Seed
	upcg  *rand.PCG
	ur    *rand.Rand
	tr    trajectory
	ev    *model.Evaluator
	sides // the contract (protocol.go): one curator and one user, by mode
}

// newPopulation returns the population of the users of m whose streams derive from seed.
func newPopulation(m *model.MDP, seed rng.Seed) population {
	upcg := rand.NewPCG(0, 0)
	return population{users: seed.Child("users"), upcg: upcg, ur: rand.New(upcg), ev: m.NewEvaluator()}
}

// serve has user k (her stream users/k) play the published policy p and report it, and returns
// the exact regret of p.
func (u *population) serve(k int, p protocol.Policy[*Rule]) (float64, error) {
	regret := u.ev.Regret(p.Rule.Policy)
	u.users.Index(uint64(k)).Reseed(u.upcg)
	return regret, u.play(k, p, u.ur)
}

// Agent runs one linear-mixture algorithm, episode by episode, one user per episode:
// broadcast → user-side planning from the billboard → rollout → leaves → curator (JDP / none)
// or user-side randomiser + LDP server. It is not safe for concurrent use.
type Agent struct {
	cfg    Config
	m      *model.MDP
	consts Constants
	specs  []regSpec
	pl     *planner
	cur    *central
	srv    *LocalServer
	rnd    *Randomizer
	lv     *Leaves
	// privacyBase is Constants.Privacy before account appends the ledger's verdict.
	privacyBase string
	// sources returns the (memoised) noise source of tree (name, h, r) or of the LDP
	// randomiser ("ldp", 0, 0); nil before build has them (setup, CheckConstants).
	sources func(name string, h, r int) noise.Source
	population
}

// New builds an agent for m whose privacy noise comes from the hardened noise.Secure source
// (the default for anything but seeded experiments). seed drives the users' environment
// responses and the tie-breaking stream.
func New(m *model.MDP, cfg Config, seed rng.Seed) (*Agent, error) {
	return buildSecure(m, cfg, seed, func(string) noise.Source { return nil })
}

// NewSeeded builds an agent whose noise streams are derived from seed (reproducible research
// simulations; noise.Seeded is not hardened). Streams: "users/k" (user k's environment
// responses), "ties", "noise/<stat>/<h*R+r>" (one per tree) and "ldp" (the users' randomisers).
func NewSeeded(m *model.MDP, cfg Config, seed rng.Seed) (*Agent, error) {
	ns := seed.Child("noise")
	return build(m, cfg, seed, func(name string, h, r int) noise.Source {
		return noise.NewSeeded(ns.Child(name).Index(uint64(h*8 + r)).Rand())
	})
}

// NewWithNoise builds an agent whose privacy noise comes from src: src(path) is the source of
// the stream NewSeeded derives from seed/noise/path ("<stat>/<h*8+r>", "ldp/0"), and a nil
// source means a crypto-seeded noise.Secure (a service's keyed secure noise:
// engine.Streams.SecureNoise). seed drives the users' environment responses and the
// tie-breaking stream.
func NewWithNoise(m *model.MDP, cfg Config, seed rng.Seed, src func(path string) noise.Source) (*Agent, error) {
	if src == nil {
		return New(m, cfg, seed)
	}
	return buildSecure(m, cfg, seed, src)
}

// buildSecure builds an agent whose stream "<stat>/<h*8+r>" comes from src of that path, or
// from a fresh noise.Secure where src gives nil.
func buildSecure(m *model.MDP, cfg Config, seed rng.Seed, src func(path string) noise.Source) (*Agent, error) {
	var srcErr error
	a, err := build(m, cfg, seed, func(name string, h, r int) noise.Source {
		if s := src(fmt.Sprintf("%s/%d", name, h*8+r)); s != nil {
			return s
		}
		s, err := noise.NewSecure()
		if err != nil {
			srcErr = err
		}
		return s
	})
	if srcErr != nil {
		return nil, srcErr
	}
	return a, err
}

func build(m *model.MDP, cfg Config, seed rng.Seed, src func(name string, h, r int) noise.Source) (*Agent, error) {
	if m == nil {
		return nil, errors.New("linmix: nil environment")
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	a := &Agent{cfg: cfg, m: m, population: newPopulation(m, seed)}
	if err := a.setup(); err != nil {
		return nil, err
	}
	// The sources, memoised: asking whether one is Secure (secureStat) and building the trees
	// get the same source.
	src = memoSources(src)
	a.sources = src
	if a.anySecure() {
		// A Secure source rounds the statistics to its grid: the Laplace calibration widens
		// its scales to cover the rounding, and the ledger's entries carry it.
		if err := a.secureLaplace(); err != nil {
			return nil, err
		}
		if err := a.account(); err != nil {
			return nil, err
		}
	}
	a.pl = newPlanner(m, &a.cfg, seed.Child("ties").Rand())
	a.pl.beta = a.betas()
	if err := a.checkFinite(); err != nil {
		return nil, err
	}
	if cfg.Algorithm == UCRLVTRPlus {
		pc := a.plusConsts()
		a.pl.plus = &pc
	}
	H := m.Horizon()
	switch cfg.Mode {
	case LDP:
		a.srv = newLocalServer(H, a.specs)
		a.rnd = &Randomizer{specs: a.specs, src: src("ldp", 0, 0), dataScale: cfg.knobs.dataScale}
	default:
		cur, err := newCentral(H, cfg.Episodes, a.specs, src)
		if err != nil {
			return nil, err
		}
		a.cur = cur
		a.cur.raw = cfg.knobs.raw
		a.cur.dataScale = cfg.knobs.dataScale
		for i := range a.cur.mt {
			a.cur.mt[i].redraw = cfg.knobs.redraw
			a.cur.vt[i].redraw = cfg.knobs.redraw
		}
	}
	a.lv = newLeaves(H, a.specs)
	a.contract()
	return a, nil
}

func (a *Agent) plusConsts() PlusConstants {
	p := a.cfg.params(a.m)
	switch a.cfg.Mode {
	case JDP:
		return PlusJDP(p)
	case LDP:
		return PlusLDP(p)
	}
	return PlusNonPrivate(p)
}

// setup fixes every noise level, shift and width from public parameters (before any data).
func (a *Agent) setup() error {
	cfg := &a.cfg
	p := cfg.params(a.m)
	if cfg.Mode == None {
		p.Epsilon, p.Delta = 1, 0.5 // unused by the non-private constants
	}
	if err := p.validate(); err != nil {
		return fmt.Errorf("linmix: %w", err)
	}
	H, d, d2 := float64(p.H), p.D, p.D2
	cs := cfg.ShiftMult
	sym := noise.Mirror
	if cfg.Mode == JDP {
		sym = noise.SumSqrt2 // Luyo's SymAvg tree-node law (spec §0, P10)
	}
	kind := "gaussian"
	c := &a.consts
	c.BetaMult, c.ShiftMult = cfg.BetaMult, cfg.ShiftMult
	c.Covered = true // a non-private agent claims nothing; a private one's is the ledger's (account)
	c.EffectiveEpsilon = cfg.Epsilon
	switch cfg.Algorithm {
	case UCRLVTR:
		lc := cfg.luyoConstants(p)
		sp := regSpec{name: "p", dim: d, ridge: lc.Lambda, shift: cs * 2 * lc.Upsilon, floor: lc.Lambda, maxX: H, maxY: H, sym: sym}
		if cfg.Calibration == Laplace && cfg.Mode != None {
			kind = "laplace"
			sp.mat, sp.vec, sp.sym = noise.LaplaceNoise(lc.BB), noise.LaplaceNoise(lc.BG), noise.Mirror
			c.SigmaMat, c.SigmaVec = []float64{lc.BB}, []float64{lc.BG}
		} else if cfg.Mode != None {
			sp.mat, sp.vec = gauss(lc.SigmaB), gauss(lc.SigmaB)
			c.SigmaMat, c.SigmaVec = []float64{lc.SigmaB}, []float64{lc.SigmaB}
		}
		a.specs = []regSpec{sp}
		c.K0, c.Upsilon = lc.K0, []float64{lc.Upsilon}
		switch {
		case cfg.Mode == None:
			c.Privacy = "non-private"
		case cfg.Calibration == Laplace:
			c.Privacy = fmt.Sprintf("ε=%g pure %s (Luyo Remark 1; constants derived in the spec §3.5 [D])", cfg.Epsilon, cfg.Mode)
		case cfg.Calibration == ZCDP:
			c.Privacy = fmt.Sprintf("(ε=%g, δ=%g)-%s via zCDP calibration (spec P7 [D])", cfg.Epsilon, cfg.Delta, cfg.Mode)
		default:
			c.Privacy = luyoPrivacy(cfg, c)
		}
	case UCRLVTRPlus:
		pc := a.plusConsts()
		hat := regSpec{name: "hat", dim: d, ridge: pc.Lambda, shift: cs * 2 * pc.Upsilon1, floor: pc.Lambda, maxX: math.Sqrt(float64(d)), maxY: math.Sqrt(float64(d)), sym: sym}
		til := regSpec{name: "tilde", dim: d, ridge: pc.Lambda, shift: cs * 2 * pc.Upsilon2, floor: pc.Lambda, maxX: H * H, maxY: H * H, sym: sym}
		if cfg.Mode != None {
			hat.mat, hat.vec = gauss(pc.Sigma1), gauss(pc.Sigma1)
			til.mat, til.vec = gauss(pc.Sigma2), gauss(pc.Sigma2)
			c.SigmaMat, c.SigmaVec = []float64{pc.Sigma1, pc.Sigma2}, []float64{pc.Sigma1, pc.Sigma2}
		}
		a.specs = []regSpec{hat, til}
		c.K0, c.Upsilon = K0(p.K), []float64{pc.Upsilon1, pc.Upsilon2}
		if cfg.Mode == None {
			c.Privacy = "non-private"
		} else {
			c.Privacy = luyoPrivacy(cfg, c) + " (Cor. 10/11)"
		}
	default: // Zhou
		zc := cfg.zhouConstants(p)
		ridge := 0.0
		if cfg.Mode == None {
			ridge = 1
		}
		// Floor of the PD fallback: the shift's λ_min = Σ scaled like the shift, at least 1.
		sp := regSpec{name: "p", dim: d, ridge: ridge, shift: cs * 2 * zc.SigmaShiftP, floor: max(1, cs*zc.SigmaShiftP),
			maxX: math.Sqrt(float64(d)) * H, maxY: H, mat: gauss(zc.SigmaP1), vec: gauss(zc.SigmaP2), sym: noise.Mirror}
		sr := regSpec{name: "r", dim: d2, ridge: ridge, shift: cs * 2 * zc.SigmaShiftR, floor: max(1, cs*zc.SigmaShiftR),
			maxX: 1, maxY: 1, mat: gauss(zc.SigmaR1), vec: gauss(zc.SigmaR2), sym: noise.Mirror}
		a.specs = []regSpec{sp, sr}
		c.K0, c.Upsilon = zc.M, []float64{zc.SigmaShiftP, zc.SigmaShiftR}
		if cfg.Mode == None {
			c.Privacy = "non-private"
		} else {
			c.SigmaMat, c.SigmaVec = []float64{zc.SigmaP1, zc.SigmaR1}, []float64{zc.SigmaP2, zc.SigmaR2}
			simple, zcdp := ZhouAccount(cfg.Epsilon, cfg.Delta, p.H)
			conv := "Zhou's sensitivity convention (P8)"
			if cfg.StrictSensitivity {
				conv = "strict replace-one sensitivities (P8)"
			}
			zo, ro := ZhouNeighbourEpsilons(p, zc)
			c.Privacy = fmt.Sprintf("nominal (ε=%g, δ=%g)-%s; the paper's accounting of the 4H counters: simple composition ε=%.6g, zCDP ε=%.4g (zero-out ε=%.4g, replace-one ε=%.4g); %s", cfg.Epsilon, cfg.Delta, cfg.Mode, simple, zcdp, zo, ro, conv)
		}
	}
	if cfg.Mode == None {
		kind = "none"
		for i := range a.specs {
			a.specs[i].shift = 0
			a.specs[i].mat, a.specs[i].vec = noise.Calibration{}, noise.Calibration{}
		}
	}
	if cfg.knobs.noiseOff {
		kind = "none (test knob)"
		for i := range a.specs {
			a.specs[i].shift = 0
			a.specs[i].mat, a.specs[i].vec = noise.Calibration{}, noise.Calibration{}
			if a.specs[i].ridge == 0 {
				a.specs[i].ridge = 1
			}
		}
	}
	if f := cfg.knobs.noiseDiv; f > 0 {
		for i := range a.specs {
			a.specs[i].mat.Scale /= f
			a.specs[i].vec.Scale /= f
		}
	}
	c.NoiseKind = kind
	c.GridSlack = gridSlack(a.specs)
	for _, sp := range a.specs {
		c.Shift = append(c.Shift, sp.shift)
		c.Ridge = append(c.Ridge, sp.ridge)
	}
	a.privacyBase = c.Privacy
	return a.account()
}

// account registers the mechanisms the agent uses with the privacy ledger (ledgerReport) and
// reads its guarantee from the ledger's composition: Constants.Ledger (replace-one, the
// report every output prints), EffectiveEpsilon and Covered (the ledger's ε against the
// nominal), and for Zhou's agents, whose calibration is stated under zero-out neighbours, the
// ledger's ε under both relations. The agent computes no ε of its own. setup accounts before
// the noise sources exist (every entry as if seeded); build accounts again once they do, when
// some statistic's source is Secure (its entries then carry the grid rounding: ledgerReport,
// after secureLaplace widened a Laplace calibration's scales to cover it).
func (a *Agent) account() error {
	c := &a.consts
	g, err := a.ledgerReport(accounting.ReplaceOne)
	if err != nil {
		if e := a.checkFinite(); e != nil {
			return e
		}
		return fmt.Errorf("linmix: privacy ledger: %w", err)
	}
	c.Ledger = g
	if !g.Private() {
		return nil
	}
	c.EffectiveEpsilon, c.Covered = g.Epsilon, g.PrivateAtNominal
	if a.cfg.Algorithm == LinOptVI || a.cfg.Algorithm == LinOptPO {
		zo, err := a.ledgerReport(accounting.ZeroOut)
		if err != nil {
			return fmt.Errorf("linmix: privacy ledger: %w", err)
		}
		c.EpsilonZeroOut, c.EpsilonReplaceOne = zo.Epsilon, g.Epsilon
	}
	verdict := "private at the nominal ε"
	if !g.PrivateAtNominal {
		verdict = "NOT private at the nominal ε"
	}
	c.Privacy = a.privacyBase + fmt.Sprintf("; privacy ledger (replace-one): ε=%.4g at δ=%g, %s", g.Epsilon, g.Delta, verdict)
	return nil
}

// CheckConstants computes the public constants an agent for m with cfg would use (noise
// scales, shifts, widths; nothing is allocated for the data) and returns an error naming ε and
// the allowed range if any of them is not a finite number (a tiny ε overflows the scales ∝ 1/ε
// or underflows the zCDP budget), or a configuration error. Experiments call it for every
// curve before any compute.
func CheckConstants(m *model.MDP, cfg Config) error {
	if m == nil {
		return errors.New("linmix: nil environment")
	}
	if err := cfg.Validate(); err != nil {
		return err
	}
	a := &Agent{cfg: cfg, m: m}
	if err := a.setup(); err != nil {
		return err
	}
	a.betas()
	return a.checkFinite()
}

// checkFinite refuses non-finite (or, for a private agent, non-positive) noise scales and
// non-finite shifts and widths.
func (a *Agent) checkFinite() error {
	c := &a.consts
	bad := func(name string, xs []float64, positive bool) error {
		for _, x := range xs {
			if math.IsNaN(x) || math.IsInf(x, 0) || (positive && !(x > 0)) {
				return fmt.Errorf("linmix: epsilon: %g makes %s = %g (not a finite positive number); use a larger ε (dprl accepts ε in %s)", a.cfg.Epsilon, name, x, bounds.EpsilonRange)
			}
		}
		return nil
	}
	private := a.cfg.Mode != None && !a.cfg.knobs.noiseOff
	for _, v := range []struct {
		name     string
		xs       []float64
		positive bool
	}{{"the Gram noise scale", c.SigmaMat, private}, {"the vector noise scale", c.SigmaVec, private}, {"Υ", c.Upsilon, false},
		{"the regulariser shift", c.Shift, false}, {"the confidence width β", c.Beta, false}} {
		if err := bad(v.name, v.xs, v.positive); err != nil {
			return err
		}
	}
	return nil
}

// gridSlack returns Constants.GridSlack for the final (public) specs.
func gridSlack(specs []regSpec) float64 {
	worst := 0.0
	for _, sp := range specs {
		n := noise.PackedLen(sp.dim)
		for _, st := range []struct {
			cal   noise.Calibration
			n     int
			delta float64
			mult  float64
		}{{sp.mat, n, sp.maxX * sp.maxX, math.Sqrt2}, {sp.vec, sp.dim, sp.maxX * sp.maxY, 1}} {
			if st.cal.Off() {
				continue
			}
			// The largest per-coordinate multiplier (√2 on a SumSqrt2 diagonal) has the coarsest grid.
			switch st.cal.Kind {
			case noise.Laplace:
				worst = max(worst, float64(st.n)*noise.LaplaceGranularity(st.cal.Scale*st.mult)/st.delta)
			case noise.Gaussian:
				worst = max(worst, math.Sqrt(float64(st.n))*noise.GaussianGranularity(st.cal.Scale*st.mult)/st.delta)
			}
		}
	}
	return worst
}

// luyoConstants returns the constants of UCRL-VTR (Luyo et al.) in the configuration's mode
// and calibration.
func (cfg *Config) luyoConstants(p Params) LuyoConstants {
	switch {
	case cfg.Mode == None:
		return LuyoNonPrivate(p)
	case cfg.Calibration == Laplace:
		return LuyoLaplace(p, cfg.Mode == JDP)
	case cfg.Calibration == ZCDP:
		return LuyoZCDP(p, cfg.Mode == JDP)
	case cfg.Mode == JDP:
		return LuyoJDP(p)
	}
	return LuyoLDP(p)
}

// zhouConstants returns the constants of Zhou's LinOpt-VI/PO in the configuration's mode.
func (cfg *Config) zhouConstants(p Params) ZhouConstants {
	switch cfg.Mode {
	case None:
		return ZhouNonPrivate(p)
	case JDP:
		return zhouPrivate(p, true, cfg.StrictSensitivity)
	}
	return zhouPrivate(p, false, cfg.StrictSensitivity)
}

func luyoPrivacy(cfg *Config, c *Constants) string {
	if cfg.Epsilon < 1 {
		return fmt.Sprintf("(ε=%g, δ=%g)-%s (Luyo et al.)", cfg.Epsilon, cfg.Delta, cfg.Mode)
	}
	return fmt.Sprintf("nominal (ε=%g, δ=%g)-%s, outside Luyo et al.'s stated range ε < 1: not covered by the paper's analysis (spec P7)", cfg.Epsilon, cfg.Delta, cfg.Mode)
}

// betas returns the fixed widths used by the planner (after BetaMult).
func (a *Agent) betas() []float64 {
	cfg := &a.cfg
	p := cfg.params(a.m)
	var bs []float64
	switch cfg.Algorithm {
	case UCRLVTR:
		lc := cfg.luyoConstants(p)
		b := lc.BetaCorollary
		if cfg.BetaForm == Theorem7 {
			b = lc.BetaTheorem7
		}
		bs = []float64{b}
	case UCRLVTRPlus:
		pc := a.plusConsts()
		c, h, t := pc.Betas(cfg.Episodes)
		a.consts.Beta = []float64{c * cfg.BetaMult, h * cfg.BetaMult, t * cfg.BetaMult}
		return nil
	default:
		zc := cfg.zhouConstants(p)
		bs = []float64{zc.BetaP, zc.BetaR}
	}
	for i := range bs {
		if cfg.knobs.betaFixed > 0 {
			bs[i] = cfg.knobs.betaFixed
		}
		bs[i] *= cfg.BetaMult
	}
	a.consts.Beta = bs
	return bs
}

// Constants returns the public constants the agent uses (noise scales, shifts, widths,
// privacy statement).
func (a *Agent) Constants() Constants { return a.consts }

// Config returns the agent's configuration with defaults filled in.
func (a *Agent) Config() Config { return a.cfg }

// Billboard returns the statistics released for the next episode (read-only view).
func (a *Agent) Billboard() *Billboard {
	if a.srv != nil {
		return a.srv.bb
	}
	return a.cur.bb
}

// Episode plays one episode with the next user, whose environment responses come from the
// agent's environment, and returns the exact regret V*_1(s_1) − V^{π_k}_1(s_1). It is one
// step of the contract (Publish, Play from the user's stream users/k, Report, Receive: see
// protocol.go); runners drive the agent with protocol.Run on Session instead.
func (a *Agent) Episode() (float64, error) { return a.EpisodeIn(a.m) }

// EpisodeIn plays one episode with a user whose responses (transitions and rewards) come from
// env instead — used to build neighbouring user sequences (a user is a response tree). env must
// have the agent environment's shape. The regret is measured on the agent's environment.
func (a *Agent) EpisodeIn(env *model.MDP) (float64, error) { return a.episodeIn(env) }

// Run plays the remaining episodes up to K and returns the per-episode regrets.
func (a *Agent) Run() ([]float64, error) { return a.runTo(a.cfg.Episodes, a.Episode) }

// Diagnostics are per-run counters recorded with every run.
type Diagnostics struct {
	// PDFallbacks counts releases whose Gram matrix needed the eigenvalue clamp (spec P2).
	PDFallbacks int
	// SaturatedFraction is the fraction of (k, h, s) at which the optimistic value sits at its
	// cap (the bonus saturates, spec §7.4).
	SaturatedFraction float64
}

// Diagnostics returns the run's counters so far.
func (a *Agent) Diagnostics() Diagnostics {
	d := Diagnostics{}
	if a.srv != nil {
		d.PDFallbacks = a.srv.rl.fallbacks
	} else {
		d.PDFallbacks = a.cur.rl.fallbacks
	}
	if a.pl.cells > 0 {
		d.SaturatedFraction = float64(a.pl.saturated) / float64(a.pl.cells)
	}
	return d
}

// Policy returns the policy table of the last planned episode (read-only).
func (a *Agent) Policy() model.Policy { return a.pl.pol }
