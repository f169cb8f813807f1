// Package auditregistry lists every registered privacy-audit target: the privacy mechanisms
// and the private agents of every family, correct ones and deliberately broken variants. It
// sits above the agent packages (which define the targets) and below cmd/dprl (which runs
// them), so that the slow statistical check of every target (TestAuditEveryFamily) runs in its
// own package, not in the CLI's tests.
package auditregistry

import (
	agentslinmdp "github.com/dprl/dprl/agents/linmdp"
	agentslinmix "github.com/dprl/dprl/agents/linmix"
	agentslq "github.com/dprl/dprl/agents/lq"
	"github.com/dprl/dprl/agents/tabular"
	"github.com/dprl/dprl/privacy/audit"
)

// All returns every registered audit target. Each family adds one line here, calling its own
// package's AuditTargets function.
func All() []audit.Target {
	ts := audit.MechanismTargets()
	ts = append(ts, audit.GaussianCounterTargets()...)
	ts = append(ts, tabular.AuditTargets()...)
	ts = append(ts, tabular.PracticalAuditTargets()...)
	ts = append(ts, agentslq.AuditTargets()...)
	ts = append(ts, agentslinmdp.AuditTargets()...)
	ts = append(ts, agentslinmix.AuditTargets()...)
	return ts
}
