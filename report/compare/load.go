package compare

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/dprl/dprl/internal/boundedread"
	"github.com/dprl/dprl/internal/curvefiles"
)

// Files of a run directory that compare reads.
const (
	// LongFile is the long-format regret of every seed of every curve.
	LongFile = "regret_long.csv"
	// ResolvedConfigFile is the resolved configuration (each cell's specification).
	ResolvedConfigFile = "config.resolved.yaml"
	// ManifestFile is written last by every run: a directory without it is incomplete.
	ManifestFile = "manifest.json"
	// unitsDir holds a sweep's unit files (never curves).
	unitsDir = "units"
)

// longHeader is the header of regret_long.csv.
var longHeader = []string{"family", "curve", "seed", "episode", "regret"}

// seedColumn matches the per-seed columns of the wide curve CSVs (seed_3, seed3).
var seedColumn = regexp.MustCompile(`^seed_?([0-9]+)$`)

// Load reads the curves of the run directories (those matching opt.Globs) with their final
// regret per seed, in the order of dirs and, within a run, of its files. It refuses (with an
// *InputError) a directory that is not a complete run, a malformed file or a value that is
// not a finite number (naming the file, line and column), a curve with fewer than 2 seeds,
// curves ending at different episodes, and curves of different environments unless
// opt.AllowDifferentEnv (then it warns).
func Load(dirs []string, opt Options) ([]*Curve, error) {
	if len(dirs) == 0 {
		return nil, bad("compare: name at least one run directory")
	}
	for _, g := range opt.Globs {
		if _, err := path.Match(g, ""); err != nil {
			return nil, bad("--curve: bad pattern %q: %v", g, err)
		}
	}
	warn := opt.Warn
	if warn == nil {
		warn = io.Discard
	}
	labels := runLabels(dirs)
	var curves []*Curve
	for i, dir := range dirs {
		cs, envKnown, err := loadRun(dir, labels[i], opt.Globs)
		if err != nil {
			return nil, err
		}
		envs, err := runEnvs(dir)
		if envKnown {
			// A run of the one schema: the resolved configuration's description (with its
			// parameters) where it gives one, else the manifest's environment.
			if err != nil {
				return nil, err
			}
			for _, c := range cs {
				if e := envs.of(c.Curve); e != "" {
					c.Env = e
				}
			}
			curves = append(curves, cs...)
			continue
		}
		if err != nil {
			return nil, err
		}
		if envs == nil {
			fmt.Fprintf(warn, "warning: compare: %s has no %s (a run written before dprl recorded it): its environment cannot be checked\n", dir, ResolvedConfigFile)
		}
		for _, c := range cs {
			c.Env = envs.of(c.Curve)
		}
		curves = append(curves, cs...)
	}
	for _, c := range curves[1:] {
		if c.K != curves[0].K {
			return nil, bad("compare: curves end at different episodes (%s at K=%d, %s at K=%d); R(K) is only comparable at equal K",
				curves[0].Name, curves[0].K, c.Name, c.K)
		}
	}
	if err := checkEnvs(curves, opt.AllowDifferentEnv, warn); err != nil {
		return nil, err
	}
	return curves, nil
}

// checkEnvs refuses curves of different (known) environments, naming two of them and their
// environments, unless allow (then it warns).
func checkEnvs(curves []*Curve, allow bool, warn io.Writer) error {
	var first *Curve
	for _, c := range curves {
		if c.Env == "" {
			continue
		}
		if first == nil {
			first = c
			continue
		}
		if c.Env == first.Env {
			continue
		}
		if !allow {
			return bad("compare: the curves are on different environments: %s on %s, %s on %s; R(K) of different environments is not comparable (select the curves of one environment with --curve, or pass --allow-different-env to compare anyway)",
				first.Name, first.Env, c.Name, c.Env)
		}
		fmt.Fprintf(warn, "warning: compare: comparing curves of different environments (--allow-different-env): %s on %s, %s on %s\n",
			first.Name, first.Env, c.Name, c.Env)
		return nil
	}
	return nil
}

// RunSchema is the run-directory schema compare reads (experiment/engine.RunSchema,
// docs/run-directory.md): its manifest lists every curve with its environment and CSV.
const RunSchema = "dprl.run/v1"

// maxManifest bounds the manifest compare reads.
const maxManifest = 64 << 20

// schemaManifest is what compare reads of a manifest of the one schema.
type schemaManifest struct {
	Schema string `json:"schema"`
	Curves []struct {
		Label string `json:"label"`
		Env   string `json:"env"`
		CSV   string `json:"csv"`
	} `json:"curves"`
}

// loadRun reads the curves of one run directory. A run of the one schema (RunSchema) is read
// from its manifest: every listed curve's CSV, with the manifest's environment (envKnown).
// An older run (no schema in its manifest: the layouts before dprl.run/v1) is read from
// regret_long.csv when present, else the wide curve CSVs below "curves" directories.
func loadRun(dir, label string, globs []string) (curves []*Curve, envKnown bool, err error) {
	st, err := os.Stat(dir)
	if err != nil || !st.IsDir() {
		return nil, false, bad("compare: %s is not a directory", dir)
	}
	mp := filepath.Join(dir, ManifestFile)
	if _, err := os.Stat(mp); err != nil {
		return nil, false, bad("compare: %s is not a complete run directory (no %s; written last by dprl run/reproduce)", dir, ManifestFile)
	}
	data, err := boundedread.ReadFile(mp, maxManifest)
	if err != nil {
		return nil, false, bad("compare: %v", err)
	}
	var m schemaManifest
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, false, bad("compare: %s: %v", mp, err)
	}
	switch m.Schema {
	case RunSchema:
		curves, err = loadSchema(dir, label, globs, &m)
		envKnown = true
	case "":
		curves, err = loadOld(dir, label, globs)
	default:
		return nil, false, bad("compare: %s: schema %q is not one this dprl reads (%s)", mp, m.Schema, RunSchema)
	}
	if err != nil {
		return nil, false, err
	}
	for _, c := range curves {
		if c.Seeds < 2 {
			return nil, false, bad("compare: %s: curve %s has 1 seed; a confidence interval needs at least 2 seeds (rerun with --seeds 1-5 or more)", c.File, c.Curve)
		}
	}
	return curves, envKnown, nil
}

// loadSchema reads the curves a manifest of the one schema lists, named as in
// regret_long.csv (the CSV's path without "curves" and ".csv"), each with the manifest's
// environment: their values from regret_long.csv (every curve's last episode is in it), or,
// without it, from each curve's CSV.
func loadSchema(dir, label string, globs []string, m *schemaManifest) ([]*Curve, error) {
	mp := filepath.Join(dir, ManifestFile)
	envOf := map[string]string{}
	var names []string
	for i, rec := range m.Curves {
		if !filepath.IsLocal(filepath.FromSlash(rec.CSV)) || path.Ext(rec.CSV) != ".csv" {
			return nil, bad("compare: %s: curves[%d].csv: %q is not a CSV file inside the run directory", mp, i, rec.CSV)
		}
		name := curvefiles.Name(rec.CSV)
		envOf[name] = rec.Env
		names = append(names, name)
	}
	var curves []*Curve
	long := filepath.Join(dir, LongFile)
	if _, err := os.Lstat(long); err == nil {
		cs, err := readLong(long, label, globs)
		if err != nil {
			return nil, err
		}
		for _, c := range cs {
			env, ok := envOf[c.Curve]
			if !ok {
				continue // a reference line (the zero policy), not a curve of the manifest
			}
			c.Env = env
			curves = append(curves, c)
		}
	} else {
		for i, rec := range m.Curves {
			if !matchAny(globs, names[i]) {
				continue
			}
			c, err := readWide(filepath.Join(dir, filepath.FromSlash(rec.CSV)), label, names[i])
			if err != nil {
				return nil, err
			}
			if c == nil {
				return nil, bad("compare: %s: curve %s has no per-seed columns", filepath.Join(dir, rec.CSV), rec.Label)
			}
			c.Env = rec.Env
			curves = append(curves, c)
		}
	}
	if len(curves) == 0 {
		return nil, bad("compare: %s lists no curve%s", mp, globNote(globs))
	}
	return curves, nil
}

// loadOld reads a run directory of a layout before dprl.run/v1.
func loadOld(dir, label string, globs []string) ([]*Curve, error) {
	var curves []*Curve
	long := filepath.Join(dir, LongFile)
	if _, err := os.Lstat(long); err == nil {
		if curves, err = readLong(long, label, globs); err != nil {
			return nil, err
		}
		if len(curves) == 0 {
			return nil, bad("compare: %s has no curve%s", long, globNote(globs))
		}
		return curves, nil
	}
	files, err := curvefiles.List(dir, unitsDir, nil)
	if err != nil {
		return nil, bad("compare: %v", err)
	}
	for _, rel := range files {
		name := curvefiles.Name(rel)
		if !matchAny(globs, name) {
			continue
		}
		c, err := readWide(filepath.Join(dir, rel), label, name)
		if err != nil {
			return nil, err
		}
		if c != nil {
			curves = append(curves, c)
		}
	}
	if len(curves) == 0 {
		return nil, bad("compare: %s has no curves with per-seed columns (looked for %s, then curves/*.csv%s)", dir, LongFile, globNote(globs))
	}
	return curves, nil
}

// openCSV opens a CSV file of a run (a regular file: a FIFO or a device is refused).
func openCSV(p string) (*os.File, *csv.Reader, error) {
	f, err := boundedread.Open(p, -1)
	if err != nil {
		return nil, nil, bad("compare: %v", err)
	}
	cr := csv.NewReader(f)
	cr.ReuseRecord = true
	return f, cr, nil
}

// readHeader reads the first record of a CSV file; an empty file is an error, which names the
// header wanted unless want is "".
func readHeader(p string, cr *csv.Reader, want string) ([]string, error) {
	header, err := cr.Read()
	if err == io.EOF {
		if want != "" {
			return nil, bad("compare: %s: empty file (want the header %s)", p, want)
		}
		return nil, bad("compare: %s: empty file", p)
	}
	if err != nil {
		return nil, csvErr(p, err)
	}
	return header, nil
}

// eachRow calls row with every further record of a CSV file and its line, until the end of the
// file or the first error (a CSV error names the file).
func eachRow(p string, cr *csv.Reader, row func(rec []string, line int) error) error {
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return csvErr(p, err)
		}
		line, _ := cr.FieldPos(0)
		if err := row(rec, line); err != nil {
			return err
		}
	}
}

// csvErr turns a CSV read error into an *InputError naming the file.
func csvErr(p string, err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return bad("compare: %s: line %d, column %d: %v", p, pe.Line, pe.Column, pe.Err)
	}
	return bad("compare: %s: %v", p, err)
}

// value parses a regret value, which must be a finite number.
func value(p string, line int, col, s string) (float64, error) {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, bad("compare: %s: line %d, column %s: %q is not a number", p, line, col, s)
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, bad("compare: %s: line %d, column %s: %q is not a finite number", p, line, col, s)
	}
	return v, nil
}

// episode parses an episode number (≥ 0).
func episode(p string, line int, col, s string) (int, error) {
	k, err := strconv.Atoi(s)
	if err != nil || k < 0 {
		return 0, bad("compare: %s: line %d, column %s: %q is not an episode number", p, line, col, s)
	}
	return k, nil
}

// seedRun is the last row read of one seed of one curve.
type seedRun struct {
	seed  uint64
	ep    int // last episode
	final float64
	line  int
}

// readLong reads regret_long.csv: rows family,curve,seed,episode,regret, the episodes of each
// (curve, seed) increasing. It keeps each seed's last row (R(K)); every value must be finite.
func readLong(p, label string, globs []string) ([]*Curve, error) {
	f, cr, err := openCSV(p)
	if err != nil {
		return nil, err
	}
	defer f.Close() // Read-only.
	header, err := readHeader(p, cr, strings.Join(longHeader, ","))
	if err != nil {
		return nil, err
	}
	if strings.Join(header, ",") != strings.Join(longHeader, ",") {
		return nil, bad("compare: %s: line 1: header is %q, want %q", p, strings.Join(header, ","), strings.Join(longHeader, ","))
	}
	type curveRuns struct {
		name  string
		seeds map[uint64]*seedRun
	}
	var order []*curveRuns
	byName := map[string]*curveRuns{}
	if err := eachRow(p, cr, func(rec []string, line int) error {
		name := rec[1]
		if name == "" {
			return bad("compare: %s: line %d, column curve: empty curve name", p, line)
		}
		seed, err := strconv.ParseUint(rec[2], 10, 64)
		if err != nil {
			return bad("compare: %s: line %d, column seed: %q is not a seed", p, line, rec[2])
		}
		ep, err := episode(p, line, "episode", rec[3])
		if err != nil {
			return err
		}
		v, err := value(p, line, "regret", rec[4])
		if err != nil {
			return err
		}
		c := byName[name]
		if c == nil {
			c = &curveRuns{name: name, seeds: map[uint64]*seedRun{}}
			byName[name] = c
			order = append(order, c)
		}
		s := c.seeds[seed]
		if s == nil {
			s = &seedRun{seed: seed, ep: -1}
			c.seeds[seed] = s
		}
		if ep <= s.ep {
			return bad("compare: %s: line %d, column episode: episode %d of curve %s seed %d does not follow episode %d (line %d); episodes must increase", p, line, ep, name, seed, s.ep, s.line)
		}
		s.ep, s.final, s.line = ep, v, line
		return nil
	}); err != nil {
		return nil, err
	}
	var curves []*Curve
	for _, c := range order {
		if !matchAny(globs, c.name) {
			continue
		}
		runs := make([]*seedRun, 0, len(c.seeds))
		for _, s := range c.seeds {
			runs = append(runs, s)
		}
		sort.Slice(runs, func(i, j int) bool { return runs[i].seed < runs[j].seed })
		cv := &Curve{Run: label, Curve: c.name, Name: label + "/" + c.name, K: runs[0].ep, Seeds: len(runs), File: p}
		for _, s := range runs {
			if s.ep != cv.K {
				return nil, bad("compare: %s: curve %s: seed %d ends at episode %d, seed %d at episode %d (line %d); a truncated file?", p, c.name, runs[0].seed, cv.K, s.seed, s.ep, s.line)
			}
			cv.Finals = append(cv.Finals, s.final)
		}
		curves = append(curves, cv)
	}
	return curves, nil
}

// readWide reads a wide curve CSV (episode, then one column per seed and others such as mean
// or a confidence band). It returns nil for a file without seed columns (a reference line such
// as no-learning or the zero policy). Every value must parse, and the seeds' be finite.
func readWide(p, label, name string) (*Curve, error) {
	f, cr, err := openCSV(p)
	if err != nil {
		return nil, err
	}
	defer f.Close() // Read-only.
	header, err := readHeader(p, cr, "")
	if err != nil {
		return nil, err
	}
	if header[0] != "episode" {
		return nil, bad("compare: %s: line 1: first column is %q, want \"episode\"", p, header[0])
	}
	cols := append([]string(nil), header...) // header is reused by Read
	type seedCol struct {
		seed uint64
		col  int
	}
	var seeds []seedCol
	seen := map[string]bool{}
	for j, name := range cols[1:] {
		if seen[name] {
			return nil, bad("compare: %s: line 1: duplicate column %q", p, name)
		}
		seen[name] = true
		if m := seedColumn.FindStringSubmatch(name); m != nil {
			s, err := strconv.ParseUint(m[1], 10, 64)
			if err != nil {
				return nil, bad("compare: %s: line 1: column %q: %v", p, name, err)
			}
			seeds = append(seeds, seedCol{s, j + 1})
		}
	}
	isSeed := make([]bool, len(cols))
	for _, s := range seeds {
		isSeed[s.col] = true
	}
	sort.Slice(seeds, func(i, j int) bool { return seeds[i].seed < seeds[j].seed })
	for i := 1; i < len(seeds); i++ {
		if seeds[i].seed == seeds[i-1].seed {
			return nil, bad("compare: %s: line 1: two columns for seed %d", p, seeds[i].seed)
		}
	}
	last := make([]float64, len(cols))
	lastEp, rows := -1, 0
	if err := eachRow(p, cr, func(rec []string, line int) error {
		ep, err := episode(p, line, "episode", rec[0])
		if err != nil {
			return err
		}
		if ep <= lastEp {
			return bad("compare: %s: line %d, column episode: episode %d does not follow episode %d; episodes must increase", p, line, ep, lastEp)
		}
		lastEp = ep
		for j := 1; j < len(rec); j++ {
			v, err := strconv.ParseFloat(rec[j], 64)
			if err != nil {
				return bad("compare: %s: line %d, column %s: %q is not a number", p, line, cols[j], rec[j])
			}
			if isSeed[j] && (math.IsNaN(v) || math.IsInf(v, 0)) {
				return bad("compare: %s: line %d, column %s: %q is not a finite number", p, line, cols[j], rec[j])
			}
			last[j] = v
		}
		rows++
		return nil
	}); err != nil {
		return nil, err
	}
	if len(seeds) == 0 {
		return nil, nil
	}
	if rows == 0 {
		return nil, bad("compare: %s has no rows", p)
	}
	c := &Curve{Run: label, Curve: name, Name: label + "/" + name, K: lastEp, Seeds: len(seeds), File: p}
	for _, s := range seeds {
		c.Finals = append(c.Finals, last[s.col])
	}
	return c, nil
}

// runLabels names the runs by their directory's base name, or by the path as given when two
// base names coincide.
func runLabels(dirs []string) []string {
	count := map[string]int{}
	for _, d := range dirs {
		count[filepath.Base(filepath.Clean(d))]++
	}
	out := make([]string, len(dirs))
	for i, d := range dirs {
		out[i] = filepath.Base(filepath.Clean(d))
		if count[out[i]] > 1 {
			out[i] = filepath.ToSlash(filepath.Clean(d))
		}
	}
	return out
}

// matchAny reports whether name, or its last element (the curve's file name without its
// environment directory: "UCBVI" for "riverswim/UCBVI"), matches one of the patterns (all
// names match without patterns).
func matchAny(globs []string, name string) bool {
	if len(globs) == 0 {
		return true
	}
	for _, g := range globs {
		if ok, _ := path.Match(g, name); ok {
			return true
		}
		if ok, _ := path.Match(g, path.Base(name)); ok {
			return true
		}
	}
	return false
}

func globNote(globs []string) string {
	if len(globs) == 0 {
		return ""
	}
	return " matching --curve " + strings.Join(globs, ", ")
}
