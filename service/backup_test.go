package service_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/dprl/dprl/agents/protocol"
	"github.com/dprl/dprl/service"
	"github.com/dprl/dprl/service/client"
	"github.com/dprl/dprl/service/store"
)

// backupReport is user u's report (a fixed function of u, so it can be sent again).
func backupReport(h protocol.Header, u int) *protocol.Trajectory {
	rep := &protocol.Trajectory{Header: h, States: make([]int, 11), Actions: make([]int, 10), Rewards: make([]float64, 10)}
	for i := range rep.Actions {
		rep.States[i+1], rep.Actions[i] = (u*7+i)%6, (u+i*i)%2
		rep.Rewards[i] = float64((u+i)%3) / 2
	}
	return rep
}

// TestBackupRestore: a backup taken through a live server in the middle of a concurrent load
// is one commit's state, and restoring it (the file copied into a fresh data directory, same
// tokens) gives a server with the same experiments, ledger and policies as the original had at
// that commit: every policy version the restored server publishes is the one the original
// published, its release history is a prefix of the original's, retries of acknowledged
// reports get their original acknowledgements and second reports are refused. Fed the reports
// the original acknowledged after the backup, in the original's order, it publishes exactly
// what the original published (same policy body, ledger and list byte for byte): it kept
// accepting reports and drew the same noise, none redrawn.
func TestBackupRestore(t *testing.T) {
	ctx := context.Background()
	snap := func(c *service.Config) { c.SnapshotEvery = 100 } // the backup holds snapshots, and the log after them
	dir := t.TempDir()
	c, url, stop := liveURL(t, dir, false, snap)
	req := client.CreateRequest{Family: "tabular", Agent: "practical-jdp", Env: client.Env{Name: "riverswim", Params: map[string]float64{"horizon": 10}},
		Epsilon: 1, Delta: 1e-5, Capacity: 2000}
	l, err := c.Create(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	// A second experiment, idle, must come back too.
	other, err := c.Create(ctx, client.CreateRequest{Family: "tabular", Agent: "practical-jdp", Env: client.Env{Name: "riverswim", Params: map[string]float64{"horizon": 5}},
		Epsilon: 1, Delta: 1e-5, Capacity: 50})
	if err != nil {
		t.Fatal(err)
	}
	exp := l.Experiment
	const N, workers = 900, 8
	ids := make([]string, N+1)
	for u := 1; u <= N; u++ {
		ids[u] = fmt.Sprint("u", u)
	}
	creds, err := c.Credentials(ctx, exp, ids[1:])
	if err != nil {
		t.Fatal(err)
	}
	head := header(t, c, exp)

	// The load: workers submit users 1..N; the acknowledgements give the log's order. The
	// policies the original publishes are recorded as the load goes.
	var (
		mu       sync.Mutex
		userAt   = map[uint64]int{} // log sequence → user
		seen     = map[uint64]string{}
		acked    atomic.Int64
		next     atomic.Int64
		wg       sync.WaitGroup
		firstErr error
	)
	backupAt := int64(N / 3)
	out := filepath.Join(t.TempDir(), "backup.db")
	var lo, hi int64 // reports acknowledged before the backup began, reports sent when it ended
	record := func() {
		// The version and the body of one response: fetching the body again could return a
		// later version's (the load goes on), which the test would then attribute to this one.
		p, err := c.Policy(ctx, exp)
		if err == nil {
			b, _ := json.Marshal(p)
			mu.Lock()
			seen[p.Version] = string(b)
			mu.Unlock()
		}
	}
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				u := int(next.Add(1))
				if u > N {
					return
				}
				a, err := c.Submit(ctx, exp, client.Submission{User: ids[u], Credential: creds[ids[u]], IdempotencyKey: "k" + ids[u], Report: backupReport(head, u), Regret: math.NaN()})
				if err != nil {
					mu.Lock()
					firstErr = errors.Join(firstErr, fmt.Errorf("user %d: %w", u, err))
					mu.Unlock()
					return
				}
				mu.Lock()
				userAt[a.Sequence] = u
				mu.Unlock()
				if acked.Add(1)%25 == 0 {
					record()
				}
			}
		}()
	}
	for acked.Load() < backupAt {
		record()
	}
	lo = acked.Load()
	n, err := service.Backup(ctx, service.BackupOptions{Server: url, AdminToken: adminTok, Out: out})
	hi = min(next.Load(), N)
	if err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if firstErr != nil {
		t.Fatal(firstErr)
	}
	if fi, err := os.Stat(out); err != nil || fi.Size() != n || fi.Mode().Perm() != 0o600 {
		t.Fatalf("backup file: %v %v (reported %d bytes)", fi, err, n)
	}
	finalPolicy := policy(t, c, exp)
	_, finalLedger := rawReq(t, url, "GET", "/v1/experiments/"+exp+"/ledger", "", nil, nil)
	_, finalList := rawReq(t, url, "GET", "/v1/experiments", "", nil, nil)
	var final client.Ledger
	if l, err := c.Ledger(ctx, exp); err != nil || l.UsersServed != N {
		t.Fatalf("original: %+v %v", l, err)
	} else {
		final = *l
	}

	// A second backup to the same file is refused and leaves it untouched; --replace replaces it.
	before, _ := os.ReadFile(out)
	if _, err := service.Backup(ctx, service.BackupOptions{Server: url, AdminToken: adminTok, Out: out}); err == nil || !strings.Contains(err.Error(), "exists") {
		t.Fatalf("a backup over an existing file: %v", err)
	}
	if after, _ := os.ReadFile(out); string(after) != string(before) {
		t.Fatal("a refused backup changed the existing file")
	}
	// The offline backup needs the lock, which the live server holds.
	if _, err := service.Backup(ctx, service.BackupOptions{Dir: dir, Out: out + ".offline"}); !errors.Is(err, store.ErrLocked) {
		t.Fatalf("offline backup of a served directory: %v, want ErrLocked", err)
	}
	if _, err := service.Backup(ctx, service.BackupOptions{Server: url, AdminToken: clientTok, Out: out + ".client"}); !client.IsCode(err, "unauthorized") {
		t.Fatalf("backup with the client token: %v", err)
	}
	if _, err := os.Stat(out + ".client"); err == nil {
		t.Fatal("a refused backup left a file")
	}
	stop()

	// Restore: the file copied into a fresh data directory, the same tokens.
	rdir := t.TempDir()
	if err := os.WriteFile(filepath.Join(rdir, store.FileName), before, 0o600); err != nil {
		t.Fatal(err)
	}
	rc, rs, _ := live(t, rdir, false, snap)
	rurl := serverURL(t, rs)
	rl, err := rc.Ledger(ctx, exp)
	if err != nil {
		t.Fatal(err)
	}
	nb := int64(rl.UsersServed)
	if nb < lo || nb > hi {
		t.Fatalf("the backup holds %d reports; %d were acknowledged before it began and %d sent when it ended", nb, lo, hi)
	}
	if nb == 0 || nb == N {
		t.Fatalf("the backup holds %d reports: not mid-load", nb)
	}
	if ol, err := rc.Ledger(ctx, other.Experiment); err != nil || ol.Episodes != 50 || ol.UsersServed != 0 {
		t.Fatalf("the idle experiment after the restore: %+v %v", ol, err)
	}
	rp, err := rc.Policy(ctx, exp)
	if err != nil {
		t.Fatal(err)
	}
	if b, ok := seen[rp.Version]; ok && b != string(policy(t, rc, exp)) {
		t.Fatalf("version %d: the restored server publishes another policy than the original did:\n%s\n%s", rp.Version, policy(t, rc, exp), b)
	}
	if len(rl.Releases) > len(final.Releases) {
		t.Fatalf("restored releases %v, original %v", rl.Releases, final.Releases)
	}
	for i, r := range rl.Releases {
		if r != final.Releases[i] {
			t.Fatalf("release %d: restored %+v, original %+v", i, r, final.Releases[i])
		}
	}
	// Users in the backup: a retry is acknowledged with its sequence, another report refused.
	for seq := uint64(1); seq <= uint64(nb); seq += uint64(nb / 5) {
		u := userAt[seq]
		a, err := rc.Submit(ctx, exp, client.Submission{User: ids[u], Credential: creds[ids[u]], IdempotencyKey: "k" + ids[u], Report: backupReport(head, u), Regret: math.NaN()})
		if err != nil || !a.Replayed || a.Sequence != seq {
			t.Fatalf("retry of user %d (sequence %d) after the restore: %+v %v", u, seq, a, err)
		}
		_, err = rc.Submit(ctx, exp, client.Submission{User: ids[u], Credential: creds[ids[u]], IdempotencyKey: "again", Report: backupReport(head, u), Regret: math.NaN()})
		if !client.IsCode(err, "already_contributed") {
			t.Fatalf("second report of user %d after the restore: %v", u, err)
		}
	}
	// The reports acknowledged after the backup, in the original's order: the same sequence
	// numbers, and in the end the original's policy, ledger and list byte for byte.
	for seq := uint64(nb) + 1; seq <= N; seq++ {
		u := userAt[seq]
		a, err := rc.Submit(ctx, exp, client.Submission{User: ids[u], Credential: creds[ids[u]], IdempotencyKey: "k" + ids[u], Report: backupReport(head, u), Regret: math.NaN()})
		if err != nil || a.Replayed || a.Sequence != seq {
			t.Fatalf("user %d after the restore: %+v %v, want sequence %d", u, a, err, seq)
		}
		if p, err := rc.Policy(ctx, exp); err == nil {
			if b, ok := seen[p.Version]; ok && b != string(policy(t, rc, exp)) {
				t.Fatalf("version %d: the restored server publishes another policy than the original did", p.Version)
			}
		}
	}
	if got := policy(t, rc, exp); string(got) != string(finalPolicy) {
		t.Fatalf("final policy: restored\n%s\noriginal\n%s", got, finalPolicy)
	}
	if _, got := rawReq(t, rurl, "GET", "/v1/experiments/"+exp+"/ledger", "", nil, nil); got != finalLedger {
		t.Fatalf("final ledger: restored\n%s\noriginal\n%s", got, finalLedger)
	}
	if _, got := rawReq(t, rurl, "GET", "/v1/experiments", "", nil, nil); got != finalList {
		t.Fatalf("experiments: restored\n%s\noriginal\n%s", got, finalList)
	}
}

// TestBackupRefusesADamagedCopy: a copy that does not check (cut short, or a page overwritten)
// is never put in place.
func TestBackupRefusesADamagedCopy(t *testing.T) {
	dir := t.TempDir()
	c, _, stop := live(t, dir, false)
	if _, err := c.Create(context.Background(), client.CreateRequest{Family: "tabular", Agent: "practical-jdp", Env: client.Env{Name: "riverswim", Params: map[string]float64{"horizon": 5}},
		Epsilon: 1, Delta: 1e-5, Capacity: 20}); err != nil {
		t.Fatal(err)
	}
	stop()
	good := filepath.Join(t.TempDir(), "good.db")
	if _, err := service.Backup(context.Background(), service.BackupOptions{Dir: dir, Out: good}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	if err := store.CheckBackup(good); err != nil {
		t.Fatalf("a good copy: %v", err)
	}
	for name, bad := range map[string][]byte{
		"cut short":           b[:len(b)/2],
		"page overwritten":    append(append(append([]byte(nil), b[:3*4096]...), make([]byte, 4096)...), b[4*4096:]...),
		"not a dprl database": nil,
	} {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "bad.db")
			if bad == nil {
				if err := os.WriteFile(p, []byte(strings.Repeat("x", 8192)), 0o600); err != nil {
					t.Fatal(err)
				}
			} else if err := os.WriteFile(p, bad, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := store.CheckBackup(p); err == nil {
				t.Fatalf("a %s copy checks", name)
			}
		})
	}
}
