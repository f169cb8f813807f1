package store

import (
	"errors"
	"io"
)

// Backend is what `dprl serve` needs of its durable state, whichever engine holds it: the
// embedded bbolt file of this package (*Store, the default) or PostgreSQL (package
// service/store/pgstore). Every implementation gives the same guarantees, which the shared
// conformance suite (package service/store/storetest) checks on each:
//
//   - Append is atomic and durable when it returns nil (the service acknowledges a report only
//     then: commit before publish); it refuses a stale next sequence number and a second record
//     of a user, writing nothing;
//   - the participation index (Contributed) keeps each user's sequence number and original
//     idempotency key, also after her raw record was deleted by a snapshot;
//   - SaveSnapshot writes a snapshot and deletes the records it covers, never before the
//     snapshot is committed (bbolt: in its transaction, those the participation index holds;
//     PostgreSQL: in a transaction after it);
//     ReplayAfter replays the records after a snapshot in order;
//   - the participation key never changes; the credential key changes only by rotation;
//     revocations are durable.
type Backend interface {
	// UserKey is the participation key (HMAC key of the user digests).
	UserKey() [32]byte
	// CredentialKey is the key that signs the users' credentials, with its version.
	CredentialKey() CredentialKey
	// Create stores a new experiment; its ID must be new.
	Create(e *Experiment) error
	// Experiments returns every stored experiment, in ID order.
	Experiments() ([]*Experiment, error)
	// Append appends recs to experiment id's log in one transaction; next is the sequence
	// number the log expects (its length + 1).
	Append(id string, next uint64, recs []*Record) error
	// ReplayAfter calls f with every record of experiment id's log after record `after`, in
	// order.
	ReplayAfter(id string, after uint64, f func(seq uint64, r *Record) error) error
	// Contributed returns the sequence number and idempotency key of user's acknowledged
	// report to experiment id (seq 0 if none).
	Contributed(id string, user [32]byte) (seq uint64, idem string, err error)
	// Revoke records revoked participation digests of experiment id; it returns how many
	// were new.
	Revoke(id string, users [][32]byte) (int, error)
	// Revoked reports whether a participation digest is revoked for experiment id.
	Revoked(id string, user [32]byte) (bool, error)
	// HasRevocations reports whether experiment id has any revoked digest (while it has none,
	// the service skips Revoked on every report).
	HasRevocations(id string) (bool, error)
	// RotateCredentialKey draws a new credential key under the next version.
	RotateCredentialKey() (CredentialKey, error)
	// SaveSnapshot stores snap as experiment id's latest snapshot and, unless retain,
	// deletes the records it covers (never before the snapshot is committed; some may be
	// left to a later snapshot).
	SaveSnapshot(id string, snap *Snapshot, retain bool, hook SnapshotHook) (int, error)
	// LatestSnapshot returns experiment id's latest snapshot, or nil.
	LatestSnapshot(id string) (*Snapshot, error)
	// LogLength returns the number of records ever appended to experiment id's log and the
	// number still stored.
	LogLength(id string) (appended uint64, stored int, err error)
	// Damaged returns the damage found while the store was open, or nil.
	Damaged() error
	// Probe commits a tiny transaction (after commit failures: has storage healed?).
	Probe() error
	// SetCommitHooks installs crash-test hooks inside Append's transaction (tests only).
	SetCommitHooks(h *CommitHooks)
	// Close closes the store.
	Close() error
}

// Compacter is a Backend whose file can hold free space (bbolt): the service compacts it at
// startup when more than half of it is free.
type Compacter interface {
	// Sparse reports the file's size and the bytes in its free pages.
	Sparse() (size, free int64, err error)
	// Compact rewrites the file without its free pages.
	Compact() (before, after int64, err error)
}

// Backuper is a Backend that can stream a consistent copy of itself (bbolt: one read
// transaction). PostgreSQL is backed up with its own tools (pg_dump, pg_basebackup; docs/serve.md).
type Backuper interface {
	// Backup writes a consistent copy to w, calling begin with its exact size first, and
	// returns the bytes written.
	Backup(w io.Writer, begin func(size int64) error) (int64, error)
}

// ErrNotLeader is matched (errors.Is) by the error of a write refused because this server is
// not, or no longer, the leader of a shared database (package pgstore): nothing was written.
var ErrNotLeader = errors.New("this server is not the leader")

var (
	_ Backend   = (*Store)(nil)
	_ Compacter = (*Store)(nil)
	_ Backuper  = (*Store)(nil)
)
