package linmdp

import (
	"github.com/dprl/dprl/agents/protocol"
	"github.com/dprl/dprl/privacy/noise"
)

// The curators of this family implement protocol.Snapshotter with the generic state walker
// (protocol.MarshalState): their whole state, the counters' noise sources and public random
// streams included, is saved and restored exactly (TestSnapshotRestore in experiment/families
// checks every servable agent bit for bit).

// MarshalState implements protocol.Snapshotter.
func (c *Curator) MarshalState() ([]byte, error) { return protocol.MarshalState(c) }

// RestoreState implements protocol.Snapshotter: c must be fresh, built as the snapshotted one.
func (c *Curator) RestoreState(b []byte) error { return protocol.RestoreState(c, b, lazySources()...) }

// lazySources are the noise sources an agent may create after construction (restored even
// when the fresh curator has none yet).
func lazySources() []any { return []any{(*noise.Secure)(nil)} }

var (
	_ protocol.Snapshotter = (*Curator)(nil)
)
