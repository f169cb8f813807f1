package main

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dprl/dprl/experiment/engine"
	"github.com/dprl/dprl/experiment/rundir"
	"github.com/dprl/dprl/internal/longtest"
	"github.com/dprl/dprl/internal/runschema"
)

// TestGoldenHashes re-runs every reproduction at the reduced size recorded in
// testdata/golden-hashes.txt (before the engine refactor; regenerated at 1b08b66) and checks that every CSV
// has the same SHA-256: the refactor changed no number.
//
// The quick suite checks the reproductions of quickGolden; the long check (DPRL_LONG=1, run by
// .ci/run) checks all eight.
func TestGoldenHashes(t *testing.T) {
	if testing.Short() {
		t.Skip("runs reproductions at a reduced size")
	}
	f, err := os.Open("testdata/golden-hashes.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	want := map[string]string{}
	repros := map[string]bool{}
	var order []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") || line == "" {
			continue
		}
		sum, path, ok := strings.Cut(line, "  ")
		if !ok {
			t.Fatalf("bad golden line %q", line)
		}
		want[path] = sum
		r, _, _ := strings.Cut(path, "/")
		if !repros[r] {
			repros[r] = true
			order = append(order, r)
		}
	}
	if len(order) != 8 {
		t.Fatalf("golden file names %d reproductions, want 8", len(order))
	}
	if !longtest.Enabled() {
		t.Logf("checking %v only; %s=1 checks all eight reproductions", quickGolden, longtest.Env)
		order = quickGolden
		for p := range want {
			if r, _, _ := strings.Cut(p, "/"); !slices.Contains(order, r) {
				delete(want, p)
			}
		}
	}
	dir := t.TempDir()
	for _, r := range order {
		if code, _, stderr := runCLI(t, "reproduce", r, "--episodes", "300", "--seeds", "1-2", "--workers", "2", "--quiet", "--out", filepath.Join(dir, r)); code != 0 {
			t.Fatalf("reproduce %s: exit %d: %s", r, code, stderr)
		}
	}
	// Every reproduction's run directory is of the one schema (a suite of several blocks: its
	// top directory, whose manifest lists every block's curves).
	schema, err := runschema.Compile()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range order {
		if err := runschema.ValidateDir(schema, filepath.Join(dir, r)); err != nil {
			t.Errorf("%s: %v", r, err)
		}
	}
	got := hashCSVs(t, dir)
	for p, s := range want {
		if got[p] == "" {
			t.Errorf("%s: not written", p)
		} else if got[p] != s {
			t.Errorf("%s: SHA-256 %s, golden %s", p, got[p], s)
		}
	}
	for p := range got {
		if want[p] == "" {
			t.Errorf("%s: written but not in the golden file", p)
		}
	}
}

// quickGolden are the reproductions whose golden hashes the quick suite checks (the cheapest
// of the papers' and of dprl's practical ones).
var quickGolden = []string{"qiao-fig1", "practical-tabular"}

// hashCSVs returns the SHA-256 of every CSV under dir, by path relative to dir.
func hashCSVs(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Ext(p) != ".csv" {
			return err
		}
		if d.Name() == engine.LongRegretFile {
			// regret_long.csv (added after the golden hashes were taken) only rewrites the
			// per-seed columns of the curve CSVs hashed here in long format;
			// TestRunMetaAndLongRegret checks that it agrees with them.
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		s := sha256.Sum256(b)
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = hex.EncodeToString(s[:])
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// runFiles returns the bytes of every file of a run directory except the manifest (it records
// wall times and the command) and the unit files.
func runFiles(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() {
			if rel == "units" || rel == "slurm" || rel == rundir.RecordDir {
				return filepath.SkipDir // the ownership records name this process and its times
			}
			return nil
		}
		if filepath.Base(rel) == "manifest.json" || filepath.Base(rel) == engine.MetaFile {
			// Manifests (the run's and linear-mdp's per block) record the command line,
			// worker count and wall time of the invocation, and meta.json the wall time.
			return nil
		}
		out[filepath.ToSlash(rel)], err = os.ReadFile(p)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// wallTime matches the wall-time sentence of a summary.
var wallTime = regexp.MustCompile(`Wall time [0-9.]+ s on [0-9]+ workers`)

// blockDir matches the comment naming a linear-mdp block's directory (it holds --out).
var blockDir = regexp.MustCompile(`<!-- block ([^:]+): [^>]* -->`)

// practicalSpeed matches what practical-tabular's summary measures in wall time: the
// episodes/s column of its curve tables, the speed goal G6 and its wall-time sentence; the
// tables' padding depends on those widths, so it is squeezed first.
var (
	tablePad           = regexp.MustCompile(` *\| *`)
	tableRule          = regexp.MustCompile(`\|-+`)
	practicalSpeedCol  = regexp.MustCompile(`(?m)^(\|[^|\n]*\|[^|\n]*\|[^|\n]*\|[^|\n]*\|)[0-9]+(\|[^|\n]*\|)$`)
	practicalSpeedGoal = regexp.MustCompile(`\|G6\|[^\n]*`)
	practicalWallTime  = regexp.MustCompile(`wall time [0-9.]+ s on [0-9]+ workers`)
	// practicalLQWallTime is practical-lq's wall-time sentence.
	practicalLQWallTime = regexp.MustCompile(`Wall time [0-9.]+ s with [0-9]+ workers`)
)

func maskWallTime(b []byte) []byte {
	if bytes.HasPrefix(b, []byte("# practical-tabular:")) {
		b = tableRule.ReplaceAll(tablePad.ReplaceAll(b, []byte("|")), []byte("|-"))
		b = practicalSpeedCol.ReplaceAll(b, []byte("${1}N$2"))
		b = practicalSpeedGoal.ReplaceAll(b, []byte("|G6|"))
		b = practicalWallTime.ReplaceAll(b, []byte("wall time"))
	}
	b = practicalLQWallTime.ReplaceAll(b, []byte("Wall time"))
	return blockDir.ReplaceAll(wallTime.ReplaceAll(b, []byte("Wall time")), []byte("<!-- block $1 -->"))
}

func sameRun(t *testing.T, what, a, b string) {
	t.Helper()
	fa, fb := runFiles(t, a), runFiles(t, b)
	if len(fa) == 0 || len(fa) != len(fb) {
		t.Fatalf("%s: %d files vs %d", what, len(fa), len(fb))
	}
	for p, x := range fa {
		if filepath.Base(p) == "summary.md" {
			// The summary states the wall time and worker count of the invocation.
			x, fb[p] = maskWallTime(x), maskWallTime(fb[p])
		}
		if !bytes.Equal(x, fb[p]) {
			t.Errorf("%s: %s differs", what, p)
		}
	}
}

// TestSweepShardsMergeEqualLocal: a reduced reproduction of every family on the engine
// (qiao-fig1: tabular; lq; linear-mixture: linmix; linear-mdp: linmdp; practical-tabular; practical-lq; practical-linear-mixture: linmix; practical-linear-mdp: linmdp) run as 3 shards and merged gives the same bytes (CSVs, figures,
// summary, claims) as `dprl reproduce <name>`; a merge before the last shard is refused (exit 2)
// and names the missing units.
//
// The quick suite shards qiao-fig1; the long check (DPRL_LONG=1, .ci/run) every reproduction.
func TestSweepShardsMergeEqualLocal(t *testing.T) {
	for _, repro := range []string{"qiao-fig1", "lq", "linear-mixture", "linear-mdp", "practical-tabular", "practical-lq", "practical-linear-mixture", "practical-linear-mdp"} {
		t.Run(repro, func(t *testing.T) {
			if repro != "qiao-fig1" {
				longtest.Skip(t, "a sharded sweep of every reproduction, ≈ 2 min")
			}
			testSweepShardsMergeEqualLocal(t, repro)
		})
	}
}

func testSweepShardsMergeEqualLocal(t *testing.T, repro string) {
	dir := t.TempDir()
	local := filepath.Join(dir, "local")
	if code, _, stderr := runCLI(t, "reproduce", repro, "--episodes", "200", "--seeds", "1-2", "--quiet", "--out", local); code != 0 {
		t.Fatalf("reproduce: %d %s", code, stderr)
	}
	code, cfg, stderr := runCLI(t, "sweep", "config", repro, "--episodes", "200", "--seeds", "1-2")
	if code != 0 {
		t.Fatalf("sweep config: %d %s", code, stderr)
	}
	cfgPath := putFile(t, dir, "q.yaml", cfg)
	sweep := filepath.Join(dir, "sweep")
	for i := range 3 {
		if i == 2 {
			code, _, stderr := runCLI(t, "sweep", "merge", cfgPath, "--out", sweep)
			if code != 2 || !strings.Contains(stderr, "units missing") || !strings.Contains(stderr, "seed") {
				t.Errorf("merge of 2 of 3 shards: exit %d, %s", code, stderr)
			}
		}
		t.Setenv("SLURM_ARRAY_TASK_ID", string(rune('0'+i)))
		t.Setenv("SLURM_ARRAY_TASK_COUNT", "3")
		if code, _, stderr := runCLI(t, "sweep", "run", cfgPath, "--out", sweep, "--quiet", "--workers", "1"); code != 0 {
			t.Fatalf("sweep run shard %d: %d %s", i, code, stderr)
		}
	}
	if code, _, stderr := runCLI(t, "sweep", "merge", cfgPath, "--out", sweep); code != 0 {
		t.Fatalf("sweep merge: %d %s", code, stderr)
	}
	sameRun(t, "3 shards merged vs local", local, sweep)
	for _, f := range []string{engine.LongRegretFile, engine.ResolvedConfigFile, engine.MetaFile} {
		if _, err := os.Stat(filepath.Join(sweep, f)); err != nil {
			t.Errorf("merged sweep: %v", err)
		}
	}
}

// TestKill9Resume kills `dprl sweep run` (a separate process) with SIGKILL while it runs, then
// reruns it as `dprl run`: nothing is lost or duplicated, and the outputs equal an
// uninterrupted run's byte for byte.
func TestKill9Resume(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a subprocess running a reproduction")
	}
	if os.Getenv("DPRL_TEST_CLI") == "1" {
		return
	}
	for _, c := range []struct {
		repro    string
		episodes string
		killAt   int // units completed when the process is killed
	}{
		{"qiao-fig1", "200", 3},
		{"lq", "1000", 1},            // OFU-RL's units come first and take seconds each
		{"linear-mixture", "300", 3}, // 193 units of three algorithm families
	} {
		t.Run(c.repro, func(t *testing.T) {
			if c.repro != "qiao-fig1" {
				longtest.Skip(t, "kill -9 and resume of every reproduction, ≈ 30 s")
			}
			kill9Resume(t, c.repro, c.episodes, c.killAt)
		})
	}
}

// kill9Resume runs reproduction repro (K = episodes, seeds 1-2) as `dprl sweep run` in a
// subprocess, kills it with SIGKILL once killAt units are complete, reruns it with `dprl run`,
// and compares the outputs with an uninterrupted run.
func kill9Resume(t *testing.T, repro, episodes string, killAt int) {
	dir := t.TempDir()
	code, cfg, _ := runCLI(t, "sweep", "config", repro, "--episodes", episodes, "--seeds", "1-2")
	if code != 0 {
		t.Fatal("sweep config failed")
	}
	cfgPath := putFile(t, dir, "q.yaml", cfg)
	code, plan, _ := runCLI(t, "sweep", "plan", cfgPath)
	var total int
	if code != 0 || !strings.HasPrefix(plan, "# ") {
		t.Fatalf("sweep plan failed: %q", plan)
	}
	first, _, _ := strings.Cut(plan, "\n")
	if _, err := fmt.Sscanf(first[strings.LastIndex(first, ", ")+2:], "%d units", &total); err != nil || total <= killAt {
		t.Fatalf("sweep plan header %q: %v (total %d)", first, err, total)
	}
	out := filepath.Join(dir, "killed")
	cmd := exec.Command(os.Args[0], "-test.run=^TestCLIHelper$")
	cmd.Env = append(os.Environ(), "DPRL_TEST_CLI=1", "DPRL_TEST_ARGS=sweep\x1frun\x1f"+cfgPath+"\x1f--out\x1f"+out+"\x1f--shard\x1f0/1\x1f--workers\x1f1\x1f--quiet")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(120 * time.Second)
	for {
		ents, _ := filepath.Glob(filepath.Join(out, "units", "*.unit"))
		if len(ents) >= killAt {
			break
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			t.Fatalf("fewer than %d units finished within 120 s", killAt)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	done, _ := filepath.Glob(filepath.Join(out, "units", "*.unit"))
	if len(done) >= total {
		t.Fatalf("the process finished (%d of %d units) before it was killed; the test proves nothing", len(done), total)
	}
	if code, stdout, stderr := runCLI(t, "run", "--config", cfgPath, "--out", out, "--quiet"); code != 0 {
		t.Fatalf("rerun: %d %s %s", code, stdout, stderr)
	}
	ref := filepath.Join(dir, "ref")
	if code, _, stderr := runCLI(t, "run", "--config", cfgPath, "--out", ref, "--quiet"); code != 0 {
		t.Fatalf("reference run: %d %s", code, stderr)
	}
	sameRun(t, "killed and resumed vs uninterrupted", ref, out)
	if _, err := os.Stat(filepath.Join(out, "units")); err == nil {
		t.Error("units/ left in a completed run directory")
	}
}

// TestCLIHelper runs the CLI with the arguments in DPRL_TEST_ARGS when DPRL_TEST_CLI=1 (the
// subprocess of TestKill9Resume); otherwise it does nothing.
func TestCLIHelper(t *testing.T) {
	if os.Getenv("DPRL_TEST_CLI") != "1" {
		return
	}
	os.Exit(run(strings.Split(os.Getenv("DPRL_TEST_ARGS"), "\x1f"), os.Stdout, os.Stderr))
}

// TestSweepShardBounds: every command that takes a shard count refuses one outside
// [1, engine.MaxShards] (or the cluster launchers' lower limit) with exit status 2, before
// planning anything.
func TestSweepShardBounds(t *testing.T) {
	dir := t.TempDir()
	cfgPath := qiaoConfigFile(t, dir, "s.yaml", "100", "1-2")
	out := filepath.Join(dir, "out")
	for _, args := range [][]string{
		{"sweep", "plan", cfgPath, "--shards", "0"},
		{"sweep", "plan", cfgPath, "--shards", "1000000000"},
		{"sweep", "run", cfgPath, "--shard", "5/3", "--out", out},
		{"sweep", "run", cfgPath, "--shard", "0/2000000", "--out", out},
		{"sweep", "slurm", cfgPath, "--shards", "99999999", "--out", out},
	} {
		if code, _, stderr := runCLI(t, args...); code != 2 || !strings.Contains(stderr, "--shard") {
			t.Errorf("%v: exit %d, stderr %q; want 2 naming the flag", args, code, stderr)
		}
	}
}
