package store

import (
	"encoding/binary"
	"fmt"
	"sync"

	bolt "go.etcd.io/bbolt"
)

// The participation index users/<id> is keyed by random user digests, so writing a user's entry
// in the append that logs her report dirties a leaf page and most of a branch page of the index
// per report (≈ 7 KiB written per report at 2·10⁵ users). The log record already holds her
// digest and idempotency key, so the append writes only the record: the log is the index of the
// reports appended since the index was last brought up to date, and those users are kept in
// memory (recent). The index is brought up to date — every record after the "indexed" mark
// given its entry, the mark moved to the log's end — in the transaction of each snapshot
// (before trim deletes records) and in an append once more than RecentMax users wait, so each
// page the index touches is written once for many users.
//
// Layout added: indexed → <id> → 8 bytes big-endian: the records 1..indexed of experiment id
// have their index entries; records after it may not. Absent: every record has its entry (a
// database written before this change, or a new experiment before its first append).
//
// The in-memory set is a cache of what the durable log says: it is rebuilt from the log when a
// store opens and after any append or snapshot whose commit failed (a commit reported failed may
// be durable), before it is used again.

// RecentMax bounds the users whose index entries wait in the log (per experiment).
const RecentMax = 4096

var bIndexed = []byte("indexed")

// recentEntry is a user's acknowledged report whose index entry waits.
type recentEntry struct {
	seq  uint64
	idem string
}

// recentSet is the users of one experiment whose entries wait in the log.
type recentSet struct {
	mu    sync.Mutex
	valid bool // false: rebuild from the log before use
	users map[[32]byte]recentEntry
}

// recentOf returns experiment id's set (created invalid: rebuilt on first use).
func (s *Store) recentOf(id string) *recentSet {
	s.recentMu.Lock()
	defer s.recentMu.Unlock()
	if s.recent == nil {
		s.recent = map[string]*recentSet{}
	}
	r := s.recent[id]
	if r == nil {
		r = &recentSet{}
		s.recent[id] = r
	}
	return r
}

// indexedMark returns the "indexed" mark of experiment id, or ok false when absent.
func indexedMark(tx *bolt.Tx, id string) (uint64, bool) {
	if b := tx.Bucket(bIndexed); b != nil {
		if v := b.Get([]byte(id)); len(v) == 8 {
			return binary.BigEndian.Uint64(v), true
		}
	}
	return 0, false
}

func setIndexedMark(tx *bolt.Tx, id string, seq uint64) error {
	b, err := tx.CreateBucketIfNotExists(bIndexed)
	if err != nil {
		return err
	}
	return b.Put([]byte(id), seqKey(seq))
}

// load rebuilds r from the log records after the mark (r.mu held), in tx.
func (r *recentSet) load(tx *bolt.Tx, id string) error {
	lb := tx.Bucket(logBucket(id))
	if lb == nil {
		return fmt.Errorf("experiment %s: no such experiment", id)
	}
	users := map[[32]byte]recentEntry{}
	if mark, ok := indexedMark(tx, id); ok {
		c := lb.Cursor()
		for k, v := c.Seek(seqKey(mark + 1)); k != nil; k, v = c.Next() {
			rec, err := decodeRecord(v)
			if err != nil {
				return fmt.Errorf("experiment %s: record %d: %w", id, binary.BigEndian.Uint64(k), err)
			}
			users[rec.User] = recentEntry{seq: binary.BigEndian.Uint64(k), idem: rec.Idem}
		}
	}
	r.users, r.valid = users, true
	return nil
}

// drop removes the entries of records 1..upto, which a committed transaction indexed (r.mu
// held). Entries of later records, appended since, stay.
func (r *recentSet) drop(upto uint64) {
	for u, e := range r.users {
		if e.seq <= upto {
			delete(r.users, u)
		}
	}
}

// lookup returns user's waiting entry (r.mu held; r valid).
func (r *recentSet) lookup(user [32]byte) (recentEntry, bool) {
	e, ok := r.users[user]
	return e, ok
}

// ready makes r valid (rebuilding it from the log in a read transaction if needed) and returns
// it locked; the caller unlocks.
func (s *Store) ready(id string) (*recentSet, error) {
	r := s.recentOf(id)
	r.mu.Lock()
	if r.valid {
		return r, nil
	}
	if err := s.view(func(tx *bolt.Tx) error { return r.load(tx, id) }); err != nil {
		r.mu.Unlock()
		return nil, err
	}
	return r, nil
}

// invalidate makes id's set rebuild from the log before its next use.
func (s *Store) invalidate(id string) {
	r := s.recentOf(id)
	r.mu.Lock()
	r.valid = false
	r.users = nil
	r.mu.Unlock()
}

// indexUpTo gives every record after the mark its index entry, moves the mark to the log's end
// and returns it (in tx; once tx committed, the caller drops the set's entries up to it).
func indexUpTo(tx *bolt.Tx, id string) (uint64, error) {
	lb, ub := tx.Bucket(logBucket(id)), tx.Bucket(usersBucket(id))
	if lb == nil || ub == nil {
		return 0, fmt.Errorf("experiment %s: no such experiment", id)
	}
	mark, ok := indexedMark(tx, id)
	if !ok {
		return lb.Sequence(), nil // every record has its entry
	}
	c := lb.Cursor()
	for k, v := c.Seek(seqKey(mark + 1)); k != nil; k, v = c.Next() {
		rec, err := decodeRecord(v)
		if err != nil {
			return 0, fmt.Errorf("experiment %s: record %d: %w", id, binary.BigEndian.Uint64(k), err)
		}
		if err := ub.Put(rec.User[:], append(append([]byte(nil), k...), rec.Idem...)); err != nil {
			return 0, err
		}
	}
	return lb.Sequence(), setIndexedMark(tx, id, lb.Sequence())
}
