package rundir

// Ownership of the files of a run directory.
//
// dprl removes (with --force) or overwrites only files that it wrote itself. It knows them
// from the directory's ownership record: RecordDir (".dprl-owned/") holds one JSON-lines file
// per session (one invocation of dprl that wrote into the directory; several sweep shards
// write at once, each into its own file, so no two processes append to one file, on NFS
// either). Its first line describes the session ({"dprl": version, "host", "pid", "start"});
// every other line lists one path relative to the run directory, with the seconds t since the
// session started: {"f": "curves/a.csv", "t": 1.25} for a file, {"d": "curves", "t": 1.25}
// for a directory the session created.
//
// A file's line is appended — one write(2), before the file's temporary copy is even
// created — by the guard this package installs in internal/atomicfile, through which every
// output of every family is written: a run killed at any moment (kill -9) leaves no file of
// its own that its record does not list (its orphan temporary files ".NAME.tmp-*" are known
// from NAME's line). A line cut short by the kill does not parse and is ignored, so a record
// can never name a path that was not meant. The guard applies to the directories being
// recorded: registered by Lock (the CLI, for the whole run) or Prepare (library use).
//
// A directory is recorded as created by dprl when a file is written below it and it was not
// there when the recording started (the directories present then are walked once, and are
// never removed). The lock file (LockFile) and RecordDir itself are neither outputs nor user
// files: they are never listed and never count as files of the directory.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dprl/dprl/internal/atomicfile"
)

const (
	// RecordDir is the directory of a run directory's ownership records (see above).
	RecordDir = ".dprl-owned"
	// LockFile is the lock file of a run directory (see Lock).
	LockFile = ".dprl.lock"
	// StateDir is the engine's subdirectory of resumable state (engine.UnitsDir, the unit
	// files): Prepare never removes it or anything in it (the engine removes it itself once
	// a run is complete, and it is what an interrupted run resumes from), and the files in
	// it are recorded but never refused as "not written by dprl" (the engine rewrites a unit
	// file that does not verify).
	StateDir = "units"
)

// RunOutputs are the names every family may write at the top of a run directory; Prepare
// refuses, before any compute, a directory holding one of them that dprl did not write.
var RunOutputs = []string{"manifest.json", "summary.md", "summary.claims.json", "meta.json", "config.resolved.yaml", "regret_long.csv"}

// maxSnapshot bounds the entries visited when the directories present at the start of a
// recording are listed; beyond it (a huge directory given as --out), no directory is recorded
// as created by dprl, so none is ever removed.
const maxSnapshot = 200000

// recLine is one line of a record: a session header, a file or a directory.
type recLine struct {
	Dprl  string  `json:"dprl,omitempty"`
	Host  string  `json:"host,omitempty"`
	PID   int     `json:"pid,omitempty"`
	Start string  `json:"start,omitempty"`
	F     string  `json:"f,omitempty"`
	D     string  `json:"d,omitempty"`
	T     float64 `json:"t,omitempty"`
}

// session is one record file.
type session struct {
	name  string
	maxT  float64
	files []string
	dirs  []string
}

// records is the union of a directory's record files.
type records struct {
	files, dirs map[string]bool
	sessions    []*session
}

// validRel reports whether p (slash-separated) may be listed in a record: a clean local path
// that is neither the lock file nor inside RecordDir.
func validRel(p string) bool {
	if p == "" || p == "." || path.Clean(p) != p || !filepath.IsLocal(filepath.FromSlash(p)) || p == LockFile {
		return false
	}
	first, _, _ := strings.Cut(p, "/")
	return first != RecordDir
}

// parseSession parses a record file; lines that do not parse (one cut short by a kill) are
// ignored, as is the text after the last newline.
func parseSession(name string, data []byte) *session {
	s := &session{name: name}
	lines := bytes.Split(data, []byte{'\n'})
	for _, l := range lines[:len(lines)-1] {
		var e recLine
		if json.Unmarshal(l, &e) != nil {
			continue
		}
		switch {
		case e.F != "" && validRel(e.F):
			s.files = append(s.files, e.F)
		case e.D != "" && validRel(e.D):
			s.dirs = append(s.dirs, e.D)
		default:
			continue
		}
		if e.T > s.maxT && !math.IsInf(e.T, 0) {
			s.maxT = e.T
		}
	}
	return s
}

// loadRecords reads the ownership records of the run directory dir (none: empty records).
func loadRecords(dir string) (*records, error) {
	rec := &records{files: map[string]bool{}, dirs: map[string]bool{}}
	ents, err := os.ReadDir(filepath.Join(dir, RecordDir))
	if errors.Is(err, fs.ErrNotExist) {
		return rec, nil
	}
	if err != nil {
		return nil, err
	}
	for _, e := range ents {
		if !e.Type().IsRegular() || !strings.HasSuffix(e.Name(), ".jsonl") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, RecordDir, e.Name()))
		if err != nil {
			return nil, err
		}
		s := parseSession(e.Name(), data)
		rec.sessions = append(rec.sessions, s)
		for _, f := range s.files {
			rec.files[f] = true
		}
		for _, d := range s.dirs {
			rec.dirs[d] = true
		}
	}
	return rec, nil
}

// root is a run directory whose writes this process records.
type root struct {
	dir  string // absolute, clean
	show string // as the user gave it, for messages
	mu   sync.Mutex
	rec  *records
	// foreign are the directories (relative) present when the recording started that no
	// record lists; partial is set when they could not all be listed.
	foreign map[string]bool
	partial bool
	session string // this session's record file name
	start   time.Time
	wrote   bool // the session's header is written
}

var (
	regMu  sync.RWMutex
	roots  = map[string]*root{}
	nroots atomic.Int32
	guard  sync.Once
)

// lookupLocked returns the registered root that is abs or its nearest ancestor.
func lookupLocked(abs string) *root {
	for p := abs; ; {
		if r := roots[p]; r != nil {
			return r
		}
		q := filepath.Dir(p)
		if q == p {
			return nil
		}
		p = q
	}
}

func lookup(abs string) *root {
	if nroots.Load() == 0 {
		return nil
	}
	regMu.RLock()
	defer regMu.RUnlock()
	return lookupLocked(abs)
}

// register returns the registered root covering dir (an existing directory), or registers
// dir as a new one (created is then true): its records are loaded and its directories listed.
func register(dir string) (r *root, created bool, err error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, false, err
	}
	regMu.Lock()
	defer regMu.Unlock()
	if r := lookupLocked(abs); r != nil {
		return r, false, nil
	}
	rec, err := loadRecords(abs)
	if err != nil {
		return nil, false, err
	}
	r = &root{dir: abs, show: dir, rec: rec, start: time.Now()}
	r.session = sessionName(r.start)
	r.snapshot()
	roots[abs] = r
	nroots.Add(1)
	guard.Do(func() { atomicfile.SetGuard(guardWrite) })
	return r, true, nil
}

// unregister stops recording r.
func unregister(r *root) {
	regMu.Lock()
	defer regMu.Unlock()
	if roots[r.dir] == r {
		delete(roots, r.dir)
		nroots.Add(-1)
	}
}

// hostname is the host name as used in record names and lock files.
func hostname() string {
	h, err := os.Hostname()
	if err != nil || h == "" {
		return "unknown-host"
	}
	return h
}

// sessionName is the record file name of a session started at start.
func sessionName(start time.Time) string {
	h := []byte(hostname())
	for i, c := range h {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-') {
			h[i] = '_'
		}
	}
	return fmt.Sprintf("%s-%d-%d.jsonl", h, os.Getpid(), start.UnixNano())
}

// snapshot lists the directories of r not in its records (foreign).
func (r *root) snapshot() {
	r.foreign = map[string]bool{}
	n := 0
	_ = filepath.WalkDir(r.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			r.partial = true // an unreadable directory: its subdirectories are unknown
			if p == r.dir {
				return err
			}
			return nil
		}
		if n++; n > maxSnapshot {
			r.partial = true
			return fs.SkipAll
		}
		if !d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(r.dir, p)
		rel = filepath.ToSlash(rel)
		switch {
		case rel == ".":
		case rel == RecordDir:
			return fs.SkipDir
		case !r.rec.dirs[rel]:
			r.foreign[rel] = true
		}
		return nil
	})
}

// abs returns the path of rel (slash-separated, relative to r).
func (r *root) abs(rel string) string { return filepath.Join(r.dir, filepath.FromSlash(rel)) }

// display returns rel as a path for messages (below the directory the user named).
func (r *root) display(rel string) string { return filepath.Join(r.show, filepath.FromSlash(rel)) }

// scope returns the path of dir relative to r ("" for r itself).
func (r *root) scope(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return ""
	}
	rel, err := filepath.Rel(r.dir, abs)
	if err != nil || rel == "." {
		return ""
	}
	return filepath.ToSlash(rel)
}

// within reports whether rel is below scope ("" is everything).
func within(rel, scope string) bool {
	return scope == "" || strings.HasPrefix(rel, scope+"/")
}

// inState reports whether rel is in the engine's state directory.
func inState(rel string) bool { return rel == StateDir || strings.HasPrefix(rel, StateDir+"/") }

// ancestors returns the directories of rel, outermost first ("a", "a/b" for "a/b/c").
func ancestors(rel string) []string {
	var out []string
	for i, c := range rel {
		if c == '/' {
			out = append(out, rel[:i])
		}
	}
	return out
}

// elapsed is the seconds since the session started (ms resolution).
func (r *root) elapsed() float64 { return math.Round(time.Since(r.start).Seconds()*1000) / 1000 }

// appendLines appends lines to this session's record file (with its header first), in one
// write.
func (r *root) appendLines(lines []recLine) error {
	dir := filepath.Join(r.dir, RecordDir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return badOut(ErrBadOut, err, "out: cannot record the files dprl writes in %s: %v", r.show, reason(err))
	}
	var b bytes.Buffer
	if !r.wrote {
		lines = append([]recLine{{Dprl: Version, Host: hostname(), PID: os.Getpid(), Start: r.start.UTC().Format(time.RFC3339Nano)}}, lines...)
	}
	for _, l := range lines {
		data, err := json.Marshal(l)
		if err != nil {
			return err
		}
		b.Write(data)
		b.WriteByte('\n')
	}
	f, err := os.OpenFile(filepath.Join(dir, r.session), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return badOut(ErrBadOut, err, "out: cannot record the files dprl writes in %s: %v", r.show, reason(err))
	}
	_, err = f.Write(b.Bytes())
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("out: recording the files dprl writes in %s: %w", r.show, err)
	}
	r.wrote = true
	var own *session
	for _, s := range r.rec.sessions {
		if s.name == r.session {
			own = s
		}
	}
	if own == nil {
		own = &session{name: r.session}
		r.rec.sessions = append(r.rec.sessions, own)
	}
	for _, l := range lines {
		switch {
		case l.F != "":
			r.rec.files[l.F] = true
			own.files = append(own.files, l.F)
		case l.D != "":
			r.rec.dirs[l.D] = true
			own.dirs = append(own.dirs, l.D)
		}
		own.maxT = max(own.maxT, l.T)
	}
	return nil
}

// guardWrite is the atomicfile guard: a write into a recorded run directory is recorded, or
// refused when it would overwrite a file dprl did not write.
func guardWrite(p string) error {
	if nroots.Load() == 0 {
		return nil
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return nil
	}
	r := lookup(filepath.Dir(abs))
	if r == nil {
		return nil
	}
	rel, err := filepath.Rel(r.dir, abs)
	if err != nil {
		return nil
	}
	rel = filepath.ToSlash(rel)
	if !validRel(rel) {
		return nil
	}
	return r.note(rel)
}

// note records that this session is about to write file rel, or refuses: rel exists and no
// record lists it (outside StateDir).
func (r *root) note(rel string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.rec.files[rel] {
		return nil
	}
	if _, err := os.Lstat(r.abs(rel)); err == nil && !inState(rel) {
		return notOwnedError(r.display(rel), "a run would overwrite it")
	}
	t := r.elapsed()
	var lines []recLine
	if !r.partial {
		for _, d := range ancestors(rel) {
			if r.rec.dirs[d] || r.foreign[d] {
				continue
			}
			if fi, err := os.Lstat(r.abs(d)); err == nil && fi.IsDir() {
				lines = append(lines, recLine{D: d, T: t})
			}
		}
	}
	return r.appendLines(append(lines, recLine{F: rel, T: t}))
}

// notOwnedError refuses a file dprl did not write (p as shown to the user).
func notOwnedError(p, why string) error {
	return badOut(ErrNotOwned, nil, "out: %s was not written by dprl and %s; move it away or choose another directory (dprl never overwrites or removes a file it did not write)", p, why)
}

// safeDirs reports whether every directory from r down to rel (a directory) is a real
// directory, not a symbolic link: a record never makes dprl remove anything through a link.
type safeDirs struct {
	r    *root
	memo map[string]bool
}

func (s *safeDirs) ok(rel string) bool {
	if rel == "." || rel == "" {
		return true
	}
	if v, seen := s.memo[rel]; seen {
		return v
	}
	v := s.ok(path.Dir(rel))
	if v {
		fi, err := os.Lstat(s.r.abs(rel))
		v = err == nil && fi.IsDir()
	}
	s.memo[rel] = v
	return v
}

// ownedFiles returns the existing regular files below scope that r's records list, and the
// leftover temporary files of atomicfile beside them (".NAME.tmp-*" of a listed NAME),
// outside StateDir, sorted.
func (r *root) ownedFiles(scope string) []string {
	safe := &safeDirs{r: r, memo: map[string]bool{}}
	listings := map[string][]fs.DirEntry{}
	seen := map[string]bool{}
	var out []string
	for f := range r.rec.files {
		if !within(f, scope) || inState(f) {
			continue
		}
		d := path.Dir(f)
		if !safe.ok(d) {
			continue
		}
		ents, ok := listings[d]
		if !ok {
			ents, _ = os.ReadDir(r.abs(d))
			listings[d] = ents
		}
		base := path.Base(f)
		for _, e := range ents {
			if !e.Type().IsRegular() || seen[path.Join(d, e.Name())] {
				continue
			}
			if e.Name() == base || strings.HasPrefix(e.Name(), "."+base+".tmp-") {
				p := path.Join(d, e.Name())
				seen[p] = true
				out = append(out, p)
			}
		}
	}
	sort.Strings(out)
	return out
}

// inspect checks the part scope of r for Prepare: a name of outputs there that dprl did not
// write is refused (ErrNotOwned); it returns the files an earlier run wrote there.
func (r *root) inspect(scope string, outputs []string) ([]string, error) {
	for _, name := range outputs {
		rel := path.Join(scope, name)
		if _, err := os.Lstat(r.abs(rel)); err == nil && !r.rec.files[rel] {
			return nil, notOwnedError(r.display(rel), "a run writes a file of that name")
		}
	}
	return r.ownedFiles(scope), nil
}

// earlierRun is the refusal of a directory holding files of an earlier run.
func (r *root) earlierRun(files []string) error {
	show := files
	if len(show) > 3 {
		show = show[:3]
	}
	shown := make([]string, len(show))
	for i, f := range show {
		shown[i] = r.display(f)
	}
	return badOut(ErrEarlierRun, nil, "out: %s holds an earlier dprl run (%d files it wrote, e.g. %s); choose a new directory or pass --force to remove that run's files (files dprl did not write are never removed)",
		r.show, len(files), strings.Join(shown, ", "))
}

// remove removes files (owned, from ownedFiles), then the directories below scope that dprl
// created and that are now empty (deepest first; scope itself and StateDir are kept), then
// the record files none of whose entries exist any longer.
func (r *root) remove(scope string, files []string) error {
	for _, f := range files {
		if err := os.Remove(r.abs(f)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("out: removing the earlier run's %s: %w", r.display(f), err)
		}
	}
	var dirs []string
	for d := range r.rec.dirs {
		if within(d, scope) && !inState(d) {
			dirs = append(dirs, d)
		}
	}
	sort.Slice(dirs, func(i, j int) bool {
		if a, b := strings.Count(dirs[i], "/"), strings.Count(dirs[j], "/"); a != b {
			return a > b
		}
		return dirs[i] < dirs[j]
	})
	safe := &safeDirs{r: r, memo: map[string]bool{}}
	for _, d := range dirs {
		if safe.ok(d) {
			_ = os.Remove(r.abs(d)) // fails, as it should, unless the directory is empty
			delete(safe.memo, d)
		}
	}
	exists := func(rel string) bool { _, err := os.Lstat(r.abs(rel)); return err == nil }
	for _, s := range r.rec.sessions {
		if s.name == r.session {
			continue
		}
		live := false
		for _, p := range append(append([]string(nil), s.files...), s.dirs...) {
			if exists(p) {
				live = true
				break
			}
		}
		if !live {
			_ = os.Remove(filepath.Join(r.dir, RecordDir, s.name))
		}
	}
	rec, err := loadRecords(r.dir)
	if err != nil {
		return fmt.Errorf("out: %s: %w", r.show, err)
	}
	r.rec = rec
	return nil
}

// Prepare makes dir ready for a run (PrepareOutputs with RunOutputs).
func Prepare(dir string, force bool) error { return PrepareOutputs(dir, force, RunOutputs...) }

// PrepareOutputs makes dir ready for a run that writes, among others, the files named outputs
// at its top, creates it if needed and records the files this process writes there from now
// on (see the ownership records above; Lock does too, for a whole run). In order:
//
//   - a bad path (CheckDir), or a directory that cannot be created, is refused;
//   - a file named in outputs that dprl did not write is refused, with or without force
//     (ErrNotOwned, naming it): the run would overwrite it. Any other file dprl did not write
//     is left alone; a run that comes to overwrite one is refused then, by the guard;
//   - without force, files an earlier run wrote (listed by a record; outside StateDir) are
//     refused, naming a few (ErrEarlierRun); with force exactly those files are removed, with
//     their leftover temporary files, then the directories that run created and that are now
//     empty. Nothing a record does not list is ever removed, and nothing through a symbolic
//     link.
//
// dir may be a subdirectory of a recorded directory (a suite's block): only that part is
// considered. Every error matches ErrBadOut except I/O errors while removing. Call it before
// computing, so a bad --out fails fast; the families' Write methods call it again.
func PrepareOutputs(dir string, force bool, outputs ...string) error {
	if err := CheckDir(dir); err != nil {
		return err
	}
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return badOut(ErrBadOut, err, "out: cannot create %s: %v", dir, reason(err))
		}
	case err != nil:
		return badOut(ErrBadOut, err, "out: %s: %v", dir, reason(err))
	case !st.IsDir():
		return badOut(ErrBadOut, nil, "out: %s exists and is not a directory", dir)
	}
	r, _, err := register(dir)
	if err != nil {
		return badOut(ErrBadOut, err, "out: %s: %v", dir, reason(err))
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	scope := r.scope(dir)
	files, err := r.inspect(scope, outputs)
	if err != nil || len(files) == 0 {
		return err
	}
	if !force {
		return r.earlierRun(files)
	}
	return r.remove(scope, files)
}

// CheckEarlier returns the error Prepare(dir, false) would return (a bad path, a run output
// dprl did not write, an earlier run), without creating or changing anything: a cheap check
// before an expensive plan.
func CheckEarlier(dir string) error {
	if err := CheckDir(dir); err != nil {
		return err
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return nil // Prepare reports a missing or non-directory dir itself
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil
	}
	r := lookup(abs)
	if r == nil {
		rec, err := loadRecords(abs)
		if err != nil {
			return badOut(ErrBadOut, err, "out: %s: %v", dir, reason(err))
		}
		r = &root{dir: abs, show: dir, rec: rec}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	files, err := r.inspect(r.scope(dir), RunOutputs)
	if err != nil || len(files) == 0 {
		return err
	}
	return r.earlierRun(files)
}

// Claim records files already in dir (paths relative to it), and the directories holding
// them, as written by dprl: for a tool that writes a run directory without going through
// internal/atomicfile, and for tests that stage an earlier run.
func Claim(dir string, rels ...string) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	r := lookup(abs)
	prefix := ""
	if r == nil {
		rec, err := loadRecords(abs)
		if err != nil {
			return err
		}
		r = &root{dir: abs, show: dir, rec: rec, start: time.Now(), foreign: map[string]bool{}}
		r.session = "claim-" + sessionName(r.start)
	} else {
		prefix = r.scope(dir)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	var lines []recLine
	for _, rel := range rels {
		rel = path.Join(prefix, filepath.ToSlash(rel))
		if !validRel(rel) {
			return fmt.Errorf("claim %q: not a path inside %s", rel, dir)
		}
		for _, d := range ancestors(rel) {
			if !r.rec.dirs[d] {
				r.rec.dirs[d] = true
				lines = append(lines, recLine{D: d})
			}
		}
		lines = append(lines, recLine{F: rel})
	}
	return r.appendLines(lines)
}

// Listed returns a predicate telling whether a path relative to dir (OS separators) is a file
// that dprl's ownership records of dir list: readers of a run directory's outputs use it to
// leave alone the files a user keeps beside them. It returns nil when dir has no record (a
// directory written without recording, by a library call: every file is then the run's).
func Listed(dir string) func(rel string) bool {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil
	}
	var files map[string]bool
	prefix := ""
	if r := lookup(abs); r != nil {
		r.mu.Lock()
		files = make(map[string]bool, len(r.rec.files))
		for f := range r.rec.files {
			files[f] = true
		}
		prefix = r.scope(dir)
		r.mu.Unlock()
	} else {
		rec, err := loadRecords(abs)
		if err != nil || len(rec.sessions) == 0 {
			return nil
		}
		files = rec.files
	}
	return func(rel string) bool { return files[path.Join(prefix, filepath.ToSlash(rel))] }
}

// PriorSeconds returns the wall seconds of the earlier sessions that wrote into dir (sessions
// other than this process's current one) and wrote a file below sub that still exists: for
// the engine, sub is StateDir, so that a resumed run counts its interrupted invocations (their
// unit files are kept) and a merge its shards, while the invocations of a run replaced with
// --force (whose unit files are gone) are not counted. A session's time is that of its last
// recorded write.
func PriorSeconds(dir, sub string) float64 {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return 0
	}
	rootDir, own := abs, ""
	if r := lookup(abs); r != nil {
		rootDir, own = r.dir, r.session
		sub = path.Join(r.scope(dir), sub)
	}
	rec, err := loadRecords(rootDir)
	if err != nil {
		return 0
	}
	var sum float64
	for _, s := range rec.sessions {
		if s.name == own {
			continue
		}
		for _, f := range s.files {
			if within(f, sub) {
				if _, err := os.Lstat(filepath.Join(rootDir, filepath.FromSlash(f))); err == nil {
					sum += s.maxT
					break
				}
			}
		}
	}
	return sum
}
