// Package pgstore is the PostgreSQL store of `dprl serve --store postgres://…` (docs/serve.md,
// "PostgreSQL"): the same state as the embedded bbolt store (package store) — the server's
// keys, the experiments, each experiment's ordered log of acknowledged reports, the
// participation index, revocations and snapshots — in tables of one database that several
// servers may share, exactly one of them the leader.
//
// Leadership. A server becomes the leader by taking a session-level advisory lock
// (pg_try_advisory_lock) on a connection of its own, then bumping the epoch of the one-row
// table dprl_leader and recording its name there. Every write transaction of the leader's
// Store (Append, Create, Revoke, SaveSnapshot, RotateCredentialKey, Probe) begins with the
// fence: it reads dprl_leader FOR SHARE and checks, in the same statement, that the epoch is
// still its own and that its lock connection still holds the advisory lock (pg_locks). So:
//
//   - a server whose lock connection died (the database terminated it, the network cut it,
//     the database restarted) commits nothing from then on: the lock is gone from pg_locks,
//     its very next write transaction fails with store.ErrNotLeader — it stops acknowledging
//     at once, without waiting for a timeout of its own;
//   - a new leader's epoch bump waits for every write transaction of the old leader that
//     passed the fence (FOR SHARE conflicts with the bump's UPDATE) and every later one of
//     the old leader sees the new epoch and fails: the old leader's writes all precede the
//     new leader's reading of the state, so it rebuilds its curators from a state no deposed
//     server changes afterwards.
//
// Reads take no fence: only the leader serves, and whatever it decides from a read is
// written (and acknowledged) only through a fenced transaction.
//
// Durability is PostgreSQL's: a commit returns once its WAL is flushed (synchronous_commit
// on, the default, which Open checks); a report is acknowledged only after the transaction
// that appends it returned from COMMIT.
package pgstore

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/dprl/dprl/service/store"
)

// The advisory lock of the leadership: pg_try_advisory_lock(lockClass, lockObject).
const (
	lockClass  = 0x64707231 // "dpr1"
	lockObject = 1
)

// Schema is the version of the tables' layout (dprl_meta "schema").
const Schema = 1

// opTimeout bounds every database operation (a database that does not answer fails the
// operation; the service then refuses reports and probes until it answers again).
const opTimeout = 15 * time.Second

// schema creates the tables (idempotent; run under a transaction-level advisory lock so that
// servers starting together do not race).
const schema = `
CREATE TABLE IF NOT EXISTS dprl_meta (k text PRIMARY KEY, v bytea NOT NULL);
CREATE TABLE IF NOT EXISTS dprl_leader (id int PRIMARY KEY CHECK (id = 1), epoch bigint NOT NULL, holder text NOT NULL, since timestamptz NOT NULL);
CREATE TABLE IF NOT EXISTS dprl_experiments (id text PRIMARY KEY, def bytea NOT NULL, appended bigint NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS dprl_log (exp text NOT NULL, seq bigint NOT NULL, digest bytea NOT NULL, idem text NOT NULL, regret float8 NOT NULL, report bytea NOT NULL, PRIMARY KEY (exp, seq));
CREATE TABLE IF NOT EXISTS dprl_users (exp text NOT NULL, digest bytea NOT NULL, seq bigint NOT NULL, idem text NOT NULL, PRIMARY KEY (exp, digest));
CREATE TABLE IF NOT EXISTS dprl_revoked (exp text NOT NULL, digest bytea NOT NULL, PRIMARY KEY (exp, digest));
CREATE TABLE IF NOT EXISTS dprl_snapshots (exp text PRIMARY KEY, seq bigint NOT NULL, state bytea NOT NULL);
INSERT INTO dprl_leader (id, epoch, holder, since) VALUES (1, 0, '', now()) ON CONFLICT (id) DO NOTHING;
`

// Options configures Open.
type Options struct {
	// Name is this server's name as other servers show it (its advertised URL), recorded as
	// the leader's while it leads.
	Name string
	// Logf, if non-nil, receives operational log lines.
	Logf func(format string, args ...any)
	// BeforeCommit, if non-nil, is called inside every Append (and Probe) transaction after
	// its writes and before it commits; an error aborts it. Fault injection for tests.
	BeforeCommit func() error
	// monitorEvery is how often the lock connection is checked (default monitorEvery; tests
	// set it long to show that the fence alone stops a deposed leader).
	monitorEvery time.Duration
}

// DB is a connection to a shared database: a server that is not (yet) the leader holds one
// and tries to become the leader (TryLead).
type DB struct {
	url  string
	pool *pgxpool.Pool
	o    Options
}

// Open connects to the database at url (postgres://USER@HOST:PORT/DB?…, libpq's keywords),
// creates the tables if needed and the server's keys on the first start. It does not take
// the leadership.
func Open(ctx context.Context, url string, o Options) (*DB, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("--store: %w", redact(err))
	}
	cfg.MaxConns = max(cfg.MaxConns, 16)
	if cfg.ConnConfig.RuntimeParams == nil {
		cfg.ConnConfig.RuntimeParams = map[string]string{}
	}
	cfg.ConnConfig.RuntimeParams["application_name"] = "dprl-serve"
	if o.Logf == nil {
		o.Logf = func(string, ...any) {}
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("--store: %w", redact(err))
	}
	d := &DB{url: url, pool: pool, o: o}
	if err := d.init(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	return d, nil
}

// redact drops a password from a connection error (pgx may quote the connection string);
// another error is returned as it is.
func redact(err error) error {
	if err == nil {
		return nil
	}
	if m := err.Error(); strings.Contains(m, "://") {
		if r := stripPassword(m); r != m {
			return errors.New(r)
		}
	}
	return err
}

// Redact returns url (or a message holding one) without its password.
func Redact(url string) string { return stripPassword(url) }

func stripPassword(s string) string {
	// postgres://user:password@host → postgres://user:…@host
	for _, scheme := range []string{"postgres://", "postgresql://"} {
		if i := strings.Index(s, scheme); i >= 0 {
			rest := s[i+len(scheme):]
			at := strings.IndexByte(rest, '@')
			colon := strings.IndexByte(rest, ':')
			if at > 0 && colon >= 0 && colon < at {
				s = s[:i+len(scheme)+colon+1] + "…" + rest[at:]
			}
		}
	}
	return s
}

func (d *DB) init(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	var sync string
	if err := d.pool.QueryRow(ctx, "SHOW synchronous_commit").Scan(&sync); err != nil {
		return fmt.Errorf("--store: %w", redact(err))
	}
	if sync == "off" {
		return errors.New("--store: the database has synchronous_commit = off: a commit would return before it is durable, and dprl acknowledges a report only once it is (set it to on, the default)")
	}
	return pgx.BeginFunc(ctx, d.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1, 0)", lockClass); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, schema); err != nil {
			return fmt.Errorf("creating the tables: %w", err)
		}
		var v []byte
		err := tx.QueryRow(ctx, "SELECT v FROM dprl_meta WHERE k = 'schema'").Scan(&v)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			if err := put(ctx, tx, "schema", binary.BigEndian.AppendUint64(nil, Schema)); err != nil {
				return err
			}
		case err != nil:
			return err
		case len(v) != 8 || binary.BigEndian.Uint64(v) != Schema:
			return fmt.Errorf("the database's dprl schema is %x, this dprl knows %d", v, Schema)
		}
		for _, k := range []string{"user-key", "credential-key"} {
			var key [32]byte
			if _, err := rand.Read(key[:]); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, "INSERT INTO dprl_meta (k, v) VALUES ($1, $2) ON CONFLICT (k) DO NOTHING", k, key[:]); err != nil {
				return err
			}
		}
		_, err = tx.Exec(ctx, "INSERT INTO dprl_meta (k, v) VALUES ('credential-key-version', $1) ON CONFLICT (k) DO NOTHING", binary.BigEndian.AppendUint64(nil, 1))
		return err
	})
}

func put(ctx context.Context, tx pgx.Tx, k string, v []byte) error {
	_, err := tx.Exec(ctx, "INSERT INTO dprl_meta (k, v) VALUES ($1, $2) ON CONFLICT (k) DO UPDATE SET v = EXCLUDED.v", k, v)
	return err
}

// Close closes the connections (a Store taken from d is closed by its own Close).
func (d *DB) Close() { d.pool.Close() }

// Leader describes the current leader for a standby's answers: its name and epoch, and
// whether its lock is held right now.
func (d *DB) Leader(ctx context.Context) (name string, epoch uint64, held bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	err = d.pool.QueryRow(ctx, `SELECT holder, epoch, EXISTS (SELECT 1 FROM pg_locks k WHERE k.locktype = 'advisory'
		AND k.database = (SELECT oid FROM pg_database WHERE datname = current_database())
		AND k.classid::bigint = $1 AND k.objid::bigint = $2 AND k.objsubid = 2 AND k.granted)
		FROM dprl_leader WHERE id = 1`, lockClass, lockObject).Scan(&name, &epoch, &held)
	return name, epoch, held, err
}

// TryLead tries once to become the leader: it takes the advisory lock on a new connection of
// its own, bumps the epoch and records o.Name. It returns the leader's Store, or nil (and no
// error) when another server holds the lock.
func (d *DB) TryLead(ctx context.Context) (*Store, error) {
	ctx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	cc, err := pgx.ParseConfig(d.url)
	if err != nil {
		return nil, redact(err)
	}
	cc.RuntimeParams["application_name"] = "dprl-leader-lock"
	lc, err := pgx.ConnectConfig(ctx, cc)
	if err != nil {
		return nil, redact(err)
	}
	var got bool
	if err := lc.QueryRow(ctx, "SELECT pg_try_advisory_lock($1, $2)", lockClass, lockObject).Scan(&got); err != nil || !got {
		lc.Close(context.Background())
		return nil, err
	}
	// Connections opened before (a database that restarted since) are dropped: the
	// rebuild reads through fresh ones.
	d.pool.Reset()
	s := &Store{pool: d.pool, lock: lc, o: d.o, lost: make(chan struct{}), stop: make(chan struct{}), monitored: make(chan struct{})}
	err = lc.QueryRow(ctx, "UPDATE dprl_leader SET epoch = epoch + 1, holder = $1, since = now() WHERE id = 1 RETURNING epoch", d.o.Name).Scan(&s.epoch)
	if err == nil {
		err = lc.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&s.pid)
	}
	if err == nil {
		err = s.loadKeys(ctx)
	}
	if err == nil {
		err = s.loadFilters(ctx)
	}
	if err != nil {
		lc.Close(context.Background())
		return nil, err
	}
	go s.monitor()
	return s, nil
}

// Store is the leader's view of the database: a store.Backend whose every write is fenced by
// the leadership (package doc). It is valid until it loses the leadership (Lost) or is
// closed.
type Store struct {
	pool    *pgxpool.Pool
	lock    *pgx.Conn // holds the advisory lock; used only by monitor after TryLead
	o       Options
	epoch   uint64
	pid     uint32 // the lock connection's backend
	userKey [32]byte
	credMu  sync.Mutex
	credKey store.CredentialKey
	hooks   *store.CommitHooks
	users   filters        // participation filters (filter.go)
	revoked filters        // revocation filters (filter.go)
	bg      sync.WaitGroup // filter rebuilds and trims in the background
	trimMu  sync.Mutex     // one trim at a time

	lostOnce  sync.Once
	lost      chan struct{} // closed when the leadership is lost
	lostErr   error
	stop      chan struct{} // closed by Close
	stopOnce  sync.Once
	monitored chan struct{} // closed when monitor returned
}

var _ store.Backend = (*Store)(nil)

// Epoch is the leadership's epoch (its fencing token).
func (s *Store) Epoch() uint64 { return s.epoch }

// Lost is closed when the leadership is lost: the lock connection failed, or a write found
// the fence closed. Nothing is committed through s afterwards.
func (s *Store) Lost() <-chan struct{} { return s.lost }

// LostErr says why the leadership was lost (nil while it holds).
func (s *Store) LostErr() error {
	select {
	case <-s.lost:
		return s.lostErr
	default:
		return nil
	}
}

// deposed is store.ErrNotLeader (with why) once the leadership is lost, else nil.
func (s *Store) deposed() error {
	select {
	case <-s.lost:
		return fmt.Errorf("%w: %v", store.ErrNotLeader, s.lostErr)
	default:
		return nil
	}
}

func (s *Store) depose(err error) {
	s.lostOnce.Do(func() {
		s.lostErr = err
		close(s.lost)
		if !errors.Is(err, errClosed) {
			s.o.Logf("leadership lost (epoch %d): %v; nothing more is acknowledged", s.epoch, err)
		}
	})
}

var errClosed = errors.New("the leadership was released (the store is closed)")

// monitorEvery is how often the lock connection is checked.
const monitorEvery = 250 * time.Millisecond

// monitor checks the lock connection until it fails (the leadership is lost) or s is closed.
func (s *Store) monitor() {
	defer close(s.monitored)
	every := s.o.monitorEvery
	if every <= 0 {
		every = monitorEvery
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-s.lost:
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		err := s.lock.Ping(ctx)
		cancel()
		if err != nil {
			s.depose(fmt.Errorf("the connection holding the leader's lock failed: %w", redact(err)))
			return
		}
	}
}

// Close releases the leadership (closing the lock connection releases the lock). The DB it
// came from stays open (its owner closes it).
func (s *Store) Close() error {
	s.stopOnce.Do(func() { close(s.stop) })
	<-s.monitored
	s.bg.Wait()
	s.depose(errClosed)
	s.lock.Close(context.Background())
	return nil
}

func (s *Store) loadKeys(ctx context.Context) error {
	rows, err := s.pool.Query(ctx, "SELECT k, v FROM dprl_meta WHERE k IN ('user-key', 'credential-key', 'credential-key-version')")
	if err != nil {
		return err
	}
	m, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) ([2][]byte, error) {
		var k string
		var v []byte
		err := r.Scan(&k, &v)
		return [2][]byte{[]byte(k), v}, err
	})
	if err != nil {
		return err
	}
	var uk, ck, cv []byte
	for _, kv := range m {
		switch string(kv[0]) {
		case "user-key":
			uk = kv[1]
		case "credential-key":
			ck = kv[1]
		case "credential-key-version":
			cv = kv[1]
		}
	}
	if len(uk) != 32 || len(ck) != 32 || len(cv) != 8 || binary.BigEndian.Uint64(cv) == 0 {
		return errors.New("the database's keys are missing or malformed (dprl_meta user-key, credential-key, credential-key-version)")
	}
	copy(s.userKey[:], uk)
	s.credKey.Version = binary.BigEndian.Uint64(cv)
	copy(s.credKey.Key[:], ck)
	return nil
}

// UserKey is the participation key.
func (s *Store) UserKey() [32]byte { return s.userKey }

// CredentialKey is the current credential key.
func (s *Store) CredentialKey() store.CredentialKey {
	s.credMu.Lock()
	defer s.credMu.Unlock()
	return s.credKey
}

// SetCommitHooks installs crash-test hooks inside Append's transaction.
func (s *Store) SetCommitHooks(h *store.CommitHooks) { s.hooks = h }

// fenceSQL passes only while the epoch is this leader's and its lock connection holds the
// advisory lock; FOR SHARE makes a new leader's epoch bump wait for this transaction.
const fenceSQL = `SELECT l.epoch = $1 AND EXISTS (SELECT 1 FROM pg_locks k WHERE k.locktype = 'advisory'
	AND k.database = (SELECT oid FROM pg_database WHERE datname = current_database())
	AND k.classid::bigint = $2 AND k.objid::bigint = $3 AND k.objsubid = 2 AND k.pid = $4 AND k.granted), l.holder, l.epoch
	FROM dprl_leader l WHERE l.id = 1 FOR SHARE OF l`

// fence checks, inside tx, that s still leads (package doc).
func (s *Store) fence(ctx context.Context, tx pgx.Tx) error {
	if err := s.deposed(); err != nil {
		return err
	}
	return s.fenceRow(tx.QueryRow(ctx, fenceSQL, s.epoch, lockClass, lockObject, s.pid))
}

// fenceRow checks the result of fenceSQL.
func (s *Store) fenceRow(row pgx.Row) error {
	if err := s.deposed(); err != nil {
		return err
	}
	var ok bool
	var holder string
	var epoch uint64
	if err := row.Scan(&ok, &holder, &epoch); err != nil {
		return err
	}
	if !ok {
		var err error
		if epoch != s.epoch {
			err = fmt.Errorf("%w: the leader is now %s (epoch %d; this server led epoch %d)", store.ErrNotLeader, holder, epoch, s.epoch)
		} else {
			err = fmt.Errorf("%w: this server's lock on the database was lost (epoch %d)", store.ErrNotLeader, s.epoch)
		}
		s.depose(err)
		return err
	}
	return nil
}

// write runs f in a fenced transaction; after, if non-nil, runs once it committed.
func (s *Store) write(f func(ctx context.Context, tx pgx.Tx) error, after func()) error {
	return s.writeUnfenced(func(ctx context.Context, tx pgx.Tx) error {
		if err := s.fence(ctx, tx); err != nil {
			return err
		}
		return f(ctx, tx)
	}, after)
}

// writeUnfenced runs f in a transaction, which f fences itself (Append: in its pipeline).
func (s *Store) writeUnfenced(f func(ctx context.Context, tx pgx.Tx) error, after func()) error {
	if err := s.deposed(); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return storageErr(err)
	}
	defer tx.Rollback(context.Background())
	if err := f(ctx, tx); err != nil {
		return storageErr(err)
	}
	if err := tx.Commit(ctx); err != nil {
		return storageErr(err)
	}
	if after != nil {
		after()
	}
	return nil
}

// storageErr keeps a fence refusal as it is and marks a connection failure as a storage one.
func storageErr(err error) error {
	if errors.Is(err, store.ErrNotLeader) {
		return err
	}
	return redact(err)
}

func (s *Store) read(f func(ctx context.Context) error) error {
	if err := s.deposed(); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	if err := f(ctx); err != nil {
		return redact(err)
	}
	return nil
}

// Create stores a new experiment; its ID must be new.
func (s *Store) Create(e *store.Experiment) error {
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	return s.write(func(ctx context.Context, tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, "INSERT INTO dprl_experiments (id, def) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING", e.ID, b)
		if err != nil {
			return err
		}
		if tag.RowsAffected() != 1 {
			return fmt.Errorf("experiment %s exists", e.ID)
		}
		return nil
	}, func() { s.users.set(e.ID, newBloom(0)); s.revoked.set(e.ID, newBloom(0)) })
}

// loadFilters builds the participation filter of every experiment (after the epoch bump:
// filter.go).
func (s *Store) loadFilters(ctx context.Context) error {
	rows, err := s.pool.Query(ctx, "SELECT id FROM dprl_experiments")
	if err != nil {
		return err
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return err
	}
	for _, id := range ids {
		b, err := s.loadFilter(ctx, "dprl_users", id)
		if err != nil {
			return fmt.Errorf("experiment %s: loading its participation filter: %w", id, err)
		}
		s.users.set(id, b)
		if b, err = s.loadFilter(ctx, "dprl_revoked", id); err != nil {
			return fmt.Errorf("experiment %s: loading its revocation filter: %w", id, err)
		}
		s.revoked.set(id, b)
	}
	return nil
}

// Experiments returns every stored experiment, in ID order.
func (s *Store) Experiments() ([]*store.Experiment, error) {
	var out []*store.Experiment
	err := s.read(func(ctx context.Context) error {
		rows, err := s.pool.Query(ctx, "SELECT id, def FROM dprl_experiments ORDER BY id")
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var id string
			var def []byte
			if err := rows.Scan(&id, &def); err != nil {
				return err
			}
			e := new(store.Experiment)
			if err := json.Unmarshal(def, e); err != nil {
				return fmt.Errorf("experiment %s: %w", id, err)
			}
			out = append(out, e)
		}
		return rows.Err()
	})
	return out, err
}

// Append appends recs to experiment id's log in one transaction; next must be the log's
// length + 1, and no user may have a record already: otherwise nothing is written. The fence,
// the check of the log's length and the writes go to the database in one pipeline (one round
// trip), then the commit.
func (s *Store) Append(id string, next uint64, recs []*store.Record) error {
	if len(recs) == 0 {
		return nil
	}
	var after func()
	if h := s.hooks; h != nil && h.After != nil {
		after = h.After
	}
	digests := make([][]byte, len(recs))
	seqs := make([]int64, len(recs))
	idems := make([]string, len(recs))
	regrets := make([]float64, len(recs))
	reports := make([][]byte, len(recs))
	for i, r := range recs {
		digests[i], seqs[i], idems[i], regrets[i], reports[i] = r.User[:], int64(next)+int64(i), r.Idem, r.Regret, r.Report
	}
	last := int64(next) + int64(len(recs)) - 1
	err := s.writeUnfenced(func(ctx context.Context, tx pgx.Tx) error {
		b := &pgx.Batch{}
		b.Queue(fenceSQL, s.epoch, lockClass, lockObject, s.pid)
		b.Queue("SELECT appended FROM dprl_experiments WHERE id = $1 FOR UPDATE", id)
		b.Queue("INSERT INTO dprl_users (exp, digest, seq, idem) SELECT $1, unnest($2::bytea[]), unnest($3::int8[]), unnest($4::text[])", id, digests, seqs, idems)
		b.Queue(`INSERT INTO dprl_log (exp, seq, digest, idem, regret, report)
			SELECT $1, unnest($2::int8[]), unnest($3::bytea[]), unnest($4::text[]), unnest($5::float8[]), unnest($6::bytea[])`, id, seqs, digests, idems, regrets, reports)
		b.Queue("UPDATE dprl_experiments SET appended = $2 WHERE id = $1 AND appended = $3", id, last, int64(next)-1)
		br := tx.SendBatch(ctx, b)
		defer br.Close()
		if err := s.fenceRow(br.QueryRow()); err != nil {
			return err
		}
		var n uint64
		err := br.QueryRow().Scan(&n)
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("experiment %s: no such experiment", id)
		}
		if err != nil {
			return err
		}
		if n+1 != next {
			return fmt.Errorf("experiment %s: log has %d records, caller expected %d", id, n, next-1)
		}
		if _, err := br.Exec(); err != nil {
			var pe *pgconn.PgError
			if errors.As(err, &pe) && pe.Code == "23505" {
				return fmt.Errorf("experiment %s: user already contributed", id)
			}
			return err
		}
		if _, err := br.Exec(); err != nil {
			return err
		}
		tag, err := br.Exec()
		if err != nil {
			return err
		}
		if tag.RowsAffected() != 1 {
			return fmt.Errorf("experiment %s: the log changed under the append", id)
		}
		if err := br.Close(); err != nil {
			return err
		}
		if h := s.hooks; h != nil && h.Before != nil {
			if err := h.Before(); err != nil {
				return err
			}
		}
		if s.o.BeforeCommit != nil {
			return s.o.BeforeCommit()
		}
		return nil
	}, after)
	// The users go into the filter whatever the outcome: a commit reported failed may have
	// happened (the connection broke after COMMIT was sent), and a filter that missed it would
	// let those users' retries through to the database's key, failing every group they join.
	// A user added for nothing only costs a lookup.
	if s.users.add(id, recs) {
		s.rebuildFilter(&s.users, "dprl_users", id) // outgrown: rebuilt in the background
	}
	return err
}

// rebuildFilter builds experiment id's filter of table anew from the database in the
// background and installs it (filters.finish); Close waits for it.
func (s *Store) rebuildFilter(f *filters, table, id string) {
	s.bg.Add(1)
	go func() {
		defer s.bg.Done()
		ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
		defer cancel()
		b, err := s.loadFilter(ctx, table, id)
		if err != nil {
			b = nil
		}
		f.finish(id, b)
	}()
}

// appended returns experiment id's log length (in tx or the pool).
func appended(ctx context.Context, q interface {
	QueryRow(context.Context, string, ...any) pgx.Row
}, id string) (uint64, error) {
	var n uint64
	err := q.QueryRow(ctx, "SELECT appended FROM dprl_experiments WHERE id = $1", id).Scan(&n)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, fmt.Errorf("experiment %s: no such experiment", id)
	}
	return n, err
}

// ReplayAfter calls f with every record of experiment id's log after record `after`, in
// order, from one consistent snapshot of the database.
func (s *Store) ReplayAfter(id string, after uint64, f func(seq uint64, r *store.Record) error) error {
	return s.read(func(ctx context.Context) error {
		// A replay may outlast opTimeout (a long log): it is bounded by its rows, not a clock.
		ctx = context.WithoutCancel(ctx)
		return pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
			n, err := appended(ctx, tx, id)
			if err != nil {
				return err
			}
			if n < after {
				return fmt.Errorf("experiment %s: the snapshot covers %d reports, the log has %d", id, after, n)
			}
			rows, err := tx.Query(ctx, "SELECT seq, digest, idem, regret, report FROM dprl_log WHERE exp = $1 AND seq > $2 ORDER BY seq", id, int64(after))
			if err != nil {
				return err
			}
			defer rows.Close()
			want := after + 1
			for rows.Next() {
				var seq uint64
				var dig []byte
				r := new(store.Record)
				if err := rows.Scan(&seq, &dig, &r.Idem, &r.Regret, &r.Report); err != nil {
					return err
				}
				if seq != want {
					return fmt.Errorf("experiment %s: log record %d follows %d", id, seq, want-1)
				}
				if len(dig) != 32 {
					return fmt.Errorf("experiment %s: record %d: bad user digest", id, seq)
				}
				copy(r.User[:], dig)
				if err := f(seq, r); err != nil {
					return err
				}
				want++
			}
			if err := rows.Err(); err != nil {
				return err
			}
			if want != n+1 {
				return fmt.Errorf("experiment %s: log ends at record %d, its length is %d", id, want-1, n)
			}
			return nil
		})
	})
}

// Contributed returns the sequence number and idempotency key of user's acknowledged report
// to experiment id (seq 0 if none).
func (s *Store) Contributed(id string, user [32]byte) (seq uint64, idem string, err error) {
	if !s.users.mayHold(id, user) {
		return 0, "", nil // certain (filter.go)
	}
	err = s.read(func(ctx context.Context) error {
		var exp *string
		var sq *int64
		var ik *string
		err := s.pool.QueryRow(ctx, `SELECT e.id, u.seq, u.idem FROM dprl_experiments e
			LEFT JOIN dprl_users u ON u.exp = e.id AND u.digest = $2 WHERE e.id = $1`, id, user[:]).Scan(&exp, &sq, &ik)
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("experiment %s: no such experiment", id)
		}
		if err != nil {
			return err
		}
		if sq != nil {
			seq, idem = uint64(*sq), *ik
		}
		return nil
	})
	return seq, idem, err
}

// Revoke records revoked participation digests of experiment id; it returns how many were
// new.
func (s *Store) Revoke(id string, users [][32]byte) (int, error) {
	n := 0
	err := s.write(func(ctx context.Context, tx pgx.Tx) error {
		n = 0
		if _, err := appended(ctx, tx, id); err != nil {
			return err
		}
		for _, u := range users {
			tag, err := tx.Exec(ctx, "INSERT INTO dprl_revoked (exp, digest) VALUES ($1, $2) ON CONFLICT DO NOTHING", id, u[:])
			if err != nil {
				return err
			}
			n += int(tag.RowsAffected())
		}
		return nil
	}, nil)
	// Whatever the outcome, as in Append: the revocation may have been committed.
	if s.revoked.addDigests(id, users) {
		s.rebuildFilter(&s.revoked, "dprl_revoked", id)
	}
	return n, err
}

// Revoked reports whether user is revoked for experiment id.
func (s *Store) Revoked(id string, user [32]byte) (bool, error) {
	if !s.revoked.mayHold(id, user) {
		return false, nil // certain (filter.go)
	}
	var r bool
	err := s.read(func(ctx context.Context) error {
		return s.pool.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM dprl_revoked WHERE exp = $1 AND digest = $2)", id, user[:]).Scan(&r)
	})
	return r, err
}

// HasRevocations reports whether experiment id has any revoked digest.
func (s *Store) HasRevocations(id string) (bool, error) {
	var r bool
	err := s.read(func(ctx context.Context) error {
		return s.pool.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM dprl_revoked WHERE exp = $1)", id).Scan(&r)
	})
	return r, err
}

// RotateCredentialKey draws a new credential key under the next version.
func (s *Store) RotateCredentialKey() (store.CredentialKey, error) {
	var ck store.CredentialKey
	err := s.write(func(ctx context.Context, tx pgx.Tx) error {
		var v []byte
		if err := tx.QueryRow(ctx, "SELECT v FROM dprl_meta WHERE k = 'credential-key-version' FOR UPDATE").Scan(&v); err != nil {
			return err
		}
		if len(v) != 8 {
			return errors.New("the database's credential key version is malformed")
		}
		ck.Version = binary.BigEndian.Uint64(v) + 1
		if _, err := rand.Read(ck.Key[:]); err != nil {
			return err
		}
		if err := put(ctx, tx, "credential-key", ck.Key[:]); err != nil {
			return err
		}
		return put(ctx, tx, "credential-key-version", binary.BigEndian.AppendUint64(nil, ck.Version))
	}, nil)
	if err != nil {
		return store.CredentialKey{}, fmt.Errorf("rotating the credential key: %w", err)
	}
	s.credMu.Lock()
	s.credKey = ck
	s.credMu.Unlock()
	return ck, nil
}

// SaveSnapshot stores snap as experiment id's latest snapshot in one transaction and, unless
// retain, then deletes the records 1..snap.Seq in another, in the background (trim; Close
// waits for it). It returns the number of records it deletes.
func (s *Store) SaveSnapshot(id string, snap *store.Snapshot, retain bool, hook store.SnapshotHook) (int, error) {
	deleted := 0
	err := s.write(func(ctx context.Context, tx pgx.Tx) error {
		deleted = 0
		var n uint64
		err := tx.QueryRow(ctx, "SELECT appended FROM dprl_experiments WHERE id = $1 FOR UPDATE", id).Scan(&n)
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("experiment %s: no such experiment", id)
		}
		if err != nil {
			return err
		}
		if snap.Seq > n {
			return fmt.Errorf("experiment %s: snapshot at report %d, but the log has %d", id, snap.Seq, n)
		}
		var prev uint64
		err = tx.QueryRow(ctx, "SELECT seq FROM dprl_snapshots WHERE exp = $1", id).Scan(&prev)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		if err == nil && prev > snap.Seq {
			return fmt.Errorf("experiment %s: snapshot at report %d precedes the stored one (%d)", id, snap.Seq, prev)
		}
		if !retain {
			// Deleted after this transaction committed (below), counted here.
			if err := tx.QueryRow(ctx, "SELECT count(*) FROM dprl_log WHERE exp = $1 AND seq <= $2", id, int64(snap.Seq)).Scan(&deleted); err != nil {
				return err
			}
		}
		if hook != nil {
			if err := hook(); err != nil {
				return err
			}
		}
		_, err = tx.Exec(ctx, `INSERT INTO dprl_snapshots (exp, seq, state) VALUES ($1, $2, $3)
			ON CONFLICT (exp) DO UPDATE SET seq = EXCLUDED.seq, state = EXCLUDED.state`, id, int64(snap.Seq), snap.State)
		return err
	}, nil)
	if err == nil && !retain && deleted > 0 {
		s.bg.Add(1)
		go func() {
			defer s.bg.Done()
			s.trim(id, snap.Seq)
		}()
	}
	if err != nil {
		return 0, err
	}
	return deleted, nil
}

// trim deletes experiment id's records 1..upto, which a committed snapshot covers, in a
// transaction of its own, after the snapshot's (in the background: the snapshot's transaction
// holds the experiment's row, which every append updates, so deleting ≈ 2 000 rows in it made
// the appends behind it wait). The participation index already holds each user's sequence
// number and key. A crash or a failure before it commits leaves records a restart skips
// (ReplayAfter reads after the snapshot) and the next snapshot's deletion removes.
func (s *Store) trim(id string, upto uint64) {
	s.trimMu.Lock()
	defer s.trimMu.Unlock()
	err := s.write(func(ctx context.Context, tx pgx.Tx) error {
		_, err := tx.Exec(ctx, "DELETE FROM dprl_log WHERE exp = $1 AND seq <= $2", id, int64(upto))
		return err
	}, nil)
	if err != nil {
		s.o.Logf("experiment %s: deleting the records up to the snapshot at %d failed (the next snapshot deletes them): %v", id, upto, err)
	}
}

// LatestSnapshot returns experiment id's latest snapshot, or nil if it has none.
func (s *Store) LatestSnapshot(id string) (*store.Snapshot, error) {
	var snap *store.Snapshot
	err := s.read(func(ctx context.Context) error {
		sn := new(store.Snapshot)
		err := s.pool.QueryRow(ctx, "SELECT seq, state FROM dprl_snapshots WHERE exp = $1", id).Scan(&sn.Seq, &sn.State)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		if err == nil {
			snap = sn
		}
		return err
	})
	return snap, err
}

// LogLength returns the number of records ever appended to experiment id's log and the number
// still stored.
func (s *Store) LogLength(id string) (uint64, int, error) {
	var n uint64
	var stored int
	err := s.read(func(ctx context.Context) error {
		var err error
		if n, err = appended(ctx, s.pool, id); err != nil {
			return err
		}
		return s.pool.QueryRow(ctx, "SELECT count(*) FROM dprl_log WHERE exp = $1", id).Scan(&stored)
	})
	return n, stored, err
}

// Damaged is always nil: PostgreSQL checks its own pages (a damaged page fails the query that
// reads it, which the service reports as a failing commit or read).
func (s *Store) Damaged() error { return nil }

// Probe commits a tiny fenced transaction: the database accepts commits again, and this
// server still leads.
func (s *Store) Probe() error {
	return s.write(func(ctx context.Context, tx pgx.Tx) error {
		if err := put(ctx, tx, "probe", []byte(time.Now().UTC().Format(time.RFC3339Nano))); err != nil {
			return err
		}
		if s.o.BeforeCommit != nil {
			return s.o.BeforeCommit()
		}
		return nil
	}, nil)
}
