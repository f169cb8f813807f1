package ledger

import (
	"fmt"
	"math"

	"github.com/dprl/dprl/privacy/accounting"
	"github.com/dprl/dprl/privacy/counter"
	"github.com/dprl/dprl/privacy/noise"
)

// Mechanism is the kind of a registered mechanism; it decides how the entry is accounted.
type Mechanism string

const (
	// GaussianCounter is a Gaussian continual counter (counter.GaussianCounter): its releases
	// post-process C·x + z, z ~ N(0, σ²I), so with per-element ℓ2 sensitivity Δ the whole
	// release sequence is (Δ·factor/σ)-GDP, factor = max_j ‖C e_j‖ (also on adaptive streams:
	// Denisov et al. 2022).
	GaussianCounter Mechanism = "gaussian-counter"
	// Gaussian is a one-shot Gaussian release (factor 1 unless stated), e.g. an LDP user's
	// report: μ = Δ/σ.
	Gaussian Mechanism = "gaussian"
	// GaussianZCDP is a Gaussian release (or counter) accounted in ρ-zCDP, ρ = (Δ·factor/σ)²/2,
	// the accounting of the papers' Gaussian agents.
	GaussianZCDP Mechanism = "gaussian-zcdp"
	// Laplace is a Laplace release of ℓ1 sensitivity Δ with scale b (a Laplace tree: factor =
	// nodes per element), pure ε = Δ·factor/b.
	Laplace Mechanism = "laplace"
)

// Norm is the norm a sensitivity is measured in.
type Norm string

const (
	// L2 is the Euclidean norm (Gaussian mechanisms), in units of the entry's coordinate scales.
	L2 Norm = "l2"
	// L1 is the ℓ1 norm (Laplace mechanisms).
	L1 Norm = "l1"
)

// Trust models of a report.
const (
	// JDP: a trusted curator releases the registered mechanisms' outputs (joint DP).
	JDP = "jdp"
	// LDP: each user privatises her own report (local DP).
	LDP = "ldp"
	// None: exact statistics, no claim.
	None = "none"
	// NoiseOff: a twin that calibrates the private agent's noise (for its widths) but adds
	// none; the report states that calibration and claims nothing.
	NoiseOff = "noise-off"
)

// Names of the entries dprl's agents register.
const (
	// EntryCounter is a JDP curator's continual counter.
	EntryCounter = "counter"
	// EntryReport is an LDP user's randomised report.
	EntryReport = "report"
)

// Grid describes what the Secure source's rounding of the statistic to its noise grid γ adds
// to the sensitivity (practical-privacy spec §7): Weight·γ, with γ the grid of noise std
// (σ or b)·Scale.
type Grid struct {
	// Weight W: rounding every coordinate to the grid moves the statistic by at most W·γ in the
	// entry's norm. 0 means unit coordinate scales: √Dim (ℓ2) or Dim (ℓ1).
	Weight float64 `json:"weight"`
	// Scale m: the statistic is rounded to the grid of noise std σ·m, m the smallest coordinate
	// scale. 0 means 1.
	Scale float64 `json:"scale"`
}

// Entry is one registered mechanism: its public parameters, fixed before any data, and (after
// calibration) its noise.
type Entry struct {
	// Name identifies the entry in its ledger (EntryCounter, EntryReport, …).
	Name      string    `json:"name"`
	Mechanism Mechanism `json:"mechanism" jsonschema:"enum=gaussian-counter|gaussian|gaussian-zcdp|laplace"`
	// Counter names the continual counter kind (GaussianCounter; "" otherwise).
	Counter string `json:"counter,omitempty"`
	// Norm and Neighbouring qualify Sensitivity: the largest distance, in Norm, between two
	// users' contributions under the Neighbouring relation.
	Norm         Norm                    `json:"norm" jsonschema:"enum=l1|l2"`
	Neighbouring accounting.Neighbouring `json:"neighbouring" jsonschema:"enum=replace-one|zero-out"`
	Sensitivity  float64                 `json:"sensitivity" jsonschema:"exclusiveMinimum=0"`
	// RoundedSensitivity is Sensitivity plus the Secure grid rounding Grid.Weight·γ at the
	// calibrated noise (equal to Sensitivity for a seeded source). Set by the ledger.
	RoundedSensitivity float64 `json:"sensitivity_with_rounding"`
	// Factor is the counter's sensitivity factor max_j ‖C e_j‖ (1 for a one-shot release; 0
	// means 1).
	Factor float64 `json:"sensitivity_factor"`
	// Sigma is the std of every i.i.d. Gaussian draw (before coordinate scales); Scale the
	// Laplace scale b. Set by Ledger.Calibrate (or given).
	Sigma float64 `json:"sigma,omitempty"`
	Scale float64 `json:"laplace_scale,omitempty"`
	// Releases is the number of releases (a counter's capacity; 1 for a one-shot report; 0
	// means 1).
	Releases int `json:"releases"`
	// ReleaseStd is the noise std of every coordinate (scale 1) of the last release: the
	// counter's StdAt(Releases) (Ledger.SetReleaseStd), σ for a one-shot Gaussian, √2·b for a
	// one-shot Laplace.
	ReleaseStd float64 `json:"release_std,omitempty"`
	// Dim is the number of coordinates of one release.
	Dim int `json:"dim"`
	// Secure says the noise comes from a hardened (grid) source; then Grid and ReleaseSlack
	// apply.
	Secure bool `json:"secure_noise"`
	Grid   Grid `json:"grid"`
	// ReleaseSlack is an additive μ slack of the entry (μ-GDP entries only):
	// counter.SecureReleaseSlack for a real-valued factorisation counter fed by a Secure source
	// (CounterParams), 0 otherwise. The calibration aims at μ − ReleaseSlack and the report
	// adds it back.
	ReleaseSlack float64 `json:"release_slack_mu,omitempty"`
	// Inputs are the public parameters the sensitivity and the release schedule are computed
	// from (e.g. "budget", "trace_cap", "visit_cap", "batch_every"), echoed in the report.
	Inputs map[string]float64 `json:"inputs,omitempty"`
}

// class is the accounting notion of an entry.
type class int

const (
	classGDP class = iota
	classPure
	classZCDP
)

func (e *Entry) class() class {
	switch e.Mechanism {
	case Laplace:
		return classPure
	case GaussianZCDP:
		return classZCDP
	}
	return classGDP
}

// noise returns the entry's calibration: σ (Gaussian) or b (Laplace).
func (e *Entry) noise() float64 {
	if e.Mechanism == Laplace {
		return e.Scale
	}
	return e.Sigma
}

func (e *Entry) setNoise(v float64) {
	if e.Mechanism == Laplace {
		e.Scale = v
	} else {
		e.Sigma = v
	}
}

// gridWeight returns Grid.Weight with its default.
func (e *Entry) gridWeight() float64 {
	if e.Grid.Weight > 0 {
		return e.Grid.Weight
	}
	if e.Mechanism == Laplace {
		return float64(e.Dim)
	}
	return math.Sqrt(float64(e.Dim))
}

// rounded returns the sensitivity of the statistic after the Secure source rounds it to the
// grid of noise n (σ or b) times Grid.Scale: Δ + W·γ (practical-privacy spec §7). For a seeded
// source nothing is rounded and Δ is returned.
func (e *Entry) rounded(n float64) float64 {
	if !e.Secure {
		return e.Sensitivity
	}
	m := e.Grid.Scale
	if m == 0 {
		m = 1
	}
	if e.Mechanism == Laplace {
		return e.Sensitivity + e.gridWeight()*noise.LaplaceGranularity(n*m)
	}
	return e.Sensitivity + e.gridWeight()*noise.GaussianGranularity(n*m)
}

// validate fills defaults and checks the public parameters; errors name the entry and field.
func (e *Entry) validate() error {
	bad := func(field, want string, v any) error {
		return fmt.Errorf("ledger: entry %q: %s must be %s, got %v", e.Name, field, want, v)
	}
	if e.Name == "" {
		return fmt.Errorf("ledger: an entry needs a name")
	}
	switch e.Mechanism {
	case GaussianCounter, Gaussian, GaussianZCDP:
		if e.Norm == "" {
			e.Norm = L2
		}
		if e.Norm != L2 {
			return bad("norm", "l2 for a Gaussian mechanism", e.Norm)
		}
	case Laplace:
		if e.Norm == "" {
			e.Norm = L1
		}
		if e.Norm != L1 {
			return bad("norm", "l1 for a Laplace mechanism", e.Norm)
		}
	default:
		return bad("mechanism", fmt.Sprintf("one of %s, %s, %s, %s", GaussianCounter, Gaussian, GaussianZCDP, Laplace), e.Mechanism)
	}
	if e.Factor == 0 {
		e.Factor = 1
	}
	if e.Releases == 0 {
		e.Releases = 1
	}
	pos := func(field string, v float64) error {
		if !(v > 0) || math.IsInf(v, 0) {
			return bad(field, "finite and > 0", v)
		}
		return nil
	}
	nonneg := func(field string, v float64) error {
		if !(v >= 0) || math.IsInf(v, 0) {
			return bad(field, "finite and >= 0", v)
		}
		return nil
	}
	if err := pos("sensitivity", e.Sensitivity); err != nil {
		return err
	}
	if err := pos("sensitivity_factor", e.Factor); err != nil {
		return err
	}
	for _, c := range []struct {
		field string
		v     float64
	}{{"sigma", e.Sigma}, {"laplace_scale", e.Scale}, {"grid.weight", e.Grid.Weight}, {"grid.scale", e.Grid.Scale},
		{"release_slack_mu", e.ReleaseSlack}, {"release_std", e.ReleaseStd}} {
		if err := nonneg(c.field, c.v); err != nil {
			return err
		}
	}
	if e.Releases < 1 {
		return bad("releases", ">= 1", e.Releases)
	}
	if e.Dim < 1 {
		return bad("dim", ">= 1", e.Dim)
	}
	if e.ReleaseSlack > 0 && e.class() != classGDP {
		return bad("release_slack_mu", "0 for a mechanism not accounted in μ-GDP", e.ReleaseSlack)
	}
	for k, v := range e.Inputs {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return bad("inputs."+k, "finite", v)
		}
	}
	if e.Neighbouring != accounting.ReplaceOne && e.Neighbouring != accounting.ZeroOut {
		return bad("neighbouring", "replace-one or zero-out", int(e.Neighbouring))
	}
	return nil
}

// Config is what a ledger's report is about: the trust model, the nominal target and the
// neighbouring relation every entry's sensitivity uses.
type Config struct {
	// Model is JDP, LDP, None or NoiseOff.
	Model string
	// Target is the nominal (ε, δ) (unused by None); δ = 0 is a pure ε-DP target (Laplace
	// entries only).
	Target accounting.ApproxDP
	// Neighbouring is the relation of every entry (the zero value is replace-one).
	Neighbouring accounting.Neighbouring
	// Subject optionally names what the report is about (printed first), e.g. an agent and its
	// label.
	Subject string
	// Assumption is a modelling assumption the agent makes (printed).
	Assumption string
	// Public names the public structure of the environment the agent uses instead of
	// spending privacy budget on it (e.g. a published reward table), printed with the
	// guarantee: what the report claims is private is only the rest.
	Public string
}

// Ledger collects an agent's mechanisms, calibrates them and composes them into its Report. It
// is not safe for concurrent use.
type Ledger struct {
	cfg     Config
	entries []Entry
}

// New returns an empty ledger. A private model needs a valid target; a noise-off twin needs one
// only to calibrate.
func New(cfg Config) (*Ledger, error) {
	switch cfg.Model {
	case JDP, LDP:
		if err := validTarget(cfg.Target); err != nil {
			return nil, err
		}
	case None, NoiseOff:
	default:
		return nil, fmt.Errorf("ledger: model must be one of %s, %s, %s, %s, got %q", JDP, LDP, None, NoiseOff, cfg.Model)
	}
	if cfg.Neighbouring != accounting.ReplaceOne && cfg.Neighbouring != accounting.ZeroOut {
		return nil, fmt.Errorf("ledger: neighbouring must be replace-one or zero-out, got %d", int(cfg.Neighbouring))
	}
	return &Ledger{cfg: cfg}, nil
}

// validTarget checks a private ledger's target: ε finite and > 0, and δ in (0, 1), or δ = 0
// for a pure ε-DP target (the papers' Laplace agents), which only pure (Laplace) entries can
// meet: calibrating or composing a Gaussian entry at δ = 0 fails.
func validTarget(t accounting.ApproxDP) error {
	if t.Delta == 0 {
		if _, err := accounting.NewPureDP(t.Epsilon); err != nil {
			return fmt.Errorf("ledger: target: %w", err)
		}
		return nil
	}
	if err := t.Validate(); err != nil {
		return fmt.Errorf("ledger: target: %w", err)
	}
	return nil
}

// Register adds a mechanism with its public parameters (before any data). Its neighbouring
// relation must be the ledger's; names are unique.
func (l *Ledger) Register(e Entry) error {
	if err := e.validate(); err != nil {
		return err
	}
	if e.Neighbouring != l.cfg.Neighbouring {
		return fmt.Errorf("ledger: entry %q: neighbouring %s differs from the ledger's %s", e.Name, e.Neighbouring, l.cfg.Neighbouring)
	}
	if _, ok := l.find(e.Name); ok {
		return fmt.Errorf("ledger: entry %q registered twice", e.Name)
	}
	if e.Inputs != nil {
		in := make(map[string]float64, len(e.Inputs))
		for k, v := range e.Inputs {
			in[k] = v
		}
		e.Inputs = in
	}
	l.entries = append(l.entries, e)
	return nil
}

func (l *Ledger) find(name string) (int, bool) {
	for i := range l.entries {
		if l.entries[i].Name == name {
			return i, true
		}
	}
	return -1, false
}

// Entries returns a copy of the registered entries.
func (l *Ledger) Entries() []Entry { return append([]Entry(nil), l.entries...) }

// Calibrate fixes the noise of the registered entry name for the ledger's target and returns
// it (σ for a Gaussian entry, b for a Laplace one). The target is shared equally by all
// registered entries (register them all first): n μ-GDP entries get μ/√n each, μ =
// accounting.GDPFor(target); n pure entries ε/n each; a mix is split in ρ-zCDP, ρ =
// accounting.ZCDPFor(target), ρ/n each. Gaussian entries then take GaussianSigma (the Secure
// grid's fixed point, aiming at the share less the release slack), Laplace ones LaplaceScale.
func (l *Ledger) Calibrate(name string) (float64, error) {
	i, ok := l.find(name)
	if !ok {
		return 0, fmt.Errorf("ledger: no entry %q to calibrate", name)
	}
	if l.cfg.Model == None {
		return 0, fmt.Errorf("ledger: entry %q: a non-private ledger calibrates no noise", name)
	}
	if err := validTarget(l.cfg.Target); err != nil {
		return 0, err
	}
	n := float64(len(l.entries))
	classes := map[class]bool{}
	for j := range l.entries {
		classes[l.entries[j].class()] = true
	}
	e := &l.entries[i]
	var v float64
	var err error
	switch {
	case len(classes) == 1 && classes[classGDP]:
		var g accounting.GDP
		if g, err = accounting.GDPFor(l.cfg.Target); err != nil {
			return 0, err
		}
		v, err = GaussianSigma(g.Mu/math.Sqrt(n), *e)
	case len(classes) == 1 && classes[classPure]:
		v, err = LaplaceScale(l.cfg.Target.Epsilon/n, *e)
	default:
		var z accounting.ZCDP
		if z, err = accounting.ZCDPFor(l.cfg.Target); err != nil {
			return 0, err
		}
		// Each entry's share ρ/n as an equivalent μ = √(2ρ/n) (or pure ε = √(2ρ/n)), lowered
		// until its zCDP conversion is within the share in float64.
		rho := z.Rho / n
		m := math.Sqrt(2 * rho)
		for m*m/2 > rho {
			m = math.Nextafter(m, 0)
		}
		switch e.class() {
		case classPure:
			v, err = LaplaceScale(m, *e)
		default:
			v, err = GaussianSigma(m, *e)
		}
	}
	if err != nil {
		return 0, fmt.Errorf("ledger: entry %q: %w", name, err)
	}
	e.setNoise(v)
	e.RoundedSensitivity = e.rounded(v)
	return v, nil
}

// SetReleaseStd records the noise std of the last release of entry name (a counter's
// StdAt(Releases), read from the counter built with the calibrated σ).
func (l *Ledger) SetReleaseStd(name string, std float64) error {
	i, ok := l.find(name)
	if !ok {
		return fmt.Errorf("ledger: no entry %q", name)
	}
	if !(std >= 0) || math.IsInf(std, 0) {
		return fmt.Errorf("ledger: entry %q: release std must be finite and >= 0, got %v", name, std)
	}
	l.entries[i].ReleaseStd = std
	return nil
}

// maxSteps bounds the calibration's fixed-point iterations and float nudges.
const maxSteps = 1 << 10

// GaussianSigma returns the smallest σ (up to the fixed point, which only raises σ) with
//
//	(Δ + W·γ(σ·m))·factor/σ ≤ mu − ReleaseSlack
//
// for the entry's public parameters (practical-privacy spec §2, §7): σ = Δ·factor/(μ − slack)
// rounded up to the first float that meets it, then, with a Secure source, raised until the
// grid rounding of its own grid is covered (γ is a non-decreasing step function of σ, so the
// iteration never passes the smallest solution). For a seeded source this is
// accounting.GDP{μ}.GaussianSigma(Δ·factor), bit for bit.
func GaussianSigma(mu float64, e Entry) (float64, error) {
	if err := e.validate(); err != nil {
		return 0, err
	}
	if e.class() == classPure {
		return 0, fmt.Errorf("ledger: entry %q is a Laplace mechanism", e.Name)
	}
	if !(mu > 0) || math.IsInf(mu, 0) {
		return 0, fmt.Errorf("ledger: mu must be finite and > 0, got %v", mu)
	}
	target := mu - e.ReleaseSlack
	if !(target > 0) {
		return 0, fmt.Errorf("ledger: entry %q: release slack %v leaves no budget of mu = %v", e.Name, e.ReleaseSlack, mu)
	}
	f := e.Factor
	sens := func(s float64) float64 { return e.rounded(s) }
	ok := func(s float64) bool { return sens(s)*f/s <= target }
	sigma := e.Sensitivity * f / target
	for range maxSteps {
		if ok(sigma) {
			return sigma, nil
		}
		next := sens(sigma) * f / target
		if next <= sigma {
			next = math.Nextafter(sigma, math.Inf(1))
		}
		sigma = next
		if math.IsInf(sigma, 0) {
			break
		}
	}
	return 0, fmt.Errorf("ledger: entry %q: no sigma found for mu = %v (sensitivity %v, factor %v)", e.Name, mu, e.Sensitivity, f)
}

// LaplaceScale returns the smallest scale b (up to the fixed point that only raises b) with
// (Δ₁ + W·γ_L(b·m))·factor/b ≤ eps for the entry's public parameters, γ_L the Secure Laplace
// grid (noise.LaplaceGranularity).
func LaplaceScale(eps float64, e Entry) (float64, error) {
	if err := e.validate(); err != nil {
		return 0, err
	}
	if e.class() != classPure {
		return 0, fmt.Errorf("ledger: entry %q is not a Laplace mechanism", e.Name)
	}
	if !(eps > 0) || math.IsInf(eps, 0) {
		return 0, fmt.Errorf("ledger: epsilon must be finite and > 0, got %v", eps)
	}
	f := e.Factor
	ok := func(b float64) bool { return e.rounded(b)*f/b <= eps }
	b := e.Sensitivity * f / eps
	for range maxSteps {
		if ok(b) {
			return b, nil
		}
		next := e.rounded(b) * f / eps
		if next <= b {
			next = math.Nextafter(b, math.Inf(1))
		}
		b = next
		if math.IsInf(b, 0) {
			break
		}
	}
	return 0, fmt.Errorf("ledger: entry %q: no Laplace scale found for epsilon = %v", e.Name, eps)
}

// CounterParams returns the public parameters of a Gaussian counter of the given kind for
// elements of dim coordinates over capacity releases, read from a noise-free one-coordinate
// instance (σ = 0, no source, no data; the encoder depends on the capacity only): its
// sensitivity factor and, if secure, its counter.SecureReleaseSlack for dim coordinates (from
// its RoundingGain; 0 for the trees; 0 when not secure).
func CounterParams(build counter.Builder, dim, capacity int, secure bool) (factor, slack float64, err error) {
	if dim < 1 {
		return 0, 0, fmt.Errorf("ledger: counter dim must be >= 1, got %d", dim)
	}
	c, err := build(counter.GaussianConfig{Dim: 1, Capacity: capacity}, nil)
	if err != nil {
		return 0, 0, err
	}
	factor = c.SensitivityFactor()
	if !secure {
		return factor, 0, nil
	}
	g, ok := c.(interface{ RoundingGain() float64 })
	if !ok {
		return 0, 0, fmt.Errorf("privacy.counter: counter %T does not report its rounding gain", c)
	}
	slack = counter.SecureReleaseSlack(g.RoundingGain(), capacity, dim)
	if math.IsNaN(slack) {
		return 0, 0, fmt.Errorf("privacy.counter: no release slack for dim %d, capacity %d", dim, capacity)
	}
	return factor, slack, nil
}

// Compose composes the registered entries into the ledger's Report (see Report). Every entry
// of a private or noise-off ledger must be calibrated.
func (l *Ledger) Compose() (Report, error) {
	r := Report{Model: l.cfg.Model, Subject: l.cfg.Subject, Neighbouring: l.cfg.Neighbouring, Assumption: l.cfg.Assumption, Public: l.cfg.Public}
	if l.cfg.Model != None {
		r.Nominal, r.Delta = l.cfg.Target.Epsilon, l.cfg.Target.Delta
	}
	r.Entries = l.Entries()
	return r, r.compose()
}
