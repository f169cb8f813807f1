package service

import (
	"bytes"
	"encoding/binary"
	"encoding/gob"
	"errors"
	"fmt"
	"time"

	"github.com/dprl/dprl/agents/protocol"
	"github.com/dprl/dprl/service/store"
)

// Snapshots and retention (docs/serve.md): the committer saves an experiment's whole state —
// its curator's (protocol.Snapshotter: every counter, noise-source position and public stream)
// and what the server published (policy, release history, counts, the simulated curve) —
// every SnapshotEvery reports or SnapshotInterval, and when it stops, in one transaction with
// the deletion of the raw reports the snapshot covers (unless RetainReports). A restart
// restores the latest snapshot and replays only the reports after it. An agent whose curator
// is not a Snapshotter is never snapshotted: its log is kept whole and replayed.

// snapshotPolicy says when the committer snapshots.
type snapshotPolicy struct {
	every    int           // reports between snapshots (0: never by count)
	interval time.Duration // time between snapshots (0: never by time)
	retain   bool          // keep the raw reports the snapshots cover
}

// Snapshot hook points (crash-point tests; faultHooks).
const (
	hookBeforeSnapshot hookPoint = 100 + iota // the snapshot is about to be written
	hookInSnapshot                            // the covered records deleted, the snapshot not yet written, nothing committed
	hookAfterSnapshot                         // the snapshot transaction committed
)

// snapState is the published part of a snapshot (gob: floats exactly, ±Inf and NaN
// included).
type snapState struct {
	Users    int
	Version  uint64
	Body     []byte
	ETag     string
	Versions []versionAt
	Curve    []curvePoint
	Cum      float64
	SimUsers int
	Skipped  uint64
}

// encodeSnapshot frames the published state and the curator's state.
func encodeSnapshot(ps *snapState, cur []byte) ([]byte, error) {
	var meta bytes.Buffer
	if err := gob.NewEncoder(&meta).Encode(ps); err != nil {
		return nil, err
	}
	b := binary.AppendUvarint(nil, uint64(meta.Len()))
	b = append(b, meta.Bytes()...)
	return append(b, cur...), nil
}

func decodeSnapshot(b []byte) (*snapState, []byte, error) {
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)-k) {
		return nil, nil, errors.New("snapshot: bad framing")
	}
	ps := new(snapState)
	if err := gob.NewDecoder(bytes.NewReader(b[k : k+int(n)])).Decode(ps); err != nil {
		return nil, nil, fmt.Errorf("snapshot: %w", err)
	}
	return ps, b[k+int(n):], nil
}

// snapshotter returns the curator's Snapshotter, or nil if it has none.
func (x *experiment) snapshotter() protocol.Snapshotter {
	s, _ := x.served.Session.Curator().(protocol.Snapshotter)
	return s
}

// restoreSnapshot restores the latest snapshot of the experiment into x.served (a fresh
// session) and, if pub, the published state, and returns the number of reports it covers.
// Without a snapshot it returns 0 and, if reset, resets the published state to the fresh
// curator's (a startup feed restarting after a curator panic). The feed then replays the
// records after it.
func (x *experiment) restoreSnapshot(st store.Backend, pub, reset bool) (uint64, error) {
	snap, err := st.LatestSnapshot(x.def.ID)
	if err != nil {
		return 0, err
	}
	if snap == nil {
		if pub && reset {
			x.mu.Lock()
			x.users, x.cum, x.simUsers, x.curve, x.versions, x.pub = 0, 0, 0, nil, nil, published{}
			x.mu.Unlock()
			return 0, x.publish()
		}
		return 0, nil
	}
	ps, cur, err := decodeSnapshot(snap.State)
	if err != nil {
		return 0, fmt.Errorf("snapshot at report %d: %w", snap.Seq, err)
	}
	if uint64(ps.Users) != snap.Seq {
		return 0, fmt.Errorf("snapshot at report %d: it holds %d users", snap.Seq, ps.Users)
	}
	sn := x.snapshotter()
	if sn == nil {
		return 0, fmt.Errorf("snapshot at report %d: the curator %T cannot restore a snapshot", snap.Seq, x.served.Session.Curator())
	}
	if err := sn.RestoreState(cur); err != nil {
		return 0, fmt.Errorf("snapshot at report %d: %w", snap.Seq, err)
	}
	x.snapBase = snap.Seq
	if pub {
		x.mu.Lock()
		x.users, x.cum, x.simUsers, x.curve, x.versions = ps.Users, ps.Cum, ps.SimUsers, ps.Curve, ps.Versions
		x.pub = published{version: ps.Version, body: ps.Body, etag: ps.ETag}
		x.mu.Unlock()
		x.skipped = ps.Skipped
	}
	return snap.Seq, nil
}

// maybeSnapshot is called by the committer after a batch was committed, published and
// acknowledged (the curator is then exactly in step with the durable log): it snapshots when
// the policy says so (final: the committer is stopping).
func (x *experiment) maybeSnapshot(st store.Backend, final bool) {
	if x.stale != nil || x.snapDisabled || x.sinceSnap == 0 {
		return
	}
	p := x.snapPolicy
	due := final || (p.every > 0 && x.sinceSnap >= p.every) || (p.interval > 0 && time.Since(x.lastSnap) >= p.interval)
	if !due || (!final && p.every == 0 && p.interval == 0) {
		return
	}
	sn := x.snapshotter()
	if sn == nil {
		x.snapDisabled = true
		x.logf("experiment %s: its curator cannot be snapshotted: a restart replays its whole log, which is kept", x.def.ID)
		return
	}
	if err := x.saveSnapshot(st, sn); err != nil {
		x.logf("experiment %s: snapshot failed (the log is kept; retrying at the next one): %v", x.def.ID, err)
		return
	}
}

// saveSnapshot writes the snapshot (and deletes the raw reports it covers) in one transaction.
func (x *experiment) saveSnapshot(st store.Backend, sn protocol.Snapshotter) error {
	if err := x.hooks.at(hookBeforeSnapshot); err != nil {
		return err
	}
	cur, err := sn.MarshalState()
	if err != nil {
		return err
	}
	if err := x.checkRestores(cur); err != nil {
		// Never write a snapshot a restart could not restore exactly (its raw reports would
		// be gone): this experiment keeps its whole log and replays it.
		x.snapDisabled = true
		return fmt.Errorf("its curator's state does not round-trip (snapshots disabled, the log is kept): %w", err)
	}
	x.mu.RLock()
	ps := &snapState{Users: x.users, Version: x.pub.version, Body: x.pub.body, ETag: x.pub.etag, Versions: x.versions,
		Curve: x.curve, Cum: x.cum, SimUsers: x.simUsers, Skipped: x.skipped}
	b, err := encodeSnapshot(ps, cur)
	x.mu.RUnlock()
	if err != nil {
		return err
	}
	var hook store.SnapshotHook
	if x.hooks != nil {
		hook = func() error { return x.hooks.at(hookInSnapshot) }
	}
	deleted, err := st.SaveSnapshot(x.def.ID, &store.Snapshot{Seq: uint64(ps.Users), State: b}, x.snapPolicy.retain, hook)
	if err != nil {
		return err
	}
	x.sinceSnap, x.lastSnap = 0, time.Now()
	x.logf("experiment %s: snapshot at report %d (%d bytes), %d raw reports deleted", x.def.ID, ps.Users, len(b), deleted)
	return x.hooks.at(hookAfterSnapshot)
}

// Snapshot defaults (Config): a restart after a crash replays at most this many reports.
const (
	DefaultSnapshotEvery    = 2000
	DefaultSnapshotInterval = time.Minute
)

// snapshotPolicy returns the configured policy.
func (s *Server) snapshotPolicy() snapshotPolicy {
	p := snapshotPolicy{every: s.cfg.SnapshotEvery, interval: s.cfg.SnapshotInterval, retain: s.cfg.RetainReports}
	switch {
	case p.every == 0:
		p.every = DefaultSnapshotEvery
	case p.every < 0:
		p.every = 0
	}
	switch {
	case p.interval == 0:
		p.interval = DefaultSnapshotInterval
	case p.interval < 0:
		p.interval = 0
	}
	return p
}

// compactSparse compacts the database at startup when more than half of its file is free
// pages (deleted reports) and the file is larger than 1 MiB. A store without such a file
// (PostgreSQL reclaims space itself) is left alone.
func compactSparse(b store.Backend, logf func(string, ...any)) error {
	st, ok := b.(store.Compacter)
	if !ok {
		return nil
	}
	size, free, err := st.Sparse()
	if err != nil {
		return err
	}
	if size < 1<<20 || 2*free <= size {
		return nil
	}
	before, after, err := st.Compact()
	if err != nil {
		return err
	}
	logf("database compacted: %d bytes → %d bytes", before, after)
	return nil
}

// checkRestores restores cur into a fresh curator of the experiment and checks that its state
// encodes to the same bytes: a snapshot is written only if a restart can restore it exactly.
func (x *experiment) checkRestores(cur []byte) error {
	fresh, err := x.session()
	if err != nil {
		return err
	}
	sn, ok := fresh.Session.Curator().(protocol.Snapshotter)
	if !ok {
		return fmt.Errorf("a fresh curator %T is not a Snapshotter", fresh.Session.Curator())
	}
	if err := sn.RestoreState(cur); err != nil {
		return err
	}
	again, err := sn.MarshalState()
	if err != nil {
		return err
	}
	if !bytes.Equal(again, cur) {
		return errors.New("the restored state differs from the saved one")
	}
	return nil
}
