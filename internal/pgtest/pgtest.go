// Package pgtest starts a throw-away PostgreSQL cluster for tests: initdb into a scratch
// directory, pg_ctl start on a Unix socket in that directory (no TCP port is opened), trust
// authentication, removed when the test ends. The WAL writer runs only every 10 s
// (wal_writer_delay): a commit is durable only if it flushed its own WAL, so a crash
// (Stop("immediate")) loses every commit that returned without its flush — the test of
// durability then fails reliably. PostgreSQL refuses to run as root, so under
// root (.ci/run) the cluster runs as the system user "postgres" (runuser).
//
// Without PostgreSQL on the machine the tests skip with a message saying so, unless
// DPRL_REQUIRE_POSTGRES=1 (set by .ci/run), which makes its absence a failure.
//
// A test binary that is killed (SIGKILL, a -timeout panic) cannot remove its cluster: it keeps
// running in /tmp/dprl-pg-*; stop it with pg_ctl -D /tmp/dprl-pg-…/data -m immediate stop (as
// the user postgres under root) and remove the directory.
package pgtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// RequireEnv makes an absent PostgreSQL a test failure instead of a skip.
const RequireEnv = "DPRL_REQUIRE_POSTGRES"

// Superuser is the cluster's superuser.
const Superuser = "dprl"

// Cluster is a running throw-away cluster.
type Cluster struct {
	Dir   string // the scratch directory: data in Dir/data, the socket in Dir
	Port  int    // the socket's port number (its file name: .s.PGSQL.<Port>)
	bin   string
	runAs string // "" or the user the server runs as
	dbs   atomic.Int64
}

// Bin returns the directory of PostgreSQL's server programs (initdb, pg_ctl), or "".
func Bin() string {
	if p, err := exec.LookPath("initdb"); err == nil {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			p = r // /usr/local/bin/initdb → /usr/lib/postgresql/15/bin/initdb
		}
		if _, err := os.Stat(filepath.Join(filepath.Dir(p), "pg_ctl")); err == nil {
			return filepath.Dir(p)
		}
	}
	vs, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	sort.Strings(vs)
	if len(vs) > 0 {
		return filepath.Dir(vs[len(vs)-1])
	}
	return ""
}

// Start starts a cluster for t (stopped and removed when t ends), or skips t when PostgreSQL
// is absent (fails it under DPRL_REQUIRE_POSTGRES=1).
func Start(t testing.TB) *Cluster {
	t.Helper()
	if Bin() == "" {
		Absent(t)
	}
	c, err := StartShared()
	if c != nil {
		t.Cleanup(c.Remove)
	}
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Absent skips t because PostgreSQL is not installed, or fails it under
// DPRL_REQUIRE_POSTGRES=1.
func Absent(t testing.TB) {
	t.Helper()
	if os.Getenv(RequireEnv) == "1" {
		t.Fatalf("PostgreSQL is not installed (no initdb/pg_ctl on PATH or in /usr/lib/postgresql/*/bin) and %s=1", RequireEnv)
	}
	t.Skipf("PostgreSQL is not installed (no initdb/pg_ctl on PATH or in /usr/lib/postgresql/*/bin): install postgresql (apt-get install postgresql-15) to run this test; %s=1 makes this a failure", RequireEnv)
}

// StartShared starts a cluster that outlives a test (for a whole test binary): the caller
// removes it (Remove) when its tests are done. On an error the returned cluster, if not nil,
// must be removed too.
func StartShared() (*Cluster, error) {
	bin := Bin()
	if bin == "" {
		return nil, errors.New("PostgreSQL is not installed")
	}
	c := &Cluster{bin: bin}
	dir, err := os.MkdirTemp("", "dprl-pg-")
	if err != nil {
		return nil, err
	}
	c.Dir = dir
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			return c, fmt.Errorf("running as root, PostgreSQL needs an unprivileged user: no user postgres (%v)", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			return c, err
		}
		c.runAs = "postgres"
	}
	c.Port = 20000 + (os.Getpid()*7+int(time.Now().UnixNano()%1000))%20000
	if out, err := c.run("initdb", "-D", c.data(), "-U", Superuser, "-A", "trust", "-E", "UTF8", "--no-instructions"); err != nil {
		return c, fmt.Errorf("initdb: %v\n%s", err, out)
	}
	conf := fmt.Sprintf("listen_addresses = ''\nunix_socket_directories = '%s'\nport = %d\nmax_connections = 300\nfsync = on\nsynchronous_commit = on\nwal_writer_delay = 10s\n", dir, c.Port)
	f, err := os.OpenFile(filepath.Join(c.data(), "postgresql.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return c, err
	}
	f.WriteString(conf)
	f.Close()
	return c, c.Start()
}

// Remove stops the cluster (immediate) and deletes its directory.
func (c *Cluster) Remove() {
	c.Stop("immediate")
	os.RemoveAll(c.Dir)
}

func (c *Cluster) data() string { return filepath.Join(c.Dir, "data") }

// run runs a PostgreSQL program (as the unprivileged user under root).
func (c *Cluster) run(prog string, args ...string) ([]byte, error) {
	path := filepath.Join(c.bin, prog)
	var cmd *exec.Cmd
	if c.runAs != "" {
		cmd = exec.Command("runuser", append([]string{"-u", c.runAs, "--", path}, args...)...)
	} else {
		cmd = exec.Command(path, args...)
	}
	cmd.Dir = c.Dir
	return cmd.CombinedOutput()
}

// Start starts (or restarts) the stopped cluster and waits until it accepts connections.
func (c *Cluster) Start() error {
	if out, err := c.run("pg_ctl", "-D", c.data(), "-l", filepath.Join(c.Dir, "log"), "-w", "-t", "60", "start"); err != nil {
		log, _ := os.ReadFile(filepath.Join(c.Dir, "log"))
		return fmt.Errorf("pg_ctl start: %v\n%s\n%s", err, out, log)
	}
	return nil
}

// Stop stops the cluster: mode "fast" (clean) or "immediate" (a crash: no checkpoint,
// recovery from the WAL at the next start).
func (c *Cluster) Stop(mode string) error {
	if _, err := os.Stat(filepath.Join(c.data(), "postmaster.pid")); err != nil {
		return nil
	}
	if out, err := c.run("pg_ctl", "-D", c.data(), "-m", mode, "-w", "stop"); err != nil {
		return fmt.Errorf("pg_ctl stop: %v\n%s", err, out)
	}
	return nil
}

// URL is the connection URL of database db.
func (c *Cluster) URL(db string) string {
	return fmt.Sprintf("postgres://%s@localhost:%d/%s?host=%s&sslmode=disable", Superuser, c.Port, db, c.Dir)
}

// NewDB creates a new empty database and returns its URL.
func (c *Cluster) NewDB(t testing.TB) string {
	t.Helper()
	name := fmt.Sprintf("t%d", c.dbs.Add(1))
	Exec(t, c.URL("postgres"), "CREATE DATABASE "+name)
	return c.URL(name)
}

// withConn calls f with a connection to database url and a context that ends 30 s from now.
func withConn(t testing.TB, url string, f func(ctx context.Context, conn *pgx.Conn)) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	f(ctx, conn)
}

// Exec runs sql on database url (tests: terminating a backend, taking a lock).
func Exec(t testing.TB, url, sql string, args ...any) {
	t.Helper()
	withConn(t, url, func(ctx context.Context, conn *pgx.Conn) {
		if _, err := conn.Exec(ctx, sql, args...); err != nil {
			t.Fatal(err)
		}
	})
}

// Terminate terminates the backends of database url that the query `SELECT pid FROM
// pg_stat_activity WHERE <where>` lists and waits until they are gone (their locks released).
// It returns how many it terminated.
func Terminate(t testing.TB, url, where string, args ...any) (terminated int) {
	t.Helper()
	withConn(t, url, func(ctx context.Context, conn *pgx.Conn) { terminated = terminate(t, ctx, conn, where, args) })
	return terminated
}

// terminate is Terminate on conn.
func terminate(t testing.TB, ctx context.Context, conn *pgx.Conn, where string, args []any) int {
	t.Helper()
	rows, err := conn.Query(ctx, "SELECT pid FROM pg_stat_activity WHERE "+where, args...)
	if err != nil {
		t.Fatal(err)
	}
	pids, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	if err != nil {
		t.Fatal(err)
	}
	for _, pid := range pids {
		if _, err := conn.Exec(ctx, "SELECT pg_terminate_backend($1)", pid); err != nil {
			t.Fatal(err)
		}
	}
	for {
		var n int
		if err := conn.QueryRow(ctx, "SELECT count(*) FROM pg_stat_activity WHERE pid = ANY($1)", pids).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			return len(pids)
		}
		if ctx.Err() != nil {
			t.Fatalf("backends %v still alive 30 s after pg_terminate_backend", pids)
		}
		time.Sleep(time.Millisecond)
	}
}
