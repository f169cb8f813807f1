package engine

import (
	"errors"
	"fmt"
	"math"

	linmdpagents "github.com/dprl/dprl/agents/linmdp"
	linmixagents "github.com/dprl/dprl/agents/linmix"
	lqagents "github.com/dprl/dprl/agents/lq"
	tabularagents "github.com/dprl/dprl/agents/tabular"
	"github.com/dprl/dprl/privacy/ledger"
)

// ErrNonPrivate is the error of PrivateAt for an agent that claims no guarantee at all (a
// non-private baseline or a noise-off twin).
var ErrNonPrivate = errors.New("the agent is non-private: it claims no (ε, δ) guarantee")

// relTol is the relative tolerance of every comparison of a certified ε or δ with the requested
// one (the accountants' own: ledger.Report.PrivateAtNominal).
const relTol = 1e-9

// ClaimsPrivacy reports whether the served agent's own privacy report claims a guarantee (its
// model is JDP or LDP and it adds noise). A report of a type it does not know claims none.
func (s Served) ClaimsPrivacy() bool {
	err := s.PrivateAt(math.MaxFloat64, math.Nextafter(1, 0))
	return !errors.Is(err, ErrNonPrivate) && !errors.Is(err, errUnknownReport)
}

var errUnknownReport = errors.New("its privacy report states no guarantee the service can check")

// PrivateAt reports whether the served agent, as built, gives an (eps, delta) guarantee: nil
// when it does, otherwise an error saying why not. The verdict is the agent's own accountant's,
// read from its privacy report (Served.Privacy), never the nominal ε it was asked for:
//
//   - privacy/ledger.Report (dprl's practical agents): a JDP or LDP model, PrivateAtNominal,
//     and the composed ε at the report's δ at most eps with that δ at most delta;
//   - agents/tabular.PrivacyReport (the papers' tabular agents, pure ε-DP): its ledger
//     report (PrivacyReport.Ledger, δ = 0), as above;
//   - agents/lq.Constants (Private-OFU-RL): Private, and its ledger report
//     (Constants.Ledger: the two Gaussian tree counters, μ-GDP), as above;
//   - agents/linmdp.Info (Ngo's and Luyo's agents): Private with noise, and its ledger
//     report (Info.Ledger: the Gram trees and the vector releases, μ-GDP), as above — the
//     printed constants (ngo-printed) are refused where the ledger's ε exceeds the nominal;
//   - agents/linmix.Constants (Luyo's and Zhou's agents): noise added, and its ledger report
//     (Constants.Ledger: the Gram and target statistics under replace-one, μ-GDP or pure
//     ε-DP for the Laplace calibration), as above.
//
// A report of any other type gives no guarantee (fail closed), as does a non-finite or
// non-positive eps or a delta outside [0, 1).
func (s Served) PrivateAt(eps, delta float64) error {
	if !(eps > 0) || math.IsInf(eps, 0) {
		return fmt.Errorf("ε must be finite and > 0, got %g", eps)
	}
	if !(delta >= 0 && delta < 1) {
		return fmt.Errorf("δ must be in [0, 1), got %g", delta)
	}
	above := func(got, want float64) bool { return !(got <= want*(1+relTol)) }
	switch r := s.Privacy.(type) {
	case *ledger.Report:
		if r == nil {
			return errUnknownReport
		}
		return Served{Privacy: *r}.PrivateAt(eps, delta)
	case ledger.Report:
		switch {
		case !r.Private():
			return ErrNonPrivate
		case !r.PrivateAtNominal || above(r.Epsilon, eps):
			return fmt.Errorf("its accountant certifies only ε = %.6g at δ = %g (asked ε = %g)", r.Epsilon, r.Delta, eps)
		case above(r.Delta, delta):
			return fmt.Errorf("its guarantee holds only at δ = %g (asked δ = %g)", r.Delta, delta)
		}
		return nil
	case tabularagents.PrivacyReport:
		// The papers' agents' pure ε-DP guarantee, as the ledger composes it (δ = 0).
		return Served{Privacy: r.Ledger}.PrivateAt(eps, delta)
	case lqagents.Constants:
		if !r.Private {
			return ErrNonPrivate
		}
		if r.Ledger.Model == "" {
			return errUnknownReport
		}
		// Private-OFU-RL's two Gaussian tree counters, as the ledger composes them.
		return Served{Privacy: r.Ledger}.PrivateAt(eps, delta)
	case linmdpagents.Info:
		if !r.Private || r.NoiseOff {
			return ErrNonPrivate
		}
		if r.Ledger.Model == "" {
			return errUnknownReport
		}
		// Ngo's and Luyo's Gram trees and vector releases, as the ledger composes them.
		return Served{Privacy: r.Ledger}.PrivateAt(eps, delta)
	case linmixagents.Constants:
		if r.NoiseKind == "none" || r.NoiseKind == "" {
			return ErrNonPrivate
		}
		if r.Ledger.Model == "" {
			return errUnknownReport
		}
		// Luyo's and Zhou's statistics (replace-one), as the ledger composes them.
		return Served{Privacy: r.Ledger}.PrivateAt(eps, delta)
	}
	return fmt.Errorf("%w (%T)", errUnknownReport, s.Privacy)
}

// Guarantee returns a privacy report of any family's agent (Served.Privacy) in the one report
// type, ledger.Report, always the ledger's composition of the mechanisms the agent registered:
// a ledger report as it is (dprl's practical agents); the papers' tabular agents'
// PrivacyReport.Ledger; the linear-MDP papers' agents' Info.Ledger, the linear-mixture ones'
// Constants.Ledger and Private-OFU-RL's Constants.Ledger (each built by the agent with its
// own nominal (ε, δ) and trust model); a non-private agent's report is ledger.None's. A report
// of any other type, or a private agent's without its ledger report, is an error. The trust
// model and the nominal (ε, δ) are the agent's own, registered with its ledger: the caller
// states neither.
func Guarantee(p any) (ledger.Report, error) {
	none := func() (ledger.Report, error) {
		l, err := ledger.New(ledger.Config{Model: ledger.None})
		if err != nil {
			return ledger.Report{}, err
		}
		return l.Compose()
	}
	switch r := p.(type) {
	case ledger.Report:
		return r, nil
	case *ledger.Report:
		if r == nil {
			return ledger.Report{}, errUnknownReport
		}
		return *r, nil
	case tabularagents.PrivacyReport:
		return r.Ledger, nil
	case lqagents.Constants:
		if !r.Private {
			return none()
		}
		if r.Ledger.Model == "" {
			return ledger.Report{}, fmt.Errorf("%w (a private lq.Constants without its ledger report)", errUnknownReport)
		}
		return r.Ledger, nil
	case linmdpagents.Info:
		if !r.Private || r.NoiseOff {
			return none()
		}
		if r.Ledger.Model == "" {
			return ledger.Report{}, fmt.Errorf("%w (a private linmdp.Info without its ledger report)", errUnknownReport)
		}
		return r.Ledger, nil
	case linmixagents.Constants:
		if r.NoiseKind == "none" || r.NoiseKind == "" {
			return none()
		}
		if r.Ledger.Model == "" {
			return ledger.Report{}, fmt.Errorf("%w (a private linmix.Constants without its ledger report)", errUnknownReport)
		}
		return r.Ledger, nil
	}
	return ledger.Report{}, fmt.Errorf("%w (%T)", errUnknownReport, p)
}
