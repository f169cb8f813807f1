package engine

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/dprl/dprl/experiment/rundir"
	"github.com/dprl/dprl/internal/atomicfile"
	"github.com/dprl/dprl/internal/curvefiles"
	"github.com/dprl/dprl/report"
)

// Files the engine writes into every run directory it collects (issue 11, "What users of RL
// tooling expect"), just before the family's manifest.
const (
	// MetaFile records what produced the run (see Meta). It is the one file of these three
	// that holds the wall time, so it differs between otherwise identical runs.
	MetaFile = "meta.json"
	// ResolvedConfigFile is the resolved configuration: every cell's resolved unit
	// specification and seeds, as indented JSON (a subset of YAML). Byte-deterministic.
	ResolvedConfigFile = "config.resolved.yaml"
	// LongRegretFile is the regret of every seed of every curve in long format:
	// family,curve,seed,episode,regret, at the checkpoints the family records (at most
	// MaxLongEpisodes per curve). Byte-deterministic.
	LongRegretFile = "regret_long.csv"
)

// Meta is the content of meta.json.
type Meta struct {
	rundir.Provenance
	// Family and Experiment name the family and the plan (the default run directory).
	Family     string `json:"family"`
	Experiment string `json:"experiment"`
	// Seeds are the distinct seeds of the units, ascending; Units is the number of units.
	Seeds []uint64 `json:"seeds"`
	Units int      `json:"units"`
	// ConfigSHA256 and RegretLongSHA256 are the SHA-256 of config.resolved.yaml and
	// regret_long.csv.
	ConfigSHA256     string `json:"config_sha256"`
	RegretLongSHA256 string `json:"regret_long_sha256"`
	// Workers is the worker count of this invocation. WallSeconds is the wall time of every
	// invocation that computed this run: this one, plus (rundir.PriorSeconds) the interrupted
	// invocations a resumed run continues and the shards a merge collects — each earlier one
	// for the time of its last unit file that is still there.
	Workers     int     `json:"workers"`
	WallSeconds float64 `json:"wall_seconds"`
	// Partial is set for a merge of a sweep with missing units (--allow-partial).
	Partial bool `json:"partial,omitempty"`
}

// resolvedCell is one cell of the resolved configuration.
type resolvedCell struct {
	Cell  string          `json:"cell"`
	Spec  json.RawMessage `json:"spec"`
	Seeds []uint64        `json:"seeds"`
}

// resolvedConfig returns the bytes of config.resolved.yaml (YAML): the family and, in plan
// order, each cell with its resolved specification (Unit.Spec) and seeds.
func resolvedConfig(p *Planned) ([]byte, error) {
	var cells []*resolvedCell
	byKey := map[string]*resolvedCell{}
	for _, u := range p.Units() {
		key := u.Cell + "\x00" + string(u.Spec)
		c := byKey[key]
		if c == nil {
			spec := json.RawMessage(u.Spec)
			if !json.Valid(u.Spec) { // a family whose specs are not JSON: record them as a string
				s, _ := json.Marshal(string(u.Spec))
				spec = s
			}
			c = &resolvedCell{Cell: u.Cell, Spec: spec}
			byKey[key] = c
			cells = append(cells, c)
		}
		c.Seeds = append(c.Seeds, u.Seed)
	}
	data, err := json.Marshal(struct {
		Family     string          `json:"family"`
		Experiment string          `json:"experiment"`
		Cells      []*resolvedCell `json:"cells"`
	}{p.Family, p.Name(), cells})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ResolvedConfigFile, err)
	}
	return resolvedYAML(data)
}

// seedColumn matches the per-seed columns of the families' curve CSVs (seed_3, seed3).
var seedColumn = regexp.MustCompile(`^seed_?([0-9]+)$`)

// longRegret returns the bytes of regret_long.csv built from the wide curve CSVs of dir: every
// CSV file below a directory named "curves" (curves/X.csv, curves/G/X.csv, B/curves/X.csv)
// that dprl wrote (rundir.Listed; a user's CSV kept beside the outputs is not a curve), in
// sorted path order; the curve is its path without ".csv" and without the "curves"
// component. Columns without a seed (mean, confidence band, reference lines) are not seeds'
// regret and are left out. Rows are ordered by curve, seed (ascending), episode; values are
// written in the shortest form that parses back to the same float64.
func longRegret(dir, family string) ([]byte, error) {
	// rundir.Listed is nil without an ownership record: every CSV is then the run's; with one,
	// a file dprl did not write (a user's, beside the outputs) is left out.
	files, err := curvefiles.List(dir, UnitsDir, rundir.Listed(dir))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", LongRegretFile, err)
	}
	var b bytes.Buffer
	b.WriteString("family,curve,seed,episode,regret\n")
	for _, rel := range files {
		eps, cols, err := report.ReadCurveCSV(filepath.Join(dir, rel))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", LongRegretFile, err)
		}
		curve := curvefiles.Name(rel)
		type seedCol struct {
			seed uint64
			vals []float64
		}
		var seeds []seedCol
		for name, vals := range cols {
			if m := seedColumn.FindStringSubmatch(name); m != nil {
				s, err := strconv.ParseUint(m[1], 10, 64)
				if err != nil {
					return nil, fmt.Errorf("%s: %s: column %q: %w", LongRegretFile, rel, name, err)
				}
				seeds = append(seeds, seedCol{s, vals})
			}
		}
		sort.Slice(seeds, func(i, j int) bool { return seeds[i].seed < seeds[j].seed })
		for i := 1; i < len(seeds); i++ {
			if seeds[i].seed == seeds[i-1].seed {
				return nil, fmt.Errorf("%s: %s: two columns for seed %d", LongRegretFile, rel, seeds[i].seed)
			}
		}
		prefix := csvField(family) + "," + csvField(curve) + ","
		rows := longRows(len(eps))
		var line []byte
		for _, s := range seeds {
			for _, i := range rows {
				line = append(line[:0], prefix...)
				line = strconv.AppendUint(line, s.seed, 10)
				line = append(line, ',')
				line = strconv.AppendInt(line, int64(eps[i]), 10)
				line = append(line, ',')
				line = strconv.AppendFloat(line, s.vals[i], 'g', -1, 64)
				line = append(line, '\n')
				b.Write(line)
			}
		}
	}
	return b.Bytes(), nil
}

// MaxLongEpisodes bounds the episodes per curve in regret_long.csv: a curve recorded at more
// episodes (lq and practical-lq record every one; qiao-fig1 every one up to K = 50 000) is
// written at MaxLongEpisodes evenly spaced ones, the first and the last included, so that the
// file stays a summary (≈ 200 MB otherwise for a full qiao-fig1) — the wide CSVs under
// curves/ keep every recorded episode.
const MaxLongEpisodes = 1000

// longRows returns the row indices of a curve recorded at n episodes: all of them when
// n ≤ MaxLongEpisodes, else round(j·(n−1)/(MaxLongEpisodes−1)) for j = 0, …, MaxLongEpisodes−1.
func longRows(n int) []int {
	if n <= MaxLongEpisodes {
		out := make([]int, n)
		for i := range out {
			out[i] = i
		}
		return out
	}
	out := make([]int, MaxLongEpisodes)
	for j := range out {
		out[j] = int((int64(j)*int64(n-1) + int64(MaxLongEpisodes-1)/2) / int64(MaxLongEpisodes-1))
	}
	return out
}

// csvField quotes a field when it holds a comma, quote or line break (RFC 4180).
func csvField(s string) string {
	if !strings.ContainsAny(s, ",\"\r\n") {
		return s
	}
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}

// writeMeta writes config.resolved.yaml, regret_long.csv and meta.json (in that order) into
// c.Dir; it runs after the family's curve CSVs and before its manifest.
func writeMeta(p *Planned, c *Collection) error {
	cfg, err := resolvedConfig(p)
	if err != nil {
		return err
	}
	if err := atomicfile.WriteBytes(filepath.Join(c.Dir, ResolvedConfigFile), cfg, 0o644); err != nil {
		return err
	}
	long, err := longRegret(c.Dir, p.Family)
	if err != nil {
		return err
	}
	if err := atomicfile.WriteBytes(filepath.Join(c.Dir, LongRegretFile), long, 0o644); err != nil {
		return err
	}
	seen := map[uint64]bool{}
	var seeds []uint64
	for _, u := range p.Units() {
		if !seen[u.Seed] {
			seen[u.Seed] = true
			seeds = append(seeds, u.Seed)
		}
	}
	sort.Slice(seeds, func(i, j int) bool { return seeds[i] < seeds[j] })
	m := Meta{
		Provenance: rundir.NewProvenance(c.Inputs),
		Family:     p.Family, Experiment: p.Name(), Seeds: seeds, Units: len(p.Units()),
		ConfigSHA256:     rundir.HashBytes("", "", cfg).SHA256,
		RegretLongSHA256: rundir.HashBytes("", "", long).SHA256,
		Workers:          c.Workers, WallSeconds: c.Seconds + rundir.PriorSeconds(c.Dir, UnitsDir), Partial: c.Partial,
	}
	return rundir.WriteJSON(filepath.Join(c.Dir, MetaFile), m)
}
