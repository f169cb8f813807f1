package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/dprl/dprl/experiment/engine"
	"github.com/dprl/dprl/internal/longtest"
	"github.com/dprl/dprl/report"
	"sigs.k8s.io/yaml"
)

// TestRunMetaAndLongRegret: a small `dprl run` writes meta.json (provenance, seeds, wall time,
// the SHA-256 of config.resolved.yaml and of regret_long.csv) and regret_long.csv, whose rows
// are exactly the per-seed columns of the wide curve CSVs; a rerun with another worker count
// writes the same regret_long.csv and config.resolved.yaml bytes.
func TestRunMetaAndLongRegret(t *testing.T) {
	dir := t.TempDir()
	outs := []string{filepath.Join(dir, "a"), filepath.Join(dir, "b")}
	for i, out := range outs {
		args := []string{"run", "--agent", "dp-ucbvi-jdp", "--epsilon", "1", "--calibration", "unit", "--episodes", "60", "--seeds", "3,5", "--quiet", "--out", out, "--workers", strconv.Itoa(i + 1)}
		if code, _, stderr := runCLI(t, args...); code != 0 {
			t.Fatalf("dprl %v: exit %d, %s", args, code, stderr)
		}
	}
	checkMetaAndLongRegret(t, "tabular", "[3 5]", outs)
}

// TestReproduceMetaAndLongRegret: the practical reproductions, which write their own figures
// and manifests, go through the engine's collect step like every family: a tiny
// `dprl reproduce practical-tabular|practical-lq` writes meta.json, config.resolved.yaml and
// regret_long.csv (the per-seed columns of curves/**.csv in long format) before its manifest,
// the same bytes with 1 and 2 workers. practical-tabular takes --log-y (validated before any
// compute) and its regret figures carry the no-learning reference line. The quick suite checks
// practical-tabular; practical-lq is a long check (DPRL_LONG=1).
func TestReproduceMetaAndLongRegret(t *testing.T) {
	for _, repro := range []string{"practical-tabular", "practical-lq"} {
		t.Run(repro, func(t *testing.T) {
			if repro != "practical-tabular" {
				longtest.Skip(t, "practical-lq's meta and long regret with 1 and 2 workers")
			}
			dir := t.TempDir()
			outs := []string{filepath.Join(dir, "a"), filepath.Join(dir, "b")}
			for i, out := range outs {
				args := []string{"reproduce", repro, "--episodes", "300", "--seeds", "1-2", "--quiet", "--out", out, "--workers", strconv.Itoa(i + 1)}
				if repro == "practical-tabular" && i == 1 {
					args = append(args, "--log-y", "linear") // figures only: the checked files are the same
				}
				if code, _, stderr := runCLI(t, args...); code != 0 {
					t.Fatalf("dprl %v: exit %d, %s", args, code, stderr)
				}
			}
			family := map[string]string{"practical-tabular": "tabular", "practical-lq": "lq"}[repro]
			meta := checkMetaAndLongRegret(t, family, "[1 2]", outs)
			// Manifest last: every other file of the run directory is at most as new.
			mi, err := os.Stat(filepath.Join(outs[0], "manifest.json"))
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range []string{engine.MetaFile, engine.LongRegretFile, engine.ResolvedConfigFile} {
				if fi, err := os.Stat(filepath.Join(outs[0], f)); err != nil || fi.ModTime().After(mi.ModTime()) {
					t.Errorf("%s: %v, or newer than the manifest", f, err)
				}
			}
			var cells struct {
				Family string `json:"family"`
				Cells  []struct {
					Cell  string   `json:"cell"`
					Seeds []uint64 `json:"seeds"`
				} `json:"cells"`
			}
			data, _ := os.ReadFile(filepath.Join(outs[0], engine.ResolvedConfigFile))
			if err := yaml.Unmarshal(data, &cells); err != nil {
				t.Fatal(err)
			}
			n := 0
			for _, c := range cells.Cells {
				n += len(c.Seeds)
			}
			if cells.Family != family || len(cells.Cells) == 0 || n != meta.Units {
				t.Errorf("%s: family %q, %d cells, %d units (meta.json: %d)", engine.ResolvedConfigFile, cells.Family, len(cells.Cells), n, meta.Units)
			}
			if repro != "practical-tabular" {
				return
			}
			svg, err := os.ReadFile(filepath.Join(outs[0], "regret-riverswim-jdp.svg"))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Contains(svg, []byte("no learning (uniform policy")) {
				t.Error("regret-riverswim-jdp.svg: no no-learning reference line")
			}
			bad := filepath.Join(dir, "bad")
			code, _, stderr := runCLI(t, "reproduce", repro, "--episodes", "300", "--seeds", "1", "--quiet", "--out", bad, "--log-y", "sideways")
			if code != 2 || !strings.Contains(stderr, "--log-y") {
				t.Errorf("--log-y sideways: exit %d, %s", code, stderr)
			}
			if _, err := os.Stat(bad); !os.IsNotExist(err) {
				t.Errorf("bad --log-y created the output directory: %v", err)
			}
		})
	}
}

// checkMetaAndLongRegret checks the engine's files of the run directories outs (one
// configuration run with different worker counts): meta.json (family, seeds, provenance, wall
// time, the SHA-256 of the two other files), config.resolved.yaml and regret_long.csv equal
// across outs, and regret_long.csv holding exactly the per-seed columns of every CSV below
// curves/ (the curve is the path without curves/ and .csv). It returns outs[0]'s meta.json.
func checkMetaAndLongRegret(t *testing.T, family, seeds string, outs []string) engine.Meta {
	t.Helper()
	out := outs[0]
	var meta engine.Meta
	data, err := os.ReadFile(filepath.Join(out, engine.MetaFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &meta); err != nil {
		t.Fatal(err)
	}
	if meta.Family != family || fmt.Sprint(meta.Seeds) != seeds || meta.Units == 0 || meta.GitCommit == "" || meta.Go == "" || meta.Dprl == "" || !(meta.WallSeconds > 0) {
		t.Errorf("meta.json: %+v", meta)
	}
	long, err := os.ReadFile(filepath.Join(out, engine.LongRegretFile))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := os.ReadFile(filepath.Join(out, engine.ResolvedConfigFile))
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{"config": cfg, "regret_long": long} {
		want := meta.ConfigSHA256
		if name == "regret_long" {
			want = meta.RegretLongSHA256
		}
		if got := fmt.Sprintf("%x", sha256.Sum256(b)); got != want {
			t.Errorf("meta.json: %s SHA-256 %s, file's %s", name, want, got)
		}
	}
	for _, other := range outs[1:] {
		for _, f := range []string{engine.LongRegretFile, engine.ResolvedConfigFile} {
			b, _ := os.ReadFile(filepath.Join(other, f))
			if !bytes.Equal(b, map[string][]byte{engine.LongRegretFile: long, engine.ResolvedConfigFile: cfg}[f]) {
				t.Errorf("%s differs between %s and %s", f, out, other)
			}
		}
	}

	// The long CSV holds exactly the per-seed columns of the wide CSVs.
	rows, err := csv.NewReader(bytes.NewReader(long)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) < 2 || fmt.Sprint(rows[0]) != "[family curve seed episode regret]" {
		t.Fatalf("regret_long.csv header/rows: %v", rows[:min(len(rows), 2)])
	}
	got := map[string]float64{}
	for _, r := range rows[1:] {
		v, err := strconv.ParseFloat(r[4], 64)
		if err != nil || r[0] != family {
			t.Fatalf("row %v: %v", r, err)
		}
		got[r[1]+"|"+r[2]+"|"+r[3]] = v
	}
	var files []string
	err = filepath.WalkDir(filepath.Join(out, "curves"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() && strings.HasSuffix(p, ".csv") {
			files = append(files, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	seedCol := regexp.MustCompile(`^seed_?([0-9]+)$`)
	want := map[string]float64{}
	var curves []string
	for _, f := range files {
		eps, cols, err := report.ReadCurveCSV(f)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(filepath.Join(out, "curves"), f)
		curve := strings.TrimSuffix(filepath.ToSlash(rel), ".csv")
		curves = append(curves, curve)
		for col, vals := range cols {
			if m := seedColCheck(seedCol, col); m != "" {
				for i, ep := range eps {
					want[curve+"|"+m+"|"+strconv.Itoa(ep)] = vals[i]
				}
			}
		}
	}
	sort.Strings(curves)
	if len(want) == 0 || len(got) != len(want) || len(got) != len(rows)-1 {
		t.Fatalf("regret_long.csv: %d rows (%d distinct), wide CSVs (%v): %d per-seed values", len(rows)-1, len(got), curves, len(want))
	}
	for k, v := range want {
		if g, ok := got[k]; !ok || g != v {
			t.Errorf("%s: long %v (present %v), wide %v", k, g, ok, v)
		}
	}
	return meta
}

func seedColCheck(re *regexp.Regexp, col string) string {
	if m := re.FindStringSubmatch(col); m != nil {
		return m[1]
	}
	return ""
}
