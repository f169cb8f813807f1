package tabular

import (
	"github.com/dprl/dprl/agents/internal/agentkit"
	"github.com/dprl/dprl/agents/protocol"
)

// The curators of this family implement protocol.Snapshotter with the generic state walker
// (see agentkit.RestoreState).

// MarshalState implements protocol.Snapshotter.
func (c *TrustedCurator) MarshalState() ([]byte, error) { return protocol.MarshalState(c) }

// RestoreState implements protocol.Snapshotter: c must be fresh, built as the snapshotted one.
func (c *TrustedCurator) RestoreState(b []byte) error { return agentkit.RestoreState(c, b) }

// MarshalState implements protocol.Snapshotter.
func (c *LocalCurator) MarshalState() ([]byte, error) { return protocol.MarshalState(c) }

// RestoreState implements protocol.Snapshotter: c must be fresh, built as the snapshotted one.
func (c *LocalCurator) RestoreState(b []byte) error { return agentkit.RestoreState(c, b) }

var (
	_ protocol.Snapshotter = (*TrustedCurator)(nil)
	_ protocol.Snapshotter = (*LocalCurator)(nil)
)
