package store

import (
	"encoding/binary"
	"fmt"
	"slices"
	"sync"

	bolt "go.etcd.io/bbolt"
)

// The participation index users/<id> is keyed by random user digests, so writing a user's entry
// in the append that logs her report dirties a leaf page and most of a branch page of the index
// per report (≈ 7 KiB written per report at 2·10⁵ users). The log record already holds her
// digest and idempotency key, so an append need not write her entry at once: the log is the
// index of the reports whose entries wait, and those users are kept in memory (recent), sorted
// into IndexChunks key ranges (by the digest's first bits). Each append writes, besides its
// records, the waiting entries of one range (rotating through them), so each entry waits about
// IndexChunks appends and the entries of one append fall on a few neighbouring leaf pages and
// one branch page, instead of one leaf and branch page each; no transaction writes more than one
// range (no pause of the committer), except an append that finds more than RecentMax users
// waiting (then it writes every range).
//
// Layout added: indexed → <id> → 8 bytes big-endian: the records 1..indexed of experiment id
// have their index entries; records after it may not. Absent: every record has its entry (a
// database written before this change, or a new experiment before its first append). Each
// append moves the mark to just before the oldest record whose entry still waits.
//
// The in-memory set is a cache of what the durable log says: it is rebuilt from the log after
// the mark when a store opens and after any append or snapshot whose commit failed (a commit
// reported failed may be durable), before it is used again. Writing an entry twice (a rebuilt
// set holds users whose entries were written after the mark) rewrites the same value.
//
// A snapshot deletes the records it covers up to the mark only (trim writes the entry of any
// record it deletes that lacks one, so that is a cost, not a safety, rule), unless at most
// snapshotIndexMax of them wait: those the snapshot's transaction indexes. The records left are
// deleted by a later snapshot.

// IndexChunks is the number of key ranges of the waiting users (a power of two ≤ 65 536).
const IndexChunks = 512

// RecentMax bounds the users whose index entries wait in the log (per experiment): an append
// that finds more waiting writes them all.
const RecentMax = 1 << 16

// snapshotIndexMax is the most waiting entries a snapshot's transaction writes so that it can
// delete every record it covers.
const snapshotIndexMax = 256

var bIndexed = []byte("indexed")

// recentEntry is a user's acknowledged report whose index entry waits.
type recentEntry struct {
	seq  uint64
	idem string
}

// recentSet is the users of one experiment whose entries wait in the log.
type recentSet struct {
	// appendMu serialises the experiment's appends: an append plans its index writes from the
	// set (before its transaction) and updates it on commit, so a second append must not plan
	// before the first one's commit has updated the set (its users would not be seen, and its
	// mark could pass entries still waiting). The service appends one group at a time anyway.
	appendMu sync.Mutex
	mu       sync.Mutex
	valid    bool // false: rebuild from the log before use
	// chunks[c] holds the waiting users whose digest falls in range c; low[c] is the smallest
	// sequence number in it (0: empty).
	chunks []map[[32]byte]recentEntry
	low    []uint64
	n      int // users waiting
	next   int // the range the next append writes
}

// chunkOf returns the key range of a digest.
func chunkOf(user [32]byte) int {
	return int(binary.BigEndian.Uint16(user[:2])) * IndexChunks >> 16
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

// reset empties r (r.mu held).
func (r *recentSet) reset() {
	r.chunks, r.low, r.n, r.next = make([]map[[32]byte]recentEntry, IndexChunks), make([]uint64, IndexChunks), 0, 0
}

// add records a waiting entry (r.mu held; seq larger than every entry of its range).
func (r *recentSet) add(user [32]byte, e recentEntry) {
	c := chunkOf(user)
	m := r.chunks[c]
	if m == nil {
		m = map[[32]byte]recentEntry{}
		r.chunks[c] = m
	}
	if _, ok := m[user]; !ok {
		r.n++
	}
	m[user] = e
	if r.low[c] == 0 || e.seq < r.low[c] {
		r.low[c] = e.seq
	}
}

// load rebuilds r from the log records after the mark (r.mu held), in tx.
func (r *recentSet) load(tx *bolt.Tx, id string) error {
	lb := tx.Bucket(logBucket(id))
	if lb == nil {
		return fmt.Errorf("experiment %s: no such experiment", id)
	}
	r.reset()
	if mark, ok := indexedMark(tx, id); ok {
		c := lb.Cursor()
		for k, v := c.Seek(seqKey(mark + 1)); k != nil; k, v = c.Next() {
			rec, err := decodeRecord(v)
			if err != nil {
				r.valid = false
				return fmt.Errorf("experiment %s: record %d: %w", id, binary.BigEndian.Uint64(k), err)
			}
			r.add(rec.User, recentEntry{seq: binary.BigEndian.Uint64(k), idem: rec.Idem})
		}
	}
	r.valid = true
	return nil
}

// lookup returns user's waiting entry (r.mu held; r valid).
func (r *recentSet) lookup(user [32]byte) (recentEntry, bool) {
	e, ok := r.chunks[chunkOf(user)][user]
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
	r.chunks, r.low, r.n = nil, nil, 0
	r.mu.Unlock()
}

// indexEntry is a participation entry an append writes.
type indexEntry struct {
	user [32]byte
	recentEntry
}

// indexPlan is what one append does with the participation index: the entries it writes (in
// key order) and where it moves the mark.
type indexPlan struct {
	all     bool           // every range (more than RecentMax waiting)
	chunk   int            // else the range written
	entries []indexEntry   // written: the range's waiting entries and the append's own in it
	mark    uint64         // the new mark: the records 1..mark have their entries once committed
	own     []bool         // own[i]: recs[i]'s entry is written now (else it waits)
	written map[int]uint64 // the ranges written → the largest seq written in each
}

// plan decides what an append of recs (the first numbered next) writes to the index (r.mu
// held, r valid).
func (r *recentSet) plan(next uint64, recs []*Record, all bool) *indexPlan {
	p := &indexPlan{chunk: r.next, own: make([]bool, len(recs)), written: map[int]uint64{}}
	p.all = all || r.n+len(recs) > RecentMax
	in := func(c int) bool { return p.all || c == p.chunk }
	low := uint64(0) // the oldest entry left waiting
	keep := func(seq uint64) {
		if low == 0 || seq < low {
			low = seq
		}
	}
	for c, m := range r.chunks {
		if !in(c) {
			if r.low[c] != 0 {
				keep(r.low[c])
			}
			continue
		}
		for u, e := range m {
			p.entries = append(p.entries, indexEntry{user: u, recentEntry: e})
			p.written[c] = max(p.written[c], e.seq)
		}
	}
	for i, rec := range recs {
		seq := next + uint64(i)
		if c := chunkOf(rec.User); in(c) {
			p.own[i] = true
			p.entries = append(p.entries, indexEntry{user: rec.User, recentEntry: recentEntry{seq: seq, idem: rec.Idem}})
			p.written[c] = max(p.written[c], seq)
		} else {
			keep(seq)
		}
	}
	slices.SortFunc(p.entries, func(a, b indexEntry) int { return slices.Compare(a.user[:], b.user[:]) })
	p.mark = next + uint64(len(recs)) - 1
	if low != 0 {
		p.mark = low - 1
	}
	return p
}

// write puts the plan's entries into the index and moves the mark forward (in tx).
func (p *indexPlan) write(tx *bolt.Tx, id string, ub *bolt.Bucket) error {
	for _, e := range p.entries {
		if err := ub.Put(e.user[:], append(seqKey(e.seq), e.idem...)); err != nil {
			return err
		}
	}
	if mark, ok := indexedMark(tx, id); ok && mark >= p.mark {
		return nil
	}
	return setIndexedMark(tx, id, p.mark)
}

// committed updates r after the append of recs (the first numbered next) that followed plan p
// committed (r.mu held): the entries written leave the set, the append's others join it.
func (r *recentSet) committed(p *indexPlan, next uint64, recs []*Record) {
	if !r.valid {
		return // rebuilt from the log before its next use
	}
	for c, upto := range p.written {
		m := r.chunks[c]
		r.low[c] = 0
		for u, e := range m {
			if e.seq <= upto {
				delete(m, u)
				r.n--
			} else if r.low[c] == 0 || e.seq < r.low[c] {
				r.low[c] = e.seq
			}
		}
	}
	for i, rec := range recs {
		if !p.own[i] {
			r.add(rec.User, recentEntry{seq: next + uint64(i), idem: rec.Idem})
		}
	}
	if !p.all {
		r.next = (p.chunk + 1) % IndexChunks
	}
}

// trimBound returns how far a snapshot at seq deletes records: seq itself when at most
// snapshotIndexMax records up to it lack their entry (trim writes them), else the mark.
func trimBound(tx *bolt.Tx, id string, seq uint64) uint64 {
	mark, ok := indexedMark(tx, id)
	if !ok || seq <= mark+snapshotIndexMax {
		return seq
	}
	return mark
}

// indexAll writes every waiting entry of experiment id to the index in one transaction and
// moves the mark to the log's end (tests: a state where the index is up to date).
func (s *Store) indexAll(id string) error {
	rs, err := s.ready(id)
	if err != nil {
		return err
	}
	var n uint64
	if err := s.view(func(tx *bolt.Tx) error { n = tx.Bucket(logBucket(id)).Sequence(); return nil }); err != nil {
		rs.mu.Unlock()
		return err
	}
	plan := rs.plan(n+1, nil, true)
	rs.mu.Unlock()
	err = s.update(func(tx *bolt.Tx) error {
		if tx.Bucket(logBucket(id)).Sequence() != n {
			return fmt.Errorf("experiment %s: appended to while indexing", id)
		}
		tx.OnCommit(func() { rs.mu.Lock(); rs.committed(plan, n+1, nil); rs.mu.Unlock() })
		return plan.write(tx, id, tx.Bucket(usersBucket(id)))
	})
	if err != nil {
		s.invalidate(id)
	}
	return err
}
