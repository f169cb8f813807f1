package ledger

import (
	"fmt"
	"math"
	"strings"

	"github.com/dprl/dprl/privacy/accounting"
)

// Report is dprl's one privacy report: the guarantee of a run composed by the ledger from the
// noise actually used — never copied from the nominal ε — with every mechanism it composed.
// Agents return it, summaries and manifests print it (String, JSON) and the auditor checks it.
// Its JSON encoding is stable: fixed field order, entries in registration order, Inputs keys
// sorted.
type Report struct {
	// Subject optionally names what the report is about (an agent and its label).
	Subject string `json:"subject,omitempty"`
	// Model is JDP, LDP, None or NoiseOff.
	Model string `json:"model" jsonschema:"enum=jdp|ldp|none|noise-off"`
	// Neighbouring is the relation of every entry's sensitivity.
	Neighbouring accounting.Neighbouring `json:"neighbouring" jsonschema:"enum=replace-one|zero-out"`
	// Nominal and Delta are the requested (ε, δ).
	Nominal float64 `json:"nominal_epsilon,omitempty"`
	Delta   float64 `json:"delta,omitempty"`
	// Guarantee is the notion of the composed guarantee: accounting.KindGDP (every entry
	// μ-GDP; Mu), accounting.KindPureDP (every entry pure; PureEpsilon) or accounting.KindZCDP
	// (a mix, or zCDP entries; Rho). Empty when nothing is composed.
	Guarantee   string  `json:"guarantee,omitempty" jsonschema:"enum=gdp|pure-dp|zcdp|declared"`
	Mu          float64 `json:"mu,omitempty"`
	PureEpsilon float64 `json:"pure_epsilon,omitempty"`
	Rho         float64 `json:"rho,omitempty"`
	// Epsilon is the smallest ε with (ε, Delta)-DP implied by the guarantee (exact for μ-GDP;
	// Bun–Steinke for zCDP; the pure ε itself).
	Epsilon float64 `json:"epsilon,omitempty"`
	// PrivateAtNominal is Epsilon ≤ Nominal (up to a relative 1e-9); true for None and for a
	// noise-off twin without entries (they claim nothing).
	PrivateAtNominal bool `json:"private_at_nominal"`
	// Secure says some entry's noise comes from a hardened source.
	Secure bool `json:"secure_noise"`
	// Assumption is the modelling assumption the agent makes.
	Assumption string `json:"assumption,omitempty"`
	// Public is the public structure the agent uses without spending privacy budget on it
	// (Config.Public), printed after the guarantee.
	Public string `json:"public,omitempty"`
	// Entries are the composed mechanisms, in registration order.
	Entries []Entry `json:"entries,omitempty"`
}

// Private reports whether the report claims a guarantee (JDP or LDP).
func (r Report) Private() bool { return r.Model == JDP || r.Model == LDP }

// Entry returns the entry called name (the zero Entry and false if there is none).
func (r Report) Entry(name string) (Entry, bool) {
	for _, e := range r.Entries {
		if e.Name == name {
			return e, true
		}
	}
	return Entry{}, false
}

// Sigma returns σ of the first Gaussian entry (0 if there is none): the noise level of an
// agent with one Gaussian mechanism.
func (r Report) Sigma() float64 {
	for _, e := range r.Entries {
		if e.Mechanism != Laplace {
			return e.Sigma
		}
	}
	return 0
}

// WithNoiseDivided returns the report of the same mechanisms with every entry's noise (σ or b)
// divided by div (broken variants and audits: what a run with less noise than calibrated
// guarantees).
func (r Report) WithNoiseDivided(div float64) (Report, error) {
	if !(div > 0) || math.IsInf(div, 0) {
		return Report{}, fmt.Errorf("ledger: divisor must be finite and > 0, got %v", div)
	}
	out := r
	out.Entries = append([]Entry(nil), r.Entries...)
	for i := range out.Entries {
		e := &out.Entries[i]
		e.setNoise(e.noise() / div)
		e.ReleaseStd /= div
	}
	return out, out.compose()
}

// compose fills the guarantee fields from the entries.
func (r *Report) compose() error {
	r.Guarantee, r.Mu, r.PureEpsilon, r.Rho, r.Epsilon, r.Secure = "", 0, 0, 0, 0, false
	for i := range r.Entries {
		e := &r.Entries[i]
		if err := e.validate(); err != nil {
			return err
		}
		r.Secure = r.Secure || e.Secure
	}
	if r.Model == None || (r.Model == NoiseOff && len(r.Entries) == 0) {
		r.PrivateAtNominal = true
		return nil
	}
	if len(r.Entries) == 0 {
		return fmt.Errorf("ledger: a %s report needs at least one mechanism", r.Model)
	}
	var gdp []accounting.GDP
	var pure []accounting.PureDP
	var zcdp []accounting.ZCDP
	for i := range r.Entries {
		e := &r.Entries[i]
		n := e.noise()
		if !(n > 0) {
			return fmt.Errorf("ledger: entry %q has no noise (calibrate it first)", e.Name)
		}
		e.RoundedSensitivity = e.rounded(n)
		switch e.class() {
		case classGDP:
			if e.ReleaseStd == 0 && e.Mechanism == Gaussian {
				e.ReleaseStd = e.Sigma
			}
			g, err := accounting.GaussianGDP(e.RoundedSensitivity*e.Factor, e.Sigma)
			if err != nil {
				return fmt.Errorf("ledger: entry %q: %w", e.Name, err)
			}
			if e.ReleaseSlack > 0 {
				if g, err = accounting.NewGDP(g.Mu + e.ReleaseSlack); err != nil {
					return fmt.Errorf("ledger: entry %q: %w", e.Name, err)
				}
			}
			gdp = append(gdp, g)
			zcdp = append(zcdp, g.ToZCDP())
		case classPure:
			if e.ReleaseStd == 0 && e.Releases == 1 {
				e.ReleaseStd = math.Sqrt2 * e.Scale
			}
			p, err := accounting.NewPureDP(accounting.LaplaceEpsilon(e.RoundedSensitivity*e.Factor, e.Scale))
			if err != nil {
				return fmt.Errorf("ledger: entry %q: %w", e.Name, err)
			}
			pure = append(pure, p)
			zcdp = append(zcdp, p.ToZCDP())
		case classZCDP:
			if e.ReleaseStd == 0 && e.Releases == 1 {
				e.ReleaseStd = e.Sigma
			}
			z, err := accounting.NewZCDP(accounting.GaussianRho(e.RoundedSensitivity*e.Factor, e.Sigma))
			if err != nil {
				return fmt.Errorf("ledger: entry %q: %w", e.Name, err)
			}
			zcdp = append(zcdp, z)
		}
	}
	var a accounting.ApproxDP
	var err error
	switch {
	case len(gdp) == len(r.Entries):
		var g accounting.GDP
		if g, err = accounting.ComposeGDP(gdp...); err == nil {
			r.Guarantee, r.Mu = accounting.KindGDP, g.Mu
			a, err = g.ToApproxDP(r.Delta)
		}
	case len(pure) == len(r.Entries):
		var p accounting.PureDP
		if p, err = accounting.ComposePure(pure...); err == nil {
			r.Guarantee, r.PureEpsilon = accounting.KindPureDP, p.Epsilon
			a = accounting.ApproxDP{Epsilon: p.Epsilon, Delta: r.Delta}
		}
	default:
		var z accounting.ZCDP
		if z, err = accounting.ComposeZCDP(zcdp...); err == nil {
			r.Guarantee, r.Rho = accounting.KindZCDP, z.Rho
			a, err = z.ToApproxDP(r.Delta)
		}
	}
	if err != nil {
		return fmt.Errorf("ledger: %w", err)
	}
	r.Epsilon = a.Epsilon
	r.PrivateAtNominal = r.Epsilon <= r.Nominal*(1+1e-9)
	return nil
}

// String summarises the report in one line: the model, the (ε, δ) it implies, the composed
// guarantee, and for each entry its sensitivity (with the Secure rounding), noise and counter;
// a non-private report states its assumption instead. A report with public structure (Public) ends
// with it.
func (r Report) String() string {
	var b strings.Builder
	if r.Subject != "" {
		b.WriteString(r.Subject + ": ")
	}
	if !r.Private() {
		b.WriteString("non-private (exact statistics)")
		if r.Model == NoiseOff {
			b.WriteString(", noise-off twin")
			if s := r.Sigma(); s > 0 {
				fmt.Fprintf(&b, " of σ=%.5g", s)
			}
		}
		if r.Assumption != "" {
			b.WriteString("; " + r.Assumption)
		}
		if r.Public != "" {
			b.WriteString("; " + r.Public)
		}
		return b.String()
	}
	fmt.Fprintf(&b, "%s (ε=%.4g, δ=%g) %s: ", r.Model, r.Epsilon, r.Delta, r.Neighbouring)
	switch r.Guarantee {
	case accounting.KindGDP:
		fmt.Fprintf(&b, "μ=%.6g-GDP", r.Mu)
	case accounting.KindPureDP:
		fmt.Fprintf(&b, "ε=%.6g-DP", r.PureEpsilon)
	case accounting.KindZCDP:
		fmt.Fprintf(&b, "ρ=%.6g-zCDP", r.Rho)
	case Declared:
		b.WriteString("declared by the agent's own accountant (not composed by the ledger)")
	}
	for i, e := range r.Entries {
		switch {
		case len(r.Entries) == 1:
			b.WriteString(", ")
		case i == 0:
			b.WriteString(" = [" + e.Name + ": ")
		default:
			b.WriteString("] ⊕ [" + e.Name + ": ")
		}
		if e.Mechanism == Laplace {
			fmt.Fprintf(&b, "Δ₁=%.4g, b=%.5g", e.RoundedSensitivity, e.Scale)
		} else {
			fmt.Fprintf(&b, "Δ₂=%.4g, σ=%.5g", e.RoundedSensitivity, e.Sigma)
		}
		if e.Counter != "" {
			fmt.Fprintf(&b, ", counter %s (factor %.4g, %d releases", e.Counter, e.Factor, e.Releases)
			if s := e.ReleaseSlack; s > 0 {
				fmt.Fprintf(&b, ", release slack %.2g", s)
			}
			b.WriteString(")")
		} else if e.Factor != 1 || e.Releases != 1 {
			fmt.Fprintf(&b, " (factor %.4g, %d releases)", e.Factor, e.Releases)
		}
		if len(r.Entries) > 1 && i == len(r.Entries)-1 {
			b.WriteString("]")
		}
	}
	if !r.PrivateAtNominal {
		fmt.Fprintf(&b, " — NOT (%g, %g)-private", r.Nominal, r.Delta)
	}
	if r.Guarantee == Declared && r.Assumption != "" {
		b.WriteString("; " + r.Assumption)
	}
	if r.Public != "" {
		b.WriteString("; " + r.Public)
	}
	return b.String()
}

// Declared is the Guarantee of a report the ledger did not compose: dprl wrote it, without
// entries, for the linear-MDP, linear-mixture and LQ papers' agents before they registered
// their mechanisms with the ledger (issue 27 item 2). No agent produces it now; it stays a
// known value so that old run directories still validate (docs/run-directory.schema.json) and
// print (String).
const Declared = "declared"
