package main

import (
	"github.com/dprl/dprl/internal/auditregistry"
	"github.com/dprl/dprl/privacy/audit"
)

// auditTargets returns every registered audit target (internal/auditregistry; a family
// registers its targets there).
func auditTargets() []audit.Target { return auditregistry.All() }
