package main

import (
	agentslinmdp "github.com/dprl/dprl/agents/linmdp"
	agentslinmix "github.com/dprl/dprl/agents/linmix"
	agentslq "github.com/dprl/dprl/agents/lq"
	"github.com/dprl/dprl/agents/tabular"
	"github.com/dprl/dprl/privacy/audit"
)

// auditTargets collects every registered audit target: the privacy mechanisms and the private
// agents of every family (correct ones and deliberately broken variants). Each family adds one
// line here, calling its own package's AuditTargets function.
func auditTargets() []audit.Target {
	ts := audit.MechanismTargets()
	ts = append(ts, audit.GaussianCounterTargets()...)
	ts = append(ts, tabular.AuditTargets()...)
	ts = append(ts, tabular.PracticalAuditTargets()...)
	ts = append(ts, agentslq.AuditTargets()...)
	ts = append(ts, agentslinmdp.AuditTargets()...)
	ts = append(ts, agentslinmix.AuditTargets()...)
	return ts
}
