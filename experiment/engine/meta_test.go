package engine

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/dprl/dprl/experiment/rundir"
	"github.com/dprl/dprl/report"
)

// TestLongRegret: regret_long.csv holds the per-seed columns of every CSV below a "curves"
// directory (at any depth), ordered by curve, seed (numerically: 2 before 10) and episode,
// with the "curves" component dropped from the curve name and quoted when needed; CSVs outside
// curves/ and under units/ are ignored, and mean/band columns are not rows.
func TestLongRegret(t *testing.T) {
	dir := t.TempDir()
	write := func(rel string, names []string, runs ...[]float64) {
		t.Helper()
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		mean := make([]float64, len(runs[0]))
		band := report.Band{Mean: mean, Lo: mean, Hi: mean, N: len(runs)}
		if err := report.WriteCurveCSV(p, []int{5, 10}, runs, names, band); err != nil {
			t.Fatal(err)
		}
	}
	write("curves/b.csv", []string{"seed_10", "seed_2"}, []float64{1, 2}, []float64{0.1, 0.25})
	write("blk/curves/g,1/a.csv", []string{"seed3"}, []float64{7, 8})
	write("other.csv", []string{"seed_1"}, []float64{9, 9})
	write("units/curves/x.csv", []string{"seed_1"}, []float64{9, 9})
	got, err := longRegret(dir, "fam")
	if err != nil {
		t.Fatal(err)
	}
	want := "family,curve,seed,episode,regret\n" +
		"fam,\"blk/g,1/a\",3,5,7\nfam,\"blk/g,1/a\",3,10,8\n" +
		"fam,b,2,5,0.1\nfam,b,2,10,0.25\nfam,b,10,5,1\nfam,b,10,10,2\n"
	if string(got) != want {
		t.Errorf("regret_long.csv:\n%s\nwant:\n%s", got, want)
	}
}

// metaPlan is fakePlan whose Collect writes a curve CSV, a block directory with its own
// manifest, and its manifest through rundir.WriteManifest, as the families do.
type metaPlan struct{ fakePlan }

func (p *metaPlan) Collect(c *Collection) (string, error) {
	runs := [][]float64{{1, 2}, {3, 4}}
	band := report.Band{Mean: []float64{2, 3}, Lo: []float64{1, 2}, Hi: []float64{3, 4}, N: 2}
	if err := os.MkdirAll(filepath.Join(c.Dir, "curves"), 0o755); err != nil {
		return "", err
	}
	if err := report.WriteCurveCSV(filepath.Join(c.Dir, "curves", "c.csv"), []int{1, 2}, runs, []string{"seed_1", "seed_2"}, band); err != nil {
		return "", err
	}
	blk := filepath.Join(c.Dir, "blk")
	if err := os.MkdirAll(blk, 0o755); err != nil {
		return "", err
	}
	if err := rundir.WriteManifest(blk, c.Options, map[string]int{}); err != nil {
		return "", err
	}
	for _, f := range []string{MetaFile, LongRegretFile, ResolvedConfigFile} {
		if _, err := os.Stat(filepath.Join(blk, f)); err == nil {
			return "", os.ErrExist // a block directory got the run's files
		}
	}
	return "ok", rundir.WriteManifest(c.Dir, c.Options, map[string]int{"units": len(p.units)})
}

// TestExecuteWritesMeta: Execute's collect step writes meta.json (seeds, units, digests),
// config.resolved.yaml and regret_long.csv into the run directory (and nothing into a block
// directory that has its own manifest). The final files do not depend on whether the hook also
// ran at the block's manifest (it always writes into the run directory), so that guard is not
// observable here; it only avoids building regret_long.csv twice.
func TestExecuteWritesMeta(t *testing.T) {
	base := plan(t, fakeRegistry(nil), 2, 3)
	p, err := NewPlanned(base.Family, &metaPlan{fakePlan{units: base.Plan.(*fakePlan).units}})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if _, err := Execute(context.Background(), p, Local{Workers: 2}, RunOptions{Dir: dir}); err != nil {
		t.Fatal(err)
	}
	var m Meta
	data, err := os.ReadFile(filepath.Join(dir, MetaFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	if m.Family != base.Family || m.Units != 6 || len(m.Seeds) != 3 || m.Workers != 2 || m.GitCommit == "" || len(m.ConfigSHA256) != 64 {
		t.Errorf("meta.json: %+v", m)
	}
	long, err := os.ReadFile(filepath.Join(dir, LongRegretFile))
	if err != nil {
		t.Fatal(err)
	}
	if want := "family,curve,seed,episode,regret\n" + "fake,c,1,1,1\nfake,c,1,2,2\nfake,c,2,1,3\nfake,c,2,2,4\n"; string(long) != want {
		t.Errorf("regret_long.csv:\n%s\nwant:\n%s", long, want)
	}
	if m.RegretLongSHA256 != rundir.HashBytes("", "", long).SHA256 {
		t.Error("meta.json: regret_long_sha256 is not the file's")
	}
}

// TestLongRows: every recorded episode up to MaxLongEpisodes; beyond, MaxLongEpisodes evenly
// spaced strictly increasing ones with the first and the last.
func TestLongRows(t *testing.T) {
	for _, n := range []int{0, 1, 7, MaxLongEpisodes, MaxLongEpisodes + 1, 3000, 50000, 1_000_000} {
		r := longRows(n)
		want := min(n, MaxLongEpisodes)
		if len(r) != want {
			t.Fatalf("n = %d: %d rows, want %d", n, len(r), want)
		}
		if n == 0 {
			continue
		}
		if r[0] != 0 || r[len(r)-1] != n-1 {
			t.Errorf("n = %d: rows %d..%d, want 0..%d", n, r[0], r[len(r)-1], n-1)
		}
		for i := 1; i < len(r); i++ {
			if r[i] <= r[i-1] {
				t.Fatalf("n = %d: rows not increasing at %d: %d, %d", n, i, r[i-1], r[i])
			}
		}
	}
}
