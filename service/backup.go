package service

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/dprl/dprl/internal/atomicfile"
	"github.com/dprl/dprl/service/client"
	"github.com/dprl/dprl/service/store"
)

// backupWriteWindow is how long each write of a backup's stream may take: the server's write
// timeout (one minute for a whole response) is pushed back by this much before every write,
// so a large database streams as long as it keeps moving.
const backupWriteWindow = time.Minute

// backup answers GET /v1/backup (admin token): a consistent copy of the live database
// (store.Backup: one read transaction, so one commit's state), streamed with its exact
// Content-Length so that a copy cut short is an error at the client, never a short file.
// Commits go on while it streams.
func (s *Server) backup(w http.ResponseWriter, r *http.Request) {
	if !authorized(w, r, s.admin, "a backup needs the admin token") {
		return
	}
	b, ok := s.st.(store.Backuper)
	if !ok {
		fail(w, http.StatusNotImplemented, "unsupported", "", "this server's store (PostgreSQL) is backed up with PostgreSQL's own tools: pg_dump or pg_basebackup (docs/serve.md, Backups)")
		return
	}
	rc := http.NewResponseController(w)
	dw := &deadlineWriter{w: w, rc: rc}
	started := false
	n, err := b.Backup(dw, func(size int64) error {
		h := w.Header()
		h.Set("Content-Type", "application/octet-stream")
		h.Set("Content-Length", strconv.FormatInt(size, 10))
		h.Set("Cache-Control", "no-store")
		w.WriteHeader(http.StatusOK)
		started = true
		return nil
	})
	switch {
	case err != nil && !started:
		s.logf("backup: %v", err)
		fail(w, http.StatusServiceUnavailable, "storage", "", "the backup could not be read from the database: %v", err)
	case err != nil:
		// The status and length are sent: the connection closes short of the length, which
		// the client reports (it never keeps a short copy).
		s.logf("backup: stopped after %d bytes: %v", n, err)
	default:
		s.logf("backup: %d bytes sent", n)
	}
}

func (s *Server) logf(format string, args ...any) {
	if s.cfg.Logf != nil {
		s.cfg.Logf(format, args...)
	}
}

// deadlineWriter pushes the connection's write deadline back before every write.
type deadlineWriter struct {
	w  io.Writer
	rc *http.ResponseController
}

func (d *deadlineWriter) Write(b []byte) (int, error) {
	if err := d.rc.SetWriteDeadline(time.Now().Add(backupWriteWindow)); err != nil && !errors.Is(err, http.ErrNotSupported) {
		return 0, err
	}
	return d.w.Write(b)
}

// BackupOptions say where a backup goes and how it is taken.
type BackupOptions struct {
	// Dir is the data directory (offline backup: its database is opened and locked, so no
	// server may hold it).
	Dir string
	// Server and AdminToken take the backup through a running server instead (GET /v1/backup):
	// the server holds the database's lock.
	Server, AdminToken string
	// Out is the backup file. It is written atomically (temporary file in its directory,
	// fsync, checked with store.CheckBackup, then linked into place) and an existing file is
	// refused unless Replace.
	Out     string
	Replace bool
	// LockWait is how long an offline backup waits for the database's lock (default 1 s).
	LockWait time.Duration
	// HTTP is the client for Server (default: no overall timeout, since a large database
	// streams for long, but a minute at most for the answer's headers).
	HTTP *http.Client
}

// Backup writes a consistent copy of a data directory's database to o.Out, through the running
// server at o.Server if given, else by opening o.Dir (exits with store.ErrLocked while a server
// holds it). The copy is checked before it is put in place. It returns the copy's size.
// Restoring is copying the file to <new data dir>/dprl.db (docs/serve.md, "Backups").
func Backup(ctx context.Context, o BackupOptions) (int64, error) {
	if o.Out == "" {
		return 0, errors.New("--out: a backup file is required")
	}
	if !o.Replace {
		if _, err := os.Lstat(o.Out); err == nil {
			return 0, fmt.Errorf("--out: %s exists (a backup never replaces a file unless asked: --replace)", o.Out)
		}
	}
	hc := o.HTTP
	if hc == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.ResponseHeaderTimeout = time.Minute
		hc = &http.Client{Transport: t}
	}
	var n int64
	write := func(w io.Writer) (err error) {
		if o.Server != "" {
			n, err = client.New(o.Server, o.AdminToken, "", hc).Backup(ctx, w)
			return err
		}
		if _, err := os.Stat(filepath.Join(o.Dir, store.FileName)); err != nil {
			return fmt.Errorf("--data: %w (a backup copies an existing data directory)", err)
		}
		st, err := store.Open(o.Dir, max(o.LockWait, time.Second))
		if err != nil {
			if errors.Is(err, store.ErrLocked) {
				return fmt.Errorf("%w: back up through it with --server URL", err)
			}
			return err
		}
		n, err = st.Backup(w, nil)
		if cerr := st.Close(); err == nil {
			err = cerr
		}
		return err
	}
	check := func(tmp string) error {
		if err := store.CheckBackup(tmp); err != nil {
			return fmt.Errorf("the copy does not check: %w", err)
		}
		return nil
	}
	var err error
	if o.Replace {
		err = atomicfile.WriteFileVerified(o.Out, write, check, 0o600)
	} else {
		err = atomicfile.CreateFile(o.Out, write, check, 0o600)
		if errors.Is(err, fs.ErrExist) {
			err = fmt.Errorf("--out: %s appeared while the backup was written; it is kept (--replace replaces it)", o.Out)
		}
	}
	return n, err
}
