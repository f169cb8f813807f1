package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"testing"

	"github.com/dprl/dprl/experiment/engine"
	"github.com/dprl/dprl/report"
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
	out := outs[0]
	var meta engine.Meta
	data, err := os.ReadFile(filepath.Join(out, engine.MetaFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &meta); err != nil {
		t.Fatal(err)
	}
	if meta.Family != "tabular" || fmt.Sprint(meta.Seeds) != "[3 5]" || meta.GitCommit == "" || meta.Go == "" || meta.Dprl == "" || !(meta.WallSeconds > 0) {
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
	for _, f := range []string{engine.LongRegretFile, engine.ResolvedConfigFile} {
		b, _ := os.ReadFile(filepath.Join(outs[1], f))
		if !bytes.Equal(b, map[string][]byte{engine.LongRegretFile: long, engine.ResolvedConfigFile: cfg}[f]) {
			t.Errorf("%s differs between 1 and 2 workers", f)
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
		if err != nil || r[0] != "tabular" {
			t.Fatalf("row %v: %v", r, err)
		}
		got[r[1]+"|"+r[2]+"|"+r[3]] = v
	}
	files, _ := filepath.Glob(filepath.Join(out, "curves", "*.csv"))
	seedCol := regexp.MustCompile(`^seed_?([0-9]+)$`)
	want := map[string]float64{}
	var curves []string
	for _, f := range files {
		eps, cols, err := report.ReadCurveCSV(f)
		if err != nil {
			t.Fatal(err)
		}
		curve := filepath.Base(f[:len(f)-len(".csv")])
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
}

func seedColCheck(re *regexp.Regexp, col string) string {
	if m := re.FindStringSubmatch(col); m != nil {
		return m[1]
	}
	return ""
}
