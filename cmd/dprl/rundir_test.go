package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dprl/dprl/internal/testfiles"
)

// Tests of the run directory's safety (issue 18): --force removes only what dprl wrote, a
// user's files are never "an earlier run" and never overwritten, one run at a time per
// directory, bad --out paths, audit outputs, default run directories and the wall time of
// resumed and merged runs.

// mustRunCLI runs the CLI and fails the test unless it exits 0.
func mustRunCLI(t *testing.T, args ...string) string {
	t.Helper()
	code, stdout, stderr := runCLI(t, args...)
	if code != 0 {
		t.Fatalf("dprl %v: exit %d: %s", args, code, stderr)
	}
	return stdout
}

// qiaoConfigFile writes the sweep configuration of qiao-fig1 at K = episodes and the given
// seeds (`dprl sweep config qiao-fig1`) to dir/name and returns its path.
func qiaoConfigFile(t *testing.T, dir, name, episodes, seeds string) string {
	t.Helper()
	return putFile(t, dir, name, mustRunCLI(t, "sweep", "config", "qiao-fig1", "--episodes", episodes, "--seeds", seeds))
}

// putFile writes s to dir/name and returns its path.
func putFile(t *testing.T, dir, name, s string) string {
	t.Helper()
	putFiles(t, dir, map[string]string{name: s})
	return filepath.Join(dir, name)
}

// putFiles writes each file (relative to dir) with its contents.
func putFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	testfiles.Write(t, dir, files, 0o644)
}

// checkFiles requires every file to hold exactly its contents.
func checkFiles(t *testing.T, what, dir string, files map[string]string) {
	t.Helper()
	for rel, s := range files {
		b, err := os.ReadFile(filepath.Join(dir, rel))
		if err != nil {
			t.Errorf("%s: the user's %s is gone: %v", what, rel, err)
		} else if string(b) != s {
			t.Errorf("%s: the user's %s was overwritten", what, rel)
		}
	}
}

// TestForceRemovesOnlyDprlFiles: --force over an earlier run removes the files that run wrote
// (its curve of another agent goes) and nothing else: the user's CSVs, figures, notes and
// empty directories beside it, at any depth, stay.
func TestForceRemovesOnlyDprlFiles(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	mustRunCLI(t, "run", "--episodes", "20", "--seeds", "1", "--quiet", "--out", out)
	if _, err := os.Stat(filepath.Join(out, "curves", "riverswim", "ucbvi.csv")); err != nil {
		t.Fatal(err)
	}
	user := map[string]string{"notes.csv": "mine", "curves/mine.csv": "mine", "sub/plot.png": "mine",
		"sub/d/fig.svg": "mine", "README.md": "mine", "data/meta.json": "mine", "sub/summary.md": "mine"}
	putFiles(t, out, user)
	if err := os.MkdirAll(filepath.Join(out, "empty", "dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	// Without --force the earlier run is refused, naming --force.
	code, _, stderr := runCLI(t, "run", "--agent", "dp-ucbvi-jdp", "--epsilon", "1", "--episodes", "20", "--seeds", "1", "--quiet", "--out", out)
	if code != 2 || !strings.Contains(stderr, "--force") {
		t.Errorf("earlier run without --force: exit %d, %s", code, stderr)
	}
	mustRunCLI(t, "run", "--agent", "dp-ucbvi-jdp", "--epsilon", "1", "--episodes", "20", "--seeds", "1", "--quiet", "--out", out, "--force")
	checkFiles(t, "--force", out, user)
	if _, err := os.Stat(filepath.Join(out, "empty", "dir")); err != nil {
		t.Errorf("--force removed the user's empty directory: %v", err)
	}
	if _, err := os.Stat(filepath.Join(out, "curves", "riverswim", "ucbvi.csv")); err == nil {
		t.Error("--force left the earlier run's curves/riverswim/ucbvi.csv")
	}
	if m, _ := filepath.Glob(filepath.Join(out, "curves", "riverswim", "dp-ucbvi-jdp*.csv")); len(m) != 1 {
		t.Errorf("new run's curve: %v", m)
	}
}

// TestUserFilesAreNotAnEarlierRun: a directory holding only files dprl did not write is not an
// earlier run: the run goes ahead beside them when it overwrites none of them; when it would
// overwrite one (a fixed name such as manifest.json, or a curve's CSV) it is refused with or
// without --force, with exit status 2 and a message naming the file that does not call it an
// earlier run, and the file is left as it was.
func TestUserFilesAreNotAnEarlierRun(t *testing.T) {
	dir := t.TempDir()
	beside := filepath.Join(dir, "beside")
	user := map[string]string{"notes.csv": "x", "fig.png": "x", "curves/other.csv": "x", "plots/a.svg": "x"}
	putFiles(t, beside, user)
	mustRunCLI(t, "run", "--episodes", "20", "--seeds", "1", "--quiet", "--out", beside)
	checkFiles(t, "run beside user files", beside, user)
	if _, err := os.Stat(filepath.Join(beside, "manifest.json")); err != nil {
		t.Error(err)
	}

	for _, name := range []string{"manifest.json", "summary.md", "curves/riverswim/ucbvi.csv"} {
		out := filepath.Join(dir, strings.NewReplacer("/", "_", ".", "_").Replace(name))
		files := map[string]string{name: "the user's own file"}
		putFiles(t, out, files)
		for _, force := range []bool{false, true} {
			args := []string{"run", "--episodes", "20", "--seeds", "1", "--quiet", "--out", out}
			if force {
				args = append(args, "--force")
			}
			code, _, stderr := runCLI(t, args...)
			if code != 2 || !strings.Contains(stderr, filepath.Base(name)) || !strings.Contains(stderr, "out") ||
				strings.Contains(stderr, "earlier run") {
				t.Errorf("user's %s, force %v: exit %d, %q; want exit 2 naming the file, not an earlier run", name, force, code, stderr)
			}
			checkFiles(t, "refused run", out, files)
		}
	}
}

// TestBadOutPaths: --out / (the filesystem root), a path with ".." after a directory name (it
// would create a stray directory), a control character, and a read-only filesystem are bad
// input: exit status 2 naming out, and nothing is created.
func TestBadOutPaths(t *testing.T) {
	dir := t.TempDir()
	cfgPath := qiaoConfigFile(t, dir, "q.yaml", "20", "1")
	cmds := map[string][]string{
		"run":         {"run", "--episodes", "20", "--seeds", "1", "--quiet"},
		"sweep run":   {"sweep", "run", cfgPath, "--shard", "0/1", "--quiet"},
		"sweep merge": {"sweep", "merge", cfgPath},
		"audit":       {"audit", "mechanism/laplace", "--runs", "200", "--quiet"},
	}
	var cases []badCase
	for name, args := range cmds {
		for _, out := range []string{dir + "/stray/../b", filepath.Join(dir, "new\nline"), filepath.Join(dir, "tab\there")} {
			cases = append(cases, badCase{name + " " + strconv.Quote(out), append(append([]string(nil), args...), "--out", out), "out:"})
		}
	}
	cases = append(cases, badCase{"run /", append(append([]string(nil), cmds["run"]...), "--out", "/"), "out:"})
	checkBad(t, cases)
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if e.Name() != "q.yaml" {
			t.Errorf("a refused --out created %q", e.Name())
		}
	}

	// A read-only filesystem (a read-only tmpfs as root, a read-only directory otherwise).
	ro := filepath.Join(dir, "ro")
	if err := os.Mkdir(ro, 0o755); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() == 0 {
		if o, err := exec.Command("mount", "-t", "tmpfs", "-o", "ro,size=1m", "tmpfs", ro).CombinedOutput(); err != nil {
			t.Skipf("cannot mount a read-only tmpfs: %v %s", err, o)
		}
		t.Cleanup(func() { _ = exec.Command("umount", ro).Run() })
	} else {
		if err := os.Chmod(ro, 0o555); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = os.Chmod(ro, 0o755) })
	}
	var roCases []badCase
	for name, args := range cmds {
		for _, out := range []string{ro, filepath.Join(ro, "sub")} {
			roCases = append(roCases, badCase{name + " read-only " + out, append(append([]string(nil), args...), "--out", out), "out:"})
		}
	}
	checkBad(t, roCases)
}

// startCLI runs the CLI in a subprocess (TestCLIHelper) and returns it.
func startCLI(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCLIHelper$")
	cmd.Env = append(os.Environ(), "DPRL_TEST_CLI=1", "DPRL_TEST_ARGS="+strings.Join(args, "\x1f"))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return cmd
}

// waitUnits waits until dir/units holds at least n unit files.
func waitUnits(t *testing.T, dir string, n int) {
	t.Helper()
	deadline := time.Now().Add(120 * time.Second)
	for {
		if m, _ := filepath.Glob(filepath.Join(dir, "units", "*.unit")); len(m) >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("fewer than %d units in %s after 120 s", n, dir)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// metaWallSeconds reads wall_seconds from dir/meta.json.
func metaWallSeconds(t *testing.T, dir string) float64 {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "meta.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		WallSeconds float64 `json:"wall_seconds"`
	}
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	return m.WallSeconds
}

// TestOneRunPerDirectory: while a run is writing into a directory, a second run into it is
// refused at once (exit status 2) naming the first one's pid; once the first is killed with
// SIGKILL (leaving its lock file behind), a rerun resumes it, and meta.json's wall time counts
// the killed invocation too.
func TestOneRunPerDirectory(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	args := []string{"run", "--episodes", "40000", "--seeds", "1-4", "--workers", "1", "--quiet", "--out", out}
	first := startCLI(t, args...)
	start := time.Now()
	waitUnits(t, out, 1)
	code, _, stderr := runCLI(t, args...)
	if code != 2 || !strings.Contains(stderr, strconv.Itoa(first.Process.Pid)) || !strings.Contains(stderr, "out") {
		t.Errorf("second run into a busy directory: exit %d, %q; want exit 2 naming pid %d", code, stderr, first.Process.Pid)
	}
	waitUnits(t, out, 2)
	if err := first.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = first.Wait()
	killedAfter := time.Since(start)
	if _, err := os.Stat(filepath.Join(out, "manifest.json")); err == nil {
		t.Fatal("the first run completed before it was killed; the test proves nothing")
	}
	t0 := time.Now()
	mustRunCLI(t, args...)
	resumed := time.Since(t0)
	ws := metaWallSeconds(t, out)
	// The killed invocation ran ≥ 2 units (about killedAfter); the resumed one took resumed.
	// Without the killed invocation's time, wall_seconds would be at most resumed; the margin
	// 0.2·killedAfter holds on a loaded machine (process start-up counts in killedAfter only).
	if ws < resumed.Seconds()+0.2*killedAfter.Seconds() {
		t.Errorf("meta.json wall_seconds = %.2f; the killed invocation ran %.2f s and the resumed one %.2f s", ws, killedAfter.Seconds(), resumed.Seconds())
	}
}

// TestMergeWallTime: meta.json of a merged sweep counts the shards' wall time, not only the
// merge's.
func TestMergeWallTime(t *testing.T) {
	dir := t.TempDir()
	cfgPath := qiaoConfigFile(t, dir, "q.yaml", "400", "1-2")
	out := filepath.Join(dir, "out")
	var shards time.Duration
	for _, s := range []string{"0/2", "1/2"} {
		t0 := time.Now()
		mustRunCLI(t, "sweep", "run", cfgPath, "--shard", s, "--out", out, "--workers", "1", "--quiet")
		shards += time.Since(t0)
	}
	t0 := time.Now()
	mustRunCLI(t, "sweep", "merge", cfgPath, "--out", out)
	merge := time.Since(t0)
	if ws := metaWallSeconds(t, out); ws < merge.Seconds()+0.5*shards.Seconds() {
		t.Errorf("meta.json wall_seconds = %.2f; the shards ran %.2f s and the merge %.2f s", ws, shards.Seconds(), merge.Seconds())
	}
}

// TestAuditOutputsProtected: audit.md and audit.json are outputs like a run's: a user's
// audit.md is never overwritten (exit status 2 naming it), and an earlier audit is replaced
// only with --force.
func TestAuditOutputsProtected(t *testing.T) {
	dir := t.TempDir()
	user := filepath.Join(dir, "user")
	files := map[string]string{"audit.md": "my notes"}
	putFiles(t, user, files)
	code, _, stderr := runCLI(t, "audit", "mechanism/laplace", "--runs", "200", "--quiet", "--out", user)
	if code != 2 || !strings.Contains(stderr, "audit.md") || strings.Contains(stderr, "earlier run") {
		t.Errorf("audit over a user's audit.md: exit %d, %q", code, stderr)
	}
	checkFiles(t, "audit", user, files)

	out := filepath.Join(dir, "out")
	mustRunCLI(t, "audit", "mechanism/laplace", "--runs", "200", "--quiet", "--out", out)
	if code, _, stderr := runCLI(t, "audit", "mechanism/laplace", "--runs", "200", "--quiet", "--out", out); code != 2 || !strings.Contains(stderr, "--force") {
		t.Errorf("audit over an earlier audit: exit %d, %q; want 2 naming --force", code, stderr)
	}
	mustRunCLI(t, "audit", "mechanism/laplace", "--runs", "200", "--quiet", "--out", out, "--force")
}

// TestDefaultRunDir: a run built from flags without --out writes into a directory named after
// its family, agent and configuration: two different runs do not collide, the same flags
// name the same directory, and the outputs do not depend on the name.
func TestDefaultRunDir(t *testing.T) {
	t.Chdir(t.TempDir())
	a := []string{"run", "--episodes", "20", "--seeds", "1", "--quiet"}
	b := []string{"run", "--episodes", "20", "--seeds", "2", "--quiet"}
	mustRunCLI(t, a...)
	first, _ := filepath.Glob(filepath.Join("runs", "*"))
	if len(first) != 1 {
		t.Fatalf("run directories %v, want one", first)
	}
	mustRunCLI(t, b...)
	runs, _ := filepath.Glob(filepath.Join("runs", "*"))
	if len(runs) != 2 {
		t.Fatalf("run directories %v, want two", runs)
	}
	for _, r := range runs {
		if !strings.HasPrefix(filepath.Base(r), "tabular-ucbvi-") {
			t.Errorf("default run directory %s does not name the family and agent", r)
		}
	}
	// The same flags name the same directory (an interrupted run resumes there; a completed
	// one is refused without --force).
	if code, _, stderr := runCLI(t, a...); code != 2 || !strings.Contains(stderr, "--force") || !strings.Contains(stderr, first[0]) {
		t.Errorf("rerun of the same flags: exit %d, %q", code, stderr)
	}
	mustRunCLI(t, append(a, "--out", "explicit")...)
	for _, f := range []string{"curves/riverswim/ucbvi.csv", "regret_long.csv", "config.resolved.yaml"} {
		got, err1 := os.ReadFile(filepath.Join(first[0], f))
		want, err2 := os.ReadFile(filepath.Join("explicit", f))
		if err1 != nil || err2 != nil || string(got) != string(want) {
			t.Errorf("%s differs between the default directory and --out explicit (%v, %v)", f, err1, err2)
		}
	}
}
