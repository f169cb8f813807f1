// Package mutation is dprl's mutation harness for its privacy safety net (issue 10, item 7).
//
// A mutant is a one-place edit of the source that breaks a privacy property — a noise scale
// halved, a tree level dropped, a clip skipped, node noise redrawn, the Secure grid rounding
// skipped, a raw statistic released, LDP noise made reproducible, a conversion off by a
// constant. The mutants are data: mutants.txt in this directory lists, for each one, the file,
// the exact text to find (it must occur exactly once, so the list cannot silently rot when the
// code moves), its replacement, the packages whose tests must catch it, an optional -run
// pattern and one line of why it breaks privacy.
//
// The harness (TestMutants, under the build tag "mutation") copies the repository's tracked
// and untracked-not-ignored files into a scratch directory, applies one mutant and runs go
// test on the listed packages. A mutant is caught iff those tests fail; a mutant whose test
// binaries do not build ("[build failed]" or "[setup failed]") is a harness error, never a
// catch. The test commands run with -vet=off: vetting every mutant (a separate go vet and go
// test's own vet pass) about doubled the harness time, and vet findings are not privacy
// catches; the tree itself is vetted by .ci/run. Before any
// mutant, the same test commands must pass on the unmodified copy (the baseline), so a test that
// fails anyway cannot "catch" anything. Run it with
//
//	go test -tags mutation ./internal/mutation -run TestMutants -timeout 40m -v
//
// (.ci/mutation runs it time-boxed). Flags after -args: -mutation.only=id1,id2 runs a subset,
// -mutation.workers (default 2) mutants at once, -mutation.timeout (default 5m) bounds one
// mutant's tests, -mutation.list names another list, -mutation.keep keeps the scratch copies.
// The go commands get -trimpath (so the scratch copies share the build cache) and -p=1.
//
// This package holds the parsing, applying and running logic; its untagged tests check the
// logic and that every committed mutant still applies to the current tree.
package mutation

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Mutant is one privacy-critical source mutation (one entry of mutants.txt).
type Mutant struct {
	// ID names the mutant; unique within a list.
	ID string
	// File is the slash-separated path of the mutated file, relative to the module root.
	File string
	// Find is the exact text replaced; it must occur exactly once in File.
	Find string
	// Replace is the text put in its place (may be empty).
	Replace string
	// Pkgs are the package patterns (e.g. ./privacy/counter) whose tests must catch the mutant.
	Pkgs []string
	// Run is an optional go test -run pattern narrowing the tests to those that catch it.
	Run string
	// Why says in one line why the mutant breaks privacy.
	Why string
	// Line is the line of the mutant's header in the list (for error messages).
	Line int

	baseline bool // a baseline command (no mutation; run with -v to record the tests run)
}

var idPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]*$`)

// Parse reads a mutant list. The format is line based:
//
//	# comment
//	[mutant-id]
//	file: privacy/counter/tree.go
//	pkgs: ./privacy/counter ./agents/lq
//	run: ^TestTreeNoiseStructure$
//	why: one line of why the mutant breaks privacy
//	find: exact text, verbatim to the end of the line
//	replace: "a Go-quoted string\nmay span lines"
//
// A value starting with a double quote is a Go string literal (strconv.Unquote), which is how
// multi-line texts, tabs and leading or trailing spaces are written; any other value is taken
// verbatim after "key: " with trailing spaces removed. file, pkgs, why, find and replace are
// required; run is optional. name is used in error messages.
func Parse(r io.Reader, name string) ([]Mutant, error) {
	var (
		out  []Mutant
		cur  *Mutant
		seen map[string]bool // keys of cur
		ids  = map[string]int{}
	)
	finish := func() error {
		if cur == nil {
			return nil
		}
		for _, k := range []string{"file", "pkgs", "why", "find", "replace"} {
			if !seen[k] {
				return fmt.Errorf("%s:%d: mutant %q: missing key %q", name, cur.Line, cur.ID, k)
			}
		}
		if cur.Find == "" {
			return fmt.Errorf("%s:%d: mutant %q: find must not be empty", name, cur.Line, cur.ID)
		}
		if cur.Find == cur.Replace {
			return fmt.Errorf("%s:%d: mutant %q: replace equals find (not a mutation)", name, cur.Line, cur.ID)
		}
		out = append(out, *cur)
		return nil
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	ln := 0
	for sc.Scan() {
		ln++
		line := strings.TrimRight(sc.Text(), " \t\r")
		if line == "" || strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		if strings.HasPrefix(line, "[") {
			if !strings.HasSuffix(line, "]") {
				return nil, fmt.Errorf("%s:%d: mutant header must be [id], got %q", name, ln, line)
			}
			if err := finish(); err != nil {
				return nil, err
			}
			id := line[1 : len(line)-1]
			if !idPattern.MatchString(id) {
				return nil, fmt.Errorf("%s:%d: mutant id %q must match %s", name, ln, id, idPattern)
			}
			if prev, dup := ids[id]; dup {
				return nil, fmt.Errorf("%s:%d: mutant id %q already used at line %d", name, ln, id, prev)
			}
			ids[id] = ln
			cur, seen = &Mutant{ID: id, Line: ln}, map[string]bool{}
			continue
		}
		if cur == nil {
			return nil, fmt.Errorf("%s:%d: %q before the first [id] header", name, ln, line)
		}
		key, val, ok := strings.Cut(line, ":")
		if !ok {
			return nil, fmt.Errorf("%s:%d: mutant %q: want \"key: value\", got %q", name, ln, cur.ID, line)
		}
		val = strings.TrimPrefix(val, " ")
		if strings.HasPrefix(val, `"`) {
			u, err := strconv.Unquote(val)
			if err != nil {
				return nil, fmt.Errorf("%s:%d: mutant %q: %s: bad quoted string: %v", name, ln, cur.ID, key, err)
			}
			val = u
		}
		if seen[key] {
			return nil, fmt.Errorf("%s:%d: mutant %q: key %q given twice", name, ln, cur.ID, key)
		}
		seen[key] = true
		switch key {
		case "file":
			cur.File = val
			if val == "" || filepath.IsAbs(val) || strings.Contains(val, "..") || strings.Contains(val, `\`) {
				return nil, fmt.Errorf("%s:%d: mutant %q: file must be a relative slash path inside the module, got %q", name, ln, cur.ID, val)
			}
		case "pkgs":
			cur.Pkgs = strings.Fields(val)
			if len(cur.Pkgs) == 0 {
				return nil, fmt.Errorf("%s:%d: mutant %q: pkgs must list at least one package", name, ln, cur.ID)
			}
			for _, p := range cur.Pkgs {
				if !strings.HasPrefix(p, "./") {
					return nil, fmt.Errorf("%s:%d: mutant %q: package %q must be a ./relative pattern", name, ln, cur.ID, p)
				}
			}
		case "run":
			if _, err := regexp.Compile(val); err != nil {
				return nil, fmt.Errorf("%s:%d: mutant %q: run: %v", name, ln, cur.ID, err)
			}
			cur.Run = val
		case "why":
			cur.Why = val
		case "find":
			cur.Find = val
		case "replace":
			cur.Replace = val
		default:
			return nil, fmt.Errorf("%s:%d: mutant %q: unknown key %q (allowed: file, pkgs, run, why, find, replace)", name, ln, cur.ID, key)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if err := finish(); err != nil {
		return nil, err
	}
	return out, nil
}

// ParseFile reads the mutant list at path.
func ParseFile(path string) ([]Mutant, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return Parse(f, path)
}

// Apply returns src with m's find text replaced. It is an error, naming the mutant, unless the
// find text occurs exactly once.
func Apply(src []byte, m Mutant) ([]byte, error) {
	n := bytes.Count(src, []byte(m.Find))
	if n != 1 {
		return nil, fmt.Errorf("mutant %q: find text %q occurs %d times in %s, want exactly 1 (update mutants.txt)", m.ID, m.Find, n, m.File)
	}
	return bytes.Replace(src, []byte(m.Find), []byte(m.Replace), 1), nil
}

// Check verifies that every mutant applies to the tree at root (its file exists and its find
// text occurs exactly once) and returns every problem found, joined.
func Check(root string, ms []Mutant) error {
	var errs []error
	for _, m := range ms {
		src, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(m.File)))
		if err != nil {
			errs = append(errs, fmt.Errorf("mutant %q: %w", m.ID, err))
			continue
		}
		if _, err := Apply(src, m); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// ModuleRoot returns the nearest directory at or above dir holding a go.mod.
func ModuleRoot(dir string) (string, error) {
	d, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		}
		p := filepath.Dir(d)
		if p == d {
			return "", fmt.Errorf("mutation: no go.mod at or above %s", dir)
		}
		d = p
	}
}

// skipDirs are never copied by the tree walk used when git is unavailable.
var skipDirs = map[string]bool{".git": true, "runs": true, "results": true, "testdata-cache": true}

// SourceFiles lists the files a scratch copy needs, relative to root: git's tracked and
// untracked-not-ignored files (git ls-files -co --exclude-standard) when root is a git work
// tree, else every regular file outside .git, runs/ and results/.
func SourceFiles(root string) ([]string, error) {
	cmd := exec.Command("git", "ls-files", "-co", "--exclude-standard", "-z")
	cmd.Dir = root
	if out, err := cmd.Output(); err == nil {
		var files []string
		for _, f := range strings.Split(string(out), "\x00") {
			if f != "" {
				files = append(files, f)
			}
		}
		return files, nil
	}
	var files []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != root && skipDirs[d.Name()] {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		files = append(files, filepath.ToSlash(rel))
		return nil
	})
	return files, err
}

// CopyFiles copies files (slash paths relative to src) into dst, creating directories. Files
// listed but missing (deleted in the work tree) are skipped.
func CopyFiles(src, dst string, files []string) error {
	for _, f := range files {
		from := filepath.Join(src, filepath.FromSlash(f))
		info, err := os.Lstat(from)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		if !info.Mode().IsRegular() {
			continue
		}
		data, err := os.ReadFile(from)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(to, data, info.Mode().Perm()); err != nil {
			return err
		}
	}
	return nil
}

// Status is the outcome of one mutant.
type Status string

const (
	// Caught: the mutant built and its tests failed.
	Caught Status = "caught"
	// Survived: the mutant built and its tests passed — the safety net has a hole.
	Survived Status = "SURVIVED"
	// HarnessError: the mutant could not be applied or built, or the test command did not
	// finish; it says nothing about the tests and fails the harness.
	HarnessError Status = "HARNESS-ERROR"
)

// Result is the outcome of running one mutant (or one baseline command).
type Result struct {
	Mutant  Mutant
	Status  Status
	Seconds float64
	// Failed lists the top-level tests reported failing (the catchers).
	Failed []string
	// Detail is the error or the tail of the command output for harness errors and survivors.
	Detail string
	// Ran lists the top-level tests and examples a baseline command ran.
	Ran []string
}

// Runner runs mutants in scratch copies of a module.
type Runner struct {
	// Root is the module root copied for every mutant.
	Root string
	// Files are the files copied (SourceFiles(Root) if nil).
	Files []string
	// Scratch is the directory holding one work directory per worker.
	Scratch string
	// Workers is the number of mutants run at once (≥ 1).
	Workers int
	// Timeout bounds the tests of one mutant (go test -timeout); the whole mutant is killed
	// (a harness error) one minute later.
	Timeout time.Duration
	// Env is the environment of the go commands (os.Environ() if nil). GOFLAGS gets
	// -trimpath so that scratch copies share the build cache.
	Env []string
	// Log, if non-nil, is called with a line of progress after every mutant.
	Log func(string)
}

var (
	failLine = regexp.MustCompile(`(?m)^--- FAIL: (\S+)`)
	runLine  = regexp.MustCompile(`(?m)^=== RUN\s+(\S+)`)
)

func (r *Runner) env() []string {
	env := r.Env
	if env == nil {
		env = os.Environ()
	}
	out := make([]string, 0, len(env)+2)
	flags := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "GOFLAGS="); ok {
			flags = v
			continue
		}
		if strings.HasPrefix(kv, "GOWORK=") {
			continue
		}
		out = append(out, kv)
	}
	if !strings.Contains(flags, "-trimpath") {
		flags = strings.TrimSpace(flags + " -trimpath")
	}
	return append(out, "GOFLAGS="+flags, "GOWORK=off")
}

// goCmd runs go with args in dir and returns its combined output and error.
func (r *Runner) goCmd(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	cmd.Env = r.env()
	cmd.WaitDelay = 10 * time.Second
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = append([]string{"…"}, lines[len(lines)-n:]...)
	}
	return strings.Join(lines, "\n")
}

// testArgs returns the go test arguments for pkgs and run (-v for a baseline).
func (r *Runner) testArgs(pkgs []string, run string, verbose bool) []string {
	args := []string{"test", "-count=1", "-p=1", "-vet=off", "-timeout=" + r.Timeout.String()}
	if verbose {
		args = append(args, "-v")
	}
	if run != "" {
		args = append(args, "-run="+run)
	}
	return append(args, pkgs...)
}

// prepare makes dir a fresh copy of the module and applies m (if m.Find is non-empty).
func (r *Runner) prepare(dir string, m Mutant) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	if err := CopyFiles(r.Root, dir, r.Files); err != nil {
		return fmt.Errorf("copying the module: %w", err)
	}
	if m.baseline {
		return nil
	}
	path := filepath.Join(dir, filepath.FromSlash(m.File))
	src, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("mutant %q: %w", m.ID, err)
	}
	mut, err := Apply(src, m)
	if err != nil {
		return err
	}
	return os.WriteFile(path, mut, 0o644)
}

// runOne runs one mutant in dir. For a baseline (no mutation) the tests must pass: "caught"
// then means the unmodified tests fail.
func (r *Runner) runOne(dir string, m Mutant) Result {
	start := time.Now()
	res := Result{Mutant: m}
	done := func(s Status, detail string) Result {
		res.Status, res.Detail, res.Seconds = s, detail, time.Since(start).Seconds()
		return res
	}
	if err := r.prepare(dir, m); err != nil {
		return done(HarnessError, err.Error())
	}
	ctx, cancel := context.WithTimeout(context.Background(), r.Timeout+time.Minute)
	defer cancel()
	out, err := r.goCmd(ctx, dir, r.testArgs(m.Pkgs, m.Run, m.baseline)...)
	if ctx.Err() != nil {
		return done(HarnessError, "tests did not finish in "+(r.Timeout+time.Minute).String())
	}
	for _, f := range failLine.FindAllStringSubmatch(out, -1) {
		if !strings.Contains(f[1], "/") {
			res.Failed = append(res.Failed, f[1])
		}
	}
	if m.baseline {
		for _, f := range runLine.FindAllStringSubmatch(out, -1) {
			if !strings.Contains(f[1], "/") {
				res.Ran = append(res.Ran, f[1])
			}
		}
	}
	if strings.Contains(out, "[build failed]") || strings.Contains(out, "[setup failed]") {
		return done(HarnessError, "mutant does not build (go test):\n"+tail(out, 15))
	}
	if strings.Contains(out, "no tests to run") {
		return done(HarnessError, "the -run pattern "+strconv.Quote(m.Run)+" matches no test in some package:\n"+tail(out, 8))
	}
	if m.baseline && err != nil {
		return done(Caught, tail(out, 30)) // the unmodified tests fail
	}
	if err == nil {
		return done(Survived, tail(out, 8))
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return done(HarnessError, "go test: "+err.Error())
	}
	return done(Caught, tail(out, 30))
}

// Baseline runs, on the unmodified copy, every test the mutants rely on: one go test command
// per package, with -run the union of the package's mutants' patterns (all tests if one of
// them has none). It returns one result per package, Survived meaning "the tests pass", and a
// HarnessError per mutant whose -run pattern matches none of the tests that ran in one of its
// packages (a pattern that selects nothing would let the mutant survive unnoticed).
func (r *Runner) Baseline(ms []Mutant) []Result {
	type group struct {
		pats []string
		all  bool
	}
	var order []string
	groups := map[string]*group{}
	for _, m := range ms {
		for _, p := range m.Pkgs {
			g, ok := groups[p]
			if !ok {
				g = &group{}
				groups[p] = g
				order = append(order, p)
			}
			if m.Run == "" {
				g.all = true
			} else if !slices.Contains(g.pats, m.Run) {
				g.pats = append(g.pats, m.Run)
			}
		}
	}
	base := make([]Mutant, len(order))
	for i, p := range order {
		g := groups[p]
		run := ""
		if !g.all {
			run = "(" + strings.Join(g.pats, ")|(") + ")"
		}
		base[i] = Mutant{ID: "baseline:" + p, Pkgs: []string{p}, Run: run, baseline: true}
	}
	res := r.Run(base)
	ran := map[string][]string{}
	for i, p := range order {
		ran[p] = res[i].Ran
	}
	for _, m := range ms {
		if m.Run == "" {
			continue
		}
		re := regexp.MustCompile(m.Run) // validated by Parse
		for _, p := range m.Pkgs {
			if res[slices.Index(order, p)].Status != Survived {
				continue
			}
			if !slices.ContainsFunc(ran[p], re.MatchString) {
				res = append(res, Result{Mutant: m, Status: HarnessError,
					Detail: fmt.Sprintf("mutant %q: -run %q matches none of the tests of %s", m.ID, m.Run, p)})
			}
		}
	}
	return res
}

// Run runs ms, r.Workers at a time, each in its worker's scratch directory, and returns the
// results in the order of ms.
func (r *Runner) Run(ms []Mutant) []Result {
	if r.Workers < 1 {
		r.Workers = 1
	}
	res := make([]Result, len(ms))
	jobs := make(chan int)
	var wg sync.WaitGroup
	var mu sync.Mutex
	for w := 0; w < r.Workers; w++ {
		dir := filepath.Join(r.Scratch, fmt.Sprintf("worker-%d", w))
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				res[i] = r.runOne(dir, ms[i])
				if r.Log != nil {
					st := string(res[i].Status)
					if strings.HasPrefix(ms[i].ID, "baseline:") && res[i].Status != HarnessError {
						st = "pass" // a baseline must pass: "caught" would mean its tests fail
						if res[i].Status == Caught {
							st = "FAIL"
						}
					}
					mu.Lock()
					r.Log(fmt.Sprintf("%-40s %-13s %6.1fs %s", ms[i].ID, st, res[i].Seconds, strings.Join(res[i].Failed, ",")))
					mu.Unlock()
				}
			}
			os.RemoveAll(dir)
		}()
	}
	for i := range ms {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	return res
}

// Table renders results as an aligned text table with the score caught/total.
func Table(rs []Result) string {
	var b strings.Builder
	idw := len("id")
	for _, r := range rs {
		idw = max(idw, len(r.Mutant.ID))
	}
	fmt.Fprintf(&b, "%-*s  %-13s  %7s  %-38s  %s\n", idw, "id", "status", "seconds", "packages", "caught by")
	caught := 0
	for _, r := range rs {
		if r.Status == Caught {
			caught++
		}
		by := strings.Join(r.Failed, ",")
		if r.Status != Caught {
			by = "-"
		}
		fmt.Fprintf(&b, "%-*s  %-13s  %7.1f  %-38s  %s\n", idw, r.Mutant.ID, r.Status, r.Seconds, strings.Join(r.Mutant.Pkgs, " "), by)
	}
	fmt.Fprintf(&b, "score: %d/%d caught\n", caught, len(rs))
	return b.String()
}

// Select returns the mutants of ms whose IDs are listed in the comma-separated only (all of
// ms if only is empty); an unknown ID is an error.
func Select(ms []Mutant, only string) ([]Mutant, error) {
	if strings.TrimSpace(only) == "" {
		return ms, nil
	}
	byID := map[string]Mutant{}
	for _, m := range ms {
		byID[m.ID] = m
	}
	var out []Mutant
	var unknown []string
	for _, id := range strings.Split(only, ",") {
		id = strings.TrimSpace(id)
		m, ok := byID[id]
		if !ok {
			unknown = append(unknown, id)
			continue
		}
		out = append(out, m)
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return nil, fmt.Errorf("unknown mutant ids: %s", strings.Join(unknown, ", "))
	}
	return out, nil
}
