// Package store is the durable state of `dprl serve`: an embedded go.etcd.io/bbolt database
// (one file, B+tree, copy-on-write pages, fsync on every commit, an exclusive file lock so two
// servers cannot open it) holding, per experiment, its public definition, its secret key, and
// the ordered log of the reports it acknowledged.
//
// The curator's state is never stored: it is a deterministic function of the experiment's
// definition, its key and the ordered log (the noise of every counter node is drawn from
// streams keyed by the persisted key, in the order the log fixes), so a restarted server
// rebuilds exactly the state it had — no report lost, none counted twice, no noise redrawn —
// by replaying the log. A report is acknowledged only after the transaction that appends it
// committed; Append takes many reports in one transaction (group commit: one fsync for a
// batch).
//
// Layout (bucket → key → value):
//
//	meta        "schema" → 1; "user-key" → 32 random bytes (the participation key: the HMAC
//	            key of user digests, never changed); "credential-key" → 32 bytes and
//	            "credential-key-version" → 8 bytes big-endian (the credentials' HMAC key,
//	            rotatable: keys.go)
//	revoked/<id> user digest (32 bytes) → 1: revoked credentials (keys.go)
//	experiments id → Experiment (JSON)
//	log/<id>    seq (8 bytes big-endian, 1-based) → Record (binary, see encodeRecord); the
//	            bucket's sequence is the number of records
//	users/<id>  user digest (32 bytes) → seq ‖ idempotency key; the entries of the records
//	            after indexed/<id> may still wait in the log and in memory (recent.go)
//	indexed     <id> → seq (8 bytes big-endian): every record up to it has its users/<id> entry
package store

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"
)

// Schema is the version of the database layout.
const Schema = 1

// FileName is the database file inside the data directory.
const FileName = "dprl.db"

var (
	bMeta        = []byte("meta")
	bExperiments = []byte("experiments")
)

func logBucket(id string) []byte   { return []byte("log/" + id) }
func usersBucket(id string) []byte { return []byte("users/" + id) }

// ErrLocked is returned by Open when another process holds the database.
var ErrLocked = errors.New("the data directory is in use by another dprl serve (its database is locked)")

// Store is an open database.
type Store struct {
	db      *bolt.DB
	path    string
	userKey [32]byte
	credKey CredentialKey
	hooks   *CommitHooks
	// beforeCommit is Options.BeforeCommit (fault injection; nil in production).
	beforeCommit func() error
	badMu        sync.Mutex
	bad          error // the damage found (a *CorruptError), after which nothing runs
	// recent holds, per experiment, the users whose index entries wait in the log (recent.go).
	recentMu sync.Mutex
	recent   map[string]*recentSet
}

// CommitHooks are fault hooks inside Append's transaction, for crash tests (never set in
// production): Before runs after the records were written into the transaction, just before
// it commits (nothing is durable yet; an error aborts the transaction); After runs once the
// commit and its fsync completed, before Append returns.
type CommitHooks struct {
	Before func() error
	After  func()
}

// SetCommitHooks installs h (crash tests only); call it before any Append.
func (s *Store) SetCommitHooks(h *CommitHooks) { s.hooks = h }

// Experiment is an experiment's definition as stored: public parameters, fixed at creation.
type Experiment struct {
	ID      string    `json:"id"`
	Created time.Time `json:"created"`
	// Spec is the served RunSpec (JSON of engine.RunSpec).
	Spec json.RawMessage `json:"spec"`
	// Seeded marks an experiment of a server in seeded test mode: its randomness comes from
	// Spec's seed, not from Key.
	Seeded bool `json:"seeded"`
	// Simulated marks an experiment created as a simulation (its users are simulated): only
	// its reports may carry a simulated regret.
	Simulated bool `json:"simulated,omitempty"`
	// Key is the experiment's secret (32 bytes): it keys the curator's noise and public
	// randomness. Never served.
	Key []byte `json:"key"`
}

// Record is one acknowledged report.
type Record struct {
	// User is the digest of the user's ID (HMAC with the server's user key): the store never
	// holds the ID itself.
	User [32]byte
	// Idem is the client's idempotency key.
	Idem string
	// Regret is the exact regret a simulator reported for the user's episode (NaN if none).
	Regret float64
	// Report is the report's binary encoding (protocol.EncodeBinary).
	Report []byte
}

// Open opens (creating if needed) the database in dir with an exclusive lock, waiting at most
// wait for another process to release it. A damaged database is refused (*CorruptError).
func Open(dir string, wait time.Duration) (*Store, error) {
	return OpenWith(dir, Options{Wait: wait})
}

// OpenWith is Open with options.
func OpenWith(dir string, o Options) (*Store, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("data directory: %w", err)
	}
	path := filepath.Join(dir, FileName)
	db, err := openDB(path, o)
	if errors.Is(err, bolterrors.ErrTimeout) {
		return nil, fmt.Errorf("%s: %w", dir, ErrLocked)
	}
	if err != nil {
		return nil, fmt.Errorf("data directory %s: %w", dir, err)
	}
	s := &Store{db: db, path: path, beforeCommit: o.BeforeCommit}
	if err := s.load(); err != nil {
		db.Close()
		return nil, fmt.Errorf("data directory %s: %w", dir, err)
	}
	return s, nil
}

// Close closes the database (releasing its lock).
func (s *Store) Close() error { return s.closeDB() }

// UserKey is the server's participation key: the HMAC key of the user digests that index
// participation (never changed; the credentials have their own key, CredentialKey).
func (s *Store) UserKey() [32]byte { return s.userKey }

// Create stores a new experiment; its ID must be new.
func (s *Store) Create(e *Experiment) error {
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	return s.update(func(tx *bolt.Tx) error {
		x := tx.Bucket(bExperiments)
		if x.Get([]byte(e.ID)) != nil {
			return fmt.Errorf("experiment %s exists", e.ID)
		}
		if _, err := tx.CreateBucket(logBucket(e.ID)); err != nil {
			return err
		}
		if _, err := tx.CreateBucket(usersBucket(e.ID)); err != nil {
			return err
		}
		return x.Put([]byte(e.ID), b)
	})
}

// Experiments returns every stored experiment, in ID order.
func (s *Store) Experiments() ([]*Experiment, error) {
	var out []*Experiment
	err := s.view(func(tx *bolt.Tx) error {
		return tx.Bucket(bExperiments).ForEach(func(k, v []byte) error {
			e := new(Experiment)
			if err := json.Unmarshal(v, e); err != nil {
				return fmt.Errorf("experiment %s: %w", k, err)
			}
			out = append(out, e)
			return nil
		})
	})
	return out, err
}

// Contribution returns the sequence number of user's acknowledged report, or 0.
func (s *Store) Contribution(id string, user [32]byte) (uint64, error) {
	rs, err := s.ready(id)
	if err != nil {
		return 0, err
	}
	e, ok := rs.lookup(user)
	rs.mu.Unlock()
	if ok {
		return e.seq, nil
	}
	var seq uint64
	err = s.view(func(tx *bolt.Tx) error {
		b := tx.Bucket(usersBucket(id))
		if b == nil {
			return fmt.Errorf("experiment %s: no such experiment", id)
		}
		if v := b.Get(user[:]); v != nil {
			seq = binary.BigEndian.Uint64(v)
		}
		return nil
	})
	return seq, err
}

// Record returns the acknowledged record seq of experiment id.
func (s *Store) Record(id string, seq uint64) (*Record, error) {
	var r *Record
	err := s.view(func(tx *bolt.Tx) error {
		v := tx.Bucket(logBucket(id)).Get(seqKey(seq))
		if v == nil {
			return fmt.Errorf("experiment %s: no record %d", id, seq)
		}
		var err error
		r, err = decodeRecord(v)
		return err
	})
	return r, err
}

// Append appends records to experiment id's log in one transaction (one fsync) and returns
// the sequence number of the first. next must be the sequence number the log expects (its
// length + 1): a mismatch means the caller's view of the log is stale and nothing is written.
func (s *Store) Append(id string, next uint64, recs []*Record) error {
	if len(recs) == 0 {
		return nil
	}
	ap := s.recentOf(id)
	ap.appendMu.Lock()
	defer ap.appendMu.Unlock()
	rs, err := s.ready(id)
	if err != nil {
		return err
	}
	for i, r := range recs {
		if _, ok := rs.lookup(r.User); ok {
			rs.mu.Unlock()
			return fmt.Errorf("experiment %s: user already contributed (record %d)", id, next+uint64(i))
		}
	}
	// The users' index entries wait in the log and in memory; this append writes those of one
	// key range (recent.go).
	plan := rs.plan(next, recs, false)
	rs.mu.Unlock()
	err = s.update(func(tx *bolt.Tx) error {
		lb, ub := tx.Bucket(logBucket(id)), tx.Bucket(usersBucket(id))
		if lb == nil || ub == nil {
			return fmt.Errorf("experiment %s: no such experiment", id)
		}
		if n := lb.Sequence(); n+1 != next {
			return fmt.Errorf("experiment %s: log has %d records, caller expected %d", id, n, next-1)
		}
		// The log's keys only grow: its pages are filled before they split (bbolt's default,
		// half full, is for random inserts), so a group commit writes fewer of them.
		lb.FillPercent = 1
		// The index entries are not written here, so the users of this append are checked
		// against each other too (a second record of a user in one group is refused).
		batch := make(map[[32]byte]struct{}, len(recs))
		for i, r := range recs {
			seq := next + uint64(i)
			if _, dup := batch[r.User]; dup || ub.Get(r.User[:]) != nil {
				return fmt.Errorf("experiment %s: user already contributed (record %d)", id, seq)
			}
			batch[r.User] = struct{}{}
			if err := lb.Put(seqKey(seq), encodeRecord(r)); err != nil {
				return err
			}
		}
		if err := lb.SetSequence(next + uint64(len(recs)) - 1); err != nil {
			return err
		}
		if err := plan.write(tx, id, ub); err != nil {
			return err
		}
		tx.OnCommit(func() {
			rs.mu.Lock()
			rs.committed(plan, next, recs)
			rs.mu.Unlock()
		})
		if h := s.hooks; h != nil {
			if h.After != nil {
				tx.OnCommit(h.After)
			}
			if h.Before != nil {
				if err := h.Before(); err != nil {
					return err
				}
			}
		}
		if s.beforeCommit != nil {
			return s.beforeCommit()
		}
		return nil
	})
	if err != nil {
		s.invalidate(id) // a commit reported failed may be durable: the log says
	}
	return err
}

// Replay calls f with every record of experiment id's log in order (seq 1, 2, …).
func (s *Store) Replay(id string, f func(seq uint64, r *Record) error) error {
	return s.view(func(tx *bolt.Tx) error {
		lb := tx.Bucket(logBucket(id))
		if lb == nil {
			return fmt.Errorf("experiment %s: no such experiment", id)
		}
		c := lb.Cursor()
		k, v := c.First()
		_, err := replayLog(id, c, k, v, 1, func(seq uint64, r *Record) error { return call(func() error { return f(seq, r) }) })
		return err
	})
}

// replayLog calls f with experiment id's log records from the cursor's position (k, v) to
// the end, which must be records want, want+1, … in turn, and returns the number after the
// last one.
func replayLog(id string, c *bolt.Cursor, k, v []byte, want uint64, f func(seq uint64, r *Record) error) (uint64, error) {
	for ; k != nil; k, v = c.Next() {
		seq := binary.BigEndian.Uint64(k)
		if seq != want {
			return want, fmt.Errorf("experiment %s: log record %d follows %d", id, seq, want-1)
		}
		r, err := decodeRecord(v)
		if err != nil {
			return want, fmt.Errorf("experiment %s: record %d: %w", id, seq, err)
		}
		if err := f(seq, r); err != nil {
			return want, err
		}
		want++
	}
	return want, nil
}

func seqKey(seq uint64) []byte { return binary.BigEndian.AppendUint64(nil, seq) }

// encodeRecord: user digest (32 bytes), uvarint len + idempotency key, regret (float64 bits,
// little endian), then the report bytes.
func encodeRecord(r *Record) []byte {
	b := make([]byte, 0, 32+1+len(r.Idem)+8+len(r.Report))
	b = append(b, r.User[:]...)
	b = binary.AppendUvarint(b, uint64(len(r.Idem)))
	b = append(b, r.Idem...)
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(r.Regret))
	return append(b, r.Report...)
}

func decodeRecord(v []byte) (*Record, error) {
	r := new(Record)
	if len(v) < 33 {
		return nil, errors.New("short record")
	}
	copy(r.User[:], v)
	rd := bytes.NewReader(v[32:])
	n, err := binary.ReadUvarint(rd)
	if err != nil || n > uint64(rd.Len()) {
		return nil, errors.New("bad idempotency key length")
	}
	off := len(v) - rd.Len()
	r.Idem = string(v[off : off+int(n)])
	off += int(n)
	if len(v) < off+8 {
		return nil, errors.New("short record")
	}
	r.Regret = math.Float64frombits(binary.LittleEndian.Uint64(v[off:]))
	r.Report = append([]byte(nil), v[off+8:]...)
	return r, nil
}
