package store

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"
)

// Storage faults. A database that is damaged — emptied, truncated, a meta page or a B+tree page
// overwritten — is never replaced, initialised or repaired: Open refuses it with a
// *CorruptError naming the file and the problem, and a fault found later (bbolt panics on a
// damaged page; reading a page beyond a file truncated under the server faults) is turned into
// the same error, after which the Store refuses every operation (it writes nothing more to a
// damaged file). Open reads an existing file before writing anything to it, and writes to it
// only to initialise a database that holds no bucket yet.

// ErrCorrupt is matched (errors.Is) by every *CorruptError.
var ErrCorrupt = errors.New("database damaged")

// CorruptError reports a damaged database file.
type CorruptError struct {
	Path    string // the database file
	Problem string // what is wrong with it
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("database %s is damaged: %s; dprl serve does not modify or replace it: restore it from a backup, or move it aside yourself to start an empty server (docs/serve.md, \"Storage faults\")", e.Path, e.Problem)
}

// Is makes errors.Is(err, ErrCorrupt) true.
func (e *CorruptError) Is(target error) bool { return target == ErrCorrupt }

// Options configures OpenWith.
type Options struct {
	// Wait is how long Open waits for another process to release the database's lock.
	Wait time.Duration
	// Logf, if non-nil, receives warnings (e.g. a torn meta page, normal after a crash).
	Logf func(format string, args ...any)
	// BeforeCommit, if non-nil, is called inside every Append (and Probe) transaction after
	// its writes and before it commits; an error aborts the transaction (nothing is written).
	// Fault injection for tests; nil in production.
	BeforeCommit func() error
}

// The meta page of a bbolt file (package go.etcd.io/bbolt/internal/common): after the 16-byte
// page header, magic, version, page size, flags (4 bytes each), the root bucket (root page,
// sequence), the freelist page, the high-water page id, the transaction id (8 bytes each) and
// an FNV-64a checksum of the 56 bytes before it.
const (
	boltMagic   = 0xED0CDAED
	boltVersion = 2
	pageHeader  = 16
	metaSize    = 64
)

type metaPage struct {
	pageSize       uint32
	root, freelist uint64 // the root bucket's page, the freelist's page
	pgid           uint64 // the high-water mark: pages [0, pgid) are in use
	txid           uint64
}

// parseMeta decodes and validates the meta page at the start of b.
func parseMeta(b []byte) (metaPage, error) {
	if len(b) < pageHeader+metaSize {
		return metaPage{}, errors.New("short")
	}
	m := b[pageHeader : pageHeader+metaSize]
	e := binary.NativeEndian
	if e.Uint32(m[0:]) != boltMagic {
		return metaPage{}, errors.New("not a bbolt meta page")
	}
	if v := e.Uint32(m[4:]); v != boltVersion {
		return metaPage{}, fmt.Errorf("bbolt format version %d", v)
	}
	h := fnv.New64a()
	h.Write(m[:56])
	if h.Sum64() != e.Uint64(m[56:]) {
		return metaPage{}, errors.New("checksum mismatch")
	}
	mp := metaPage{pageSize: e.Uint32(m[8:]), root: e.Uint64(m[16:]), freelist: e.Uint64(m[32:]), pgid: e.Uint64(m[40:]), txid: e.Uint64(m[48:])}
	if mp.pageSize < 1024 || mp.pageSize > 1<<24 || mp.pageSize&(mp.pageSize-1) != 0 {
		return metaPage{}, fmt.Errorf("page size %d", mp.pageSize)
	}
	return mp, nil
}

// checkFile validates an existing database file before bbolt maps it: not empty, at least one
// valid meta page, and at least as long as the meta page's high-water mark (bbolt would fault
// on the missing pages). It returns a warning when one meta page is invalid.
func checkFile(path string) (warning string, err error) {
	bad := func(format string, args ...any) (string, error) {
		return "", &CorruptError{Path: path, Problem: fmt.Sprintf(format, args...)}
	}
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", err
	}
	if !fi.Mode().IsRegular() {
		return bad("not a regular file")
	}
	size := fi.Size()
	if size == 0 {
		return bad("the file is empty (0 bytes): every experiment and the credentials' key are gone")
	}
	read := func(off int64) []byte {
		b := make([]byte, pageHeader+metaSize)
		if n, _ := f.ReadAt(b, off); n < len(b) {
			return nil
		}
		return b
	}
	m0, err0 := parseMeta(read(0))
	// The second meta page is one page in; its page size is known from the first when that one
	// is valid, else every possible page size is tried (as bbolt does).
	var m1 metaPage
	err1 := errors.New("no valid meta page at any page size")
	if err0 == nil {
		m1, err1 = parseMeta(read(int64(m0.pageSize)))
	} else {
		for ps := int64(1024); ps <= 1<<24 && ps < size; ps <<= 1 {
			if m, err := parseMeta(read(ps)); err == nil {
				m1, err1 = m, nil
				break
			}
		}
	}
	var m metaPage
	switch {
	case err0 != nil && err1 != nil:
		return bad("neither meta page is valid (page 0: %v; page 1: %v)", err0, err1)
	case err0 != nil:
		m, warning = m1, fmt.Sprintf("database %s: meta page 0 is invalid (%v); using meta page 1 (transaction %d) — normal after a crash during a commit", path, err0, m1.txid)
	case err1 != nil:
		m, warning = m0, fmt.Sprintf("database %s: meta page 1 is invalid (%v); using meta page 0 (transaction %d) — normal after a crash during a commit", path, err1, m0.txid)
	case m1.txid > m0.txid:
		m = m1
	default:
		m = m0
	}
	if m0.pageSize != 0 && m1.pageSize != 0 && m0.pageSize != m1.pageSize {
		return bad("the meta pages disagree on the page size (%d, %d)", m0.pageSize, m1.pageSize)
	}
	if need := int64(m.pgid) * int64(m.pageSize); m.pgid < 2 || need > size || need/int64(m.pageSize) != int64(m.pgid) {
		return bad("the file is truncated: it has %d bytes, its last transaction (%d) uses %d pages of %d bytes (%d bytes)", size, m.txid, m.pgid, m.pageSize, need)
	}
	return warning, nil
}

// create writes a new, initialised database at path atomically: it is built in a temporary
// file of the same directory and linked to path only when complete, so a crash never leaves a
// partial or empty dprl.db (an empty or short dprl.db is therefore always damage, never a
// first start that did not finish). When path appeared meanwhile, the existing file is kept.
func create(path string) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, FileName+".new-*")
	if err != nil {
		return fmt.Errorf("data directory: %w", err)
	}
	tmp := f.Name()
	f.Close()
	defer os.Remove(tmp) // this function's own temporary file
	db, err := bolt.Open(tmp, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		return fmt.Errorf("creating the database: %w", err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		if _, err := initialize(tx, false); err != nil {
			return err
		}
		_, err := loadCredentialKey(tx.Bucket(bMeta), true) // keys.go
		return err
	})
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("creating the database: %w", err)
	}
	if err := os.Link(tmp, path); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("creating the database: %w", err)
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// initialize creates the buckets, the schema mark and the user key when they are missing and
// returns the user key. existing says the database already holds experiments: a missing user
// key is then damage (a new key would invalidate every credential), never replaced.
func initialize(tx *bolt.Tx, existing bool) (key [32]byte, err error) {
	m, err := tx.CreateBucketIfNotExists(bMeta)
	if err != nil {
		return key, err
	}
	if _, err := tx.CreateBucketIfNotExists(bExperiments); err != nil {
		return key, err
	}
	if v := m.Get([]byte("schema")); v != nil && string(v) != fmt.Sprint(Schema) {
		return key, fmt.Errorf("database schema %s, this dprl reads %d", v, Schema)
	} else if v == nil {
		if err := m.Put([]byte("schema"), []byte(fmt.Sprint(Schema))); err != nil {
			return key, err
		}
	}
	if v := m.Get([]byte("user-key")); len(v) == 32 {
		copy(key[:], v)
		return key, nil
	} else if existing {
		return key, errMissingKey
	}
	if _, err := rand.Read(key[:]); err != nil {
		return key, err
	}
	return key, m.Put([]byte("user-key"), key[:])
}

var errMissingKey = errors.New("the credentials' key is missing although the database holds experiments")

// load reads an existing database's user key without writing anything when the database is
// initialised (the usual case), and initialises it otherwise.
func (s *Store) load() error {
	ready := false
	err := s.view(func(tx *bolt.Tx) error {
		m, x := tx.Bucket(bMeta), tx.Bucket(bExperiments)
		if m == nil || x == nil {
			return nil
		}
		if v := m.Get([]byte("schema")); string(v) != fmt.Sprint(Schema) {
			return fmt.Errorf("database schema %q, this dprl reads %d", v, Schema)
		}
		if v := m.Get([]byte("user-key")); len(v) == 32 {
			copy(s.userKey[:], v)
			if m.Get(kCredKey) != nil || m.Get(kCredKeyVer) != nil {
				var err error
				s.credKey, err = loadCredentialKey(m, false) // keys.go: present, read only
				ready = err == nil
				return err
			}
		}
		return nil
	})
	if err != nil || ready {
		return err
	}
	return s.update(func(tx *bolt.Tx) error {
		x := tx.Bucket(bExperiments)
		m := tx.Bucket(bMeta)
		fresh := m == nil || len(m.Get([]byte("user-key"))) != 32
		k, err := initialize(tx, x != nil && x.Stats().KeyN > 0)
		if errors.Is(err, errMissingKey) {
			return &CorruptError{Path: s.path, Problem: err.Error()}
		}
		if err != nil {
			return err
		}
		s.userKey = k
		// The credential key (keys.go): a new database draws one; a database written before
		// the key split migrates (its user key signed the existing credentials).
		s.credKey, err = loadCredentialKey(tx.Bucket(bMeta), fresh)
		return err
	})
}

// openDB opens the database file at path (creating it atomically when absent), checking an
// existing file before bbolt maps it and turning a bbolt panic or a memory fault during the
// open into a *CorruptError.
func openDB(path string, o Options) (db *bolt.DB, err error) {
	if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
		if err := create(path); err != nil {
			return nil, err
		}
	} else if err != nil {
		return nil, err
	}
	warning, err := checkFile(path)
	if err != nil {
		return nil, err
	}
	if warning != "" && o.Logf != nil {
		o.Logf("%s", warning)
	}
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if p := recover(); p != nil {
			db, err = nil, &CorruptError{Path: path, Problem: fmt.Sprint(p)}
		}
	}()
	db, err = bolt.Open(path, 0o600, &bolt.Options{Timeout: o.Wait})
	if errors.Is(err, bolterrors.ErrInvalid) || errors.Is(err, bolterrors.ErrChecksum) || errors.Is(err, bolterrors.ErrVersionMismatch) {
		return nil, &CorruptError{Path: path, Problem: err.Error()}
	}
	return db, err
}

// view runs a read transaction, update a write transaction; both refuse to run once the
// database was found damaged, and turn a bbolt panic or a memory fault (a page beyond a
// truncated file) into a *CorruptError that every later operation returns too.
func (s *Store) view(fn func(*bolt.Tx) error) error { return s.guarded(s.db.View, fn) }

func (s *Store) update(fn func(*bolt.Tx) error) error { return s.guarded(s.db.Update, fn) }

// guarded runs fn in the transaction that run (s.db.View or s.db.Update) opens, as view and
// update say.
func (s *Store) guarded(run func(func(*bolt.Tx) error) error, fn func(*bolt.Tx) error) (err error) {
	if err := s.damaged(); err != nil {
		return err
	}
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer s.caught(&err)
	return run(fn)
}

// closeDB closes the database. A fault found inside bbolt's own locking (a damaged page read
// while a transaction began) can leave bbolt's locks held, so on a damaged store the close is
// given a second and then abandoned (the process is about to stop; the lock is released when
// it exits) rather than hanging the shutdown.
func (s *Store) closeDB() error {
	damage := s.damaged()
	if damage == nil {
		return s.db.Close()
	}
	done := make(chan error, 1)
	go func() { done <- s.db.Close() }()
	select {
	case err := <-done:
		return err
	case <-time.After(time.Second):
		return damage
	}
}

// Damaged returns the damage found while the store was open (a *CorruptError), or nil.
func (s *Store) Damaged() error { return s.damaged() }

// damaged returns the damage found, if any.
func (s *Store) damaged() error {
	s.badMu.Lock()
	defer s.badMu.Unlock()
	return s.bad
}

// caught turns a panic of bbolt into a *CorruptError (recorded: the store refuses every later
// operation). A panic of a caller's callback (callbackPanic) is re-raised unchanged.
func (s *Store) caught(err *error) {
	p := recover()
	if p == nil {
		return
	}
	if cp, ok := p.(callbackPanic); ok {
		panic(cp.p)
	}
	ce := &CorruptError{Path: s.path, Problem: fmt.Sprintf("reading it failed: %v", p)}
	s.badMu.Lock()
	if s.bad == nil {
		s.bad = ce
	}
	s.badMu.Unlock()
	*err = ce
}

// callbackPanic carries a panic of a caller's function through caught.
type callbackPanic struct{ p any }

// call calls f, marking a panic as the caller's (not bbolt's).
func call(f func() error) error {
	defer func() {
		if p := recover(); p != nil {
			panic(callbackPanic{p})
		}
	}()
	return f()
}

// ProbeFile is the scratch file Probe writes (and removes) in the data directory.
const ProbeFile = FileName + ".probe"

// probeBytes is the space Probe asks of the file system.
const probeBytes = 1 << 20

// Probe checks that the disk accepts commits again after a failure: it writes and fsyncs a
// 1 MiB scratch file beside the database (removed at once: a commit that reuses the
// database's free pages can succeed on a full disk, so a tiny commit alone would say ready
// while the next batch fails), then commits a tiny transaction (the time of the probe).
func (s *Store) Probe() error {
	if err := s.damaged(); err != nil {
		return err
	}
	path := filepath.Join(filepath.Dir(s.path), ProbeFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(make([]byte, probeBytes))
	if err == nil {
		err = f.Sync()
	}
	f.Close()
	if rerr := os.Remove(path); err == nil {
		err = rerr
	}
	if err != nil {
		return fmt.Errorf("probing the disk: %w", err)
	}
	return s.update(func(tx *bolt.Tx) error {
		m := tx.Bucket(bMeta)
		if m == nil {
			return errors.New("no meta bucket")
		}
		if err := m.Put([]byte("probe"), []byte(time.Now().UTC().Format(time.RFC3339Nano))); err != nil {
			return err
		}
		if s.beforeCommit != nil {
			return s.beforeCommit()
		}
		return nil
	})
}

// Path is the database file.
func (s *Store) Path() string { return s.path }
