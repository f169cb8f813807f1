package practical

import (
	"github.com/dprl/dprl/experiment/engine"
)

// Session builds the one agent of a served RunSpec of the suite (engine.Servable) with the
// streams st, through the same specConfig, environment and build as a unit of `dprl run`, so a
// served experiment with the run's seed publishes the run's policies.
func (u Suite) Session(s *engine.RunSpec, st engine.Streams) (engine.Served, error) {
	cfg, err := specConfig(s, u.envs())
	if err != nil {
		return engine.Served{}, err
	}
	cs, err := cfg.curves()
	if err != nil {
		return engine.Served{}, err
	}
	cv := cs[0]
	m, err := cfg.env(cv)
	if err != nil {
		return engine.Served{}, err
	}
	ln, err := build(m, cv, cv.Episodes, cfg.Delta, cfg.Noise == "secure", st)
	if err != nil {
		return engine.Served{}, err
	}
	return engine.Served{Session: ln.sess, Privacy: ln.report, Statement: ln.privacy}, nil
}
