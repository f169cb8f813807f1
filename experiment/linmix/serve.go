package linmix

import "github.com/dprl/dprl/experiment/engine"

var _ engine.Servable = Family{}

// Session implements engine.Servable: every linear-mixture agent (the papers' UCRL-VTR,
// UCRL-VTR+, LinOpt-VI/PO and dprl's practical-vtr, in every mode) is served. The one curve of
// the served RunSpec (checked by engine.CheckServed) is translated by the same specConfig and
// curves as `dprl run` and built by the same newUnit as its unit with the seed st.Seed (the
// environment drawn from it too), so with seeded noise a served agent publishes the run's
// rules. With privacy.noise secure the agent's noise comes from st's secure sources (keyed by
// st.Key: a restarted service redraws the same noise; crypto-seeded without a key); under LDP
// that noise is the users' randomiser's, and the curator holds none. The rule's wire form is
// agents/linmix.Rule's JSON: the policy and the public values (and, for UCRL-VTR+, billboard and
// widths) the users' leaves read.
func (Family) Session(s *engine.RunSpec, st engine.Streams) (engine.Served, error) {
	cfg, err := specConfig(engine.ServedSpec(s, st))
	if err != nil {
		return engine.Served{}, err
	}
	curves, err := cfg.curves()
	if err != nil {
		return engine.Served{}, err
	}
	if len(curves) != 1 {
		return engine.Served{}, engine.ServedUnitsError(len(curves), "curves")
	}
	u, err := cfg.newUnit(curves[0], st, s.Privacy.Noise == "secure")
	if err != nil {
		return engine.Served{}, err
	}
	sess, _ := u.a.Session()
	statement := u.ur.Constants.Privacy // the summary's privacy column
	if u.practical == nil && curves[0].Mode == "none" {
		statement = "non-private"
	}
	if u.ur.Guarantee != nil {
		return engine.Served{Session: sess, Privacy: *u.ur.Guarantee, Statement: statement, Users: engine.FromOne}, nil
	}
	return engine.Served{Session: sess, Privacy: u.ur.Constants, Statement: statement, Users: engine.FromOne}, nil
}
