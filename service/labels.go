package service

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"strings"

	"github.com/dprl/dprl/experiment/engine"
)

// No false labels. An experiment says it is private only when the agent's own accountant
// certifies the (ε, δ) it was created with (engine.Served.PrivateAt); a non-private experiment
// exists only when asked for (non_private: true, with neither ε nor δ) and says NON-PRIVATE on
// the page, in the ledger and in the API. The labels are recomputed from the definition and the
// built agent every time (label), never stored, so an experiment stored before these checks is
// labelled by what its agent actually gives.

// nonPrivatePrefix starts the statement of every experiment that gives no guarantee.
const nonPrivatePrefix = "NON-PRIVATE: "

func badRequest(field, format string, args ...any) *result {
	return &result{http.StatusBadRequest, apiError{Code: "invalid_request", Field: field, Message: fmt.Sprintf(format, args...)}}
}

// checkPrivacyRequest checks the privacy fields of a create request before anything is built:
// δ, when given, in (0, 1) (omitted: engine.DefaultDelta for a private experiment, filled in
// req.Delta); ε, when given, finite and > 0; a private experiment (the default) names its ε,
// a non-private one (non_private) names neither ε nor δ.
func checkPrivacyRequest(req *createRequest) *result {
	if req.Delta != nil && !(*req.Delta > 0 && *req.Delta < 1) {
		return badRequest("delta", "delta: must lie in (0, 1), got %g (omit it for the default δ = %g)", *req.Delta, engine.DefaultDelta)
	}
	if req.Epsilon != nil && (!(*req.Epsilon > 0) || math.IsInf(*req.Epsilon, 0)) {
		return badRequest("epsilon", "epsilon: must be finite and > 0, got %g (a non-private baseline is created with non_private: true and no epsilon)", *req.Epsilon)
	}
	switch {
	case req.NonPrivate && req.Epsilon != nil:
		return badRequest("epsilon", "epsilon: a non-private experiment (non_private: true) takes no ε: it would read as a guarantee the agent does not give")
	case req.NonPrivate && req.Delta != nil:
		return badRequest("delta", "delta: a non-private experiment (non_private: true) takes no δ: it would read as a guarantee the agent does not give")
	case !req.NonPrivate && req.Epsilon == nil:
		return badRequest("epsilon", "epsilon: required: the ε of the experiment's guarantee (a non-private baseline must be asked for with non_private: true)")
	}
	if !req.NonPrivate && req.Delta == nil {
		d := engine.DefaultDelta
		req.Delta = &d
	}
	return nil
}

// checkLabels checks the built experiment x against what req asked for: a private experiment
// must be private at its (ε, δ) by its agent's own accountant (engine.Served.PrivateAt); a
// non-private one must be of an agent that claims no guarantee.
func checkLabels(x *experiment, req *createRequest) *result {
	agent := x.spec.Agents[0]
	if req.NonPrivate {
		if x.served.ClaimsPrivacy() {
			return badRequest("non_private", "non_private: agent %s is a private agent: create it with its ε (non_private is for baselines that claim no guarantee)", agent)
		}
		return nil
	}
	err := x.served.PrivateAt(*req.Epsilon, *req.Delta)
	switch {
	case errors.Is(err, engine.ErrNonPrivate):
		return badRequest("epsilon", "epsilon: agent %s gives no (ε, δ) guarantee at any ε (%v); create it with non_private: true and no epsilon", agent, err)
	case err != nil:
		return badRequest("epsilon", "epsilon: agent %s gives no (ε = %g, δ = %g) guarantee: %v", agent, *req.Epsilon, *req.Delta, err)
	}
	return nil
}

// private reports whether the experiment is private at the (ε, δ) of its definition by its
// agent's own accountant.
func (x *experiment) private() bool {
	return len(x.spec.Privacy.Epsilons) == 1 && x.served.PrivateAt(x.spec.Privacy.Epsilons[0], x.spec.Privacy.Delta) == nil
}

// label sets the labels of the experiment's public state l (snapshot): whether it is private
// (a non-private one states no ε, δ or μ, and its statement starts with NON-PRIVATE) and
// whether it is a simulation (only a simulation shows a simulated regret curve).
func (x *experiment) label(l *ledgerResponse) {
	l.Simulation = x.def.Simulated
	if !x.def.Simulated {
		l.Simulated = nil
	}
	l.Private = x.private()
	if !l.Private {
		l.Epsilon, l.Delta, l.Mu, l.AchievedEpsilon = 0, 0, 0, 0
		if !strings.HasPrefix(l.Statement, nonPrivatePrefix) {
			l.Statement = nonPrivatePrefix + "no privacy guarantee (" + l.Statement + ")"
		}
	}
}
