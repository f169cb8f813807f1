package agentkit

import (
	"github.com/dprl/dprl/agents/protocol"
	"github.com/dprl/dprl/privacy/noise"
)

// The curators of every family implement protocol.Snapshotter with the generic state walker
// (protocol.MarshalState and RestoreState below): their whole state, the counters' noise
// sources and public random streams included, is saved and restored exactly
// (TestSnapshotRestore in experiment/families checks every servable agent bit for bit).

// RestoreState is protocol.RestoreState into the fresh curator c, which may create a noise
// source only after construction (a Secure source is restored even when c has none yet).
func RestoreState(c any, b []byte) error {
	return protocol.RestoreState(c, b, (*noise.Secure)(nil))
}
