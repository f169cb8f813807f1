package compare

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dprl/dprl/internal/testfiles"
)

// writeRun writes a run directory holding manifest.json and the given files (path → content).
func writeRun(t *testing.T, dir string, files map[string]string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	files["manifest.json"] = "{}\n"
	testfiles.Write(t, dir, files, 0o644)
	return dir
}

// longCSV returns a regret_long.csv of the given curves, seeds 1..seeds, episodes 1..k, with
// regret (curve index + 1)·episode + seed/10.
func longCSV(family string, curves []string, seeds, k int) string {
	var b strings.Builder
	b.WriteString("family,curve,seed,episode,regret\n")
	for ci, c := range curves {
		for s := 1; s <= seeds; s++ {
			for e := 1; e <= k; e++ {
				fmt.Fprintf(&b, "%s,%s,%d,%d,%g\n", family, c, s, e, float64((ci+1)*e)+float64(s)/10)
			}
		}
	}
	return b.String()
}

// resolved returns a config.resolved.yaml whose cells (named as the curves) are on env.
func resolved(family, env string, cells ...string) string {
	var parts []string
	for _, c := range cells {
		parts = append(parts, fmt.Sprintf(`{"cell": %q, "spec": {"env": %s, "episodes": 3}, "seeds": [1, 2, 3]}`, c, env))
	}
	return fmt.Sprintf(`{"family": %q, "experiment": "run", "cells": [%s]}`, family, strings.Join(parts, ", "))
}

func mustInput(t *testing.T, err error, want ...string) {
	t.Helper()
	var ie *InputError
	if !errors.As(err, &ie) {
		t.Fatalf("err = %v, want an *InputError", err)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not mention %q", err, w)
		}
	}
}

// TestLoadLong: regret_long.csv is read (it used to be taken for a wide curve file and refused:
// `first column is "family", want "episode"`), its final values per seed kept, and preferred
// to the wide curve CSVs.
func TestLoadLong(t *testing.T) {
	dir := t.TempDir()
	rs := `{"name": "riverswim", "horizon": 20}`
	a := writeRun(t, filepath.Join(dir, "a"), map[string]string{
		"regret_long.csv":      longCSV("tabular", []string{"ucbvi", "dp-ucbvi-jdp_eps_1"}, 3, 4),
		"config.resolved.yaml": resolved("tabular", rs, "ucbvi", "dp-ucbvi-jdp eps=1"),
		"curves/ucbvi.csv":     "episode,seed_1,seed_2\n1,NaN,NaN\n", // ignored: regret_long.csv is preferred
	})
	b := writeRun(t, filepath.Join(dir, "b"), map[string]string{
		"regret_long.csv":      longCSV("tabular", []string{"ucbvi"}, 2, 4),
		"config.resolved.yaml": resolved("tabular", `{"name": "riverswim", "horizon": 20, "states": 10, "env_seed": 1}`, "ucbvi"),
	})
	curves, err := Load([]string{a, b}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(curves) != 3 {
		t.Fatalf("%d curves, want 3", len(curves))
	}
	want := []struct {
		name   string
		finals []float64
	}{{"a/ucbvi", []float64{4.1, 4.2, 4.3}}, {"a/dp-ucbvi-jdp_eps_1", []float64{8.1, 8.2, 8.3}}, {"b/ucbvi", []float64{4.1, 4.2}}}
	for i, w := range want {
		c := curves[i]
		if c.Name != w.name || c.K != 4 || fmt.Sprint(c.Finals) != fmt.Sprint(w.finals) || c.Env != "riverswim(horizon=20)" {
			t.Errorf("curve %d = %s K=%d finals %v env %q; want %s K=4 finals %v on riverswim(horizon=20)", i, c.Name, c.K, c.Finals, c.Env, w.name, w.finals)
		}
	}
	res, err := Analyse(curves)
	if err != nil {
		t.Fatal(err)
	}
	var md bytes.Buffer
	if err := res.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"a/ucbvi", "b/ucbvi", "riverswim(horizon=20)", "P(X < Y)"} {
		if !strings.Contains(md.String(), w) {
			t.Errorf("markdown lacks %q:\n%s", w, md.String())
		}
	}
	if got, err := Load([]string{a}, Options{Globs: []string{"dp-*"}}); err != nil || len(got) != 1 || got[0].Curve != "dp-ucbvi-jdp_eps_1" {
		t.Errorf("--curve dp-*: %v, %v", got, err)
	}
}

// TestLoadWide: a run without regret_long.csv (written before it existed) is read from its
// curves/*.csv, reference lines (no seed columns) skipped.
func TestLoadWide(t *testing.T) {
	dir := t.TempDir()
	a := writeRun(t, filepath.Join(dir, "a"), map[string]string{
		"curves/UCBVI.csv":        "episode,seed_1,seed_2,mean\n1,1,2,1.5\n10,5,7,6\n",
		"main/curves/JDP_eps.csv": "episode,seed1,seed2\n1,1,2\n10,9,8\n",
		"curves/no-learning.csv":  "episode,no-learning\n1,1\n10,10\n",
		"other.csv":               "not,a,curve\n",
	})
	curves, err := Load([]string{a}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(curves) != 2 || curves[0].Curve != "UCBVI" || curves[1].Curve != "main/JDP_eps" ||
		fmt.Sprint(curves[0].Finals) != "[5 7]" || fmt.Sprint(curves[1].Finals) != "[9 8]" || curves[0].K != 10 {
		t.Errorf("curves = %+v %+v", curves[0], curves[1])
	}
}

// TestLoadHostile: every malformed or non-finite value is bad input naming the file, the line
// and the column (a NaN used to reach the bootstrap and fail with exit 1 and no file named).
func TestLoadHostile(t *testing.T) {
	dir := t.TempDir()
	good := longCSV("tabular", []string{"x"}, 2, 3)
	lines := strings.Split(good, "\n")
	replaceLast := func(line int, v string) string {
		l := append([]string(nil), lines...)
		f := strings.Split(l[line-1], ",")
		f[len(f)-1] = v
		l[line-1] = strings.Join(f, ",")
		return strings.Join(l, "\n")
	}
	for i, c := range []struct {
		file, content string
		want          []string
	}{
		{"regret_long.csv", replaceLast(3, "NaN"), []string{"line 3", "regret", "NaN", "not a finite number"}},
		{"regret_long.csv", replaceLast(7, "+Inf"), []string{"line 7", "regret", "+Inf"}},
		{"regret_long.csv", replaceLast(4, "-inf"), []string{"line 4", "regret"}},
		{"regret_long.csv", replaceLast(2, "1.2.3"), []string{"line 2", "regret", "not a number"}},
		{"regret_long.csv", strings.Replace(good, "tabular,x,2,2,", "tabular,x,two,2,", 1), []string{"column seed", "two"}},
		{"regret_long.csv", strings.Replace(good, "tabular,x,2,2,", "tabular,x,2,-2,", 1), []string{"column episode", "-2"}},
		{"regret_long.csv", strings.Replace(good, "tabular,x,2,3,", "tabular,x,2,1,", 1), []string{"line 7", "episodes must increase"}},
		{"regret_long.csv", strings.Replace(good, "tabular,x,2,3,", "tabular,x,2", 1), []string{"line 7", "number of fields"}},
		{"regret_long.csv", "family,curve,episode,seed,regret\n", []string{"line 1", "header"}},
		{"regret_long.csv", "", []string{"empty file"}},
		{"regret_long.csv", "family,curve,seed,episode,regret\n", []string{"has no curve"}},
		{"regret_long.csv", "family,curve,seed,episode,regret\nt,x,1,1,1\nt,x,1,2,2\nt,x,2,1,1\n", []string{"seed 2 at episode 1"}},
		{"regret_long.csv", "family,curve,seed,episode,regret\nt,x,1,1,1\n", []string{"1 seed"}},
		{"curves/x.csv", "episode,seed_1,seed_2,mean\n1,1,NaN,1\n", []string{"line 2", "column seed_2", "not a finite number"}},
		{"curves/x.csv", "episode,seed_1,seed_2,mean\n1,1,2,1.5\n2,1,Inf,x\n", []string{"line 3", "column seed_2"}},
		{"curves/x.csv", "episode,seed_1,seed_2,mean\n1,1,2,abc\n", []string{"line 2", "column mean", "not a number"}},
		{"curves/x.csv", "episode,seed_1,seed_2\n1,1,2\n1,2,3\n", []string{"line 3", "episodes must increase"}},
		{"curves/x.csv", "seed_1,seed_2\n1,2\n", []string{"line 1", "episode"}},
	} {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			run := writeRun(t, filepath.Join(dir, fmt.Sprint(i)), map[string]string{c.file: c.content})
			_, err := Load([]string{run}, Options{})
			mustInput(t, err, append([]string{filepath.Join(run, c.file)}, c.want...)...)
		})
	}
}

// TestLoadDifferentEnvironments: curves of different environments are refused, naming both
// environments, unless allowed, which warns.
func TestLoadDifferentEnvironments(t *testing.T) {
	dir := t.TempDir()
	a := writeRun(t, filepath.Join(dir, "a"), map[string]string{
		"regret_long.csv":      longCSV("tabular", []string{"ucbvi"}, 2, 3),
		"config.resolved.yaml": resolved("tabular", `{"name": "riverswim", "horizon": 20}`, "ucbvi"),
	})
	g := `{"name": "garnet", "horizon": 20, "states": 10, "actions": 3, "branching": 3, "reward_density": 0.3, "env_seed": 1}`
	b := writeRun(t, filepath.Join(dir, "b"), map[string]string{
		"regret_long.csv":      longCSV("tabular", []string{"ucbvi"}, 2, 3),
		"config.resolved.yaml": resolved("tabular", g, "ucbvi"),
	})
	_, err := Load([]string{a, b}, Options{})
	mustInput(t, err, "riverswim(horizon=20)", "garnet(actions=3, branching=3, env_seed=1, horizon=20, reward_density=0.3, states=10)", "--allow-different-env")
	var warn bytes.Buffer
	if _, err := Load([]string{a, b}, Options{AllowDifferentEnv: true, Warn: &warn}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(warn.String(), "warning") || !strings.Contains(warn.String(), "garnet") {
		t.Errorf("warning %q does not name the environments", warn.String())
	}
	// A run that does not record its environment is compared with a warning.
	c := writeRun(t, filepath.Join(dir, "c"), map[string]string{"regret_long.csv": longCSV("tabular", []string{"ucbvi"}, 2, 3)})
	warn.Reset()
	if _, err := Load([]string{a, c}, Options{Warn: &warn}); err != nil || !strings.Contains(warn.String(), "cannot be checked") {
		t.Errorf("run without config.resolved.yaml: err %v, warning %q", err, warn.String())
	}
}

// TestEnvOfCurve: a curve's environment comes from the cell of the same name, or from the cells
// sharing the longest prefix with it (the families shorten parts of a cell's name in its file).
func TestEnvOfCurve(t *testing.T) {
	e1 := `{"name": "E1", "kind": "riverswim", "n": 6, "horizon": 20}`
	e2 := `{"name": "E2", "kind": "latentriver", "m": 5, "copies": 10, "horizon": 20}`
	doc := fmt.Sprintf(`{"family": "linmdp", "cells": [
		{"cell": "main/E1/tuned/ngo eps=1", "spec": {"env": %s}},
		{"cell": "main/E1/tuned/ngo eps=10", "spec": {"env": %s}},
		{"cell": "main/E2/tuned/ngo eps=1", "spec": {"env": %s}},
		{"cell": "main/E2/tuned/ngo eps=10", "spec": {"env": %s}},
		{"cell": "lq", "spec": {"system": "LQ-E1"}}]}`, e1, e1, e2, e2)
	dir := writeRun(t, t.TempDir(), map[string]string{"config.resolved.yaml": doc})
	x, err := runEnvs(dir)
	if err != nil {
		t.Fatal(err)
	}
	for curve, want := range map[string]string{
		"main/E1_tuned_ngo_eps_1": "riverswim(horizon=20, n=6)",
		"main/E2_tuned_ngo_eps1":  "latentriver(copies=10, horizon=20, m=5)",
		"main/E3":                 "latentriver(copies=10, horizon=20, m=5) + riverswim(horizon=20, n=6)",
		"lq":                      "LQ system LQ-E1",
	} {
		if got := x.of(curve); got != want {
			t.Errorf("env of %s = %q, want %q", curve, got, want)
		}
	}
	// The practical tabular cells, and the equivalence of their environments with the tabular
	// family's.
	for spec, want := range map[string]string{
		`{"group": "riverswim-jdp", "horizon": 20}`: "riverswim(horizon=20)",
		`{"group": "garnet-1", "horizon": 20, "env_seed": 1, "garnet": {"states": 10, "actions": 3, "branching": 3, "reward_density": 0.3, "seeds": [1]}}`: "garnet(actions=3, branching=3, env_seed=1, horizon=20, reward_density=0.3, states=10)",
	} {
		if got := specEnv("practical-tabular", []byte(spec)); got != want {
			t.Errorf("specEnv(%s) = %q, want %q", spec, got, want)
		}
	}
}

// TestLoadRefusesFIFOAndMissing: a FIFO as regret_long.csv is refused (not opened for
// reading, which would block), as are a missing run, a run without its manifest and a bad
// --curve pattern.
func TestLoadBadRuns(t *testing.T) {
	dir := t.TempDir()
	noManifest := filepath.Join(dir, "nm")
	if err := os.MkdirAll(noManifest, 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := Load([]string{filepath.Join(dir, "missing")}, Options{})
	mustInput(t, err, "not a directory")
	_, err = Load([]string{noManifest}, Options{})
	mustInput(t, err, "manifest.json")
	_, err = Load([]string{noManifest}, Options{Globs: []string{"["}})
	mustInput(t, err, "--curve")
	_, err = Load(nil, Options{})
	mustInput(t, err, "at least one run")
	if err := CheckFigurePath("x.pdf"); err == nil || !strings.Contains(err.Error(), "--fig") {
		t.Errorf("CheckFigurePath(x.pdf) = %v", err)
	}
}
