package client

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"fmt"

	"github.com/dprl/dprl/agents/protocol"
	"github.com/dprl/dprl/experiment/engine"
)

// The user, not the server, decides her noise (issue 25 item 4). A locally private user
// builds her randomiser from public parameters she knows and consents to — her own (ε, δ),
// the experiment's public dimensions and agent — through the agent's own calibration (the
// local session), never from what the server publishes; the server's ledger figures and its
// published user_side are only checked against hers, and on a mismatch that would give her
// less noise she sends nothing.

// ownGuarantee sets the users' own (ε, δ) in spec for a locally private agent and checks the
// server's ledger against them: probe is the session built from spec as the ledger describes
// it (used only to learn whether the agent is locally private, from the local agent's
// header, not the server's word). In seeded test mode without an own ε the ledger's values
// are kept (its noise is predictable anyway).
func ownGuarantee(spec *engine.RunSpec, l *Ledger, o SimOptions, probe protocol.Session) error {
	if probe.Expect().Kind != protocol.KindPrivatized {
		return nil
	}
	if o.Epsilon == 0 && o.Seed != nil {
		return nil
	}
	if !(o.Epsilon > 0) {
		return fmt.Errorf("epsilon: a locally private user states her own ε (and δ) and computes her noise from it; got %v", o.Epsilon)
	}
	if !(o.Delta > 0 && o.Delta < 1) {
		return fmt.Errorf("delta: a locally private user states her own δ in (0, 1); got %v", o.Delta)
	}
	if l.Epsilon != o.Epsilon {
		return fmt.Errorf("epsilon: the server's ledger says %v, the user's own guarantee is %v: refusing to report", l.Epsilon, o.Epsilon)
	}
	if l.Delta != o.Delta {
		return fmt.Errorf("delta: the server's ledger says %v, the user's own guarantee is %v: refusing to report", l.Delta, o.Delta)
	}
	spec.Privacy.Epsilons = []float64{o.Epsilon}
	spec.Privacy.Delta = o.Delta
	return nil
}

// userSideCheck returns the check of every published policy's user_side for the users of
// session s (its curator's protocol.UserSideChecker: the users' own randomiser parameters),
// or nil when the agent publishes none to check.
func userSideCheck(s protocol.Session) func(pub json.RawMessage) error {
	c, ok := s.Curator().(protocol.UserSideChecker)
	if !ok {
		return nil
	}
	return c.CheckUserSide
}

// userStreams returns the simulated users' streams and their noise source's name. By default
// (seed nil) the run seed is drawn from crypto/rand and the LDP noise is "secure": the
// agents' deployment default, a noise.Secure source seeded from the operating system's CSPRNG
// (Streams.Key stays nil), so no one — not the server, not a replay of this run — can predict
// a user's noise. Only an explicit seed (test mode) makes both come from it ("seeded").
func userStreams(seed *uint64) (engine.Streams, string, error) {
	if seed != nil {
		return engine.Streams{Seed: *seed}, "seeded", nil
	}
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return engine.Streams{}, "", err
	}
	return engine.Streams{Seed: binary.LittleEndian.Uint64(b[:])}, "secure", nil
}
