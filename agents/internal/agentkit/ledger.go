package agentkit

import (
	"errors"
	"fmt"

	"github.com/dprl/dprl/privacy/counter"
	"github.com/dprl/dprl/privacy/ledger"
	"github.com/dprl/dprl/privacy/noise"
)

// RegisterCounter registers the Gaussian continual counter of a practical curator as
// ledger.EntryCounter and returns its sensitivity factor and the σ the ledger calibrates for it.
// e carries the caller's part of the entry (Counter, Sensitivity, Releases = the counter's
// capacity, Dim, Grid, Inputs); the name, mechanism, factor, Secure flag and release slack are
// filled in here. A real-valued factorisation fed by a Secure source adds the rounding of its
// noise prediction to μ (counter.SecureReleaseSlack, ledger.CounterParams): the ledger aims
// below μ by that much and its report adds it back.
func RegisterCounter(led *ledger.Ledger, build counter.Builder, e ledger.Entry, secure bool) (factor, sigma float64, err error) {
	factor, slack, err := ledger.CounterParams(build, e.Dim, e.Releases, secure)
	if err != nil {
		return 0, 0, err
	}
	e.Name, e.Mechanism = ledger.EntryCounter, ledger.GaussianCounter
	e.Factor, e.Secure, e.ReleaseSlack = factor, secure, slack
	if err := led.Register(e); err != nil {
		return 0, 0, err
	}
	if sigma, err = led.Calibrate(ledger.EntryCounter); err != nil {
		return 0, 0, err
	}
	return factor, sigma, nil
}

// CalibratedCounter is RegisterCounter (secure = src.Secure()) followed by the construction of
// the counter: it builds the counter of cfg (Dim, Capacity and CoordScale; Sigma is set here to
// the calibrated σ divided by div), checks that its sensitivity factor does not exceed the
// calibrated one, records its release std (StdAt(Capacity)·div) in the ledger and returns the
// counter with the ledger's composed report. div = 1 is the sound curator; div > 1 is a broken
// variant whose report is NOT what its noise gives.
func CalibratedCounter(led *ledger.Ledger, build counter.Builder, e ledger.Entry, cfg counter.GaussianConfig, src noise.Source, div float64) (counter.GaussianCounter, ledger.Report, error) {
	factor, sigma, err := RegisterCounter(led, build, e, src.Secure())
	if err != nil {
		return nil, ledger.Report{}, err
	}
	cfg.Sigma = sigma / div
	cnt, err := build(cfg, src)
	if err != nil {
		return nil, ledger.Report{}, err
	}
	if f := cnt.SensitivityFactor(); f > factor*(1+1e-12) {
		return nil, ledger.Report{}, fmt.Errorf("practical curator: counter factor %g exceeds the calibrated %g", f, factor)
	}
	if err := led.SetReleaseStd(ledger.EntryCounter, cnt.StdAt(cfg.Capacity)*div); err != nil {
		return nil, ledger.Report{}, err
	}
	rep, err := led.Compose()
	if err != nil {
		return nil, ledger.Report{}, err
	}
	return cnt, rep, nil
}

// CuratorCounter returns the counter of a practical JDP curator and the ledger's composed
// report. A non-private curator (private false: the noise-off twin, which releases exact sums)
// has no counter. A private one needs a noise source and gets CalibratedCounter(led, build, e,
// cfg, src, div); build nil stands for the registry's counter named e.Counter.
func CuratorCounter(led *ledger.Ledger, private bool, build counter.Builder, e ledger.Entry, cfg counter.GaussianConfig, src noise.Source, div float64) (counter.GaussianCounter, ledger.Report, error) {
	if !private {
		rep, err := led.Compose()
		return nil, rep, err
	}
	if src == nil {
		return nil, ledger.Report{}, errors.New("practical curator: a noise source is required")
	}
	if build == nil {
		k, err := counter.NewRegistry().Lookup(e.Counter)
		if err != nil {
			return nil, ledger.Report{}, err
		}
		build = k.Build
	}
	return CalibratedCounter(led, build, e, cfg, src, div)
}

// CalibratedReport registers the Gaussian report each user of a practical LDP agent sends as
// ledger.EntryReport (factor 1, one release per user; with a Secure source, secure, rounded to
// the grid of σ) and returns the σ the ledger calibrates for it with the ledger's composed
// report. e carries the caller's part of the entry (Sensitivity, Dim, Grid, Inputs).
func CalibratedReport(led *ledger.Ledger, e ledger.Entry, secure bool) (sigma float64, rep ledger.Report, err error) {
	e.Name, e.Mechanism, e.Secure = ledger.EntryReport, ledger.Gaussian, secure
	if err := led.Register(e); err != nil {
		return 0, ledger.Report{}, err
	}
	if sigma, err = led.Calibrate(ledger.EntryReport); err != nil {
		return 0, ledger.Report{}, err
	}
	rep, err = led.Compose()
	return sigma, rep, err
}
