package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Snapshots and retention (docs/serve.md, "Snapshots and retention").
//
// A snapshot is an experiment's complete state after its first Seq acknowledged reports (the
// curator's state, noise positions included, and what the server published), opaque to the
// store. It is written in one transaction with, unless the reports are retained, the deletion
// of the raw records it covers: a crash at any instant leaves either the old snapshot and the
// longer log or the new snapshot and the shorter log, never a gap. A restart restores the
// snapshot and replays only the records after it (ReplayAfter).
//
// Deleting a record must not lose what the participation check and idempotent retries need:
// a user's entry in users/<id> holds the sequence number followed by the original idempotency
// key (Append writes both), which Contributed reads. A database written before snapshots
// holds the sequence number only (8 bytes): Contributed then reads the key from the record,
// and trim completes the entry before it deletes the record, so such a database opens and
// works unchanged (no schema change: the snap bucket is created by the first snapshot).
//
// Layout added (bucket → key → value):
//
//	snap/<id>   "seq" → 8 bytes big-endian; "state" → the snapshot's bytes
func snapBucket(id string) []byte { return []byte("snap/" + id) }

// Snapshot is a saved experiment state.
type Snapshot struct {
	// Seq is the number of acknowledged reports the state covers (records 1..Seq).
	Seq uint64
	// State is the encoded state (the service's format).
	State []byte
}

// SnapshotHook, if non-nil, is called inside SaveSnapshot's transaction after the covered
// records were deleted and before the snapshot is written (tests: an error there rolls
// everything back, as a crash before the commit would).
type SnapshotHook func() error

// SaveSnapshot stores snap as experiment id's latest snapshot and, unless retain, deletes the
// raw records 1..snap.Seq, all in one transaction (one fsync). snap.Seq must not exceed the
// committed log nor precede the current snapshot. It returns the number of records deleted.
func (s *Store) SaveSnapshot(id string, snap *Snapshot, retain bool, hook SnapshotHook) (int, error) {
	deleted := 0
	check := func(tx *bolt.Tx) error {
		lb, ub := tx.Bucket(logBucket(id)), tx.Bucket(usersBucket(id))
		if lb == nil || ub == nil {
			return fmt.Errorf("experiment %s: no such experiment", id)
		}
		if n := lb.Sequence(); snap.Seq > n {
			return fmt.Errorf("experiment %s: snapshot at report %d, but the log has %d", id, snap.Seq, n)
		}
		if sb := tx.Bucket(snapBucket(id)); sb != nil {
			if v := sb.Get([]byte("seq")); len(v) == 8 && binary.BigEndian.Uint64(v) > snap.Seq {
				return fmt.Errorf("experiment %s: snapshot at report %d precedes the stored one (%d)", id, snap.Seq, binary.BigEndian.Uint64(v))
			}
		}
		return nil
	}
	del := func(tx *bolt.Tx) error {
		if retain {
			return nil
		}
		var err error
		// Up to the participation index's mark, or up to snap.Seq when few entries wait
		// (recent.go); trim writes the entry of any record it deletes that lacks one.
		deleted, err = trim(tx.Bucket(logBucket(id)), tx.Bucket(usersBucket(id)), trimBound(tx, id, snap.Seq))
		return err
	}
	put := func(tx *bolt.Tx) error {
		sb, err := tx.CreateBucketIfNotExists(snapBucket(id))
		if err != nil {
			return err
		}
		if err := sb.Put([]byte("seq"), seqKey(snap.Seq)); err != nil {
			return err
		}
		return sb.Put([]byte("state"), snap.State)
	}
	between := func(*bolt.Tx) error {
		if hook != nil {
			return hook()
		}
		return nil
	}
	err := inOne(s.update, check, del, between, put)
	if err != nil {
		s.invalidate(id)
	}
	return deleted, err
}

// inOne runs steps in one transaction: they commit together (one fsync) or not at all. The
// deletion of the raw records a snapshot covers and the snapshot itself must never be
// committed apart: records deleted without their snapshot would be lost.
func inOne(update func(func(*bolt.Tx) error) error, steps ...func(*bolt.Tx) error) error {
	return update(func(tx *bolt.Tx) error {
		for _, f := range steps {
			if err := f(tx); err != nil {
				return err
			}
		}
		return nil
	})
}

// trim deletes the records 1..upto of lb, keeping each user's sequence number and idempotency
// key in ub (Append writes both; an entry of a database written before snapshots holds the
// sequence number only and is completed from the record).
func trim(lb, ub *bolt.Bucket, upto uint64) (int, error) {
	var keys [][]byte
	c := lb.Cursor()
	for k, v := c.First(); k != nil && binary.BigEndian.Uint64(k) <= upto; k, v = c.Next() {
		if len(v) < 32 {
			return 0, fmt.Errorf("record %d: short record", binary.BigEndian.Uint64(k))
		}
		if e := ub.Get(v[:32]); len(e) <= 8 {
			r, err := decodeRecord(v)
			if err != nil {
				return 0, fmt.Errorf("record %d: %w", binary.BigEndian.Uint64(k), err)
			}
			if err := ub.Put(r.User[:], append(append([]byte(nil), k...), r.Idem...)); err != nil {
				return 0, err
			}
		}
		keys = append(keys, append([]byte(nil), k...))
	}
	// Deleted by key after the scan (a cursor that deletes as it goes skips records).
	for _, k := range keys {
		if err := lb.Delete(k); err != nil {
			return 0, err
		}
	}
	return len(keys), nil
}

// LatestSnapshot returns experiment id's latest snapshot, or nil if it has none.
func (s *Store) LatestSnapshot(id string) (*Snapshot, error) {
	var snap *Snapshot
	err := s.view(func(tx *bolt.Tx) error {
		sb := tx.Bucket(snapBucket(id))
		if sb == nil {
			return nil
		}
		seq, state := sb.Get([]byte("seq")), sb.Get([]byte("state"))
		if len(seq) != 8 || state == nil {
			return fmt.Errorf("experiment %s: damaged snapshot", id)
		}
		snap = &Snapshot{Seq: binary.BigEndian.Uint64(seq), State: append([]byte(nil), state...)}
		return nil
	})
	return snap, err
}

// ReplayAfter calls f with every record of experiment id's log after record `after`, in
// order (after+1, after+2, …). Records up to `after` may have been deleted (retention) or
// kept (they are skipped); a missing record after `after` is an error.
func (s *Store) ReplayAfter(id string, after uint64, f func(seq uint64, r *Record) error) error {
	return s.view(func(tx *bolt.Tx) error {
		lb := tx.Bucket(logBucket(id))
		if lb == nil {
			return fmt.Errorf("experiment %s: no such experiment", id)
		}
		if n := lb.Sequence(); n < after {
			return fmt.Errorf("experiment %s: the snapshot covers %d reports, the log has %d", id, after, n)
		}
		c := lb.Cursor()
		k, v := c.Seek(seqKey(after + 1))
		want, err := replayLog(id, c, k, v, after+1, f)
		if err != nil {
			return err
		}
		if want != lb.Sequence()+1 {
			return fmt.Errorf("experiment %s: log ends at record %d, its length is %d", id, want-1, lb.Sequence())
		}
		return nil
	})
}

// Contributed returns the sequence number and idempotency key of user's acknowledged report
// to experiment id (seq 0 if none), whether its raw record was deleted or not.
func (s *Store) Contributed(id string, user [32]byte) (seq uint64, idem string, err error) {
	rs, err := s.ready(id)
	if err != nil {
		return 0, "", err
	}
	e, ok := rs.lookup(user)
	rs.mu.Unlock()
	if ok {
		return e.seq, e.idem, nil
	}
	err = s.view(func(tx *bolt.Tx) error {
		ub := tx.Bucket(usersBucket(id))
		if ub == nil {
			return fmt.Errorf("experiment %s: no such experiment", id)
		}
		v := ub.Get(user[:])
		if v == nil {
			return nil
		}
		if len(v) < 8 {
			return fmt.Errorf("experiment %s: damaged participation entry", id)
		}
		seq = binary.BigEndian.Uint64(v)
		if len(v) > 8 { // the record was deleted after a snapshot: the key was kept here
			idem = string(v[8:])
			return nil
		}
		rv := tx.Bucket(logBucket(id)).Get(seqKey(seq))
		if rv == nil {
			return fmt.Errorf("experiment %s: no record %d", id, seq)
		}
		r, err := decodeRecord(rv)
		if err != nil {
			return err
		}
		idem = r.Idem
		return nil
	})
	return seq, idem, err
}

// LogLength returns the number of records ever appended to experiment id's log (deleted or
// not) and the number still stored.
func (s *Store) LogLength(id string) (appended uint64, stored int, err error) {
	err = s.view(func(tx *bolt.Tx) error {
		lb := tx.Bucket(logBucket(id))
		if lb == nil {
			return fmt.Errorf("experiment %s: no such experiment", id)
		}
		appended, stored = lb.Sequence(), lb.Stats().KeyN
		return nil
	})
	return appended, stored, err
}

// compactName is the temporary file Compact writes next to the database: dprl's own (a
// leftover from a crash during a compaction is removed by the next one).
const compactName = FileName + ".compact"

// Sparse reports the database file's size and the bytes in its free pages.
func (s *Store) Sparse() (size, free int64, err error) {
	fi, err := os.Stat(s.db.Path())
	if err != nil {
		return 0, 0, err
	}
	st := s.db.Stats()
	return fi.Size(), int64(st.FreePageN+st.PendingPageN) * int64(s.db.Info().PageSize), nil
}

// Compact rewrites the database into a new file without its free pages (bbolt frees pages
// when records are deleted but never shrinks the file) and atomically replaces the old one:
// the copy is written to dprl.db.compact in the same directory and fsynced, renamed over
// dprl.db while the old file's lock is still held, and the directory fsynced; then the new
// file is opened (and locked). A crash before the rename leaves the old database (and a
// leftover temporary, removed by the next Compact); after it, the complete new one. It
// returns the file's size before and after.
func (s *Store) Compact() (before, after int64, err error) {
	path := s.db.Path()
	dir := filepath.Dir(path)
	fi, err := os.Stat(path)
	if err != nil {
		return 0, 0, err
	}
	before = fi.Size()
	tmp := filepath.Join(dir, compactName)
	if err := os.Remove(tmp); err != nil && !errors.Is(err, os.ErrNotExist) {
		return before, 0, fmt.Errorf("compaction: %w", err)
	}
	dst, err := bolt.Open(tmp, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		return before, 0, fmt.Errorf("compaction: %w", err)
	}
	if err := bolt.Compact(dst, s.db, 64<<20); err != nil {
		dst.Close()
		os.Remove(tmp)
		return before, 0, fmt.Errorf("compaction: %w", err)
	}
	if err := dst.Sync(); err != nil {
		dst.Close()
		os.Remove(tmp)
		return before, 0, fmt.Errorf("compaction: %w", err)
	}
	if err := dst.Close(); err != nil {
		os.Remove(tmp)
		return before, 0, fmt.Errorf("compaction: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil { // the old file's lock is still held
		os.Remove(tmp)
		return before, 0, fmt.Errorf("compaction: %w", err)
	}
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	s.db.Close()
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		return before, 0, fmt.Errorf("compaction: reopening the compacted database: %w", err)
	}
	s.db = db
	if fi, err := os.Stat(path); err == nil {
		after = fi.Size()
	}
	return before, after, nil
}
