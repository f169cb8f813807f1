package rundir

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/dprl/dprl/internal/atomicfile"
)

// put writes the files (relative to dir) with contents "user".
func put(t *testing.T, dir string, rels ...string) {
	t.Helper()
	for _, rel := range rels {
		touch(t, filepath.Join(dir, rel))
	}
}

// exist reports, for each file, whether it exists.
func mustExist(t *testing.T, what, dir string, want bool, rels ...string) {
	t.Helper()
	for _, rel := range rels {
		_, err := os.Lstat(filepath.Join(dir, rel))
		if (err == nil) != want {
			t.Errorf("%s: %s exists = %v, want %v", what, rel, err == nil, want)
		}
	}
}

// write writes rel in dir as a run does (atomicfile), creating its directory.
func write(t *testing.T, dir, rel string) error {
	t.Helper()
	p := filepath.Join(dir, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	return atomicfile.WriteBytes(p, []byte("dprl"), 0o644)
}

// TestForceRemovesOnlyOwned: the files a run writes through atomicfile are recorded; force
// removes exactly them (and the directories the run created, once empty): a user's files at
// any depth, with any name, and the user's directories (even empty) stay; a suite block is
// prepared on its own.
func TestForceRemovesOnlyOwned(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	put(t, dir, "user.csv", "sub/x.png", "sub/deep/er/y.svg", "meta.json.bak")
	if err := os.MkdirAll(filepath.Join(dir, "keep", "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := Prepare(dir, false); err != nil {
		t.Fatal(err)
	}
	dprl := []string{"manifest.json", "summary.md", "curves/a.csv", "curves/g/b.csv", "figs/r.png", "sub/dprl.svg", "block/curves/c.csv", "block/manifest.json"}
	for _, f := range dprl {
		if err := write(t, dir, f); err != nil {
			t.Fatal(err)
		}
	}
	put(t, dir, "curves/mine.csv") // the user adds a file into dprl's curves/
	err := Prepare(dir, false)
	if !errors.Is(err, ErrEarlierRun) || !strings.Contains(err.Error(), "--force") || strings.Contains(err.Error(), "user.csv") {
		t.Fatalf("earlier run: %v", err)
	}
	if err := CheckEarlier(dir); !errors.Is(err, ErrEarlierRun) {
		t.Errorf("CheckEarlier: %v", err)
	}
	// A block directory: only its part of the run.
	if err := Prepare(filepath.Join(dir, "block"), true); err != nil {
		t.Fatal(err)
	}
	mustExist(t, "block forced", dir, false, "block/curves/c.csv", "block/manifest.json", "block/curves")
	mustExist(t, "block forced", dir, true, "block", "manifest.json", "curves/a.csv")
	if err := Prepare(dir, true); err != nil {
		t.Fatal(err)
	}
	mustExist(t, "after force", dir, true, "user.csv", "sub/x.png", "sub/deep/er/y.svg", "meta.json.bak", "keep/empty", "curves/mine.csv")
	mustExist(t, "after force", dir, false, "manifest.json", "summary.md", "curves/a.csv", "curves/g", "figs", "sub/dprl.svg", "block")
	if err := Prepare(dir, false); err != nil {
		t.Errorf("after force: %v", err)
	}
}

// TestUserFilesNotEarlierRun: files no record lists are no earlier run: a run output name
// among them is refused with or without force (ErrNotOwned, naming it, not calling it an
// earlier run) and left as it was; other names are fine; a run that comes to overwrite one
// is refused by the guard; unit files (the engine's state) are not refused.
func TestUserFilesNotEarlierRun(t *testing.T) {
	root := t.TempDir()
	for _, name := range RunOutputs {
		dir := filepath.Join(root, name+"-dir")
		put(t, dir, name)
		for _, force := range []bool{false, true} {
			err := Prepare(dir, force)
			if !errors.Is(err, ErrNotOwned) || !errors.Is(err, ErrBadOut) || errors.Is(err, ErrEarlierRun) ||
				!strings.Contains(err.Error(), name) || !strings.HasPrefix(err.Error(), "out: ") || strings.Contains(err.Error(), "earlier run") {
				t.Errorf("user's %s, force %v: %v", name, force, err)
			}
			mustExist(t, "refused", dir, true, name)
		}
		if err := CheckEarlier(dir); !errors.Is(err, ErrNotOwned) {
			t.Errorf("CheckEarlier, user's %s: %v", name, err)
		}
	}
	dir := filepath.Join(root, "other")
	put(t, dir, "curves/x.csv", "x.png", "units/abc.unit")
	if err := Prepare(dir, true); err != nil {
		t.Fatalf("user files that no output is named after: %v", err)
	}
	err := write(t, dir, "curves/x.csv")
	if !errors.Is(err, ErrNotOwned) || !strings.Contains(err.Error(), filepath.Join("curves", "x.csv")) {
		t.Errorf("overwriting the user's curves/x.csv: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "curves", "x.csv")); string(b) != "x" {
		t.Errorf("user's file changed: %q", b)
	}
	if err := write(t, dir, "units/abc.unit"); err != nil {
		t.Errorf("unit file: %v", err)
	}
	if err := write(t, dir, "curves/y.csv"); err != nil {
		t.Fatal(err)
	}
	if err := write(t, dir, "curves/y.csv"); err != nil { // its own file: rewritten
		t.Errorf("rewriting its own file: %v", err)
	}
	mustExist(t, "after", dir, true, "curves/x.csv", "x.png")
}

// TestRecordRobust: a record's line cut short (a killed run) is ignored, so a truncated path
// never names a file; entries outside the directory, of the lock file or of the records
// themselves are ignored; nothing is removed through a symbolic link.
func TestRecordRobust(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "run")
	outside := filepath.Join(root, "outside")
	put(t, outside, "a.csv")
	put(t, dir, "curves/ucbvi.csv", "curves/ucb", "notes")
	if err := os.Symlink(outside, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	rec := `{"dprl":"0.1.0","host":"h","pid":1,"start":"x"}` + "\n" +
		`{"f":"curves/ucbvi.csv","t":1}` + "\n" + `{"f":"../outside/a.csv"}` + "\n" + `{"f":"link/a.csv"}` + "\n" +
		`{"f":".dprl.lock"}` + "\n" + `{"f":".dprl-owned/x.jsonl"}` + "\n" + `{"d":"link"}` + "\n" + `{"f":"/etc/passwd"}` + "\n" +
		`{"f":"curves/ucb`
	put(t, dir, filepath.Join(RecordDir, "h-1-1.jsonl"))
	if err := os.WriteFile(filepath.Join(dir, RecordDir, "h-1-1.jsonl"), []byte(rec), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Prepare(dir, true); err != nil {
		t.Fatal(err)
	}
	mustExist(t, "force", dir, false, "curves/ucbvi.csv")
	mustExist(t, "force", dir, true, "curves/ucb", "notes", "link", "curves")
	mustExist(t, "force", outside, true, "a.csv")
}

// TestPriorSeconds: the sessions counted are the other sessions whose files below sub still
// exist, each for the time of its last write.
func TestPriorSeconds(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	put(t, dir, "units/a.unit")
	for name, lines := range map[string]string{
		"killed.jsonl":   `{"dprl":"0.1.0"}` + "\n" + `{"d":"units","t":0.5}` + "\n" + `{"f":"units/a.unit","t":100}` + "\n",
		"replaced.jsonl": `{"dprl":"0.1.0"}` + "\n" + `{"f":"units/gone.unit","t":50}` + "\n" + `{"f":"manifest.json","t":51}` + "\n",
		"outputs.jsonl":  `{"dprl":"0.1.0"}` + "\n" + `{"f":"curves/a.csv","t":7}` + "\n",
	} {
		put(t, dir, filepath.Join(RecordDir, name))
		if err := os.WriteFile(filepath.Join(dir, RecordDir, name), []byte(lines), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	put(t, dir, "curves/a.csv")
	if got := PriorSeconds(dir, StateDir); got != 100 {
		t.Errorf("PriorSeconds = %v, want 100", got)
	}
	// This process's session is not prior.
	if err := Prepare(dir, false); err == nil {
		t.Fatal("curves/a.csv is an earlier run's")
	}
	if err := write(t, dir, "units/b.unit"); err != nil {
		t.Fatal(err)
	}
	if got := PriorSeconds(dir, StateDir); got != 100 {
		t.Errorf("PriorSeconds with a session of this process = %v, want 100", got)
	}
}

// TestCheckDir: the output path checks, each error naming out.
func TestCheckDir(t *testing.T) {
	for _, tc := range []struct {
		dir string
		ok  bool
	}{
		{"runs/x", true}, {"../runs/x", true}, {"../../x", true}, {"./x/./y", true}, {"/tmp/x y", true},
		{"", false}, {"/", false}, {"//", false}, {"/..", false}, {"a/../b", false}, {"runs/x/..", false},
		{"x\ny", false}, {"x\ty", false}, {"x\x00", false}, {"x\x7f", false}, {"x\u0085", false},
	} {
		err := CheckDir(tc.dir)
		if (err == nil) != tc.ok {
			t.Errorf("CheckDir(%q) = %v, want ok %v", tc.dir, err, tc.ok)
		}
		if err != nil && (!strings.HasPrefix(err.Error(), "out: ") || !errors.Is(err, ErrBadOut)) {
			t.Errorf("CheckDir(%q): %v does not name out / match ErrBadOut", tc.dir, err)
		}
	}
	dir := t.TempDir()
	if err := Prepare(dir+"/a/../b", false); !errors.Is(err, ErrBadOut) {
		t.Errorf("Prepare a/../b: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "a")); err == nil {
		t.Error("a/../b created a")
	}
}

// TestLock: one exclusive holder or any number of shared ones; a refusal names the holder's
// pid and matches ErrLocked and ErrBadOut; release removes the lock file (the last shared
// holder's) and the directory Lock created if it is still empty; a stale lock file (its holder
// killed) does not block.
func TestLock(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "new", "run")
	release, err := Lock(dir)
	if err != nil {
		t.Fatal(err)
	}
	lockFile := filepath.Join(dir, LockFile)
	mustExist(t, "locked", dir, true, LockFile)
	for _, l := range []func(string) (func(), error){Lock, LockShared} {
		if _, err := l(dir); !errors.Is(err, ErrLocked) || !errors.Is(err, ErrBadOut) ||
			!strings.Contains(err.Error(), "pid "+strconv.Itoa(os.Getpid())) || !strings.HasPrefix(err.Error(), "out: ") {
			t.Errorf("second lock: %v", err)
		}
	}
	release()
	release() // idempotent
	if _, err := os.Stat(filepath.Join(root, "new", "run")); err == nil {
		t.Error("release left the empty directory Lock created")
	}
	// Shared holders.
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	r1, err := LockShared(dir)
	if err != nil {
		t.Fatal(err)
	}
	r2, err := LockShared(dir)
	if err != nil {
		t.Fatalf("second shared lock: %v", err)
	}
	if _, err := Lock(dir); !errors.Is(err, ErrLocked) {
		t.Errorf("exclusive lock beside shared ones: %v", err)
	}
	r1()
	mustExist(t, "one shared holder left", dir, true, LockFile)
	if _, err := Lock(dir); !errors.Is(err, ErrLocked) {
		t.Errorf("exclusive lock beside a shared one: %v", err)
	}
	r2()
	mustExist(t, "no holder", dir, false, LockFile)
	// A stale lock file.
	if err := os.WriteFile(lockFile, []byte(`{"pid":1,"host":"gone"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	r3, err := Lock(dir)
	if err != nil {
		t.Fatalf("stale lock file: %v", err)
	}
	r3()
	// Bad paths and a file in place of the directory.
	if _, err := Lock(root + "/a/../b"); !errors.Is(err, ErrBadOut) {
		t.Errorf("Lock a/../b: %v", err)
	}
	put(t, root, "file")
	if _, err := Lock(filepath.Join(root, "file")); !errors.Is(err, ErrBadOut) {
		t.Errorf("Lock on a file: %v", err)
	}
}

// TestLockRecords: Lock starts the recording; the lock file and the records are neither an
// earlier run's files nor user files.
func TestLockRecords(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	release, err := Lock(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckEarlier(dir); err != nil {
		t.Errorf("a directory holding only the lock file: %v", err)
	}
	if err := write(t, dir, "curves/a.csv"); err != nil {
		t.Fatal(err)
	}
	release()
	if err := CheckEarlier(dir); !errors.Is(err, ErrEarlierRun) || strings.Contains(err.Error(), RecordDir) || strings.Contains(err.Error(), LockFile) {
		t.Errorf("CheckEarlier after a locked run: %v", err)
	}
	if err := Prepare(dir, true); err != nil {
		t.Fatal(err)
	}
	mustExist(t, "force", dir, false, "curves")
}
