package lq

import (
	"github.com/dprl/dprl/agents/internal/agentkit"
	"github.com/dprl/dprl/agents/protocol"
)

// The curators of this family implement protocol.Snapshotter with the generic state walker
// (see agentkit.RestoreState).

// MarshalState implements protocol.Snapshotter.
func (c *Server) MarshalState() ([]byte, error) { return protocol.MarshalState(c) }

// RestoreState implements protocol.Snapshotter: c must be fresh, built as the snapshotted one.
func (c *Server) RestoreState(b []byte) error { return agentkit.RestoreState(c, b) }

// MarshalState implements protocol.Snapshotter.
func (c *PracticalServer) MarshalState() ([]byte, error) { return protocol.MarshalState(c) }

// RestoreState implements protocol.Snapshotter: c must be fresh, built as the snapshotted one.
func (c *PracticalServer) RestoreState(b []byte) error { return agentkit.RestoreState(c, b) }

var (
	_ protocol.Snapshotter = (*Server)(nil)
	_ protocol.Snapshotter = (*PracticalServer)(nil)
)
