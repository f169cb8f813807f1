package main

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCompare runs two small reproductions and compares them through the CLI: the table names
// every curve with its IQM and interval, --json agrees with the table's curves, the figure is
// written, and bad input (a missing run, a run with one seed, no matching curve) exits 2.
func TestCompare(t *testing.T) {
	dir := t.TempDir()
	a, b, one := filepath.Join(dir, "a"), filepath.Join(dir, "b"), filepath.Join(dir, "one")
	for _, r := range []struct{ out, seeds string }{{a, "1-3"}, {b, "4-6"}, {one, "1"}} {
		if code, _, stderr := runCLI(t, "reproduce", "qiao-fig1", "--episodes", "60", "--seeds", r.seeds, "--quiet", "--out", r.out); code != 0 {
			t.Fatalf("reproduce into %s: exit %d: %s", r.out, code, stderr)
		}
	}
	fig := filepath.Join(dir, "cmp.png")
	code, stdout, stderr := runCLI(t, "compare", a, b, "--curve", "UCBVI", "--fig", fig)
	if code != 0 {
		t.Fatalf("compare: exit %d: %s", code, stderr)
	}
	for _, want := range []string{"a/riverswim/UCBVI", "b/riverswim/UCBVI", "IQM", "P(X < Y)"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("compare output lacks %q:\n%s", want, stdout)
		}
	}
	if fi, err := os.Stat(fig); err != nil || fi.Size() == 0 {
		t.Errorf("figure %s not written: %v", fig, err)
	}
	code, stdout, stderr = runCLI(t, "compare", a, b, "--curve", "UCBVI", "--json")
	if code != 0 {
		t.Fatalf("compare --json: exit %d: %s", code, stderr)
	}
	var js map[string]any
	if err := json.Unmarshal([]byte(stdout), &js); err != nil {
		t.Fatalf("compare --json is not JSON: %v\n%s", err, stdout)
	}
	for _, bad := range [][]string{
		{"compare", a, filepath.Join(dir, "missing")},
		{"compare", a, one, "--curve", "UCBVI"},
		{"compare", a, b, "--curve", "no-such-curve"},
	} {
		if code, _, stderr := runCLI(t, bad...); code != 2 {
			t.Errorf("%v: exit %d, want 2 (stderr %q)", bad, code, stderr)
		}
	}
}

// TestCompareRunDirectories compares the run directories that `dprl run` and `dprl reproduce`
// really write (regret_long.csv, config.resolved.yaml, curves/): every curve of two runs of
// different agents and seeds, without --curve (regret_long.csv used to be taken for a curve
// file: `first column is "family", want "episode"`); runs of different environments are
// refused naming both unless --allow-different-env (then a warning); a NaN, an infinity or
// an unparsable value in a curve exits 2 naming the file, the line and the column (it used to
// exit 1 without naming the file); a run without regret_long.csv is read from curves/.
func TestCompareRunDirectories(t *testing.T) {
	dir := t.TempDir()
	a, b, g, q := filepath.Join(dir, "a"), filepath.Join(dir, "b"), filepath.Join(dir, "g"), filepath.Join(dir, "q")
	for _, args := range [][]string{
		{"run", "--agent", "ucbvi", "--episodes", "200", "--seeds", "1-3", "--quiet", "--out", a},
		{"run", "--agent", "dp-ucbvi-jdp", "--epsilon", "1", "--episodes", "200", "--seeds", "4-6", "--quiet", "--out", b},
		{"run", "--env", "garnet", "--agent", "ucbvi", "--episodes", "200", "--seeds", "1-2", "--quiet", "--out", g},
		{"reproduce", "qiao-fig1", "--episodes", "200", "--seeds", "1-2", "--quiet", "--out", q},
	} {
		if code, _, stderr := runCLI(t, args...); code != 0 {
			t.Fatalf("%q: exit %d: %s", args, code, stderr)
		}
	}
	code, stdout, stderr := runCLI(t, "compare", a, b)
	if code != 0 {
		t.Fatalf("compare a b: exit %d: %s", code, stderr)
	}
	for _, want := range []string{"a/riverswim/ucbvi", "b/riverswim/dp-ucbvi-jdp", "riverswim(horizon=20)", "P(X < Y)"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("compare a b: output lacks %q:\n%s", want, stdout)
		}
	}
	// A reproduction and a run on the same environment, every curve of both.
	if code, stdout, stderr := runCLI(t, "compare", a, q, "--json"); code != 0 || !strings.Contains(stdout, `"q/riverswim/UCBVI"`) || !strings.Contains(stdout, `"q/riverswim/LDP_eps_1_paper"`) {
		t.Errorf("compare a q: exit %d, stderr %q, output:\n%s", code, stderr, stdout)
	}

	// Different environments.
	code, _, stderr = runCLI(t, "compare", a, g)
	if code != 2 || !strings.Contains(stderr, "riverswim(horizon=20)") || !strings.Contains(stderr, "garnet(") || !strings.Contains(stderr, "--allow-different-env") {
		t.Errorf("compare riverswim vs garnet: exit %d, stderr %q; want 2 naming both environments", code, stderr)
	}
	code, stdout, stderr = runCLI(t, "compare", a, g, "--allow-different-env")
	if code != 0 || !strings.Contains(stderr, "warning") || !strings.Contains(stderr, "garnet") || !strings.Contains(stdout, "g/garnet") {
		t.Errorf("compare --allow-different-env: exit %d, stderr %q; want 0 with a warning", code, stderr)
	}

	// Hostile values in a real run's regret_long.csv.
	long, err := os.ReadFile(filepath.Join(a, "regret_long.csv"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(long), "\n")
	for i, v := range []string{"NaN", "+Inf", "-Inf", "1e400", "12,5", "x"} {
		bad := filepath.Join(dir, fmt.Sprintf("bad%d", i))
		copyRun(t, a, bad)
		l := append([]string(nil), lines...)
		f := strings.Split(l[150], ",") // line 151 of the file
		f[len(f)-1] = v
		l[150] = strings.Join(f, ",")
		if err := os.WriteFile(filepath.Join(bad, "regret_long.csv"), []byte(strings.Join(l, "\n")), 0o644); err != nil {
			t.Fatal(err)
		}
		code, _, stderr := runCLI(t, "compare", bad, b)
		want := []string{filepath.Join(bad, "regret_long.csv"), "line 151"}
		if v != "12,5" {
			want = append(want, "column regret")
		}
		for _, w := range want {
			if code != 2 || !strings.Contains(stderr, w) {
				t.Errorf("regret %q: exit %d, stderr %q; want 2 naming %q", v, code, stderr, w)
			}
		}
	}

	// A run directory of the layout before dprl.run/v1 (a manifest without a schema, no
	// regret_long.csv and no config.resolved.yaml, curves/<curve>.csv): its curves/*.csv, a
	// NaN in which is refused the same way.
	old := filepath.Join(dir, "old")
	copyRun(t, a, old)
	for _, f := range []string{"regret_long.csv", "config.resolved.yaml"} {
		if err := os.Remove(filepath.Join(old, f)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Rename(filepath.Join(old, "curves", "riverswim", "ucbvi.csv"), filepath.Join(old, "curves", "ucbvi.csv")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(old, "manifest.json"), []byte(`{"dprl_version": "0.9", "curves": [{"csv": "curves/ucbvi.csv"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr = runCLI(t, "compare", old, b)
	if code != 0 || !strings.Contains(stdout, "old/ucbvi") || !strings.Contains(stderr, "cannot be checked") {
		t.Errorf("compare of a run without regret_long.csv: exit %d, stderr %q, output:\n%s", code, stderr, stdout)
	}
	// A manifest of a schema this dprl does not know is refused, naming it.
	future := filepath.Join(dir, "future")
	copyRun(t, a, future)
	if err := os.WriteFile(filepath.Join(future, "manifest.json"), []byte(`{"schema": "dprl.run/v9"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runCLI(t, "compare", future, b); code != 2 || !strings.Contains(stderr, "dprl.run/v9") {
		t.Errorf("compare of an unknown schema: exit %d, stderr %q", code, stderr)
	}
	wide := filepath.Join(old, "curves", "ucbvi.csv")
	data, err := os.ReadFile(wide)
	if err != nil {
		t.Fatal(err)
	}
	wl := strings.Split(string(data), "\n")
	f := strings.Split(wl[9], ",") // line 10, column seed_2
	f[2] = "NaN"
	wl[9] = strings.Join(f, ",")
	if err := os.WriteFile(wide, []byte(strings.Join(wl, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = runCLI(t, "compare", old, b)
	if code != 2 || !strings.Contains(stderr, wide) || !strings.Contains(stderr, "line 10") || !strings.Contains(stderr, "seed_2") {
		t.Errorf("NaN in curves/ucbvi.csv: exit %d, stderr %q; want 2 naming the file, line 10 and seed_2", code, stderr)
	}
}

// copyRun copies the regular files of run directory src (recursively) into dst.
func copyRun(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}
